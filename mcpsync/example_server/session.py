"""Per-connection state of the example server: :class:`ServerSession` and :class:`RequestContext`.

A session owns what the legacy (handshake) era keeps per connection — the
initialized flag, negotiated version, client capabilities, log level, resource
subscriptions — plus, for both eras, the in-flight requests (for
``notifications/cancelled``) and the pending server-to-client requests (matched
by id when the client's response comes back through :meth:`ServerSession.handle`).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Dict, Iterable, Iterator, List, Optional, Protocol, Set

from .options import Options
from .protocol import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    META_LOG_LEVEL,
    RpcError,
    error_response,
    level_enabled,
    notification,
    request,
    result_response,
)


logger = logging.getLogger("mcpsync.example_server")


class Connection(Protocol):
    """What the core needs from a transport: a thread-safe ``send``."""

    def send(self, message: Any) -> None:
        """Write one message (a dict) or one batch (a list of dicts) to the client."""


class SessionOwner(Protocol):
    """What a session uses of the server that made it (implemented by :class:`~.core.ExampleServer`)."""

    @property
    def options(self) -> Options: ...

    @property
    def counter(self) -> Iterator[int]: ...

    def _session_closed(self, session: ServerSession) -> None: ...

    def _cancel_listen(self, session: ServerSession, request_id: Any) -> bool: ...

    def _dispatch(self, session: ServerSession, msg: Dict[str, Any], conn: Connection, ev: threading.Event) -> Any: ...


#: Returned by a handler that answers later (or never): no response is sent now.
DEFER = object()


class _Waiter:
    __slots__ = ("event", "response")

    def __init__(self) -> None:
        self.event = threading.Event()
        self.response: Optional[Dict[str, Any]] = None


class _BatchCollector:
    """Collects the responses to one incoming batch and sends them as one array."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.lock = threading.Lock()
        self.expected = 0
        self.sealed = False
        self.responses: List[Dict[str, Any]] = []

    def expect(self) -> None:
        with self.lock:
            self.expected += 1

    def add(self, response: Optional[Dict[str, Any]]) -> None:
        with self.lock:
            self.expected -= 1
            if response is not None:
                self.responses.append(response)
            ready = self.sealed and self.expected == 0
        if ready:
            self._flush()

    def seal(self) -> None:
        with self.lock:
            self.sealed = True
            ready = self.expected == 0
        if ready:
            self._flush()

    def _flush(self) -> None:
        if self.responses:
            self.conn.send(list(self.responses))


