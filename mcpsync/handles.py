"""Work that is not finished yet: the :class:`Handle` contract, :class:`RequestHandle` (what the non-blocking
calls return), the pending entry the session keeps per request, and the :data:`DEFAULT` timeout sentinel.

Every handle mcpsync returns for unfinished work -- a request in flight (``Client.call_tool_async``,
``Manager.call_tool_async``) and a server-side task (:class:`mcpsync.tasks.TaskHandle`) -- is a :class:`Handle`
with the same members for the same jobs: ``id``, ``done()``, ``result(timeout)``, ``exception(timeout)``,
``cancel()``, ``cancelled()`` and ``add_done_callback(fn)``. Part of the session layer; a
:class:`RequestHandle` waits, cancels and dispatches through its session (seen as :class:`HandleOwner`).
Thread-safe.
"""

from __future__ import annotations

import abc
import concurrent.futures
import enum
import threading
import time
from typing import Any, Callable, Generic, List, Optional, Protocol, Tuple, TypeVar, Union, cast

from .errors import RequestCancelled, RequestTimeout, seconds_text
from .types import ProgressEvent

__all__ = ["DEFAULT", "Handle", "HandleOwner", "RequestHandle", "Timeout"]


class _Default(enum.Enum):
    DEFAULT = "DEFAULT"

    def __repr__(self) -> str:
        return "DEFAULT"


#: Sentinel meaning "use the client's default" (``None`` means "no timeout").
DEFAULT = _Default.DEFAULT

Timeout = Union[float, None, _Default]
_R = TypeVar("_R")
_H = TypeVar("_H", bound="Handle[Any]")


class Handle(abc.ABC, Generic[_R]):
    """Work that is not finished yet: one contract for every handle mcpsync returns.

    ``Handle[R]``: :meth:`result` returns an ``R``. Every member is thread-safe; any number of threads may
    wait on one handle at once, and the work's outcome is computed once and shared (never a second answer,
    never a callback run twice).

    - :attr:`id`: the work's id (a request's JSON-RPC id, a task's ``taskId``).
    - :meth:`done`: True once the outcome is known. Never blocks, never does I/O.
    - :meth:`result`: block until the outcome, return it or raise the work's error
      (:class:`~mcpsync.RequestTimeout` when ``timeout`` passes first; each handle documents whether the
      work goes on after that).
    - :meth:`exception`: wait like :meth:`result`, return the error instead of raising it (None on success).
    - :meth:`cancel`: ask for the work to stop; False when it had already ended.
    - :meth:`cancelled`: True when the work ended by cancellation.
    - :meth:`add_done_callback`: ``fn(handle)`` runs once when the work ends, on the client's dispatch thread
      (never on a thread that reads the connection), in the order the callbacks were added; added after the
      end, it is dispatched at once, behind the earlier ones.
    """

    @property
    @abc.abstractmethod
    def id(self) -> Any:
        """The work's id (a request's JSON-RPC id, a task's ``taskId``)."""

    @abc.abstractmethod
    def done(self) -> bool:
        """True once the outcome is known. Never blocks."""

    @abc.abstractmethod
    def result(self, timeout: Timeout = DEFAULT) -> _R:
        """Block until the outcome and return it, or raise the work's error."""

    @abc.abstractmethod
    def cancel(self) -> bool:
        """Ask for the work to stop; False when it had already ended."""

    @abc.abstractmethod
    def cancelled(self) -> bool:
        """True when the work ended by cancellation."""

    @abc.abstractmethod
    def add_done_callback(self: _H, fn: Callable[[_H], object]) -> None:
        """Call ``fn(handle)`` once when the work ends, on the client's dispatch thread."""

    def exception(self, timeout: Timeout = DEFAULT) -> Optional[BaseException]:
        """Wait like :meth:`result` and return the work's error instead of raising it (None on success).

        Raises :class:`~mcpsync.RequestTimeout` only when the wait ended while the work goes on (a task
        outliving ``timeout``); a request that timed out is over, and its ``RequestTimeout`` is returned.
        """
        try:
            self.result(timeout)
        except Exception as exc:  # noqa: BLE001 - returned, as concurrent.futures does
            if not self.done():
                raise
            return exc
        return None

    def running(self) -> bool:
        """True while the work is not finished (``not done()``)."""
        return not self.done()


