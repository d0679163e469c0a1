"""A real stdio MCP server that serves Agent Skills (SEP-2640), for tests/skills/test_skills.py.

    python tests/peers/skillserver.py CONFIG.json

CONFIG is a JSON object:

- ``skills``: a list of skill entries as ``skills/list`` returns them (``uri``, ``frontmatter``,
  ``resources``); entries may be deliberately wrong (bad digests, sizes, frontmatter, shapes);
- ``files``: ``{uri: text}``, what ``resources/read`` returns for each URI;
- ``log``: a path; every request and notification the server receives is appended to it as one
  JSON line (``{"method": ..., "params": ...}``), so a test sees exactly what the client fetched;
- ``extension``: false to leave the skills extension out of the capabilities (default true);
- ``page_size``: entries per ``skills/list`` page (default: all on one page);
- ``modern``: true to also answer ``server/discover`` (the 2026-07-28 era); default: handshake era only.

``skills`` and ``files`` are re-read from CONFIG on every request, so a test may change them between calls.

Standard library only; newline-delimited JSON-RPC on stdin/stdout.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Dict, Optional

EXTENSION = "io.modelcontextprotocol/skills"
MODERN = "2026-07-28"


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as f:
        config: Dict[str, Any] = json.load(f)
    skills = config.get("skills") or []
    files: Dict[str, str] = config.get("files") or {}
    page_size = int(config.get("page_size") or 0) or max(len(skills), 1)
    caps: Dict[str, Any] = {"resources": {}}
    if config.get("extension", True):
        caps["extensions"] = {EXTENSION: {}}

    def send(msg: Dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()

    def modern_result(result: Dict[str, Any]) -> Dict[str, Any]:
        return dict(result, resultType="complete")

    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        with open(sys.argv[1], encoding="utf-8") as f:
            fresh = json.load(f)
        skills = fresh.get("skills") or []
        files = fresh.get("files") or {}
        msg = json.loads(line)
        method = msg.get("method")
        params = msg.get("params") or {}
        if config.get("log"):
            with open(config["log"], "a", encoding="utf-8") as f:
                f.write(json.dumps({"method": method, "params": params}) + "\n")
        if "id" not in msg or method is None:
            continue
        rid = msg["id"]
        modern = isinstance(params.get("_meta"), dict) and "io.modelcontextprotocol/protocolVersion" in params["_meta"]
        result: Optional[Dict[str, Any]] = None
        error: Optional[Dict[str, Any]] = None
        if method == "initialize":
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": caps,
                "serverInfo": {"name": "skillserver", "version": "1.0.0"},
            }
        elif method == "server/discover":
            if config.get("modern"):
                result = {
                    "supportedVersions": [MODERN],
                    "capabilities": caps,
                    "serverInfo": {"name": "skillserver", "version": "1.0.0"},
                    "ttlMs": 0,
                    "cacheScope": "private",
                }
            else:
                error = {"code": -32601, "message": "Method not found"}
        elif method == "skills/list":
            start = int(params.get("cursor") or 0)
            page = skills[start : start + page_size]
            result = {"skills": page}
            if start + page_size < len(skills):
                result["nextCursor"] = str(start + page_size)
            if modern:
                result.update(ttlMs=0, cacheScope="private")
        elif method == "skills/get":
            match = [s for s in skills if isinstance(s, dict) and s.get("uri") == params.get("uri")]
            if match:
                result = {"skill": match[0]}
            else:
                error = {"code": -32602, "message": "Unknown skill"}
        elif method == "resources/read":
            uri = params.get("uri")
            if uri in files:
                result = {"contents": [{"uri": uri, "mimeType": "text/markdown", "text": files[uri]}]}
                if modern:
                    result.update(ttlMs=0, cacheScope="private")
            else:
                error = {"code": -32002, "message": "Resource not found"}
        elif method == "ping":
            result = {}
        else:
            error = {"code": -32601, "message": "Method not found"}
        if error is not None:
            send({"jsonrpc": "2.0", "id": rid, "error": error})
        else:
            assert result is not None
            send({"jsonrpc": "2.0", "id": rid, "result": modern_result(result) if modern else result})
    return 0


if __name__ == "__main__":
    sys.exit(main())
