"""Streamable HTTP transport, both protocol eras (2025-03-26 ... 2025-11-25 handshake era, 2026-07-28).

One :class:`StreamableHTTPTransport` talks to one MCP endpoint through the server's
urllib3 pools (:func:`mcpsync.transports.http.net.make_net`: keep-alive connections, with
the auth, proxies and TLS settings resolved once).

How a request travels
    :meth:`~StreamableHTTPTransport.send` POSTs in the calling thread. An
    ``application/json`` answer is read there and handed to ``sink.on_message``
    before ``send`` returns. A ``text/event-stream`` answer is read in the calling
    thread too when the caller blocks for it anyway (``inline``: a blocking client
    call), else handed to a stream thread (``mcpsync-http-stream:<name>``, pooled);
    either way notifications, progress and (legacy) server requests are delivered in
    order, then the final response.
    Failures of one call (HTTP status, broken stream, auth) go to
    ``sink.on_request_error(request_id, exc)``; ``send`` of a *request* never raises
    for them. ``send`` of a notification or a response raises the typed error.

Handshake era
    ``Mcp-Session-Id`` from the ``initialize`` answer is sent on every later
    request, with ``MCP-Protocol-Version`` once :meth:`set_protocol` was called. A
    404 to a request that carried the session id re-runs the remembered
    ``initialize`` + ``notifications/initialized`` once and replays the request
    once; a second 404 is :class:`~mcpsync.errors.SessionExpired`. The optional GET
    stream runs on ``mcpsync-http-get:<name>`` without a read timeout; 405 (or any
    4xx) stops it quietly. Event ids (priming events included) and ``retry:`` are
    tracked; a response stream cut before its answer is resumed with GET +
    ``Last-Event-ID`` with capped backoff. ``close()`` sends DELETE, best effort.

2026-07-28 era
    Every POST carries ``MCP-Protocol-Version`` (from the body's ``_meta``),
    ``Mcp-Method``, ``Mcp-Name`` (tools/call, resources/read, prompts/get; the task id on
    tasks/get, tasks/update, tasks/cancel) and the
    ``Mcp-Param-*`` headers of the tool's ``x-mcp-header`` annotations (see
    :meth:`register_tools`). :meth:`cancel_request` closes the request's stream. A
    stream that breaks before the answer is re-issued with a new id (the answer is
    reported under the original id). A 4xx whose body is a recognised JSON-RPC
    error (-32022, -32021, -32020, -32602, -32601, or any error carrying the
    request's id) is delivered as that call's JSON-RPC error response; an empty or
    unrecognised 4xx is an :class:`~mcpsync.errors.HTTPStatusError`.

Composition
    The transport owns the table of calls in flight and the POSTs (``send`` runs in the caller's thread:
    it blocks for the answer's headers, bounded by the call's timeout or ``read_timeout``, and for a JSON
    answer's body; ``close`` is bounded by its ``timeout``, 5 s by default). It composes two collaborators
    that get what they use through their constructors (the server's connections, the options, the drop log, the lock,
    the ``closing`` event and closed flag, and callables of the transport), never the transport itself:

    * :class:`~mcpsync.transports.http.handshake.HandshakeSession`: the era, ``MCP-Protocol-Version``,
      ``Mcp-Session-Id``, re-initialize on 404, the GET stream thread, DELETE on close;
    * :class:`~mcpsync.transports.http.streams.EventStreams`: a call's event stream read to its answer
      (in the calling thread or on a stream thread), the idle timeout, resume / re-issue, upstream cancels.

    Every public method is thread-safe; the transport's lock guards the call table and ``call.done``.
"""

from __future__ import annotations

import itertools
import logging
import time
from typing import Any, Dict, List, Optional, Tuple

from ...errors import (
    ConfigError,
    ConnectionClosed,
    HTTPStatusError,
    MCPError,
    ProtocolError,
    SessionExpired,
    TransportError,
)
from ...wire import jsonrpc
from . import headers as _mcpheaders
from .handshake import HandshakeSession
from .streams import EventStreams
from .calls import (
    _MAX_ERROR_BODY,
    deliver,
    ACCEPT_BOTH,
    MODERN_ERROR_CODES,
    MODERN_META_VERSION,
    _abort,
    _Call,
    _content_type,
    _is_read_timeout,
    _is_response,
    _release,
    _set_read_timeout,
    read_body,
)  # noqa: F401
from ..base import Transport, TransportSink
from .endpoint import RemoteEndpoint
from .contract import redact_url
from .remote import convert_request_exception, error_for_status

