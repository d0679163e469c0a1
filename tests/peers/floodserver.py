"""A stdio MCP server that floods its client on purpose (issue 18, defect 4).

Run as ``python tests/peers/floodserver.py``; newline-delimited JSON-RPC on stdin/stdout, both eras
(``initialize`` and ``server/discover``). Its tools:

* ``flood {count, method, level}``: writes ``count`` notifications of ``method`` (default
  ``notifications/custom``; ``notifications/message`` gets ``level``) in one burst, then answers.
* ``ask {count}``: sends ``count`` ``sampling/createMessage`` requests to the client (ids ``s<n>``),
  then answers at once without waiting for them.
* ``answers {errors, results, timeout}``: waits (at most ``timeout`` s) until at least ``errors``
  error answers and ``results`` result answers to its requests arrived; returns them as
  structured content ``{"errors": {id: error}, "results": [ids]}``.

Nothing here is imported by the library.
"""

from __future__ import annotations

import json
import sys
import threading
from typing import Any, Dict, List

MODERN = "2026-07-28"

_out_lock = threading.Lock()
_cond = threading.Condition()
_errors: Dict[str, Any] = {}
_results: List[str] = []
_next = [0]


def _write(*messages: Dict[str, Any]) -> None:
    data = b"".join(json.dumps(m, separators=(",", ":")).encode() + b"\n" for m in messages)
    with _out_lock:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


def _result(rid: Any, result: Dict[str, Any]) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def _tool_result(text: str, structured: Any = None) -> Dict[str, Any]:
    out: Dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": False}
    if structured is not None:
        out["structuredContent"] = structured
    return out


def _flood(rid: Any, args: Dict[str, Any]) -> None:
    count = int(args.get("count", 1))
    method = str(args.get("method", "notifications/custom"))
    level = str(args.get("level", "info"))
    notes = []
    for i in range(count):
        params: Dict[str, Any] = {"n": i}
        if method == "notifications/message":
            params = {"level": level, "data": "flood %d" % i}
        notes.append({"jsonrpc": "2.0", "method": method, "params": params})
    _write(*notes, _result(rid, _tool_result("flooded %d" % count)))


def _ask(rid: Any, args: Dict[str, Any]) -> None:
    count = int(args.get("count", 1))
    asks = []
    for _ in range(count):
        _next[0] += 1
        asks.append(
            {
                "jsonrpc": "2.0",
                "id": "s%d" % _next[0],
                "method": "sampling/createMessage",
                "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5},
            }
        )
    _write(*asks, _result(rid, _tool_result("asked %d" % count)))


def _answers(rid: Any, args: Dict[str, Any]) -> None:
    want_errors = int(args.get("errors", 0))
    want_results = int(args.get("results", 0))
    timeout = float(args.get("timeout", 30))
    with _cond:
        _cond.wait_for(lambda: len(_errors) >= want_errors and len(_results) >= want_results, timeout)
        snapshot = {"errors": dict(_errors), "results": list(_results)}
    _write(_result(rid, _tool_result("answers", snapshot)))


_TOOLS = {"flood": _flood, "ask": _ask, "answers": _answers}


def _handle(msg: Dict[str, Any]) -> None:
    method = msg.get("method")
    rid = msg.get("id")
    if method is None:  # an answer to one of our requests
        with _cond:
            if "error" in msg:
                _errors[str(rid)] = msg["error"]
            else:
                _results.append(str(rid))
            _cond.notify_all()
        return
    if rid is None:
        return  # notifications/initialized, cancellations
    if method == "initialize":
        offered = msg.get("params", {}).get("protocolVersion", "2025-06-18")
        _write(
            _result(
                rid,
                {
                    "protocolVersion": offered,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "flood", "version": "1"},
                },
            )
        )
    elif method == "server/discover":
        _write(
            _result(
                rid,
                {
                    "supportedVersions": [MODERN],
                    "capabilities": {"tools": {}},
                    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "flood", "version": "1"}},
                },
            )
        )
    elif method == "tools/list":
        _write(_result(rid, {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in _TOOLS]}))
    elif method == "tools/call":
        params = msg.get("params", {})
        fn = _TOOLS[params["name"]]
        args = params.get("arguments") or {}
        if params["name"] == "answers":  # waits: off the reading thread
            threading.Thread(target=fn, args=(rid, args), daemon=True).start()
        else:
            fn(rid, args)
    elif method == "ping":
        _write(_result(rid, {}))
    else:
        _write({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}})


def main() -> None:
    for line in sys.stdin.buffer:
        line = line.strip()
        if line:
            _handle(json.loads(line))


if __name__ == "__main__":
    main()