class HandleOwner(Protocol):
    """What a :class:`RequestHandle` uses of its session (:class:`mcpsync.session.Session`)."""

    def _wait(self, pending: "_Pending", idle: Optional[float], max_total: Optional[float]) -> Any: ...

    def cancel(self, request_id: Any, reason: str = ...) -> bool: ...

    def dispatch(self, fn: Callable[..., Any], *args: Any) -> object: ...


class _Pending:
    """The session's entry for one request in flight: its id, method, progress callback, clocks, and its end.

    The end is settled once (:meth:`set_result` / :meth:`set_exception`; a second settle raises
    ``concurrent.futures.InvalidStateError``, as a ``Future`` does). Its ``concurrent.futures.Future`` is made
    when a thread first asks for :attr:`future` (a waiter on another thread, a done-callback): an answer that the
    calling thread reads itself (an HTTP POST's answer) and takes back through :attr:`outcome` needs none, which
    spares each such call a ``Condition`` and its lock traffic. Thread-safe: the settle and the making of the
    future are serialised by a lock of the entry's own, so a future made while the answer lands carries it.
    """

    __slots__ = ("_future", "outcome", "_lock", "method", "request_id", "progress", "last_activity", "started")

    def __init__(self, request_id: Any, method: str, progress: Optional[Callable[[ProgressEvent], object]]) -> None:
        self._future: "Optional[concurrent.futures.Future[Any]]" = None
        #: ``(result, None)`` or ``(None, exception)`` once settled before anyone asked for :attr:`future`.
        #: Written once; a thread that reads it not None has the final end without a lock.
        self.outcome: Optional[Tuple[Any, Optional[BaseException]]] = None
        self._lock = threading.Lock()
        self.request_id = request_id
        self.method = method
        self.progress = progress
        self.started = self.last_activity = time.monotonic()

    @property
    def future(self) -> "concurrent.futures.Future[Any]":
        """The request's ``Future`` (made on first use; already finished when the request is)."""
        f = self._future
        if f is not None:
            return f
        with self._lock:
            f = self._future
            if f is None:
                f = concurrent.futures.Future()
                end = self.outcome
                if end is not None:
                    if end[1] is not None:
                        f.set_exception(end[1])
                    else:
                        f.set_result(end[0])
                self._future = f
        return f

    def done(self) -> bool:
        """True once settled. Never blocks."""
        f = self._future
        return self.outcome is not None if f is None else f.done()

    def set_result(self, value: Any) -> None:
        """Settle with ``value`` (raises ``InvalidStateError`` when already settled)."""
        self._settle((value, None))

    def set_exception(self, exc: BaseException) -> None:
        """Settle with ``exc`` (raises ``InvalidStateError`` when already settled)."""
        self._settle((None, exc))

    def _settle(self, end: Tuple[Any, Optional[BaseException]]) -> None:
        with self._lock:
            f = self._future
            if f is None:
                if self.outcome is not None:
                    raise concurrent.futures.InvalidStateError("the request %r is already settled" % self.request_id)
                self.outcome = end
                return
        if end[1] is not None:  # outside the lock: a Future runs its done-callbacks inside set_*
            f.set_exception(end[1])
        else:
            f.set_result(end[0])