class ServerSession:
    """State of one client connection (stdio process, or one legacy HTTP session).

    Create it with :meth:`ExampleServer.new_session`. ``default_conn`` receives
    unsolicited legacy messages (list_changed, resources/updated, pings); for
    legacy HTTP set it to the GET stream's connection with :meth:`attach`.
    """

    def __init__(self, server: SessionOwner, conn: Optional[Connection] = None) -> None:
        self.server = server
        self.default_conn = conn
        self.lock = threading.Lock()
        self.initialized = False  # initialize answered
        self.ready = False  # notifications/initialized received
        self.protocol_version: Optional[str] = None
        self.client_capabilities: Dict[str, Any] = {}
        self.client_info: Dict[str, Any] = {}
        self.log_level: Optional[str] = None
        self.subscriptions: Set[str] = set()
        self.closed = False
        self._in_flight: Dict[Any, threading.Event] = {}
        self._pending: Dict[Any, _Waiter] = {}

    # ------------------------------------------------------------------ public API

    def attach(self, conn: Optional[Connection]) -> None:
        """Route unsolicited legacy messages to ``conn`` (e.g. a legacy HTTP GET stream)."""
        self.default_conn = conn

    def handle(self, message: Any, conn: Optional[Connection] = None) -> None:
        """Process one decoded frame (dict or list) from the client. Never blocks on tool work.

        Requests run on their own threads; their responses go to ``conn`` (default:
        the session's connection). Notifications and responses are handled inline.
        """
        conn = conn or self.default_conn
        if conn is None:
            raise ValueError("no connection to answer on")
        if isinstance(message, list):
            self._handle_batch(message, conn)
            return
        self._handle_one(message, conn, None)

    def close(self) -> None:
        """Cancel everything in flight, fail pending server requests, drop listen streams."""
        with self.lock:
            self.closed = True
            flights = list(self._in_flight.values())
            pending = list(self._pending.values())
            self._pending.clear()
        for ev in flights:
            ev.set()
        for waiter in pending:
            waiter.event.set()
        self.server._session_closed(self)

    def cancel(self, request_id: Any) -> bool:
        """Cancel the in-flight request ``request_id`` (as notifications/cancelled does)."""
        with self.lock:
            ev = self._in_flight.get(request_id)
        if ev is not None:
            ev.set()
        ended = self.server._cancel_listen(self, request_id)
        return ev is not None or ended

    def request(
        self,
        method: str,
        params: Optional[Dict[str, Any]] = None,
        *,
        conn: Optional[Connection] = None,
        cancel: Optional[threading.Event] = None,
        companions: Iterable[Dict[str, Any]] = (),
        timeout: Optional[float] = None,
    ) -> Dict[str, Any]:
        """Send a server-to-client request and block for its result (raises RpcError on an error)."""
        rid = next(self.server.counter)
        waiter = _Waiter()
        with self.lock:
            if self.closed:
                raise RpcError(INTERNAL_ERROR, "connection closed")
            self._pending[rid] = waiter
        self.send_out([request(rid, method, params)] + list(companions), conn)
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while not waiter.event.wait(0.05):
                if cancel is not None and cancel.is_set():
                    self.send_out(
                        [
                            notification(
                                "notifications/cancelled",
                                {"requestId": rid, "reason": "the originating request was cancelled"},
                            )
                        ],
                        conn,
                    )
                    raise RpcError(INTERNAL_ERROR, "cancelled")
                if deadline is not None and time.monotonic() > deadline:
                    raise RpcError(INTERNAL_ERROR, "timed out waiting for the client")
        finally:
            with self.lock:
                self._pending.pop(rid, None)
        response = waiter.response
        if response is None:
            raise RpcError(INTERNAL_ERROR, "connection closed")
        if "error" in response:
            err = response["error"] if isinstance(response["error"], dict) else {}
            raise RpcError(int(err.get("code", INTERNAL_ERROR)), str(err.get("message", "error")), err.get("data"))
        result = response.get("result")
        return result if isinstance(result, dict) else {}

    def notify(self, method: str, params: Optional[Dict[str, Any]] = None, conn: Optional[Connection] = None) -> None:
        """Send a notification to the client."""
        self.send_out([notification(method, params)], conn)

    def send_out(self, messages: List[Dict[str, Any]], conn: Optional[Connection] = None) -> None:
        """Send server-initiated messages, one by one."""
        target = conn or self.default_conn
        if target is None:
            return
        for msg in messages:
            target.send(msg)

    # ------------------------------------------------------------------ internals

    def _handle_batch(self, items: List[Any], conn: Connection) -> None:
        if not items:
            conn.send(error_response(None, INVALID_REQUEST, "Invalid Request: empty batch"))
            return
        collector = _BatchCollector(conn)
        for item in items:
            self._handle_one(item, conn, collector)
        collector.seal()

    def _handle_one(self, msg: Any, conn: Connection, collector: Optional[_BatchCollector]) -> None:
        def sink(response: Optional[Dict[str, Any]]) -> None:
            if collector is not None:
                collector.add(response)
            elif response is not None:
                conn.send(response)

        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            rid = msg.get("id") if isinstance(msg, dict) and _valid_id(msg.get("id")) else None
            if collector is not None:
                collector.expect()
            sink(error_response(rid, INVALID_REQUEST, "Invalid Request"))
            return
        method = msg.get("method")
        has_id = "id" in msg
        if isinstance(method, str):
            if not has_id:
                self._on_notification(method, msg.get("params"))
                return
            if not _valid_id(msg["id"]):
                if collector is not None:
                    collector.expect()
                sink(error_response(None, INVALID_REQUEST, "Invalid Request: bad id"))
                return
            if collector is not None:
                collector.expect()
            self._start_request(msg, conn, sink)
            return
        if has_id and ("result" in msg or "error" in msg):
            self._on_response(msg)
            return
        if collector is not None:
            collector.expect()
        sink(error_response(msg.get("id") if _valid_id(msg.get("id")) else None, INVALID_REQUEST, "Invalid Request"))

    def _on_response(self, msg: Dict[str, Any]) -> None:
        with self.lock:
            waiter = self._pending.pop(msg["id"], None)
        if waiter is None:
            logger.warning("response to an unknown request id %r ignored", msg.get("id"))
            return
        waiter.response = msg
        waiter.event.set()

    def _on_notification(self, method: str, params: Any) -> None:
        params = params if isinstance(params, dict) else {}
        if method == "notifications/initialized":
            self.ready = True
        elif method == "notifications/cancelled":
            self.cancel(params.get("requestId"))
        else:
            logger.debug("notification %s", method)

    def _start_request(self, msg: Dict[str, Any], conn: Connection, sink: Any) -> None:
        ev = threading.Event()
        with self.lock:
            self._in_flight[msg["id"]] = ev
        thread = threading.Thread(
            target=self._run_request, args=(msg, conn, sink, ev), name="example-request-%s" % (msg["id"],), daemon=True
        )
        thread.start()

    def _run_request(self, msg: Dict[str, Any], conn: Connection, sink: Any, ev: threading.Event) -> None:
        rid = msg["id"]
        response: Optional[Dict[str, Any]]
        try:
            result = self.server._dispatch(self, msg, conn, ev)
            response = None if result is DEFER else result_response(rid, result)
        except RpcError as exc:
            response = error_response(rid, exc.code, exc.message, exc.data)
        except Exception:  # never leak internals to the client
            logger.exception("handler for %s failed", msg.get("method"))
            response = error_response(rid, INTERNAL_ERROR, "Internal error")
        finally:
            with self.lock:
                if self._in_flight.get(rid) is ev:
                    del self._in_flight[rid]
        if ev.is_set() or response is None:
            sink(None)
            return
        sink(response)


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


