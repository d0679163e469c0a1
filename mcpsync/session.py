"""The JSON-RPC session engine: one transport, many concurrent requests.

The engine keeps a dict of request id -> pending entry (each with one
``concurrent.futures.Future``, made when a thread waits on it: an HTTP answer
that the calling thread reads itself settles the entry without one). The
transport's reader thread hands every frame to :meth:`Session.on_message`,
which pops the entry and sets its result: one handoff per call. Notifications go to a handler supplied by the
client (which must be quick: it only updates caches and queues user
callbacks); server requests run on a small pool of handler threads; user
callbacks run on a single dispatch thread, in order, never on the reader.

Thread-safety: every public method may be called from any thread, including
from inside a callback or handler (``close()`` included).
"""

from __future__ import annotations

import concurrent.futures
import enum
import logging
import threading
import time
from types import MappingProxyType
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, TypeVar, cast

from . import _forks
from ._threads import join, spawn
from ._dispatch import BatchReply, Dispatcher, NotificationQueue, RequestContext
from .handles import DEFAULT, RequestHandle, Timeout, _Pending
from .errors import (
    ClientClosed,
    ConnectionClosed,
    ForkedClientError,
    InternalError,
    MCPError,
    MethodNotFound,
    RemoteError,
    RequestCancelled,
    RequestTimeout,
    error_from_response,
    seconds_text,
)
from .transports.base import Transport, TransportSink
from .types import ProgressEvent
from .wire import jsonrpc, trace
from .wire.drops import DropLog

__all__ = [
    "BUSY_ERROR",
    "CALLBACK_BACKLOG",
    "DEFAULT",
    "HANDLER_BACKLOG",
    "RequestContext",
    "RequestHandle",
    "Session",
    "SessionState",
    "Timeout",
    "handler_error",
]

logger = logging.getLogger(__name__)

#: Default :class:`Session` ``callback_backlog``: user callbacks waiting behind a slow one before new ones drop.
CALLBACK_BACKLOG = 1000
#: Default :class:`Session` ``handler_backlog``: server requests waiting for a handler thread before refusal.
HANDLER_BACKLOG = 64
#: The JSON-RPC error a server request gets when the handler backlog is full.
BUSY_ERROR: Mapping[str, Any] = MappingProxyType({
    "code": -32603,
    "message": "client busy: too many server requests waiting for a handler; try again later",
})


_R = TypeVar("_R")
RequestHandler = Callable[[str, Dict[str, Any], "RequestContext"], Any]
NotificationHandler = Callable[[str, Dict[str, Any]], None]


class SessionState(enum.Enum):
    """Lifecycle of a session."""

    NEW = "new"
    OPEN = "open"
    CLOSING = "closing"
    CLOSED = "closed"


