"""One HTTP call's state and the helpers that read its response (both HTTP transports use them)."""

from __future__ import annotations

import socket
import sys
import time
import traceback
from typing import Any, Dict, List, Optional, Tuple

from ...errors import MCPError, MessageTooLarge
from ...wire.drops import DropLog
from ...wire.sse import iter_response_bytes

__all__: List[str] = []


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
        "progress_token",
        "last_progress",
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
        # the idle timeout restarts only on notifications/progress carrying this token
        self.progress_token = _progress_token(message)
        self.last_progress = time.monotonic()

    def note_progress(self, msg: Any) -> None:
        """Restart the idle clock when ``msg`` is a ``notifications/progress`` for this call."""
        token = self.progress_token
        if token is None or type(msg) is not dict or msg.get("method") != "notifications/progress":
            return
        params = msg.get("params")
        got = params.get("progressToken") if type(params) is dict else None
        if got is None or type(got) in (dict, list):
            return
        if got == token or (type(got) is str and type(token) is int and got == str(token)):
            self.last_progress = time.monotonic()

    def idle_left(self) -> Optional[float]:
        """Seconds until the idle timeout expires (counted from the last progress), or None without one."""
        if self.timeout is None:
            return None
        return self.last_progress + self.timeout - time.monotonic()


def _progress_token(message: Dict[str, Any]) -> Any:
    params = message.get("params")
    if type(params) is dict:
        meta = params.get("_meta")
        if type(meta) is dict:
            token = meta.get("progressToken")
            if type(token) in (int, str):
                return token
    return None


def _abort(response: Any) -> None:
    """Wake a thread blocked reading ``response`` (its socket is shut down; close() alone does not)."""
    if response is None:
        return
    shutdown = getattr(response, "shutdown", None)
    if shutdown is not None:
        shutdown()


def _set_read_timeout(response: Any, timeout: Optional[float], slack: float = 0.0) -> None:
    """Bound the next reads of ``response`` by ``timeout`` seconds (None: no bound).

    ``settimeout`` is a system call that releases the GIL (costly with many threads), so it is skipped
    when the socket already holds ``timeout``, or, with ``slack``, a value at most ``slack`` times
    ``timeout`` (at least 10 ms) above it: the bound then ends at most that much later.
    """
    own = getattr(response, "set_read_timeout", None)
    if own is not None:  # a PoolResponse (the socket timeout, set only when it changes) or a body in memory
        own(timeout, slack)


def _is_read_timeout(exc: BaseException) -> bool:
    """True for a read timeout however it is wrapped (the pools' ReadTimeout, a bare ``socket.timeout``, urllib3's
    ``ReadTimeoutError``, or ``requests``' ``ReadTimeout``, which a user's ``requests`` auth may raise, inside a
    ProtocolError), following ``reason``, exception ``args``, causes and contexts. A connect timeout is not a read
    timeout. Recognised by class (``requests``' only when it is imported already).

    An :class:`~mcpsync.MCPError` is never one: it was classified where it was raised (a
    ``CredentialStoreError`` from an ``auth=`` hook whose Redis timed out stays that, issue 18), and a
    context suppressed with ``raise ... from None`` is not followed."""
    if isinstance(exc, MCPError):
        return False
    from urllib3.exceptions import ConnectTimeoutError, ReadTimeoutError

    from .contract import ConnectTimeout, ReadTimeout

    connect_kinds: Tuple[type, ...] = (ConnectTimeout, ConnectTimeoutError)
    read_kinds: Tuple[type, ...] = (ReadTimeout, ReadTimeoutError, socket.timeout)
    requests = sys.modules.get("requests")
    if requests is not None:
        connect_kinds += (requests.exceptions.ConnectTimeout,)
        read_kinds += (requests.exceptions.ReadTimeout,)
    seen = set()
    todo: List[BaseException] = [exc]
    while todo:
        cur = todo.pop(0)
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        if isinstance(cur, connect_kinds):
            return False
        if isinstance(cur, read_kinds):
            return True
        context = None if cur.__suppress_context__ else cur.__context__
        for nxt in (getattr(cur, "reason", None), *getattr(cur, "args", ()), cur.__cause__, context):
            if isinstance(nxt, BaseException):
                todo.append(nxt)
    return False


def _content_type(response: Any) -> str:
    return (response.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()


def _is_response(msg: Any) -> bool:
    return type(msg) is dict and "method" not in msg and ("result" in msg or "error" in msg)


def deliver(sink: Any, frame: Any, drops: DropLog) -> None:
    """Hand one frame to the sink; a failure while handling it drops that frame only.

    The reader that called this keeps reading: one bad frame never fails other calls or ends a
    stream. Dropped frames are logged through ``drops`` (one warning per kind, then rate-limited).
    """
    try:
        sink.on_message(frame)
    except Exception as exc:  # noqa: BLE001 - isolate the frame
        drops.drop("frame handler error: %s" % type(exc).__name__, str(exc)[:200])


def read_body(response: Any, limit: int, server: str) -> bytes:
    """Read a whole (non-stream) response body, at most ``limit`` bytes, and release the connection.

    Raises :class:`~mcpsync.errors.MessageTooLarge` (a ``Content-Length`` or a body above ``limit``), or what
    the read raises. Blocks for the read (bounded by the response's read timeout).
    """
    length = response.headers.get("Content-Length") or ""
    known = length.isdigit()
    if known and int(length) > limit:
        raise MessageTooLarge(
            "HTTP response of %s bytes exceeds the maximum message size (%d)" % (length, limit), server=server
        )
    if known and not response.headers.get("Content-Encoding"):
        # the whole body at once (one read, not read1 until the empty one): its size is known and within limit
        data: bytes = response.read()
        response.release_conn()
        return data
    parts: List[bytes] = []
    size = 0
    for chunk in iter_response_bytes(response):
        size += len(chunk)
        if size > limit:
            raise MessageTooLarge("HTTP response exceeds the maximum message size (%d)" % limit, server=server)
        parts.append(chunk)
    response.release_conn()
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _release(exc: BaseException) -> None:
    """Drop the frames of a connection failure's tracebacks so the sockets they reference close now.

    urllib3 closes a failed connection, but the half-read response of a reset (and its socket
    file) stays referenced from the traceback's frames, i.e. open until the garbage collector
    breaks the exception's reference cycle. Clearing the frames releases it at once.
    """
    seen = set()
    todo: List[BaseException] = [exc]
    while todo:
        cur = todo.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        if cur.__traceback__ is not None:
            traceback.clear_frames(cur.__traceback__)
        for nxt in (cur.__cause__, cur.__context__, getattr(cur, "reason", None)):
            if isinstance(nxt, BaseException):
                todo.append(nxt)
        for arg in getattr(cur, "args", ()):
            if isinstance(arg, BaseException):
                todo.append(arg)
