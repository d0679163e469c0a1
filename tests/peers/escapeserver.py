"""A hostile stdio MCP server whose every string carries terminal escape sequences, for tests/cli/test_cli_terminal.py.

    python tests/peers/escapeserver.py

Its server name, tool names, descriptions, argument names, results, log messages, error messages and the
resource it serves all contain ``ESC[2J`` (clear the screen), ``ESC]0;pwned BEL`` (set the window title),
a bare CR, a C1 CSI (U+009B) and a right-to-left override (U+202E). Handshake era only (``server/discover``
is answered with "method not found"). Standard library only; newline-delimited JSON-RPC on stdin/stdout.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Dict

EVIL = "\x1b[2J\x1b]0;pwned\x07\rX\u009b31m\u202e"


def answer(request: Dict[str, Any]) -> Dict[str, Any]:
    method, params = request.get("method"), request.get("params") or {}
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}, "resources": {}, "logging": {}},
            "serverInfo": {"name": "evil" + EVIL, "version": "1" + EVIL},
            "instructions": "read me" + EVIL,
        }
    if method == "tools/list":
        schema = {"type": "object", "properties": {"arg" + EVIL: {"type": "string"}}}
        return {
            "tools": [
                {"name": "echo", "description": "echoes" + EVIL, "inputSchema": schema},
                {"name": "tool" + EVIL, "description": "named badly", "inputSchema": {"type": "object"}},
            ]
        }
    if method == "tools/call":
        if params.get("name") == "boom":
            raise LookupError("boom")  # a JSON-RPC error whose message carries the escapes
        if params.get("name") == "fail":
            return {"content": [{"type": "text", "text": "failed" + EVIL}], "isError": True}
        return {"content": [{"type": "text", "text": "result" + EVIL}]}
    if method == "resources/list":
        return {"resources": [{"uri": "evil://file", "name": "file" + EVIL, "mimeType": "text/plain"}]}
    if method == "resources/read":
        return {"contents": [{"uri": "evil://file", "mimeType": "text/plain", "text": "contents" + EVIL}]}
    if method == "logging/setLevel":
        return {}
    raise LookupError(method)


def main() -> int:
    out = sys.stdout
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            continue
        if not isinstance(request, dict) or "id" not in request:
            continue
        try:
            result = answer(request)
        except LookupError:
            reply = {"code": -32601, "message": "no method" + EVIL}
            out.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": reply}) + "\n")
        else:
            if request.get("method") == "tools/call":
                note = {"level": "info", "data": "log" + EVIL}
                out.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": note}) + "\n")
            out.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
