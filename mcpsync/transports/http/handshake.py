"""The handshake-era half of the Streamable HTTP transport: session ids, re-initialize on 404, the GET stream.

A mixin of :class:`~mcpsync.transports.http.transport.StreamableHTTPTransport`; it uses that class's attributes.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional

from ..._threads import spawn
from ...errors import (
    ProtocolError,
)
from ...wire import jsonrpc
from ...wire.sse import SSEEvent
from .calls import (
    ACCEPT_BOTH,
    _Call,
    _content_type,
    _is_response,
    _release,
    _set_read_timeout,
    deliver,
)  # noqa: F401
from .remote import (
    RemoteState,
    convert_request_exception,
)

__all__: List[str] = []

logger = logging.getLogger("mcpsync.transports.http.transport")

#: seconds the handshake waits for the server's answer to the GET stream before the connect completes
GET_SETTLE_WAIT = 2.0


class LegacySessionMixin(RemoteState):
    """Mcp-Session-Id capture, transparent session renewal, DELETE on close and the optional GET stream."""

    # state and methods of StreamableHTTPTransport this half uses (declared for type checkers)
    _get_enabled: bool
    _renew_lock: threading.Lock
    _era: Optional[str]
    _version: Optional[str]
    _session_id: Optional[str]
    _init_msg: Optional[Dict[str, Any]]
    _initialized_msg: Optional[Dict[str, Any]]
    _initialized_sent: bool
    _get_thread: Optional[threading.Thread]
    _get_settled: threading.Event  # set once the current GET stream got an answer (or failed, or ended)
    _get_response: Any
    _get_stopped: bool
    _renewed: threading.Condition
    _renewing: bool
    _renewer: Optional[int]
    _renew_waiters: int  # callers parked on a renewal in progress (tests hold threads there)
    _renew_failed: Optional[str]  # the session id whose last renewal failed
    _ids: Iterator[int]

    if TYPE_CHECKING:

        def _post(self, body: bytes, headers: Dict[str, str], timeout: Optional[float] = None) -> Any: ...

        def _headers_for(self, message: Dict[str, Any]) -> Dict[str, str]: ...

        def _read_body(self, response: Any, limit: Optional[int] = None) -> bytes: ...

        def _read_events(self, call: Optional[_Call], response: Any, on_event: Callable[[SSEEvent], bool]) -> str: ...

        def _backoff(self, attempt: int, retry_ms: Optional[int]) -> float: ...

    def _capture_session_id(self, response: Any) -> None:
        sid = response.headers.get("Mcp-Session-Id")
        if sid and all(0x21 <= ord(c) <= 0x7E for c in sid):
            self._session_id = sid
        elif sid:
            logger.warning("[%s] ignoring an Mcp-Session-Id with invalid characters", self.name)

    def _renew_bound(self) -> float:
        """How long a caller waits for another thread's renewal (two POSTs bounded by connect_timeout)."""
        return 2.0 * (self.options.connect_timeout or 30.0) + 5.0

    def _current_session_id(self) -> Optional[str]:
        """The session id for a request about to be built; waits while another thread renews the session.

        Nothing goes out in the renewal window: neither without ``Mcp-Session-Id`` nor with the new id
        before ``notifications/initialized`` was sent on it.
        """
        if self._renewing and self._renewer != threading.get_ident():
            deadline = time.monotonic() + self._renew_bound()
            with self._renewed:
                self._renew_waiters += 1
                try:
                    while self._renewing and not self._closed:
                        left = deadline - time.monotonic()
                        if left <= 0 or not self._renewed.wait(left):
                            break
                finally:
                    self._renew_waiters -= 1
        return self._session_id

    def _renew_session(self, sid_sent: str) -> bool:
        """The server forgot session ``sid_sent``: initialize again, once for all concurrent callers.

        A caller whose request got 404 while another thread renews waits for that renewal and
        replays with the new id; the old id stays in place until the new session is initialized.
        Returns True when a session other than ``sid_sent`` is ready to replay on.
        """
        deadline = time.monotonic() + self._renew_bound()
        with self._renewed:
            waited = False
            self._renew_waiters += 1
            try:
                while self._renewing and not self._closed:
                    waited = True
                    left = deadline - time.monotonic()
                    if left <= 0 or not self._renewed.wait(left):
                        return False
            finally:
                self._renew_waiters -= 1
            if self._closed:
                return False
            if self._session_id is not None and self._session_id != sid_sent:
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
                    self._session_id = sid_sent  # still the dead one: the next 404 tries again
                    self._renew_failed = sid_sent
                self._renewing = False
                self._renewer = None
                self._renewed.notify_all()
        if ok and self._get_enabled and self._era == "legacy":
            with self._lock:
                restart = self._get_stopped
                self._get_stopped = False
            if restart:
                self._maybe_start_get(force=True)
        return ok

    def _reinitialize(self, sid_sent: str) -> bool:
        init = self._init_msg
        assert init is not None
        logger.info("[%s] HTTP session expired (404); initializing a new session", self.name)
        msg = dict(init)
        msg["id"] = "mcpsync-reinit-%d" % next(self._ids)
        headers = {"Accept": ACCEPT_BOTH, "Content-Type": "application/json"}
        try:
            response = self._post(jsonrpc.encode(msg), headers, self.options.connect_timeout)
        except Exception as exc:  # noqa: BLE001
            _release(exc)
            logger.warning("[%s] re-initializing failed: %s", self.name, convert_request_exception(exc, self.url))
            return False
        try:
            if not 200 <= response.status_code < 300:
                logger.warning("[%s] re-initializing failed: HTTP %d", self.name, response.status_code)
                return False
            self._capture_session_id(response)
            answer = self._read_answer(response, msg["id"])
        finally:
            response.close()
        if answer is None or "error" in answer or self._session_id == sid_sent:
            logger.warning("[%s] re-initializing failed: %s", self.name, answer and answer.get("error"))
            return False
        note = self._initialized_msg or jsonrpc.notification("notifications/initialized")
        try:
            headers = self._headers_for(note)
            r = self._post(jsonrpc.encode(note), headers, self.options.connect_timeout)
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

            _set_read_timeout(response, self.options.connect_timeout)
            self._read_events(None, response, on_event)
        else:
            try:
                frame = jsonrpc.decode(self._read_body(response))
            except Exception:  # noqa: BLE001
                return None
            for m in jsonrpc.iter_messages(frame):
                if _is_response(m) and m.get("id") == wire_id:
                    found.append(m)
        return found[0] if found else None

    def _delete_session(self, sid: str, timeout: float) -> None:
        headers = {"Mcp-Session-Id": sid}
        if self._version:
            headers["MCP-Protocol-Version"] = self._version
        try:
            r = self._net.delete(self.url, headers, (min(timeout, 2.0) or 0.1, timeout or 0.1))
            logger.debug("[%s] DELETE session: HTTP %d", self.name, r.status_code)
            r.close()
        except Exception as exc:  # noqa: BLE001 - best effort, never raises
            logger.debug("[%s] DELETE session failed: %r", self.name, exc)

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
        if not self._get_enabled or self._era != "legacy" or not self._initialized_sent or self._closed:
            return
        settled = threading.Event()
        with self._lock:
            alive = self._get_thread is not None and self._get_thread.is_alive()
            if not force and (alive or self._get_thread is not None):
                return
            self._get_settled = settled
            self._get_thread = spawn("mcpsync-http-get:%s" % self.name, self._get_loop)
        if not settled.wait(min(GET_SETTLE_WAIT, self.options.connect_timeout or GET_SETTLE_WAIT)):
            logger.debug("[%s] the GET stream was not answered within %ss; going on", self.name, GET_SETTLE_WAIT)

    def _get_loop(self) -> None:
        try:
            self._get_stream_loop()
        finally:
            self._get_settled.set()

    def _get_stream_loop(self) -> None:
        last_id: Optional[str] = None
        retry_ms: Optional[int] = None
        failures = 0
        outage_logged = False
        while not self._closing.is_set():
            headers = {"Accept": "text/event-stream"}
            if self._version:
                headers["MCP-Protocol-Version"] = self._version
            sid = self._current_session_id()
            if sid:
                headers["Mcp-Session-Id"] = sid
            if last_id:
                headers["Last-Event-ID"] = last_id
            try:
                response = self._net.get(self.url, headers, (self.options.connect_timeout, None))
            except Exception as exc:  # noqa: BLE001
                _release(exc)
                self._get_settled.set()
                if self._closing.is_set():
                    return
                failures += 1
                if not outage_logged:
                    logger.warning(
                        "[%s] GET stream unavailable, will retry: %s",
                        self.name,
                        convert_request_exception(exc, self.url),
                    )
                    outage_logged = True
                if self._closing.wait(self._backoff(failures, retry_ms)):
                    return
                continue
            with self._lock:
                if self._closed:
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
                        renewed = self._session_id != sid
                        if not renewed:
                            self._get_stopped = True  # a renewal restarts it
                    if renewed:
                        continue
                    logger.debug("[%s] GET stream: session gone (HTTP 404)", self.name)
                    return
                if refused:
                    logger.debug("[%s] no GET stream (HTTP %d); not retrying", self.name, status)
                    self._get_stopped = True
                    return
                if status >= 300:
                    failures += 1
                    if not outage_logged:
                        logger.warning("[%s] GET stream: HTTP %d, will retry", self.name, status)
                        outage_logged = True
                    if self._closing.wait(self._backoff(failures, retry_ms)):
                        return
                    continue
                if outage_logged:
                    logger.info("[%s] GET stream restored", self.name)
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
                            self._drops.drop("undecodable event", str(exc)[:200])
                            return False
                        sink = self._sink
                        if sink is not None:
                            deliver(sink, frame, self._drops)
                    elif ev.oversized:
                        self._drops.drop("event larger than the maximum message size")
                    return False

                self._read_events(None, response, on_event)
            finally:
                with self._lock:
                    self._get_response = None
                response.close()
            if self._closing.is_set():
                return
            failures = 0 if got[0] else failures + 1
            if self._closing.wait(self._backoff(max(1, failures), retry_ms)):
                return
