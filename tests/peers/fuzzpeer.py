"""A tiny scripted stdio MCP peer for the fuzz suites: it writes whatever junk the client asks for.

``python tests/peers/fuzzpeer.py [--content-length]``. It speaks both eras: ``initialize`` (handshake) and
``server/discover`` (2026-07-28, where every answer to a request with the protocol version in its ``_meta``
carries ``resultType``), and ``ping``. A ``script`` request carries ``raw`` (base64 byte strings written to
stdout exactly as given, before the answer) and ``echo`` (returned as ``{"echo": ...}``); the ``script`` tool
(``tools/call``) does the same with its arguments and returns ``echo`` as its text. With ``--content-length``
every answer is framed with a Content-Length header (the junk is written as is: the test frames it). Standard
library only.
"""

from __future__ import annotations

import base64
import json
import sys
from typing import Any, Dict, Iterator


INFO = {"name": "fuzzpeer", "version": "1"}


def _frames(stream: Any) -> Iterator[bytes]:
    """Frames from the client: newline-delimited, or Content-Length framed (the client switches when we do)."""
    while True:
        line = stream.readline()
        if not line:
            return
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1].strip())
            while stream.readline().strip():  # the rest of the header, up to the blank line
                pass
            yield stream.read(length)
        elif line.strip():
            yield line


def main() -> int:
    content_length = "--content-length" in sys.argv[1:]
    out = sys.stdout.buffer

    def write(message: Dict[str, Any]) -> None:
        body = json.dumps(message).encode("utf-8")
        out.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body) if content_length else body + b"\n")
        out.flush()

    for line in _frames(sys.stdin.buffer):
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict) or "id" not in msg or not isinstance(msg.get("method"), str):
            continue
        method, rid = msg["method"], msg["id"]
        given = msg.get("params")
        params: Dict[str, Any] = given if isinstance(given, dict) else {}
        meta = params.get("_meta")
        modern = isinstance(meta, dict) and "io.modelcontextprotocol/protocolVersion" in meta
        if method == "initialize":
            result: Any = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": INFO}
        elif method == "server/discover":
            result = {
                "supportedVersions": ["2026-07-28", "2025-11-25"],
                "capabilities": {"tools": {}},
                "serverInfo": INFO,
                "_meta": {"io.modelcontextprotocol/serverInfo": INFO},
                "ttlMs": 0,
                "cacheScope": "public",
            }
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            schema = {"type": "object", "properties": {"raw": {"type": "array"}, "echo": {"type": "string"}}}
            result = {"tools": [{"name": "script", "inputSchema": schema}]}
            if modern:
                result.update(ttlMs=0, cacheScope="public")
        elif method in ("script", "tools/call"):
            args = params.get("arguments") if method == "tools/call" else params
            args = args if isinstance(args, dict) else {}
            for raw in args.get("raw", []):
                out.write(base64.b64decode(raw))
            out.flush()
            echo = args.get("echo")
            result = {"echo": echo} if method == "script" else {"content": [{"type": "text", "text": str(echo)}]}
        else:
            write({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}})
            continue
        if modern:
            result["resultType"] = "complete"
        write({"jsonrpc": "2.0", "id": rid, "result": result})
    return 0


if __name__ == "__main__":
    sys.exit(main())