class RequestHandle(Handle[_R]):
    """A request in flight, returned by the non-blocking variants (``Client.call_tool_async``,
    ``Manager.call_tool_async``): a :class:`Handle`.

    Thread-safe. :meth:`result` blocks with the request's timeouts (a timeout ends the request: it is
    cancelled); :meth:`cancel` sends ``notifications/cancelled`` (or closes the request's stream on
    transports that cancel that way) and fails the request with :class:`~mcpsync.RequestCancelled`.
    ``RequestHandle[R]``: :meth:`result` returns an ``R`` (``call_tool_async`` gives a
    ``RequestHandle[CallToolResult]``). The answer is turned into an ``R`` once, by the first thread that
    gets it (in the 2026-07-28 era that may answer the server's ``input_required`` rounds, with the request's
    timeouts); every other waiter gets the same value or error, waiting for it up to its own idle timeout.
    """

    def __init__(
        self,
        session: HandleOwner,
        pending: _Pending,
        timeout: Optional[float],
        max_total_timeout: Optional[float],
        transform: Optional[Callable[[Any], _R]] = None,
    ) -> None:
        self._session = session
        self._pending = pending
        self._timeout = timeout
        self._max_total = max_total_timeout
        self._transform = transform
        self._final_cond = threading.Condition(threading.Lock())
        self._finishing = False  # a waiter is running the transform (under _final_cond)
        self._final: Optional[Tuple[Any, Optional[BaseException]]] = None
        self._callback_lock = threading.Lock()
        self._callbacks: Optional[List[Callable[["RequestHandle[_R]"], object]]] = None  # None: not hooked yet
        self._fired = False  # the request ended and the callbacks went to the dispatch thread

    @property
    def request_id(self) -> Any:
        """The JSON-RPC id of the request (also readable as ``id``)."""
        return self._pending.request_id

    id = request_id

    @property
    def method(self) -> str:
        """The request's method."""
        return self._pending.method

    def done(self) -> bool:
        """True once the request has a result, an error, or was cancelled. Never blocks."""
        return self._pending.done()

    def result(self, timeout: Timeout = DEFAULT) -> _R:
        """Block until the result arrives and return it.

        Args:
            timeout: idle timeout for this wait (DEFAULT: the request's own);
                progress notifications restart it; the request's hard maximum still applies.

        Raises:
            RequestTimeout: the deadline passed (the request is then cancelled).
            RemoteError: the server answered with an error.
            RequestCancelled: the request was cancelled.
            ConnectionClosed: the connection ended first.
        """
        idle = self._timeout if timeout is DEFAULT else timeout
        value = self._session._wait(self._pending, idle, self._max_total)  # noqa: SLF001
        if self._transform is None:
            return cast(_R, value)  # no transform: the raw result (a RequestHandle[Any])
        final = self._finish(value, idle)
        if final[1] is not None:
            raise final[1]
        return cast(_R, final[0])

    def _finish(self, value: Any, idle: Optional[float]) -> Tuple[Any, Optional[BaseException]]:
        """Turn the answer into an ``R`` once: the first waiter runs the transform, the others wait for it
        (up to ``idle`` seconds each: then RequestTimeout, and the first waiter carries on)."""
        with self._final_cond:
            while self._final is None and self._finishing:
                if not self._final_cond.wait(idle) and self._final is None:
                    raise RequestTimeout(
                        "the answer is still being completed by another thread (%s)" % seconds_text(idle),
                        timeout=idle,
                        method=self._pending.method,
                        request_id=self._pending.request_id,
                    )
            if self._final is not None:
                return self._final
            self._finishing = True
        assert self._transform is not None
        try:
            final: Tuple[Any, Optional[BaseException]] = (self._transform(value), None)
        except Exception as exc:  # noqa: BLE001 - kept and raised to every waiter
            final = (None, exc)
        except BaseException:  # Ctrl-C in this waiter: another waiter may complete the answer
            with self._final_cond:
                self._finishing = False
                self._final_cond.notify_all()
            raise
        with self._final_cond:
            self._final = final
            self._finishing = False
            self._final_cond.notify_all()
        return final

    def cancel(self, reason: str = "cancelled by the client") -> bool:
        """Cancel the request; returns False when it had already finished (its answer wins then)."""
        return self._session.cancel(self._pending.request_id, reason)

    def cancelled(self) -> bool:
        """True when the request ended by cancellation."""
        f = self._pending.future
        return f.done() and isinstance(f.exception(0), RequestCancelled)

    def answer_error(self) -> Optional[BaseException]:
        """The request's own error once it ended (None while it runs, or when the server answered with a
        result), before the answer is turned into an ``R``: never blocks and runs nothing, so a done-callback
        can read it (``exception()`` would complete the call first, which may send requests)."""
        f = self._pending.future
        return f.exception(0) if f.done() else None

    def add_done_callback(self, fn: Callable[["RequestHandle[_R]"], object]) -> None:
        """Call ``fn(handle)`` once when the request finishes, on the session's dispatch thread (never on the
        transport's reader), in the order the callbacks were added. Added after the end, it is dispatched at
        once (after the earlier ones). Dropped, like every callback, when the client is closed or its callback
        backlog is full. Does not block."""
        with self._callback_lock:
            if self._fired:
                self._session.dispatch(fn, self)
                return
            hook = self._callbacks is None
            self._callbacks = (self._callbacks or []) + [fn]
        if hook:  # one hook on the future, whatever the number of callbacks (runs here if it is done already)
            self._pending.future.add_done_callback(self._fire)

    def _fire(self, _future: "concurrent.futures.Future[Any]") -> None:
        with self._callback_lock:  # dispatched under the lock: a callback added meanwhile queues behind these
            self._fired = True
            for fn in self._callbacks or ():
                self._session.dispatch(fn, self)
            self._callbacks = []

    def __repr__(self) -> str:
        state = "done" if self.done() else "pending"
        return "<RequestHandle %s id=%r %s>" % (self.method, self.request_id, state)
