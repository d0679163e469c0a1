"""A raw, minimal NDJSON MCP echo server for benchmarks: ``python -m mcpsync.example_server.echo``.

It answers ``initialize`` (legacy), ignores notifications, answers
``server/discover`` (modern, 2026-07-28), ``ping``, ``tools/list`` and
``tools/call`` of ``echo`` (text content = ``arguments.message``), and nothing
else (-32601). One thread: read a line, ``json.loads``, ``json.dumps``, write,
flush. No validation beyond what is needed, so it is never the bottleneck.

``--handshake-only`` makes it a server of the handshake era only: ``server/discover`` is then
an unknown method (-32601), as older servers answer it.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Dict

_MODERN = "2026-07-28"
_LEGACY = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
_INFO = {"name": "mcpsync-echo", "version": "1.0.0"}
_TOOLS = [
    {
        "name": "echo",
        "description": "Echo the message.",
        "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
    }
]
_CAPS: Dict[str, Any] = {"tools": {}}


def main() -> int:
    """Serve stdin/stdout until EOF."""
    handshake_only = "--handshake-only" in sys.argv[1:]
    readline = sys.stdin.buffer.readline
    out = sys.stdout.buffer
    write = out.write
    flush = out.flush
    loads = json.loads
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    while True:
        line = readline()
        if not line:
            return 0
        try:
            msg = loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict) or "id" not in msg:
            continue  # notifications (and anything odd) get no answer
        method = msg.get("method")
        params = msg.get("params")
        if not isinstance(params, dict):
            params = {}
        result: Dict[str, Any]
        modern = isinstance(params.get("_meta"), dict) and "io.modelcontextprotocol/protocolVersion" in params["_meta"]
        if method == "tools/call":
            args = params.get("arguments") or {}
            result = {"content": [{"type": "text", "text": str(args.get("message", ""))}]}
        elif method == "initialize":
            wanted = params.get("protocolVersion")
            result = {
                "protocolVersion": wanted if wanted in _LEGACY else _LEGACY[0],
                "capabilities": _CAPS,
                "serverInfo": _INFO,
            }
        elif method == "server/discover" and not handshake_only:
            result = {
                "supportedVersions": [_MODERN] + list(_LEGACY),
                "capabilities": _CAPS,
                "serverInfo": _INFO,
                "_meta": {"io.modelcontextprotocol/serverInfo": _INFO},
                "ttlMs": 0,
                "cacheScope": "public",
            }
        elif method == "tools/list":
            result = {"tools": _TOOLS}
            if modern:
                result["ttlMs"] = 0
                result["cacheScope"] = "public"
        elif method == "ping":
            result = {}
        else:
            write(
                dumps(
                    {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}}
                ).encode("utf-8")
                + b"\n"
            )
            flush()
            continue
        if modern:
            result["resultType"] = "complete"
        write(dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode("utf-8") + b"\n")
        flush()


if __name__ == "__main__":
    sys.exit(main())
