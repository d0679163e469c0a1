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
from typing import Any, Callable, Generic, Optional, Protocol, Tuple, TypeVar, Union, cast

from .errors import RequestCancelled
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
      (never on a thread that reads the connection); added after the end, it is dispatched at once.
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
    __slots__ = ("future", "method", "request_id", "progress", "last_activity", "started")

    def __init__(self, request_id: Any, method: str, progress: Optional[Callable[[ProgressEvent], object]]) -> None:
        self.future: "concurrent.futures.Future[Any]" = concurrent.futures.Future()
        self.request_id = request_id
        self.method = method
        self.progress = progress
        self.started = self.last_activity = time.monotonic()


class RequestHandle(Handle[_R]):
    """A request in flight, returned by the non-blocking variants (``Client.call_tool_async``,
    ``Manager.call_tool_async``): a :class:`Handle`.

    Thread-safe. :meth:`result` blocks with the request's timeouts (a timeout ends the request: it is
    cancelled); :meth:`cancel` sends ``notifications/cancelled`` (or closes the request's stream on
    transports that cancel that way) and fails the request with :class:`~mcpsync.RequestCancelled`.
    ``RequestHandle[R]``: :meth:`result` returns an ``R`` (``call_tool_async`` gives a
    ``RequestHandle[CallToolResult]``). The answer is turned into an ``R`` once, by the first thread that
    gets it (in the 2026-07-28 era that may answer the server's ``input_required`` rounds); every other
    waiter gets the same value or error.
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
        self._final_lock = threading.Lock()  # held while the first waiter runs the transform
        self._final: Optional[Tuple[Any, Optional[BaseException]]] = None

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
        return self._pending.future.done()

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
        with self._final_lock:
            if self._final is None:
                try:
                    self._final = (self._transform(value), None)
                except Exception as exc:  # noqa: BLE001 - kept and raised to every waiter
                    self._final = (None, exc)
            final, error = self._final
        if error is not None:
            raise error
        return cast(_R, final)

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
        transport's reader). Added after the end, it is dispatched at once. Dropped, like every callback,
        when the client is closed or its callback backlog is full."""
        self._pending.future.add_done_callback(lambda _f: self._session.dispatch(fn, self))

    def __repr__(self) -> str:
        state = "done" if self.done() else "pending"
        return "<RequestHandle %s id=%r %s>" % (self.method, self.request_id, state)
