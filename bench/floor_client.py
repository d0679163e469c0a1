"""The floor: the least a thread-based stdio MCP client can do.

Popen, one reader thread, a dict of id -> concurrent.futures.Future, json. No validation, no timeouts,
no notifications, no server requests. mcpsync is measured against this (bench/bench_stdio.py).
"""

from __future__ import annotations

import io
import json
import subprocess
import threading
from concurrent.futures import Future
from typing import Any, Dict, List, Optional

MODERN = "2026-07-28"


class FloorClient:
    def __init__(self, command: List[str], modern: bool = False, new_session: bool = False) -> None:
        # new_session: the child gets its own session, as mcpsync starts servers (under load, many children
        # forked at once without it measured 3-4x slower here)
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, start_new_session=new_session
        )
        self._stdin = self.proc.stdin  # unbuffered: one write per message, no flush needed
        # stdout through a 1 MiB buffer (bufsize=0 would make readline read byte by byte)
        self._stdout = io.open(self.proc.stdout.fileno(), "rb", buffering=1 << 20, closefd=False)  # type: ignore[union-attr]
        self._pending: Dict[int, "Future[Any]"] = {}
        self._lock = threading.Lock()
        self._next = 0
        self._meta: Optional[Dict[str, Any]] = {"io.modelcontextprotocol/protocolVersion": MODERN} if modern else None
        self._reader = threading.Thread(target=self._read, name="floor-reader", daemon=True)
        self._reader.start()
        if modern:
            self.request("server/discover", {})
        else:
            self.request(
                "initialize",
                {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "floor", "version": "0"}},
            )
            self._write({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self) -> None:
        readline = self._stdout.readline
        loads = json.loads
        pending = self._pending
        lock = self._lock
        while True:
            line = readline()
            if not line:
                break
            msg = loads(line)
            line = b""
            with lock:
                fut = pending.pop(msg.get("id"), None)
            if fut is not None:
                if "error" in msg:
                    fut.set_exception(RuntimeError(msg["error"]))
                else:
                    fut.set_result(msg["result"])
            msg = None
        with lock:
            left = list(pending.values())
            pending.clear()
        for fut in left:
            fut.set_exception(ConnectionError("server exited"))

    def _write(self, msg: Dict[str, Any]) -> None:
        data = json.dumps(msg, separators=(",", ":")).encode("utf-8") + b"\n"
        with self._lock:  # one writer at a time
            self._stdin.write(data)  # type: ignore[union-attr]

    def request_async(self, method: str, params: Dict[str, Any]) -> "Future[Any]":
        fut: "Future[Any]" = Future()
        if self._meta is not None:
            params = dict(params, _meta=self._meta)
        with self._lock:
            self._next += 1
            rid = self._next
            self._pending[rid] = fut
            self._stdin.write(  # type: ignore[union-attr]
                json.dumps(
                    {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}, separators=(",", ":")
                ).encode("utf-8")
                + b"\n"
            )
        return fut

    def request(self, method: str, params: Dict[str, Any]) -> Any:
        return self.request_async(method, params).result()

    def call_tool(self, name: str, arguments: Dict[str, Any]) -> Any:
        return self.request("tools/call", {"name": name, "arguments": arguments})

    def close(self) -> None:
        try:
            self._stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass
        self.proc.wait(5)
        self._reader.join(5)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