__all__ = ["StreamableHTTPTransport"]

logger = logging.getLogger(__name__)


class StreamableHTTPTransport(Transport):
    """A Streamable HTTP connection to one MCP endpoint (both protocol eras).

    It POSTs messages and keeps the table of calls in flight (each settled once, only by its own POST's
    answer); it composes a :class:`~mcpsync.transports.http.handshake.HandshakeSession` (era, version,
    session id, re-initialize on 404, the GET stream) and an
    :class:`~mcpsync.transports.http.streams.EventStreams` (a call's event stream, its idle timeout,
    resume / re-issue, upstream cancels).

    Args:
        url: the MCP endpoint (``https://host/mcp``).
        name: the server's display name (thread names, logs, errors); defaults to the host.
        get_stream: open the optional GET stream for server-initiated messages (handshake era).
        max_stream_retries: how many times a cut response stream is resumed (handshake era)
            or re-issued (2026-07-28) before the call fails.
        max_retry_delay: cap in seconds of the reconnect backoff (``retry:`` hints included).
        **options: the :class:`~mcpsync.transports.http.options.HTTPOptions` (``headers``,
            ``bearer_token``, ``auth``, ``verify``, ``cert``, ``proxies``, ``trust_env``,
            ``connect_timeout``, ``read_timeout``, ``max_message_size``, ``pool_maxsize``).
    """

    kind = "http"
    send_blocks_for_response = True

    def __init__(
        self,
        url: str,
        *,
        name: Optional[str] = None,
        get_stream: bool = True,
        max_stream_retries: int = 3,
        max_retry_delay: float = 30.0,
        **options: Any,
    ) -> None:
        remote = self._remote = RemoteEndpoint(url, name, options, "HTTP", max_retry_delay)
        self.url, self.options, self.name = remote.url, remote.options, remote.name
        self._net, self._drops, self._lock, self._closing = remote.net, remote.drops, remote.lock, remote.closing
        self._calls: Dict[Any, _Call] = {}
        self._tool_headers: Dict[str, _mcpheaders.ToolHeaders] = {}
        self._protocol_header_table: Dict[Tuple[Any, Any, Any], Dict[str, str]] = {}  # see _protocol_headers
        self._ids = itertools.count(1)
        session = HandshakeSession(
            remote=remote,
            post=self._post,
            headers_for=self._headers_for,
            on_frame=self._on_server_frame,
            ids=self._ids,
            get_stream=get_stream,
        )
        self._session = session
        self._streams = EventStreams(
            remote=remote,
            era=lambda: session.era,
            deliver=self._deliver,
            fail=self._fail,
            exchange=self._exchange,
            send_oneway=self._send_oneway,
            session_headers=session.stream_headers,
            ids=self._ids,
            max_stream_retries=max(0, int(max_stream_retries)),
        )

    # ------------------------------------------------------------------ contract

    def start(self, sink: TransportSink) -> None:
        """Attach the sink. HTTP has no connection to open: the first POST reveals problems."""
        self._remote.attach(sink)

    def describe(self) -> str:
        return "Streamable HTTP %s" % redact_url(self.url)

    def session_headers(self) -> Dict[str, str]:
        sid = self._session.session_id
        return {"Mcp-Session-Id": sid} if sid else {}

    @property
    def era(self) -> Optional[str]:
        """The era given to :meth:`set_protocol` ("legacy" or "modern"), or None before negotiation."""
        return self._session.era

    @property
    def session_id(self) -> Optional[str]:
        """The current ``Mcp-Session-Id`` (handshake era), or None."""
        return self._session.session_id

    def set_protocol(self, version: str, era: str) -> None:
        """Use ``version`` in ``MCP-Protocol-Version``; start the GET stream in the handshake era."""
        if era not in ("legacy", "modern"):
            raise ConfigError("era must be 'legacy' or 'modern'")
        self._session.set_protocol(version, era)

    def register_tools(self, tools: List[Any]) -> List[Any]:
        """Validate the ``x-mcp-header`` annotations of a ``tools/list`` page.

        Returns the tools to show the user: tools with invalid annotations are dropped
        (one warning each). The header mapping of the others is remembered for
        ``tools/call``. In the handshake era the list is returned unchanged.
        Call it again after every re-list (the mapping of a listed tool is replaced).
        """
        if self._session.era != "modern":
            return list(tools)
        return _mcpheaders.filter_tools(list(tools), self._tool_headers, self.name)

    def cancel_request(self, request_id: Any) -> bool:
        """2026-07-28: close the call's stream (that is the cancellation) and return True.

        Handshake era: return False (the session sends ``notifications/cancelled``;
        a disconnect is not a cancel there) and leave the stream alone.
        """
        if self._session.era != "modern":
            return False
        with self._lock:
            call = self._calls.pop(request_id, None)
        if call is not None:
            call.cancelled = True
            call.done = True
            _abort(call.response)
        return True

    def send(self, message: Dict[str, Any], timeout: Optional[float] = None, inline: bool = False) -> None:
        """POST one message (thread-safe).

        Requests: the answer (or the failure) reaches the sink, never an exception,
        except :class:`~mcpsync.errors.ConnectionClosed` when the transport is closed.
        Notifications and responses: any 2xx is accepted; failures raise.
        ``timeout`` (optional) bounds the wait for the response headers of a request,
        overriding ``read_timeout``. With ``inline`` (a caller that blocks for the answer anyway)
        an event-stream answer is read in the calling thread, with ``timeout`` as the idle bound
        between events: no hand-off to a stream thread. An idle expiry then fails the call with
        :class:`~mcpsync.RequestTimeout` and cancels it (closes the stream; handshake era: also
        ``notifications/cancelled``).
        """
        if self._remote.closed:
            raise ConnectionClosed("transport is closed", server=self.name)
        if type(message) is not dict:
            raise ProtocolError("HTTP transports send one message per POST (no batches)", server=self.name)
        method = message.get("method")
        if method is not None and "id" in message:
            self._send_request(message, timeout, inline)
        elif method == "notifications/cancelled":
            self._send_cancel(message)
        else:
            self._send_oneway(message)

    def _send_cancel(self, message: Dict[str, Any]) -> None:
        """The session cancels a call (handshake era): tell the server, then stop reading its stream.

        Not sent again when this transport already cancelled that call upstream (its own timeout).
        """
        params = message.get("params")
        rid = params.get("requestId") if type(params) is dict else None
        hashable = type(rid) in (int, str)
        with self._lock:
            call = self._calls.pop(rid, None) if hashable else None
        already = hashable and self._streams.cancelled_upstream(rid)
        if call is not None:
            call.cancelled = True
            call.done = True
        try:
            if not already:
                self._send_oneway(message)
        finally:
            if call is not None:
                _abort(call.response)

    def after_fork_in_child(self) -> None:
        """In a forked child: see :meth:`RemoteEndpoint.after_fork_in_child`."""
        self._remote.after_fork_in_child()

    def close(self, timeout: Optional[float] = None) -> None:
        """DELETE the session (best effort), stop every stream and thread; idempotent, bounded."""
        with self._lock:
            if self._remote.closed:
                return
            self._remote.closed = True
            calls = list(self._calls.values())
            self._calls.clear()
        budget = 5.0 if timeout is None else max(0.0, timeout)
        deadline = time.monotonic() + budget
        self._closing.set()
        self._session.stop()
        for call in calls:
            call.cancelled = True
            _abort(call.response)
        # wake every caller now (a POST the server never answers, a connect or TLS handshake that stalls), not
        # after the DELETE: through a stalled proxy the DELETE itself may wait its whole 2 s
        self._net.interrupt()
        self._session.delete(min(2.0, budget / 2))
        self._net.abort()  # wakes callers blocked on a POST the server never answers
        self._streams.stop(max(0.0, deadline - time.monotonic()))
        self._session.join(max(0.0, deadline - time.monotonic()))
        self._net.close()
        self._remote.report_close(None)

    # ------------------------------------------------------------------ headers

    def _headers_for(self, message: Dict[str, Any]) -> Dict[str, str]:
        extra = self.request_headers(message)  # an interceptor's headers (protocol headers below win)
        method = message.get("method")
        params = message.get("params")
        meta_version = None
        if type(params) is dict:
            meta = params.get("_meta")
            if type(meta) is dict:
                v = meta.get(MODERN_META_VERSION)
                if type(v) is str:
                    meta_version = v
        session = self._session
        if meta_version is not None or (session.era == "modern" and method is not None):
            base = self._protocol_headers(meta_version or session.version, method, params)
            headers = {**extra, **base} if extra else dict(base)
            if method == "tools/call" and type(params) is dict:
                spec = self._tool_headers.get(params.get("name"))  # type: ignore[arg-type]
                if spec:
                    headers.update(_mcpheaders.param_headers(spec, params.get("arguments")))
            return headers
        headers = {"Accept": ACCEPT_BOTH, "Content-Type": "application/json"}  # every POST's (a literal: fastest)
        if extra:
            headers = {**extra, **headers}
        if method != "initialize":
            headers.update(session.stream_headers())
        return headers

    def _protocol_headers(self, version: Optional[str], method: Any, params: Any) -> Dict[str, str]:
        """Every POST's headers plus the 2026-07-28 ones of a request: ``MCP-Protocol-Version``, ``Mcp-Method``
        and ``Mcp-Name`` (values encoded by :func:`~.headers.encode_header_value`). Built once per (version,
        method, name) and kept, since a client calls few methods and tools, each many times (at most 256 kept;
        a method or name over 256 characters is built each time). The kept dict is shared: callers copy it.
        Thread-safe (a race builds the same dict twice)."""
        name = _mcpheaders.name_source(method, params) if method is not None else None
        key = (version, method, name)
        headers = self._protocol_header_table.get(key)
        if headers is not None:
            return headers
        headers = {"Accept": ACCEPT_BOTH, "Content-Type": "application/json"}
        if version:
            headers["MCP-Protocol-Version"] = version
        if method is not None:
            headers["Mcp-Method"] = _mcpheaders.encode_header_value(method)
            if name is not None:
                headers["Mcp-Name"] = _mcpheaders.encode_header_value(name)
        if type(method) is str and len(method) <= 256 and len(name or "") <= 256 and len(version or "") <= 256:
            if len(self._protocol_header_table) >= 256:
                self._protocol_header_table.clear()
            self._protocol_header_table[key] = headers
        return headers

    # ------------------------------------------------------------------ requests

    def _send_request(self, message: Dict[str, Any], timeout: Optional[float], inline: bool = False) -> None:
        call = _Call(message, timeout)
        call.inline = inline
        with self._lock:
            self._calls[call.orig_id] = call
        if message.get("method") == "initialize":
            self._session.begin_initialize(message)
        try:
            response = self._exchange(call)
        except BaseException as exc:  # noqa: BLE001 - nothing may escape to the caller but closure
            self._fail(call, exc if isinstance(exc, MCPError) else TransportError("HTTP request failed: %r" % (exc,)))
            if not isinstance(exc, Exception):
                raise
            return
        if response is None:
            return
        if inline:
            try:
                self._streams.read(call, response)
            except BaseException:  # Ctrl-C in the caller: cancel the call, leave nothing open
                call.cancelled = True
                _abort(call.response)
                with self._lock:
                    self._calls.pop(call.orig_id, None)
                self._streams.cancel_upstream(call, "interrupted")
                raise
            return
        if not self._streams.submit(call, response):
            response.close()
            self._fail(call, ConnectionClosed("transport is closed"))

    def _post(self, body: bytes, headers: Dict[str, str], timeout: Optional[float] = None) -> Any:
        read = self.options.read_timeout
        if timeout is not None and (read is None or timeout < read):
            read = timeout  # the call's own timeout binds before the stream read timeout
        return self._net.send("POST", self.url, body, headers, (self.options.connect_timeout, read))

    def _call_timeout_binds(self, call: _Call) -> bool:
        read = self.options.read_timeout
        return call.timeout is not None and (read is None or call.timeout < read)

    def _read_bound(self, call: _Call) -> Optional[float]:
        """The read timeout a request's POST was sent with (the call's own, or ``read_timeout``)."""
        return call.timeout if self._call_timeout_binds(call) else self.options.read_timeout

    def _request_failed(self, call: _Call, exc: Exception, waiting_for: str) -> None:
        """``call``'s POST (or the read of its answer) raised ``exc``: release it, then, unless the call was
        cancelled or the transport closed, fail the call: a read timeout as the call's timeout (``waiting_for``
        says what did not come), anything else as the converted transport error."""
        _release(exc)
        if self._remote.closed or call.cancelled:
            return
        if _is_read_timeout(exc):
            self._streams.timed_out(call, self._read_bound(call), waiting_for)
            return
        self._fail(call, convert_request_exception(exc, self.url))

    def _exchange(self, call: _Call) -> Any:
        """POST ``call`` and settle it, unless the answer is an event stream (returned, still open)."""
        replayed = False
        while True:
            if call.cancelled or self._remote.closed:
                return None
            message = call.message
            headers = self._headers_for(message)
            sid_sent = headers.get("Mcp-Session-Id")
            body = jsonrpc.encode(message)
            try:
                response = self._post(body, headers, call.timeout)
            except Exception as exc:  # noqa: BLE001
                self._request_failed(call, exc, "no answer")
                return None
            status = response.status_code
            if 200 <= status < 300:
                if call.method == "initialize":
                    self._session.capture_session_id(response)
                return self._settle_2xx(call, response)
            try:
                if status == 404 and sid_sent and not replayed:
                    response.close()
                    if self._session.renew(sid_sent):
                        replayed = True
                        continue
                    self._fail(
                        call, SessionExpired("the server no longer knows the HTTP session and re-initialising failed")
                    )
                    return None
                if status == 404 and sid_sent:
                    self._fail(
                        call, SessionExpired("the server no longer knows the HTTP session (404 after re-initialising)")
                    )
                    return None
                self._settle_error_status(call, response)
                return None
            finally:
                response.close()

    def _settle_2xx(self, call: _Call, response: Any) -> Any:
        ctype = _content_type(response)
        if ctype == "text/event-stream":
            call.response = response
            if call.cancelled or self._remote.closed:
                response.close()
                return None
            if call.timeout is not None and not call.inline:
                # the call's timeout bounded the wait for the headers; the stream itself is governed by the
                # session's idle timer (reset by progress, ending in a cancel), never by a socket timeout
                # that would look like a broken stream and trigger a resume or re-issue
                _set_read_timeout(response, self.options.read_timeout)
            return response
        try:
            data = self._read_body(response)
        except MCPError as exc:
            response.close()
            self._fail(call, exc)
            return None
        except Exception as exc:  # noqa: BLE001
            response.close()
            self._request_failed(call, exc, "the response body did not arrive")
            return None
        response.close()
        stripped = data.strip()
        if not stripped or stripped == b"null":
            self._fail(
                call,
                HTTPStatusError(
                    "HTTP %d without a response to a request" % response.status_code,
                    status_code=response.status_code,
                ),
            )
            return None
        try:
            frame = jsonrpc.decode(data)
        except ProtocolError as exc:
            self._fail(call, exc)
            return None
        if not self._deliver(call, frame):
            self._fail(call, ProtocolError("the HTTP response did not answer request %r" % (call.orig_id,)))
        return None

    def _settle_error_status(self, call: _Call, response: Any) -> None:
        status = response.status_code
        if status in (401, 403):
            self._fail(call, error_for_status(response, what=call.method or "request"))
            return
        try:
            body = self._read_body(response, limit=_MAX_ERROR_BODY)
        except Exception:  # noqa: BLE001 - an unreadable body is an unrecognised one
            body = b""
        if 400 <= status < 500:
            msg = self._rpc_error(call, body)
            if msg is not None:
                self._deliver(call, msg)
                return
        self._fail(
            call,
            error_for_status(response, body=body[:500].decode("utf-8", "replace"), what=call.method or "request"),
        )

    def _rpc_error(self, call: _Call, body: bytes) -> Optional[Dict[str, Any]]:
        """A JSON-RPC error body that answers ``call``: its own id, or a modern code with a null id."""
        if not body.strip():
            return None
        try:
            msg = jsonrpc.decode(body)
        except ProtocolError:
            return None
        if type(msg) is not dict or not isinstance(msg.get("error"), dict):
            return None
        code = msg["error"].get("code")
        if type(code) is not int:
            return None
        mid = msg.get("id")
        if type(mid) is type(call.wire_id) and mid == call.wire_id:  # typed: 1.0 and True are not id 1
            return msg
        if mid is None and code in MODERN_ERROR_CODES:
            msg["id"] = call.wire_id
            return msg
        return None

    def _read_body(self, response: Any, limit: Optional[int] = None) -> bytes:
        return read_body(response, self.options.max_message_size if limit is None else limit, self.name)

    # ------------------------------------------------------------------ delivery

    def _on_server_frame(self, frame: Any) -> None:
        """A frame from the GET stream (no call's answer): to the sink."""
        sink = self._remote.sink
        if sink is not None:
            deliver(sink, frame, self._drops)

    def _deliver(self, call: _Call, frame: Any) -> bool:
        """Hand ``frame`` (read from ``call``'s answer) to the sink; True when it held ``call``'s final response.

        A POST's answer settles only the request that POST carried: any other response in it (another call's
        id, a junk id, the original id of a re-issued request) is dropped and logged through the transport's
        rate-limited drop log, never delivered, so it can never settle (or cross into) another call.
        Notifications and server requests in it are delivered in order. The final response is delivered once.
        """
        final = False
        foreign = False
        kept: List[Any] = []
        for msg in jsonrpc.iter_messages(frame):
            call.note_progress(msg)
            if not _is_response(msg):
                kept.append(msg)
                continue
            if not _answers(call, msg.get("id")):
                foreign = True
                self._drops.drop(
                    "response to another request in the answer to %s id=%r" % (call.method, call.orig_id),
                    jsonrpc.truncate(msg),
                )
                continue
            with self._lock:
                if call.done:
                    return True  # a duplicate (replayed after a resume): drop it
                call.done = True
                if self._calls.get(call.orig_id) is call:
                    del self._calls[call.orig_id]
            if msg["id"] != call.orig_id or type(msg["id"]) is not type(call.orig_id):
                msg["id"] = call.orig_id
            final = True
            kept.append(msg)
        if foreign:
            if not kept:
                return final
            frame = kept if type(frame) is list else kept[0]
        sink = self._remote.sink
        if sink is not None and not call.cancelled:
            deliver(sink, frame, self._drops)
        return final

    def _fail(self, call: _Call, exc: BaseException) -> None:
        with self._lock:
            if call.done:
                return
            call.done = True
            if self._calls.get(call.orig_id) is call:
                del self._calls[call.orig_id]
        if call.cancelled or self._remote.closed:
            return
        if isinstance(exc, MCPError):
            exc.with_context(server=self.name, method=call.method, request_id=call.orig_id)
        logger.debug("[%s] %s id=%r failed: %s", self.name, call.method, call.orig_id, exc)
        sink = self._remote.sink
        if sink is not None:
            sink.on_request_error(call.orig_id, exc)

    # ------------------------------------------------------------------ one-way messages

    def _send_oneway(self, message: Dict[str, Any]) -> None:
        is_notification = "method" in message
        body = jsonrpc.encode(message)
        replayed = False
        while True:
            headers = self._headers_for(message)
            sid_sent = headers.get("Mcp-Session-Id")
            try:
                response = self._post(body, headers)
            except Exception as exc:  # noqa: BLE001
                _release(exc)
                if self._remote.closed:
                    raise ConnectionClosed("transport is closed", server=self.name) from None
                raise convert_request_exception(exc, self.url, server=self.name, method=message.get("method")) from None
            try:
                status = response.status_code
                if 200 <= status < 300:
                    self._drain_small(response)
                    if message.get("method") == "notifications/initialized":
                        self._session.initialized(message)
                    return
                if status == 404 and sid_sent and is_notification and not replayed:
                    response.close()
                    if self._session.renew(sid_sent):
                        replayed = True
                        continue
                if status == 404 and sid_sent:
                    raise SessionExpired("the server no longer knows the HTTP session", server=self.name)
                raise error_for_status(
                    response, what=message.get("method") or "response", server=self.name, method=message.get("method")
                )
            finally:
                response.close()

    def _drain_small(self, response: Any) -> None:
        """Read (and ignore) a short body so the connection can be reused."""
        try:
            if _content_type(response) == "text/event-stream":
                return  # an unexpected stream on a notification: just close it
            self._read_body(response, limit=_MAX_ERROR_BODY)
        except Exception:  # noqa: BLE001 - whatever the body, the notification was accepted
            pass


def _answers(call: _Call, mid: Any) -> bool:
    """True when a response id ``mid`` answers the request ``call`` has on the wire now.

    Typed: ``1.0`` and ``True`` are not id 1; an integer id echoed as its decimal string ("7" for 7) is
    accepted, as the session accepts it.
    """
    wire = call.wire_id
    if type(mid) is type(wire):
        return bool(mid == wire)
    return type(mid) is str and type(wire) is int and mid.isascii() and mid.isdigit() and mid == str(wire)
