"""One HTTP call's state and the helpers that read its response (both HTTP transports use them)."""

from __future__ import annotations

import logging
import socket
from typing import Any, Dict, List, Optional

__all__: List[str] = []

logger = logging.getLogger("mcpsync.transports.http")

ACCEPT_BOTH = "application/json, text/event-stream"
MODERN_META_VERSION = "io.modelcontextprotocol/protocolVersion"
# JSON-RPC error codes a modern server answers with a 4xx (spec: Streamable HTTP, status codes).
MODERN_ERROR_CODES = frozenset({-32022, -32021, -32020, -32602, -32601})
_MAX_ERROR_BODY = 1 << 20


class _Call:
    """One request in flight: its original id, the id currently on the wire, its stream."""

    __slots__ = (
        "orig_id",
        "wire_id",
        "message",
        "method",
        "response",
        "done",
        "cancelled",
        "last_event_id",
        "retry_ms",
        "reissues",
        "timeout",
        "inline",
    )

    def __init__(self, message: Dict[str, Any], timeout: Optional[float]) -> None:
        self.orig_id = message["id"]
        self.wire_id = message["id"]
        self.message = message
        self.method = message.get("method")
        self.response: Any = None
        self.done = False
        self.cancelled = False
        self.last_event_id: Optional[str] = None
        self.retry_ms: Optional[int] = None
        self.reissues = 0
        self.timeout = timeout
        self.inline = False  # read the answer's event stream in the calling thread


def _abort(response: Any) -> None:
    """Wake a thread blocked reading ``response`` (shutdown of the socket; close() alone does not)."""
    if response is None:
        return
    sock = None
    raw = getattr(response, "raw", None)
    conn = getattr(raw, "_connection", None) or getattr(raw, "connection", None)
    sock = getattr(conn, "sock", None)
    if sock is None:
        fp = getattr(getattr(raw, "_fp", None), "fp", None)
        sock = getattr(getattr(fp, "raw", None), "_sock", None)
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _set_read_timeout(response: Any, timeout: Optional[float]) -> None:
    raw = getattr(response, "raw", None)
    conn = getattr(raw, "_connection", None) or getattr(raw, "connection", None)
    sock = getattr(conn, "sock", None)
    if sock is not None:
        try:
            sock.settimeout(timeout)
        except OSError:
            pass


def _is_read_timeout(exc: BaseException) -> bool:
    return type(exc).__name__ in ("ReadTimeout", "ReadTimeoutError") or isinstance(exc, socket.timeout)


def _content_type(response: Any) -> str:
    return (response.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()


def _is_response(msg: Any) -> bool:
    return type(msg) is dict and "method" not in msg and ("result" in msg or "error" in msg)