class Session(TransportSink):
    """A JSON-RPC 2.0 session over one :class:`~mcpsync.transports.base.Transport`.

    Args:
        transport: the connection (not yet started).
        name: the server's display name (thread names, logs, errors).
        request_handler: answers server requests; called on a handler thread as
            ``handler(method, params, context)``; its return value is the result;
            raise :class:`~mcpsync.RemoteError` for a specific JSON-RPC error.
        notification_handler: called on the reader thread for each notification as
            ``handler(method, params)``; must be quick and must not run user code
            (use :meth:`dispatch` for that).
        on_connection_lost: called once (on the dispatch thread) with the error when
            the connection ends without ``close()``.
        default_timeout: idle timeout applied when a request passes DEFAULT.
        handler_workers: threads for server-request handlers.
        callback_backlog: how many user callbacks (notifications, log messages, progress, list
            changes) may wait behind a slow one; beyond it new ones are dropped and counted
            (:attr:`dropped_callbacks`, see :class:`~mcpsync._dispatch.Dispatcher`).
        handler_backlog: how many server requests may wait for a free handler thread; beyond it a
            server request is answered at once with JSON-RPC error -32603 "client busy" and counted
            (:attr:`refused_server_requests`).

    ``close()`` discards both backlogs: once it returns, no queued user code starts (a callback
    already running is waited for, within the close bound).
    """

    def __init__(
        self,
        transport: Transport,
        *,
        name: str = "server",
        request_handler: Optional[RequestHandler] = None,
        notification_handler: Optional[NotificationHandler] = None,
        on_connection_lost: Optional[Callable[[BaseException], None]] = None,
        default_timeout: Optional[float] = 60.0,
        handler_workers: int = 4,
        notification_queue: Optional[NotificationQueue] = None,
        callback_backlog: int = CALLBACK_BACKLOG,
        handler_backlog: int = HANDLER_BACKLOG,
    ) -> None:
        self.transport = transport
        self.name = name
        self.default_timeout = default_timeout
        self._request_handler = request_handler
        self._notification_handler = notification_handler
        self._on_connection_lost = on_connection_lost
        self._ids = jsonrpc.IdAllocator()
        self._pending: Dict[Any, _Pending] = {}
        self._lock = threading.Lock()
        self._state = SessionState.NEW
        self._lost: Optional[BaseException] = None
        self._ended = threading.Event()  # set when close() starts or the connection is lost
        self._watchers: List[threading.Thread] = []  # background waits close() joins (see watch())
        self._callbacks = Dispatcher("mcpsync-dispatch:%s" % name, 1, max_backlog=callback_backlog, what="callback")
        self._handlers = Dispatcher(
            "mcpsync-handler:%s" % name, handler_workers, max_backlog=handler_backlog, what="server request"
        )
        self._senders = Dispatcher("mcpsync-send:%s" % name, 32)
        self._server_requests: Dict[Any, RequestContext] = {}
        self.drops = DropLog(logger, name)
        self._pid = _forks.pid()  # the process that owns the threads and the connection
        self._owns_queue = notification_queue is None
        self.notifications = notification_queue if notification_queue is not None else NotificationQueue()

    # ------------------------------------------------------------------ lifecycle

    @property
    def state(self) -> SessionState:
        """The lifecycle state."""
        return self._state

    @property
    def closed(self) -> bool:
        """True once close() started or the connection was lost."""
        return self._state in (SessionState.CLOSING, SessionState.CLOSED) or self._lost is not None

    def start(self) -> None:
        """Start the transport (blocks for its connect timeout). Raises ConnectError."""
        with self._lock:
            if self._state is not SessionState.NEW:
                raise ClientClosed("session already started or closed", server=self.name)
            self._state = SessionState.OPEN
        sink: TransportSink = self
        if trace.enabled():  # the protocol trace (mcpsync -vv); decided once, nothing is traced otherwise
            sink = cast(TransportSink, trace.TracingSink(self, self.name))  # the sink interface, duck-typed
            self.transport.send = trace.traced_send(self.transport.send, self.name)  # type: ignore[method-assign]
        try:
            self.transport.start(sink)
        except BaseException:
            self.close()
            raise

    def close(self, timeout: Optional[float] = None) -> None:
        """Close the transport, fail pending requests, stop the worker threads.

        Idempotent, callable from any thread (including callbacks), bounded by
        about ``timeout`` seconds plus the transport's own shutdown bound. In a child forked
        after the session was made it only releases the child's copies of the connection's
        descriptors (:meth:`abandon_after_fork`): the parent's server is left alone.
        """
        if self._pid != _forks.pid():
            self.abandon_after_fork()
            return
        with self._lock:
            if self._state in (SessionState.CLOSING, SessionState.CLOSED):
                return
            self._state = SessionState.CLOSING
        self._ended.set()
        # every caller waiting for an answer gets it now, not after the transport's own shutdown (an HTTP
        # session's best-effort DELETE, a stdio server's exit): no answer is wanted once close() began
        self._fail_all(ConnectionClosed("connection closed by the client", server=self.name))
        try:
            self.transport.close(timeout)
        except Exception:  # noqa: BLE001 - close never raises
            logger.debug("transport close failed", exc_info=True)
        self._fail_all(ConnectionClosed("connection closed by the client", server=self.name))
        for ctx in list(self._server_requests.values()):
            ctx.cancelled.set()
        self._senders.stop(1.0)
        self._handlers.stop(1.0, discard=True)  # queued handlers never start: the connection is gone
        for fn, args in self._callbacks.stop(2.0, discard=True):  # queued user callbacks never start
            if fn == self._settle:  # a call's answer queued behind its progress callbacks: library code
                self._settle(*args)
        with self._lock:
            watchers, self._watchers = self._watchers, []
        for thread in watchers:  # each ends at once: _ended is set and its requests fail
            join(thread, 2.0)
        if self._owns_queue:
            self.notifications.close()
        self._state = SessionState.CLOSED

    def wait_ended(self, timeout: Optional[float]) -> bool:
        """Block up to ``timeout`` seconds (None: no bound) until the session closes or its connection is
        lost; True then, False when the time passed first. Thread-safe."""
        return self._ended.wait(timeout)

    def watch(self, name: str, target: Callable[[], object]) -> bool:
        """Run ``target()`` on the named daemon thread ``name``, joined (up to 2 s) by :meth:`close`.

        For background waits tied to this connection (a task handle's done-callback poller): ``target``
        must end soon after :meth:`wait_ended` turns True. False (nothing started) when the session is
        already closing. Does not block; thread-safe.
        """
        with self._lock:
            if self._state is not SessionState.OPEN or self._ended.is_set():
                return False
            self._watchers = [t for t in self._watchers if t.is_alive()]
            self._watchers.append(spawn(name, target))
        return True

    @property
    def dropped_callbacks(self) -> int:
        """User callbacks dropped because :data:`CALLBACK_BACKLOG` were already waiting (see the class doc)."""
        return self._callbacks.dropped

    @property
    def refused_server_requests(self) -> int:
        """Server requests answered "client busy" because the handler backlog was full."""
        return self._handlers.dropped

    @property
    def forked(self) -> bool:
        """True in a child process forked after this session was made (it cannot be used there)."""
        return self._pid != _forks.pid()

    def forked_error(self, method: Optional[str] = None) -> ForkedClientError:
        """The error for a use of this session in a forked child."""
        return _forks.forked_error(self._pid, server=self.name, method=method)

    def abandon_after_fork(self) -> None:
        """In a forked child: mark the session closed without locks, I/O or signals; release descriptors.

        Never touches the parent's server (no EOF, no SIGTERM, no DELETE, no cancellation): the
        transport's :meth:`~mcpsync.transports.base.Transport.after_fork_in_child` only closes the
        child's copies. Idempotent; safe in an ``os.register_at_fork`` hook.
        """
        if self._state is SessionState.CLOSED:
            return
        self._state = SessionState.CLOSED
        self._lock = threading.Lock()  # another thread may have held it at fork time
        # The pending futures are dropped, not failed: a future's lock may be held by a thread that did not
        # survive the fork, and nobody in this process waits on them (_wait raises ForkedClientError first).
        self._pending = {}
        try:
            self.transport.after_fork_in_child()
        except Exception:  # noqa: BLE001
            logger.debug("[%s] releasing the transport after fork failed", self.name, exc_info=True)

    def _check_usable(self, method: str) -> None:
        if self._pid != _forks.pid():
            raise self.forked_error(method)
        if self._state is not SessionState.OPEN:
            if self._state is SessionState.NEW:
                raise ClientClosed("session not started", server=self.name, method=method)
            raise ClientClosed("client is closed", server=self.name, method=method)
        if self._lost is not None:
            raise self._clone_lost(method)

    def _clone_lost(self, method: str, request_id: Any = None) -> MCPError:
        lost = self._lost
        if isinstance(lost, MCPError):
            exc = type(lost).__new__(type(lost))
            exc.__dict__.update(lost.__dict__)
            exc.args = lost.args
            exc.method = method
            exc.request_id = request_id
            return exc
        return ConnectionClosed("connection lost: %s" % lost, server=self.name, method=method, request_id=request_id)

    # ------------------------------------------------------------------ sending

    def new_request(
        self,
        method: str,
        params: Optional[Dict[str, Any]] = None,
        *,
        progress: Optional[Callable[[ProgressEvent], object]] = None,
        progress_token: bool = False,
        owned_params: bool = False,
    ) -> "tuple[_Pending, Dict[str, Any]]":
        """Allocate an id and register a pending entry; returns (pending, message). Internal.

        With ``owned_params`` the caller hands over ``params`` (and its ``_meta`` dict), which may then
        be changed in place instead of copied.
        """
        if self._state is not SessionState.OPEN or self._lost is not None or self._pid != _forks.pid():
            self._check_usable(method)
        rid = self._ids.next()
        if progress is not None or progress_token:
            if owned_params and params is not None and type(params.get("_meta")) is dict:
                params["_meta"]["progressToken"] = rid
            else:
                params = dict(params or {})
                meta = dict(params.get("_meta") or {})
                meta["progressToken"] = rid
                params["_meta"] = meta
        pending = _Pending(rid, method, progress)
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        # dict operations are atomic under the GIL: no lock on the hot path. A close racing this
        # insert is caught by the state check below (close sets the state before failing pending calls).
        self._pending[rid] = pending
        if self._state is not SessionState.OPEN or self._lost is not None:
            self._pending.pop(rid, None)
            self._check_usable(method)
            raise ClientClosed("client is closed", server=self.name, method=method)
        return pending, msg

    def request(
        self,
        method: str,
        params: Optional[Dict[str, Any]] = None,
        *,
        timeout: Timeout = DEFAULT,
        max_total_timeout: Optional[float] = None,
        progress: Optional[Callable[[ProgressEvent], object]] = None,
        progress_token: bool = False,
        owned_params: bool = False,
        before_send: Optional[Callable[[Any], Any]] = None,
    ) -> Any:
        """Send a request and block until its result.

        Args:
            timeout: idle timeout in seconds (DEFAULT: the session default; None: wait forever);
                each progress notification for this request restarts it.
            max_total_timeout: a hard cap on the whole wait, progress or not (None: no cap).
            progress: called (on the dispatch thread) with each ProgressEvent; implies a progressToken.
            progress_token: attach a progressToken even without a callback.
            before_send: called with the request id before the request leaves (as in :meth:`request_async`).

        Returns:
            The ``result`` member of the response.

        Raises:
            RequestTimeout, RemoteError (by code), ConnectionClosed, ClientClosed.
        """
        pending, msg, idle = self._prepare(method, params, timeout, progress, progress_token, owned_params, before_send)
        # A blocking caller with no hard cap can let the transport read the answer in this thread.
        self._send_request(pending, msg, idle, inline=max_total_timeout is None)
        return self._wait(pending, idle, max_total_timeout)

    def request_async(
        self,
        method: str,
        params: Optional[Dict[str, Any]] = None,
        *,
        timeout: Timeout = DEFAULT,
        max_total_timeout: Optional[float] = None,
        progress: Optional[Callable[[ProgressEvent], object]] = None,
        progress_token: bool = False,
        transform: Optional[Callable[[Any], Any]] = None,
        before_send: Optional[Callable[[Any], object]] = None,
    ) -> RequestHandle[Any]:
        """Send a request and return at once with a :class:`RequestHandle`.

        ``before_send(request_id)`` runs before the request leaves, so a caller can
        route notifications that may arrive before this method returns.
        """
        pending, msg, idle = self._prepare(method, params, timeout, progress, progress_token, False, before_send)
        if self.transport.send_blocks_for_response:
            if not self._senders.submit(self._send_request_quiet, pending, msg, idle):
                self._finish(pending, ConnectionClosed("client is closed", server=self.name))
        else:
            self._send_request(pending, msg)
        return RequestHandle(self, pending, idle, max_total_timeout, transform)

    def _prepare(
        self,
        method: str,
        params: Optional[Dict[str, Any]],
        timeout: Timeout,
        progress: Optional[Callable[[ProgressEvent], object]],
        progress_token: bool,
        owned_params: bool,
        before_send: Optional[Callable[[Any], object]],
    ) -> Tuple[_Pending, Dict[str, Any], Optional[float]]:
        """Register a request (see :meth:`new_request`), run ``before_send`` on its id, resolve its idle timeout.

        A ``before_send`` that raises unregisters the request (never sent: nothing would ever settle it).
        """
        pending, msg = self.new_request(
            method, params, progress=progress, progress_token=progress_token, owned_params=owned_params
        )
        if before_send is not None:
            try:
                before_send(pending.request_id)
            except BaseException:
                self._pending.pop(pending.request_id, None)
                raise
        return pending, msg, self.default_timeout if timeout is DEFAULT else timeout

    def _send_request(
        self, pending: _Pending, msg: Dict[str, Any], idle: Optional[float] = None, inline: bool = False
    ) -> None:
        try:
            if self.transport.send_blocks_for_response:
                # a blocking send (HTTP POST) must not outlive the idle timeout
                self.transport.send(msg, timeout=idle, inline=inline)  # type: ignore[call-arg]
            else:
                self.transport.send(msg)
        except MCPError as exc:
            self._pending.pop(pending.request_id, None)
            raise exc.with_context(server=self.name, method=pending.method, request_id=pending.request_id)
        except BaseException:
            self._pending.pop(pending.request_id, None)
            raise

    def _send_request_quiet(self, pending: _Pending, msg: Dict[str, Any], idle: Optional[float]) -> None:
        try:
            self._send_request(pending, msg, idle)
        except BaseException as exc:  # noqa: BLE001 - delivered to the waiter
            if not pending.done():
                pending.set_exception(exc)

    def notify(self, method: str, params: Optional[Dict[str, Any]] = None) -> None:
        """Send a notification. Raises ClientClosed/ConnectionClosed when the connection is gone."""
        self._check_usable(method)
        try:
            self.transport.send(jsonrpc.notification(method, params))
        except MCPError as exc:
            raise exc.with_context(server=self.name, method=method)

    def _send_raw(self, message: Any) -> None:
        if self._state is not SessionState.OPEN or self._lost is not None or self._pid != _forks.pid():
            return
        try:
            if isinstance(message, list):
                self.transport.send(message)  # type: ignore[arg-type]
            else:
                self.transport.send(message)
        except Exception as exc:  # noqa: BLE001 - a lost answer is logged, the reader handles the close
            logger.debug("[%s] could not send %s: %s", self.name, jsonrpc.truncate(message, 80), exc)

    # ------------------------------------------------------------------ waiting

    def _wait(self, pending: _Pending, idle: Optional[float], max_total: Optional[float]) -> Any:
        end = pending.outcome
        if end is not None:  # settled already (an answer this thread read itself): no Future was needed
            if end[1] is not None:
                raise end[1]
            return end[0]
        fut = pending.future
        if self._pid != _forks.pid() and not fut.done():  # nobody in this process will ever answer it
            raise self.forked_error(pending.method)
        if max_total is None and idle is not None:
            try:  # the common case: one timed wait, no bookkeeping
                return fut.result(idle)
            except (concurrent.futures.TimeoutError, TimeoutError):
                if fut.done():
                    return fut.result(0)
            except BaseException as exc:
                if fut.done():
                    raise
                self._abandon(pending, "interrupted: %s" % type(exc).__name__, RequestCancelled)
                raise
        if idle is None and max_total is None:
            try:
                return fut.result()
            except BaseException as exc:
                if fut.done():
                    raise
                self._abandon(pending, "interrupted: %s" % type(exc).__name__, RequestCancelled)
                raise
        hard_deadline = pending.started + max_total if max_total is not None else None
        while True:
            now = time.monotonic()
            if idle is not None:
                deadline = pending.last_activity + idle
                if hard_deadline is not None and hard_deadline < deadline:
                    deadline = hard_deadline
            else:
                deadline = hard_deadline  # type: ignore[assignment]
            remaining = deadline - now
            try:
                if remaining > 0:
                    return fut.result(remaining)
            except (concurrent.futures.TimeoutError, TimeoutError):
                if fut.done():
                    return fut.result(0)
            except BaseException as exc:
                if fut.done():
                    raise
                self._abandon(pending, "interrupted: %s" % type(exc).__name__, RequestCancelled)
                raise
            if fut.done():
                return fut.result(0)
            now = time.monotonic()
            if hard_deadline is not None and now >= hard_deadline:
                self._expire(pending, max_total, "maximum total time")
            if idle is not None and now >= pending.last_activity + idle:
                self._expire(pending, idle, "idle timeout")

    def _expire(self, pending: _Pending, seconds: Optional[float], what: str) -> None:
        exc = RequestTimeout(
            "request timed out (%s of %s)" % (what, seconds_text(seconds)),
            timeout=seconds,
            server=self.name,
            method=pending.method,
            request_id=pending.request_id,
        )
        if self._abandon(pending, "timeout: %s of %s" % (what, seconds_text(seconds)), None, exc):
            raise exc
        # The answer is already here (it may be queued behind this call's progress callbacks):
        # wait for it to be settled; the caller's loop then returns it.
        concurrent.futures.wait([pending.future])

    def _abandon(
        self,
        pending: _Pending,
        reason: str,
        exc_type: Optional[type],
        exc: Optional[BaseException] = None,
    ) -> bool:
        """Pop the request, fail its future, tell the server. False when it had already finished."""
        popped = self._pending.pop(pending.request_id, None)
        if popped is None:
            return False
        if exc is None:
            assert exc_type is not None
            exc = exc_type(reason, server=self.name, method=pending.method, request_id=pending.request_id)
        if not pending.done():
            pending.set_exception(exc)
        self._tell_cancelled(pending, reason)
        return True

    def _tell_cancelled(self, pending: _Pending, reason: str) -> None:
        if (
            pending.method == "initialize"
            or self._state is not SessionState.OPEN
            or self._lost is not None
            or self._pid != _forks.pid()
        ):
            return
        try:
            if self.transport.cancel_request(pending.request_id):
                return
            self.transport.send(
                jsonrpc.notification("notifications/cancelled", {"requestId": pending.request_id, "reason": reason})
            )
        except Exception:  # noqa: BLE001 - best effort
            logger.debug("[%s] could not send cancellation", self.name, exc_info=True)

    def cancel(self, request_id: Any, reason: str = "cancelled by the client") -> bool:
        """Cancel one of our requests in flight. Returns False when it had already finished."""
        pending = self._pending.get(request_id)
        if pending is None:
            return False
        return self._abandon(pending, reason, RequestCancelled)

    def pending_count(self) -> int:
        """How many requests are in flight."""
        return len(self._pending)

    def _finish(self, pending: _Pending, exc: BaseException) -> None:
        self._pending.pop(pending.request_id, None)
        if not pending.done():
            pending.set_exception(exc)

    def _fail_all(self, exc: MCPError) -> None:
        old, self._pending = self._pending, {}  # swap: later inserts see the closed state and undo themselves
        pendings = list(old.values())
        for p in pendings:
            if not p.done():
                e = self._copy_error(exc, p)
                p.set_exception(e)

    @staticmethod
    def _copy_error(exc: MCPError, p: _Pending) -> MCPError:
        e = type(exc).__new__(type(exc))
        e.__dict__.update(exc.__dict__)
        e.args = exc.args
        e.method = p.method
        e.request_id = p.request_id
        return e

    # ------------------------------------------------------------------ receiving (transport threads)

    def dispatch(self, fn: Callable[..., Any], *args: Any) -> bool:
        """Run ``fn(*args)`` on the dispatch thread (in order with other callbacks). Never blocks.

        False when it was dropped: the callback backlog is full (counted in :attr:`dropped_callbacks`,
        logged rate-limited) or the session is closed.
        """
        return self._callbacks.offer(fn, *args)

    def on_message(self, message: Any) -> None:
        """TransportSink: one frame from the reader thread.

        Every frame is handled in isolation: whatever goes wrong while handling it is logged
        (rate-limited, see :class:`~mcpsync.wire.drops.DropLog`) and the frame dropped; nothing
        escapes to the transport's reader.
        """
        try:
            self._on_frame(message)
        except Exception as exc:  # noqa: BLE001 - one bad frame never ends the connection
            self.drops.drop("error handling a frame: %s" % type(exc).__name__, jsonrpc.truncate(message), exc)

    def _on_frame(self, message: Any) -> None:
        if type(message) is dict:
            # fast path: a well-formed success response to one of our integer ids
            rid = message.get("id")
            if (
                type(rid) is int
                and "result" in message
                and "method" not in message
                and "error" not in message
                and message.get("jsonrpc") == "2.0"
            ):
                pending = self._pending.pop(rid, None)
                if pending is None:
                    logger.debug("[%s] dropping response for unknown or finished id %r", self.name, rid)
                elif pending.progress is None or not self._callbacks.submit(
                    self._settle, pending, message, jsonrpc.RESPONSE
                ):
                    self._settle(pending, message, jsonrpc.RESPONSE)
                return
        elif type(message) is list:
            self._on_batch(message)
            return
        self._on_one(message, None)

    def _on_batch(self, batch: List[Any]) -> None:
        if not batch:
            self.drops.drop("empty batch")
            return
        requests = [m for m in batch if jsonrpc.classify(m) == (jsonrpc.REQUEST, None)]
        reply = BatchReply(self._send_raw, len(requests)) if requests else None
        for m in batch:
            try:
                self._on_one(m, reply)
            except Exception as exc:  # noqa: BLE001 - one bad member never spoils the rest of the batch
                self.drops.drop("error handling a frame: %s" % type(exc).__name__, jsonrpc.truncate(m), exc)

    def _on_one(self, message: Any, batch: Optional[BatchReply]) -> None:
        kind, problem = jsonrpc.classify(message)
        if problem is not None:
            self.drops.drop("invalid frame: %s" % problem, jsonrpc.truncate(message))
            return
        if kind == jsonrpc.RESPONSE or kind == jsonrpc.ERROR:
            self._on_response(message, kind)
        elif kind == jsonrpc.NOTIFICATION:
            self._on_notification(message)
        else:
            self._on_server_request(message, batch)

    def _on_response(self, message: Dict[str, Any], kind: str) -> None:
        rid = message["id"]
        if not jsonrpc.is_valid_id(rid):  # null (an error about an unparseable request) or a foreign type
            self.drops.drop("response with a %s id" % type(rid).__name__, jsonrpc.truncate(message))
            return
        pending = self._pending.pop(rid, None)
        if pending is None and type(rid) is str and _decimal(rid):
            pending = self._pending.pop(int(rid), None)
        if pending is None:
            logger.debug("[%s] dropping response for unknown or finished id %r", self.name, rid)
            return
        if pending.progress is not None and self._callbacks.submit(self._settle, pending, message, kind):
            return  # behind this call's progress callbacks: every one has run when the caller wakes up
        self._settle(pending, message, kind)

    def _settle(self, pending: _Pending, message: Dict[str, Any], kind: str) -> None:
        # The entry was popped by whoever calls this, so nobody else settles it.
        try:
            if kind == jsonrpc.ERROR:
                exc = error_from_response(
                    message["error"], server=self.name, method=pending.method, request_id=pending.request_id
                )
                pending.set_exception(exc)
            else:
                pending.set_result(message["result"])
        except concurrent.futures.InvalidStateError:  # cancelled concurrently: the answer is dropped
            pass

    def on_request_error(self, request_id: Any, exc: BaseException) -> None:
        """TransportSink: one request failed in transit."""
        pending = self._pending.pop(request_id, None)
        if pending is None:
            logger.debug("[%s] transport error for unknown id %r: %s", self.name, request_id, exc)
            return
        if isinstance(exc, MCPError):
            exc.with_context(server=self.name, method=pending.method, request_id=request_id)
        if not pending.done():
            pending.set_exception(exc)

    def _on_notification(self, message: Dict[str, Any]) -> None:
        method = message["method"]
        params = message.get("params")
        if type(params) is not dict:
            params = {}
        if method == "notifications/progress":
            token = params.get("progressToken")
            if not jsonrpc.is_valid_id(token):  # checked before any lookup: objects and arrays are unhashable
                self.drops.drop("progress token of type %s" % type(token).__name__, jsonrpc.truncate(params))
                token = None
            pending = self._pending.get(token) if token is not None else None
            if pending is None and type(token) is str and _decimal(token):
                pending = self._pending.get(int(token))
            if pending is not None:
                pending.last_activity = time.monotonic()
                if pending.progress is not None:
                    progress = params.get("progress")
                    total = params.get("total")
                    event = ProgressEvent(
                        progress=progress if isinstance(progress, (int, float)) else 0,
                        total=total if isinstance(total, (int, float)) else None,
                        message=params.get("message") if isinstance(params.get("message"), str) else None,
                        raw=params,
                    )
                    self._callbacks.offer(pending.progress, event)  # droppable: counted when the backlog is full
            else:
                logger.debug("[%s] progress for unknown token %r ignored", self.name, token)
        elif method == "notifications/cancelled":
            target = params.get("requestId")
            ctx = self._server_requests.get(target) if jsonrpc.is_valid_id(target) else None
            if ctx is not None:
                ctx.cancelled.set()
        if self._notification_handler is not None:
            try:
                self._notification_handler(method, params)
            except Exception:  # noqa: BLE001 - never kill the reader
                logger.exception("[%s] notification handler failed for %s", self.name, method)

    def _on_server_request(self, message: Dict[str, Any], batch: Optional[BatchReply]) -> None:
        rid = message["id"]
        ctx = RequestContext(rid, self.name)
        self._server_requests[rid] = ctx
        if self._handlers.offer(self._run_handler, message, ctx, batch):
            return
        self._server_requests.pop(rid, None)
        answer: Optional[Dict[str, Any]] = None
        if self._state is SessionState.OPEN and self._lost is None:  # refused for the bound: never silence
            answer = {"jsonrpc": "2.0", "id": rid, "error": dict(BUSY_ERROR)}
        if batch is not None:
            batch.add(answer)
        elif answer is not None:
            self._senders.submit(self._send_raw, answer)  # never block the reader on a send

    def _run_handler(self, message: Dict[str, Any], ctx: RequestContext, batch: Optional[BatchReply]) -> None:
        rid = message["id"]
        method = message["method"]
        params = message.get("params")
        if type(params) is not dict:
            params = {}
        answer: Optional[Dict[str, Any]]
        try:
            if method == "ping":
                result: Any = {}
            elif self._request_handler is None:
                raise MethodNotFound(-32601, "Method not found: %s" % method)
            else:
                result = self._request_handler(method, params, ctx)
            answer = jsonrpc.response(rid, result if result is not None else {})
        except Exception as exc:  # noqa: BLE001 - one rule for both eras: see handler_error()
            answer = {"jsonrpc": "2.0", "id": rid, "error": handler_error(self.name, method, exc)}
        finally:
            self._server_requests.pop(rid, None)
        if ctx.cancelled.is_set():
            logger.debug("[%s] server cancelled %s %r; answer discarded", self.name, method, rid)
            answer = None
        if batch is not None:
            batch.add(answer)
        elif answer is not None:
            self._send_raw(answer)

    def on_close(self, exc: Optional[BaseException]) -> None:
        """TransportSink: the connection ended."""
        if self._state is not SessionState.OPEN:
            return
        if exc is None:
            exc = ConnectionClosed("connection closed by the server", server=self.name)
        if not isinstance(exc, MCPError):
            wrapped = ConnectionClosed("connection lost: %s" % exc, server=self.name)
            wrapped.__cause__ = exc
            exc = wrapped
        exc.with_context(server=self.name)
        self._lost = exc
        self._ended.set()
        self._fail_all(exc)
        for ctx in list(self._server_requests.values()):
            ctx.cancelled.set()
        if self._owns_queue:
            self.notifications.close()
        if self._on_connection_lost is not None:
            self._callbacks.submit(self._on_connection_lost, exc)

    @property
    def lost(self) -> Optional[BaseException]:
        """Why the connection ended (None while it is up or after a clean close)."""
        return self._lost


def handler_error(server: str, method: str, exc: BaseException) -> Dict[str, Any]:
    """The JSON-RPC error object that answers the server when a handler for its ``method`` raised ``exc``.

    The one rule for server-request handlers in both eras (README "Server requests"): a
    :class:`~mcpsync.RemoteError` the handler raised is sent as its code, message and data; anything
    else becomes ``-32603 "Internal error while handling <method>"`` (nothing of it leaks) and is
    logged here. The handshake era sends it as the error response to the server's request; the
    2026-07-28 era as the ``inputResponses`` entry of the input request that failed.
    """
    if isinstance(exc, RemoteError):
        err: Dict[str, Any] = {"code": exc.code, "message": exc.message}
        if exc.data is not None:
            err["data"] = exc.data
        return err
    if isinstance(exc, MCPError):
        logger.warning("[%s] handler for %s failed: %s", server, method, exc)
    else:
        logger.error("[%s] handler for %s raised", server, method, exc_info=exc)
    return {"code": InternalError.code, "message": "Internal error while handling %s" % method}


def _decimal(text: str) -> bool:
    """True for a short ASCII decimal string (an integer id a server echoed as a string): int() cannot fail."""
    return 0 < len(text) <= 19 and text.isascii() and text.isdigit()
