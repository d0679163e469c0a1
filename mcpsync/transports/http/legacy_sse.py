"""Legacy HTTP+SSE transport (protocol 2024-11-05; deprecated by the spec, still widely deployed).

The client GETs the SSE URL and waits for the ``endpoint`` event; its data is a URI
resolved against the SSE URL per RFC 3986 (so ``/prefix/sse`` + ``messages?sid=1``
gives ``/prefix/messages?sid=1``). An endpoint on another origin is refused. Every
client message is POSTed there; answers and server messages arrive on the stream,
read by the thread ``mcpsync-sse-reader:<name>``.

When the stream drops, the calls waiting for an answer fail with
:class:`~mcpsync.errors.ConnectionClosed` (their answers went with the old server session),
and the transport reconnects with capped backoff (honouring ``retry:``). The new
stream is a new server session, so the remembered ``initialize`` and
``notifications/initialized`` are replayed before new messages flow. When
reconnecting fails ``max_reconnect_attempts`` times in a row, ``sink.on_close`` is
called with the last error.
"""

from __future__ import annotations

import itertools
import logging
import random
import threading
import time
from typing import Any, Dict, Iterator, Optional, Set, Tuple
from urllib.parse import urljoin, urlsplit

from ..._threads import join, spawn
from ...errors import (
    ConnectError,
    ConnectionClosed,
    MCPError,
    ProtocolError,
    RequestTimeout,
    TransportError,
    seconds_text,
)
from ...wire import jsonrpc
from ...wire.sse import EventParser, SSEEvent, iter_response_bytes
from ..base import Transport, TransportSink
from .calls import _abort, _content_type, _is_read_timeout, _is_response, _release, deliver
from .endpoint import RemoteEndpoint
from .contract import redact_url
from .remote import convert_request_exception, error_for_status

__all__ = ["SSETransport", "endpoint_url"]

logger = logging.getLogger(__name__)


def endpoint_url(base: str, data: str) -> Tuple[Optional[str], str]:
    """The URL to POST messages to, from the ``endpoint`` event ``data`` of the stream at ``base``.

    Returns ``(url, "")`` or ``(None, why)``. The origin is judged with the standard library's parser, the one
    the pools route requests with, and must be ``base``'s. Backslashes, control characters, whitespace and userinfo
    are refused outright (parsers disagree about them). The URL returned is ``base``'s origin plus the
    endpoint's path and query, so what is POSTed to never depends on how a parser reads the endpoint's authority.
    """
    if not data:
        return None, "empty endpoint"
    if any(c == "\\" or ord(c) <= 0x20 or ord(c) == 0x7F for c in data):
        return None, "backslash, whitespace or control character in the endpoint"
    try:
        resolved = urljoin(base, data)
        ours, base_std = urlsplit(resolved), urlsplit(base)
        std_port, base_std_port = ours.port, base_std.port
    except ValueError as exc:
        return None, "unparsable endpoint (%s)" % exc
    if "@" in ours.netloc:
        return None, "userinfo in the endpoint"
    default = {"http": 80, "https": 443}

    def key(scheme: Optional[str], host: Optional[str], port: Optional[int]) -> Tuple[str, str, int]:
        s = (scheme or "").lower()
        return s, (host or "").lower().strip("[]"), port or default.get(s, 0)

    want = key(base_std.scheme, base_std.hostname, base_std_port)
    if key(ours.scheme, ours.hostname, std_port) != want:
        return None, "another origin (%s)" % redact_url(resolved)
    path = ours.path or "/"
    origin = "%s://%s" % (base_std.scheme.lower(), base_std.netloc.rpartition("@")[2])
    return origin + path + ("?" + ours.query if ours.query else ""), ""


class _Connection:
    """One GET stream and the endpoint it announced."""

    def __init__(self, response: Any) -> None:
        self.response = response
        self.endpoint: Optional[str] = None
        self.ready = threading.Event()  # endpoint known, or the stream is over
        self.error: Optional[BaseException] = None
        self.events: Iterator[SSEEvent] = iter(())


