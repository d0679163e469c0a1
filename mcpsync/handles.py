"""A request in flight: :class:`RequestHandle` (what the non-blocking calls return), the pending entry the session
keeps per request, and the :data:`DEFAULT` timeout sentinel. Part of the session layer; the handle waits, cancels
and dispatches through its session (seen as :class:`HandleOwner`). Thread-safe.
"""

from __future__ import annotations

import concurrent.futures
import enum
import time
from typing import Any, Callable, Generic, Optional, Protocol, TypeVar, Union, cast

from .errors import RequestCancelled
from .types import ProgressEvent

__all__ = ["DEFAULT", "HandleOwner", "RequestHandle", "Timeout"]


class _Default(enum.Enum):
    DEFAULT = "DEFAULT"

    def __repr__(self) -> str:
        return "DEFAULT"


#: Sentinel meaning "use the client's default" (``None`` means "no timeout").
DEFAULT = _Default.DEFAULT

Timeout = Union[float, None, _Default]
_R = TypeVar("_R")


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


class RequestHandle(Generic[_R]):
    """A request in flight, returned by the non-blocking variants (``call_tool_async``...).

    Thread-safe. :meth:`result` blocks with the request's timeouts;
    :meth:`cancel` sends ``notifications/cancelled`` (or closes the request's
    stream on transports that cancel that way) and fails the request with
    :class:`~mcpsync.RequestCancelled`. ``RequestHandle[R]``: :meth:`result` returns an ``R``
    (``call_tool_async`` gives a ``RequestHandle[CallToolResult]``).
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

    @property
    def request_id(self) -> Any:
        """The JSON-RPC id of the request."""
        return self._pending.request_id

    @property
    def method(self) -> str:
        """The request's method."""
        return self._pending.method

    def done(self) -> bool:
        """True once the request has a result, an error, or was cancelled."""
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
        if self._transform is not None:
            return self._transform(value)
        return cast(_R, value)  # no transform: the raw result (a RequestHandle[Any])

    def cancel(self, reason: str = "cancelled by the client") -> bool:
        """Cancel the request; returns False when it had already finished."""
        return self._session.cancel(self._pending.request_id, reason)

    def cancelled(self) -> bool:
        """True when the request ended by cancellation."""
        f = self._pending.future
        return f.done() and isinstance(f.exception(0), RequestCancelled)

    def running(self) -> bool:
        """True while the request is in flight."""
        return not self._pending.future.done()

    def exception(self, timeout: Timeout = DEFAULT) -> Optional[BaseException]:
        """Wait like :meth:`result` and return the error instead of raising it (None on success)."""
        try:
            self.result(timeout)
        except BaseException as exc:  # noqa: BLE001 - returned, as concurrent.futures does
            return exc
        return None

    def add_done_callback(self, fn: Callable[["RequestHandle[_R]"], object]) -> None:
        """Call ``fn(handle)`` when the request finishes, on the session's dispatch thread."""
        self._pending.future.add_done_callback(lambda _f: self._session.dispatch(fn, self))
