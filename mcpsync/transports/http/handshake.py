"""The Streamable HTTP transport's negotiated session: era, version, session id, re-initialize, the GET stream.

:class:`HandshakeSession` is owned by :class:`~mcpsync.transports.http.transport.StreamableHTTPTransport`
(one per transport). It owns:

* what was negotiated: the era ("legacy" = handshake era, "modern" = 2026-07-28), the protocol version
  sent as ``MCP-Protocol-Version``, and in the handshake era the ``Mcp-Session-Id`` captured from the
  ``initialize`` answer plus the remembered ``initialize`` / ``notifications/initialized`` messages;
* the re-initialize-on-404 policy (:meth:`HandshakeSession.renew`): a 404 to a request that carried the
  session id re-runs ``initialize`` + ``notifications/initialized`` once for all concurrent callers
  (the others wait for that renewal and replay on the new id; a failed renewal is not retried by the
  callers that waited for it); nothing is sent in the renewal window, neither without the session id
  nor with the new id before ``notifications/initialized`` went out on it;
* the optional GET stream (handshake era) on the thread ``mcpsync-http-get:<name>``: started once the
  session is initialized, read without a read timeout, its frames handed to ``on_frame``; a 4xx (405:
  the server offers none) stops it quietly, a 404 stops it until a renewal restarts it, other failures
  reconnect with capped backoff (``Last-Event-ID`` and ``retry:`` honoured);
* ``DELETE`` of the session on close, best effort.

What it needs of the rest of the transport comes in through its constructor: the transport's
:class:`~mcpsync.transports.http.endpoint.RemoteEndpoint` (connections, options, drop log, ``closing`` event,
closed flag), ``post`` (a POST with the transport's timeouts), ``headers_for`` (the full headers of a
message), ``on_frame`` (hand a GET-stream frame to the sink), the id counter.

Threads and blocking: :meth:`~HandshakeSession.current_session_id` may block the caller while another
thread renews the session, at most ``2 * connect_timeout + 5`` seconds; :meth:`~HandshakeSession.renew`
blocks for two POSTs (``connect_timeout`` each) or that wait; :meth:`~HandshakeSession.initialized`
(and :meth:`~HandshakeSession.set_protocol` in the handshake era) waits up to ``GET_SETTLE_WAIT``
seconds for the GET stream's answer. :meth:`~HandshakeSession.stop` never blocks (it wakes the waiters
and shuts the GET stream's socket); :meth:`~HandshakeSession.delete` blocks for one DELETE, at most its
``timeout`` (the transport gives it at most 2 s); :meth:`~HandshakeSession.join` waits for the GET
thread up to its timeout. Every method is thread-safe (the session id is a single attribute read
without a lock; renewal is serialised by a condition; the GET thread's state by a lock).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional

from ..._threads import join, spawn
from ...errors import (
    ProtocolError,
)
from ...wire import jsonrpc
from ...wire.sse import SSEEvent
from .calls import ACCEPT_BOTH, _abort, _content_type, _is_response, _release, _set_read_timeout, read_body
from .remote import convert_request_exception
from .streams import backoff, read_events

if TYPE_CHECKING:
    from .endpoint import RemoteEndpoint

__all__: List[str] = []

logger = logging.getLogger(__name__)

#: seconds the handshake waits for the server's answer to the GET stream before the connect completes
GET_SETTLE_WAIT = 2.0


class HandshakeSession:
    """The negotiated protocol session of one Streamable HTTP transport (see the module docstring).

    Args (keyword-only, all given by the transport that owns it):
        remote: the transport's :class:`~mcpsync.transports.http.endpoint.RemoteEndpoint`: the endpoint, the
            server's display name, the HTTP options and connections, the drop log, the ``closing`` event (waits
            end at once when it is set), the closed flag and the reconnect backoff cap.
        post: ``post(body, headers, timeout)`` POSTs with the transport's timeouts; returns the response.
        headers_for: the headers the transport sends with a message (for ``notifications/initialized``).
        on_frame: hand one frame read from the GET stream to the sink (never raises).
        ids: the transport's counter for ids it makes up.
        get_stream: open the GET stream in the handshake era.
    """

    def __init__(
        self,
        *,
        remote: "RemoteEndpoint",
        post: Callable[[bytes, Dict[str, str], Optional[float]], Any],
        headers_for: Callable[[Dict[str, Any]], Dict[str, str]],
        on_frame: Callable[[Any], None],
        ids: Iterator[int],
        get_stream: bool,
    ) -> None:
        self._remote = remote
        self._post = post
        self._headers_for = headers_for
        self._on_frame = on_frame
        self._ids = ids
        self.get_enabled = get_stream
        self.era: Optional[str] = None
        self.version: Optional[str] = None
        self.session_id: Optional[str] = None
        self._init_msg: Optional[Dict[str, Any]] = None
        self._initialized_msg: Optional[Dict[str, Any]] = None
        self._initialized_sent = False
        # the GET stream: its thread, open response and whether it stopped for good (guarded by _lock)
        self._lock = threading.Lock()
        self._get_thread: Optional[threading.Thread] = None
        self._get_response: Any = None
        self.get_stopped = False
        self._get_settled = threading.Event()  # set once the current GET stream got an answer (or failed, or ended)
        # renewal after a 404 (guarded by _renewed)
        self._renewed = threading.Condition(threading.Lock())
        self._renewing = False
        self._renewer: Optional[int] = None
        self.renew_waiters = 0  # callers parked on a renewal in progress (tests hold threads there)
        self._renew_failed: Optional[str] = None  # the session id whose last renewal failed

    # ------------------------------------------------------------------ negotiation

    def set_protocol(self, version: str, era: str) -> None:
        """Record the negotiated version and era; start the GET stream in the handshake era."""
        self.version = version
        self.era = era
        if era == "modern":
            self.session_id = None
        else:
            self._maybe_start_get()

    def begin_initialize(self, message: Dict[str, Any]) -> None:
        """An ``initialize`` request is about to be sent: remember it, forget the old session id."""
        self._init_msg = message
        self.session_id = None
        self._initialized_sent = False

    def initialized(self, message: Dict[str, Any]) -> None:
        """``notifications/initialized`` was accepted: remember it and start the GET stream (handshake era)."""
        self._initialized_msg = message
        self._initialized_sent = True
        self._maybe_start_get()

    def capture_session_id(self, response: Any) -> None:
        """Take ``Mcp-Session-Id`` from the answer to ``initialize`` (ignored when not visible ASCII)."""
        sid = response.headers.get("Mcp-Session-Id")
        if sid and all(0x21 <= ord(c) <= 0x7E for c in sid):
            self.session_id = sid
        elif sid:
            logger.warning("[%s] ignoring an Mcp-Session-Id with invalid characters", self._remote.name)

    def stream_headers(self) -> Dict[str, str]:
        """``MCP-Protocol-Version`` and ``Mcp-Session-Id`` for a GET, or a POST after ``initialize`` (may wait
        for a renewal)."""
        headers: Dict[str, str] = {}
        if self.version:
            headers["MCP-Protocol-Version"] = self.version
        sid = self.current_session_id()
        if sid:
            headers["Mcp-Session-Id"] = sid
        return headers

    # ------------------------------------------------------------------ renewal after a 404

    def _renew_bound(self) -> float:
        """How long a caller waits for another thread's renewal (two POSTs bounded by connect_timeout)."""
        return 2.0 * (self._remote.options.connect_timeout or 30.0) + 5.0

    def current_session_id(self) -> Optional[str]:
        """The session id for a request about to be built; waits while another thread renews the session.

        Nothing goes out in the renewal window: neither without ``Mcp-Session-Id`` nor with the new id
        before ``notifications/initialized`` was sent on it.
        """
        if self._renewing and self._renewer != threading.get_ident():
            deadline = time.monotonic() + self._renew_bound()
            with self._renewed:
                self.renew_waiters += 1
                try:
                    while self._renewing and not self._remote.closed:
                        left = deadline - time.monotonic()
                        if left <= 0 or not self._renewed.wait(left):
                            break
                finally:
                    self.renew_waiters -= 1
        return self.session_id

    def renew(self, sid_sent: str) -> bool:
        """The server forgot session ``sid_sent``: initialize again, once for all concurrent callers.

        A caller whose request got 404 while another thread renews waits for that renewal and
        replays with the new id; the old id stays in place until the new session is initialized.
        Returns True when a session other than ``sid_sent`` is ready to replay on.
        """
        deadline = time.monotonic() + self._renew_bound()
        with self._renewed:
            waited = False
            self.renew_waiters += 1
            try:
                while self._renewing and not self._remote.closed:
                    waited = True
                    left = deadline - time.monotonic()
                    if left <= 0 or not self._renewed.wait(left):
                        return False
            finally:
                self.renew_waiters -= 1
            if self._remote.closed:
                return False
            if self.session_id is not None and self.session_id != sid_sent:
                return True  # another thread already renewed it
            if waited and self._renew_failed == sid_sent:
                return False  # the renewal this caller waited for failed: no storm of retries
            if self._init_msg is None:
                return False
            self._renewing = True
            self._renewer = threading.get_ident()
        ok = False
        try:
            ok = self._reinitialize(sid_sent)
        finally:
            with self._renewed:
                if not ok:
                    self.session_id = sid_sent  # still the dead one: the next 404 tries again
                    self._renew_failed = sid_sent
                self._renewing = False
                self._renewer = None
                self._renewed.notify_all()
        if ok and self.get_enabled and self.era == "legacy":
            with self._lock:
                restart = self.get_stopped
                self.get_stopped = False
            if restart:
                self._maybe_start_get(force=True)
        return ok

    def _reinitialize(self, sid_sent: str) -> bool:
        init = self._init_msg
        assert init is not None
        logger.info("[%s] HTTP session expired (404); initializing a new session", self._remote.name)
        msg = dict(init)
        msg["id"] = "mcpsync-reinit-%d" % next(self._ids)
        headers = {"Accept": ACCEPT_BOTH, "Content-Type": "application/json"}
        try:
            response = self._post(jsonrpc.encode(msg), headers, self._remote.options.connect_timeout)
        except Exception as exc:  # noqa: BLE001
            _release(exc)
            logger.warning(
                "[%s] re-initializing failed: %s", self._remote.name, convert_request_exception(exc, self._remote.url)
            )
            return False
        try:
            if not 200 <= response.status_code < 300:
                logger.warning("[%s] re-initializing failed: HTTP %d", self._remote.name, response.status_code)
                return False
            self.capture_session_id(response)
            answer = self._read_answer(response, msg["id"])
        finally:
            response.close()
        if answer is None or "error" in answer or self.session_id == sid_sent:
            logger.warning("[%s] re-initializing failed: %s", self._remote.name, answer and answer.get("error"))
            return False
        note = self._initialized_msg or jsonrpc.notification("notifications/initialized")
        try:
            headers = self._headers_for(note)
            r = self._post(jsonrpc.encode(note), headers, self._remote.options.connect_timeout)
            r.close()
        except Exception:  # noqa: BLE001 - the next request will tell
            pass
        return True

    def _read_answer(self, response: Any, wire_id: Any) -> Optional[Dict[str, Any]]:
        """Read the answer to ``wire_id`` from a JSON or event-stream body (other messages are dropped)."""
        found: List[Dict[str, Any]] = []
        if _content_type(response) == "text/event-stream":

            def on_event(ev: SSEEvent) -> bool:
                if not ev.data:
                    return False
                try:
                    frame = jsonrpc.decode(ev.data)
                except ProtocolError:
                    return False
                for m in jsonrpc.iter_messages(frame):
                    if _is_response(m) and m.get("id") == wire_id:
                        found.append(m)
                        return True
                return False

            _set_read_timeout(response, self._remote.options.connect_timeout)
            read_events(response, on_event, self._remote)
        else:
            try:
                frame = jsonrpc.decode(read_body(response, self._remote.options.max_message_size, self._remote.name))
            except Exception:  # noqa: BLE001
                return None
            for m in jsonrpc.iter_messages(frame):
                if _is_response(m) and m.get("id") == wire_id:
                    found.append(m)
        return found[0] if found else None

    # ------------------------------------------------------------------ close

    def stop(self) -> None:
        """The transport is closing (``closing`` is set): wake renewal waiters, settle and abort the GET stream."""
        self._get_settled.set()
        with self._renewed:
            self._renewed.notify_all()
        with self._lock:
            response = self._get_response
        _abort(response)

    def delete(self, timeout: float) -> None:
        """DELETE the handshake-era session, best effort (at most ``timeout`` seconds, 2 s to connect)."""
        sid = self.session_id
        if not sid or self.era == "modern":
            return
        headers = {"Mcp-Session-Id": sid}
        if self.version:
            headers["MCP-Protocol-Version"] = self.version
        try:
            r = self._remote.net.delete(self._remote.url, headers, (min(timeout, 2.0) or 0.1, timeout or 0.1))
            logger.debug("[%s] DELETE session: HTTP %d", self._remote.name, r.status_code)
            r.close()
        except Exception as exc:  # noqa: BLE001 - best effort, never raises
            logger.debug("[%s] DELETE session failed: %r", self._remote.name, exc)

    def join(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for the GET thread to end (after :meth:`stop`)."""
        join(self._get_thread, timeout)

    # ------------------------------------------------------------------ the GET stream

    def _maybe_start_get(self, force: bool = False) -> None:
        """Start the GET stream and wait until the server has answered it (opened or refused).

        Servers send requests not tied to a client request (e.g. an elicitation from a tool's
        background work) on the GET stream and may drop them while it is not open yet; waiting for
        the GET's answer before the connect completes means nothing the server sends after the
        handshake is lost that way. A refusal (405...) or a failure ends the wait at once; a server
        that holds the GET's headers back delays the connect at most GET_SETTLE_WAIT seconds (and
        never more than ``connect_timeout``).
        """
        if not self.get_enabled or self.era != "legacy" or not self._initialized_sent or self._remote.closed:
            return
        settled = threading.Event()
        with self._lock:
            alive = self._get_thread is not None and self._get_thread.is_alive()
            if not force and (alive or self._get_thread is not None):
                return
            self._get_settled = settled
            self._get_thread = spawn("mcpsync-http-get:%s" % self._remote.name, self._get_loop)
        if not settled.wait(min(GET_SETTLE_WAIT, self._remote.options.connect_timeout or GET_SETTLE_WAIT)):
            logger.debug(
                "[%s] the GET stream was not answered within %ss; going on", self._remote.name, GET_SETTLE_WAIT
            )

    def _get_loop(self) -> None:
        try:
            self._get_stream_loop()
        finally:
            self._get_settled.set()

    def _backoff(self, attempt: int, retry_ms: Optional[int]) -> float:
        return backoff(attempt, retry_ms, self._remote.max_retry_delay)

    def _get_stream_loop(self) -> None:
        last_id: Optional[str] = None
        retry_ms: Optional[int] = None
        failures = 0
        outage_logged = False
        while not self._remote.closing.is_set():
            headers = {"Accept": "text/event-stream"}
            if self.version:
                headers["MCP-Protocol-Version"] = self.version
            sid = self.current_session_id()
            if sid:
                headers["Mcp-Session-Id"] = sid
            if last_id:
                headers["Last-Event-ID"] = last_id
            try:
                response = self._remote.net.get(self._remote.url, headers, (self._remote.options.connect_timeout, None))
            except Exception as exc:  # noqa: BLE001
                _release(exc)
                self._get_settled.set()
                if self._remote.closing.is_set():
                    return
                failures += 1
                if not outage_logged:
                    logger.warning(
                        "[%s] GET stream unavailable, will retry: %s",
                        self._remote.name,
                        convert_request_exception(exc, self._remote.url),
                    )
                    outage_logged = True
                if self._remote.closing.wait(self._backoff(failures, retry_ms)):
                    return
                continue
            with self._lock:
                if self._remote.closed:
                    response.close()
                    return
                self._get_response = response
            self._get_settled.set()
            try:
                status = response.status_code
                not_sse = 200 <= status < 300 and _content_type(response) != "text/event-stream"
                refused = 400 <= status < 500 or not_sse
                if refused and status == 404 and sid:
                    with self._lock:
                        renewed = self.session_id != sid
                        if not renewed:
                            self.get_stopped = True  # a renewal restarts it
                    if renewed:
                        continue
                    logger.debug("[%s] GET stream: session gone (HTTP 404)", self._remote.name)
                    return
                if refused:
                    logger.debug("[%s] no GET stream (HTTP %d); not retrying", self._remote.name, status)
                    self.get_stopped = True
                    return
                if status >= 300:
                    failures += 1
                    if not outage_logged:
                        logger.warning("[%s] GET stream: HTTP %d, will retry", self._remote.name, status)
                        outage_logged = True
                    if self._remote.closing.wait(self._backoff(failures, retry_ms)):
                        return
                    continue
                if outage_logged:
                    logger.info("[%s] GET stream restored", self._remote.name)
                    outage_logged = False
                got = [False]

                def on_event(ev: SSEEvent) -> bool:
                    nonlocal last_id, retry_ms
                    if ev.id is not None:
                        last_id = ev.id
                    if ev.retry is not None:
                        retry_ms = ev.retry
                    got[0] = True  # noqa: B023 - used within this iteration only
                    if ev.data and ev.event == "message" and not ev.oversized:
                        try:
                            frame = jsonrpc.decode(ev.data)
                        except ProtocolError as exc:
                            self._remote.drops.drop("undecodable event", str(exc)[:200])
                            return False
                        self._on_frame(frame)
                    elif ev.oversized:
                        self._remote.drops.drop("event larger than the maximum message size")
                    return False

                read_events(response, on_event, self._remote)
            finally:
                with self._lock:
                    self._get_response = None
                response.close()
            if self._remote.closing.is_set():
                return
            failures = 0 if got[0] else failures + 1
            if self._remote.closing.wait(self._backoff(max(1, failures), retry_ms)):
                return