class SSETransport(Transport):
    """A legacy HTTP+SSE (2024-11-05) connection.

    Args:
        url: the SSE URL (``https://host/sse``).
        name: the server's display name; defaults to the host.
        reconnect: reconnect (and re-initialize) when the stream drops.
        max_reconnect_attempts: consecutive failed reconnects before giving up.
        max_retry_delay: cap in seconds of the reconnect backoff.
        **options: the HTTP options (``headers``, ``bearer_token``, ``auth``, ``verify``, ``cert``,
            ``proxies``, ``trust_env``, ``connect_timeout``, ``read_timeout``, ``max_message_size``).
    """

    kind = "sse"
    send_blocks_for_response = False

    def __init__(
        self,
        url: str,
        *,
        name: Optional[str] = None,
        reconnect: bool = True,
        max_reconnect_attempts: int = 5,
        max_retry_delay: float = 30.0,
        **options: Any,
    ) -> None:
        remote = self._remote = RemoteEndpoint(url, name, options, "SSE", max_retry_delay)
        self.url, self.options, self.name = remote.url, remote.options, remote.name
        self._net, self._drops, self._lock, self._closing = remote.net, remote.drops, remote.lock, remote.closing
        self._reconnect = reconnect
        self._max_attempts = max(0, int(max_reconnect_attempts))
        self._conn: Optional[_Connection] = None
        self._reader: Optional[threading.Thread] = None
        self._pending: Set[Any] = set()
        self._version: Optional[str] = None
        self._init_msg: Optional[Dict[str, Any]] = None
        self._initialized_msg: Optional[Dict[str, Any]] = None
        self._reinit_id: Optional[str] = None
        self._usable = threading.Event()  # set when messages may be POSTed (not re-initializing)
        self._ids = itertools.count(1)
        self._last_event_id: Optional[str] = None
        self._retry_ms: Optional[int] = None

    # ------------------------------------------------------------------ contract

    @property
    def endpoint(self) -> Optional[str]:
        """The URL messages are POSTed to (from the ``endpoint`` event)."""
        conn = self._conn
        return conn.endpoint if conn else None

    def describe(self) -> str:
        return "HTTP+SSE %s" % redact_url(self.url)

    def set_protocol(self, version: str, era: str) -> None:
        self._version = version

    def start(self, sink: TransportSink) -> None:
        """GET the SSE URL and wait (``connect_timeout``) for the ``endpoint`` event.

        Raises :class:`~mcpsync.errors.ConnectError` (network, no endpoint, cross-origin endpoint),
        :class:`~mcpsync.errors.AuthRequired` / :class:`~mcpsync.errors.InsufficientScope` (401/403) or
        :class:`~mcpsync.errors.HTTPStatusError` (any other status).
        """
        self._remote.attach(sink)
        try:
            conn = self._open()
        except MCPError as exc:
            self._shutdown_http()
            raise exc.with_context(server=self.name)
        self._conn = conn
        self._usable.set()

    def send(self, message: Dict[str, Any]) -> None:
        """POST one message to the endpoint; answers arrive on the stream."""
        if self._remote.closed:
            raise ConnectionClosed("transport is closed", server=self.name)
        if type(message) is not dict:
            raise ProtocolError("send one message at a time", server=self.name)
        method = message.get("method")
        is_request = method is not None and "id" in message
        if method == "initialize":
            self._init_msg = message
        elif method == "notifications/initialized":
            self._initialized_msg = message
        if is_request:
            with self._lock:
                self._pending.add(message["id"])
        try:
            self._post(message)
        except MCPError as exc:
            if not is_request:
                raise
            with self._lock:
                self._pending.discard(message["id"])
            exc.with_context(server=self.name, method=method, request_id=message["id"])
            if isinstance(exc, RequestTimeout) and method != "initialize":
                self._cancel_unacknowledged(message["id"])
            sink = self._remote.sink
            if sink is not None and not self._remote.closed:
                sink.on_request_error(message["id"], exc)

    def _cancel_unacknowledged(self, request_id: Any) -> None:
        """A request's POST was never acknowledged: tell the server it is abandoned (best effort)."""
        note = jsonrpc.notification(
            "notifications/cancelled", {"requestId": request_id, "reason": "timeout: the POST was not acknowledged"}
        )
        try:
            self._post(note)
        except MCPError as exc:
            logger.debug("[%s] could not send the cancellation: %s", self.name, exc)

    def after_fork_in_child(self) -> None:
        """In a forked child: see :meth:`RemoteEndpoint.after_fork_in_child`."""
        self._remote.after_fork_in_child()

    def close(self, timeout: Optional[float] = None) -> None:
        with self._lock:
            if self._remote.closed:
                return
            self._remote.closed = True
            conn = self._conn
        deadline = time.monotonic() + (5.0 if timeout is None else max(0.0, timeout))
        self._closing.set()
        self._usable.set()
        if conn is not None:
            _abort(conn.response)
        self._net.abort()  # wakes callers blocked on a POST the server never acknowledges
        join(self._reader, max(0.0, deadline - time.monotonic()))
        self._shutdown_http()
        self._remote.report_close(None)

    # ------------------------------------------------------------------ internals

    def _shutdown_http(self) -> None:
        self._net.close()

    def _get_stream(self) -> _Connection:
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-cache"}
        if self._last_event_id:
            headers["Last-Event-ID"] = self._last_event_id
        try:
            response = self._net.get(self.url, headers, (self.options.connect_timeout, None))
        except Exception as exc:  # noqa: BLE001
            _release(exc)
            raise convert_request_exception(exc, self.url) from None
        if not 200 <= response.status_code < 300:
            try:
                raise error_for_status(response, what="GET (SSE stream)")
            finally:
                response.close()
        if _content_type(response) != "text/event-stream":
            status = response.status_code
            response.close()
            raise ConnectError("HTTP %d from %s is not an event stream" % (status, redact_url(self.url)))
        conn = _Connection(response)
        conn.events = self._events(conn)
        with self._lock:
            if self._remote.closed:
                response.close()
                raise ConnectionClosed("transport is closed")
            self._conn = conn
        return conn

    def _open(self) -> _Connection:
        conn = self._get_stream()
        self._reader = spawn("mcpsync-sse-reader:%s" % self.name, self._read_loop, conn)
        wait = self.options.connect_timeout
        if not conn.ready.wait(wait):
            _abort(conn.response)
            raise ConnectError("no endpoint event from %s within %s" % (redact_url(self.url), seconds_text(wait)))
        if conn.endpoint is None:
            err = conn.error or ConnectError("the SSE stream ended before the endpoint event")
            raise err if isinstance(err, MCPError) else ConnectError(str(err))
        return conn

    def _ack_timeout(self) -> float:
        """How long a POST may wait for its acknowledgement (the answer itself comes on the stream)."""
        read = self.options.read_timeout
        return read if read is not None else (self.options.connect_timeout or 30.0)

    def _post(self, message: Dict[str, Any], force: bool = False) -> None:
        if not force and not self._usable.is_set():
            if not self._usable.wait(self.options.connect_timeout or None):
                raise ConnectionClosed("reconnecting to the server took too long")
        if self._remote.closed:
            raise ConnectionClosed("transport is closed")
        conn = self._conn
        if conn is None or conn.endpoint is None:
            raise ConnectionClosed("not connected")
        extra = self.request_headers(message)  # an interceptor's headers (protocol headers win)
        headers = dict(extra) if extra else {}
        headers["Content-Type"] = "application/json"
        if self._version:
            headers["MCP-Protocol-Version"] = self._version
        try:
            response = self._net.send(
                "POST",
                conn.endpoint,
                jsonrpc.encode(message),
                headers,
                (self.options.connect_timeout, self._ack_timeout()),
            )
        except Exception as exc:  # noqa: BLE001
            _release(exc)
            if self._remote.closed:
                raise ConnectionClosed("transport is closed") from None
            if _is_read_timeout(exc):
                seconds = self._ack_timeout()
                raise RequestTimeout(
                    "the server did not acknowledge the message within %s" % seconds_text(seconds), timeout=seconds
                ) from None
            raise convert_request_exception(exc, conn.endpoint) from None
        try:
            if 200 <= response.status_code < 300:
                try:
                    for _ in iter_response_bytes(response, 65536):
                        pass
                    response.release_conn()
                except Exception:  # noqa: BLE001 - accepted anyway
                    pass
                return
            raise error_for_status(response, what=message.get("method") or "response")
        finally:
            response.close()

    def _events(self, conn: _Connection) -> Iterator[SSEEvent]:
        parser = EventParser(self.options.max_message_size)
        for chunk in iter_response_bytes(conn.response):
            for ev in parser.feed(chunk):
                yield ev

    def _pump(self, conn: _Connection, until_endpoint: bool = False) -> bool:
        """Read events of ``conn``; True when stopped at the endpoint event, False when the stream ended."""
        try:
            for ev in conn.events:
                try:
                    self._on_event(conn, ev)
                except Exception as exc:  # noqa: BLE001 - one bad event never ends the stream
                    self._drops.drop("event handler error: %s" % type(exc).__name__, str(exc)[:200])
                if until_endpoint and conn.endpoint is not None:
                    return True
        except Exception as exc:  # noqa: BLE001 - the stream broke: the reconnect policy decides
            _release(exc)
            if not self._remote.closed:
                logger.debug("[%s] SSE stream broken: %r", self.name, exc)
                if conn.error is None:
                    conn.error = convert_request_exception(exc, self.url)
        return False

    def _read_loop(self, conn: _Connection) -> None:
        self._pump(conn)
        conn.response.close()
        conn.ready.set()
        if self._remote.closed or conn.endpoint is None:
            return  # closed, or start() failed and reports it
        attempts = 0
        error: Optional[BaseException] = conn.error
        while True:
            self._usable.clear()
            self._fail_pending(ConnectionClosed("the SSE stream ended; the server session was lost"))
            if not self._reconnect:
                self._remote.report_close(ConnectionClosed("the SSE stream ended", server=self.name))
                return
            while True:
                attempts += 1
                if attempts > self._max_attempts:
                    self._remote.report_close(
                        ConnectionClosed(
                            "the SSE stream ended and reconnecting failed: %s" % (error or "no endpoint"),
                            server=self.name,
                        )
                    )
                    return
                if attempts == 1:
                    logger.warning("[%s] SSE stream lost; reconnecting", self.name)
                if self._closing.wait(self._delay(attempts)):
                    return
                try:
                    conn = self._reopen()
                except Exception as exc:  # noqa: BLE001
                    error = exc
                    logger.debug("[%s] reconnect attempt %d failed: %r", self.name, attempts, exc)
                    continue
                break
            attempts = 0
            logger.info("[%s] SSE stream reconnected", self.name)
            self._pump(conn)
            conn.response.close()
            if self._remote.closed:
                return
            error = conn.error

    def _reopen(self) -> _Connection:
        conn = self._get_stream()
        if not self._pump(conn, until_endpoint=True):
            conn.response.close()
            raise conn.error or ConnectionClosed("the new SSE stream ended before the endpoint event")
        if self._init_msg is None:
            self._usable.set()
            return conn
        msg = dict(self._init_msg)
        msg["id"] = self._reinit_id = "mcpsync-reinit-%d" % next(self._ids)
        try:
            self._post(msg, force=True)
        except Exception:
            conn.response.close()
            raise
        return conn

    def _on_event(self, conn: _Connection, ev: SSEEvent) -> None:
        if ev.id is not None:
            self._last_event_id = ev.id or None
        if ev.retry is not None:
            self._retry_ms = ev.retry
        if ev.event == "endpoint":
            self._on_endpoint(conn, ev.data.decode("utf-8", "replace").strip())
            return
        if ev.oversized:
            self._drops.drop("event larger than the maximum message size")
            return
        if ev.event != "message" or not ev.data:
            return
        try:
            frame = jsonrpc.decode(ev.data)
        except ProtocolError as exc:
            self._drops.drop("undecodable event", str(exc)[:200])
            return
        reinit = self._reinit_id
        for msg in jsonrpc.iter_messages(frame):
            if _is_response(msg):
                mid = msg.get("id")
                if not jsonrpc.is_valid_id(mid):
                    continue  # an object/array/float id answers nothing of ours (the session drops it)
                if reinit is not None and type(mid) is type(reinit) and mid == reinit:
                    self._finish_reinit(msg)
                    return
                if type(mid) in (int, str):
                    with self._lock:
                        self._pending.discard(mid)
        sink = self._remote.sink
        if sink is not None and not self._remote.closed:
            deliver(sink, frame, self._drops)

    def _on_endpoint(self, conn: _Connection, data: str) -> None:
        if conn.endpoint is not None:
            return
        base = getattr(conn.response, "url", None) or self.url
        endpoint, problem = endpoint_url(base, data)
        if endpoint is None:
            conn.error = ConnectError(
                "the server announced an unacceptable message endpoint (%s); refused" % problem,
                server=self.name,
            )
            logger.error("[%s] %s", self.name, conn.error.message)
            _abort(conn.response)
            conn.ready.set()
            return
        conn.endpoint = endpoint
        logger.debug("[%s] message endpoint %s", self.name, redact_url(endpoint))
        conn.ready.set()

    def _finish_reinit(self, msg: Dict[str, Any]) -> None:
        self._reinit_id = None
        if "error" in msg:
            logger.warning("[%s] re-initializing after a reconnect failed: %s", self.name, msg.get("error"))
            _abort(self._conn.response if self._conn else None)
            return
        note = self._initialized_msg or jsonrpc.notification("notifications/initialized")
        try:
            self._post(note, force=True)
        except Exception as exc:  # noqa: BLE001
            logger.warning("[%s] notifications/initialized after a reconnect failed: %r", self.name, exc)
        self._usable.set()

    def _fail_pending(self, exc: TransportError) -> None:
        with self._lock:
            ids = list(self._pending)
            self._pending.clear()
        sink = self._remote.sink
        if sink is None or self._remote.closed:
            return
        for rid in ids:
            sink.on_request_error(rid, ConnectionClosed(exc.message, server=self.name, request_id=rid))

    def _delay(self, attempt: int) -> float:
        if self._retry_ms is not None and attempt == 1:
            return min(self._remote.max_retry_delay, self._retry_ms / 1000.0)
        return min(self._remote.max_retry_delay, 0.5 * 2.0 ** (attempt - 1)) * (0.8 + 0.4 * random.random())