class RequestContext:
    """Everything a handler or tool needs about one incoming request."""

    def __init__(
        self,
        server: SessionOwner,
        session: ServerSession,
        conn: Connection,
        msg: Dict[str, Any],
        params: Dict[str, Any],
        era: str,
        version: Optional[str],
        client_caps: Dict[str, Any],
        cancelled: threading.Event,
    ) -> None:
        self.server = server
        self.session = session
        self.conn = conn
        self.msg = msg
        self.request_id = msg.get("id")
        self.params = params
        self.era = era
        self.version = version
        self.client_caps = client_caps
        self.cancelled = cancelled
        self.options = server.options
        self.tool_name = ""
        meta = params.get("_meta")
        self.meta: Dict[str, Any] = meta if isinstance(meta, dict) else {}

    @property
    def log_threshold(self) -> Optional[str]:
        """The level filter for notifications/message ("off" means none may be sent)."""
        if self.era == "modern":
            level = self.meta.get(META_LOG_LEVEL)
            return level if isinstance(level, str) else "off"
        return self.session.log_level

    def progress(self, progress: float, total: Optional[float] = None, message: Optional[str] = None) -> None:
        """Send notifications/progress if the request carried a progressToken."""
        token = self.meta.get("progressToken")
        if token is None:
            return
        params: Dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None and (self.era == "modern" or self.version != "2024-11-05"):
            params["message"] = message
        self.session.send_out([notification("notifications/progress", params)], self.conn)

    def log_message(self, level: str, message: str) -> Dict[str, Any]:
        """Build (do not send) a notifications/message."""
        return notification("notifications/message", {"level": level, "logger": "mcpsync-example", "data": message})

    def log(self, level: str, message: str) -> bool:
        """Send notifications/message when the level filter allows it. Returns whether it was sent."""
        threshold = self.log_threshold
        if threshold == "off" or not level_enabled(level, threshold):
            return False
        self.session.send_out([self.log_message(level, message)], self.conn)
        return True

    def client_request(
        self, method: str, params: Optional[Dict[str, Any]] = None, *, companions: Iterable[Dict[str, Any]] = ()
    ) -> Dict[str, Any]:
        """Legacy era: send a request to the client on this request's connection and wait for it."""
        return self.session.request(method, params, conn=self.conn, cancel=self.cancelled, companions=companions)

    def notify_client(self, method: str, params: Optional[Dict[str, Any]] = None) -> None:
        self.session.notify(method, params, self.conn)
