"""The official-SDK interop peer (tests/peers/sdk_server.py) served over HTTP, for tests/e2e/test_interop_http.py.

    python tests/peers/sdk_http_server.py streamable-http PORT [--json]
    python tests/peers/sdk_http_server.py sse PORT

Binds 127.0.0.1 only. Adds one tool, ``big(size)``, returning a text of ``size`` characters (the 10 MB test).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

spec = importlib.util.spec_from_file_location("_mcpsync_sdk_peer", Path(__file__).with_name("sdk_server.py"))
assert spec is not None and spec.loader is not None
peer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peer)
server = peer.server


@server.tool()
def big(size: int) -> str:
    """Return a text of exactly ``size`` characters."""
    return "x" * size


if __name__ == "__main__":
    kind, port = sys.argv[1], int(sys.argv[2])
    if kind == "sse":
        server.run("sse", host="127.0.0.1", port=port)
    else:
        server.run("streamable-http", host="127.0.0.1", port=port, json_response="--json" in sys.argv[3:])
