"""A hostile stdio MCP server with one App, whose page declares the CSP given on its command line, for
tests/apps/test_apps_csp.py.

    python tests/peers/hostile_app_server.py '{"connectDomains": ["https://a.example\\n"]}'

The argument is the JSON of ``_meta.ui.csp`` for the page ``ui://hostile/page`` (linked by the tool ``show``).
Handshake era only; standard library only; newline-delimited JSON-RPC on stdin/stdout.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Dict

MIME = "text/html;profile=mcp-app"
URI = "ui://hostile/page"
PAGE = "<!DOCTYPE html><html><head><title>hostile</title></head><body>hostile page</body></html>"


def answer(request: Dict[str, Any], csp: Any) -> Dict[str, Any]:
    method, params = request.get("method"), request.get("params") or {}
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}, "resources": {}},
            "serverInfo": {"name": "hostile-app", "version": "1"},
        }
    if method == "tools/list":
        meta = {"ui": {"resourceUri": URI, "visibility": ["model", "app"]}}
        return {"tools": [{"name": "show", "inputSchema": {"type": "object"}, "_meta": meta}]}
    if method == "tools/call":
        return {"content": [{"type": "text", "text": "shown"}]}
    if method == "resources/read":
        return {"contents": [{"uri": URI, "mimeType": MIME, "text": PAGE, "_meta": {"ui": {"csp": csp}}}]}
    raise LookupError(method)


def main() -> int:
    csp = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    out = sys.stdout
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            continue
        if not isinstance(request, dict) or "id" not in request:
            continue
        try:
            reply: Dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"], "result": answer(request, csp)}
        except LookupError as exc:
            reply = {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": str(exc)}}
        out.write(json.dumps(reply) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
