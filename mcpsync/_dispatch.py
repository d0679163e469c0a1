"""Run user code off the I/O threads: an ordered dispatcher and a notification queue.

:class:`Dispatcher` is a small pool of named daemon threads fed by a bounded backlog. The
session uses one with a single worker for callbacks (so they run in order) and
one with a few workers for server-request handlers (so a slow sampling handler
does not delay a ping). Workers start lazily; overflow rule and close() discard in its docstring.

:class:`NotificationQueue` is the bounded queue of server notifications the user
iterates or polls.
:class:`RequestContext` and :class:`BatchReply` serve the handlers of server requests.
"""

from __future__ import annotations

import collections
import logging
import queue
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Deque, Dict, Iterator, List, Optional, Tuple

from ._threads import join, spawn

if TYPE_CHECKING:  # pragma: no cover
    from .types import ServerNotification

__all__ = ["BatchReply", "Dispatcher", "NotificationQueue", "RequestContext"]

logger = logging.getLogger(__name__)

class Dispatcher:
    """Runs submitted callables on up to ``max_workers`` named daemon threads. Thread-safe.

    Exceptions raised by a callable are logged and swallowed: user code can never
    kill a worker.

    The backlog (work queued and not yet started) has two kinds of entries:

    * :meth:`submit` queues work the library itself must not lose (settling a call behind its
      progress callbacks, the connection-lost callback, an HTTP stream reader). It is never
      refused while the dispatcher runs; what bounds it is the number of calls in flight.
    * :meth:`offer` queues droppable work (a user callback for a server notification, a
      progress event, a server-request handler). Overflow rule: when ``max_backlog`` entries
      already wait, the *new* entry is refused (:meth:`offer` returns False), counted in
      :attr:`dropped` and logged at WARNING: the first drop, then at most one summary every
      ``log_interval`` seconds. Older entries are never dropped, so callbacks that do run keep
      the order in which the server sent their notifications.

    :meth:`stop` with ``discard=True`` drops the whole backlog: after it returns, nothing that was
    queued starts (a callable already running is waited for, up to ``timeout``).
    """

    def __init__(
        self,
        name: str,
        max_workers: int = 1,
        *,
        max_backlog: Optional[int] = None,
        what: str = "callback",
        log_interval: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._name = name
        self._max = max_workers
        self.max_backlog = max_backlog
        self._what = what
        self._items: Deque[Tuple[Callable[..., Any], Tuple[Any, ...]]] = collections.deque()
        self._cond = threading.Condition(threading.Lock())
        self._workers: List[threading.Thread] = []
        self._idle = 0
        self._stopped = False
        self._dropped = 0
        self._logged_drops = 0
        self._next_log = 0.0
        self._log_interval = log_interval
        self._clock = clock

    @property
    def dropped(self) -> int:
        """How many :meth:`offer` entries were refused because the backlog was full (never reset)."""
        return self._dropped

    @property
    def backlog(self) -> int:
        """How many entries wait to start right now."""
        return len(self._items)

    def submit(self, fn: Callable[..., Any], *args: Any) -> bool:
        """Queue ``fn(*args)`` (never refused for the bound); returns False (and drops it) once stopped."""
        return self._put(fn, args, bounded=False)

    def offer(self, fn: Callable[..., Any], *args: Any) -> bool:
        """Queue ``fn(*args)`` unless the backlog is full or the dispatcher stopped; False when refused.

        Never blocks. A refusal because of the bound is counted in :attr:`dropped` and logged
        (rate-limited); the caller decides what a refusal means (a server request is answered
        with an error).
        """
        return self._put(fn, args, bounded=True)

    def _put(self, fn: Callable[..., Any], args: Tuple[Any, ...], bounded: bool) -> bool:
        with self._cond:
            if self._stopped:
                return False
            if bounded and self.max_backlog is not None and len(self._items) >= self.max_backlog:
                self._dropped += 1
                self._log_drop()
                return False
            self._items.append((fn, args))
            if self._idle > 0:  # claim one waiting worker (it counts itself idle again if it finds nothing)
                self._idle -= 1
                self._cond.notify()
            elif len(self._workers) < self._max:
                self._workers.append(spawn("%s-%d" % (self._name, len(self._workers)), self._run))
        return True

    def _log_drop(self) -> None:
        # under self._cond
        now = self._clock()
        if self._logged_drops and now < self._next_log:
            return
        logger.warning(
            "%s: %d %s(s) dropped so far (%d new): more than %d waiting behind a slow one",
            self._name,
            self._dropped,
            self._what,
            self._dropped - self._logged_drops,
            self.max_backlog,
        )
        self._logged_drops = self._dropped
        self._next_log = now + self._log_interval

    def _run(self) -> None:
        cond = self._cond
        items = self._items
        while True:
            with cond:
                while not items and not self._stopped:
                    self._idle += 1  # the submitter that wakes this worker takes it off again
                    cond.wait()
                if not items:  # stopped, and nothing (left) to run
                    return
                fn, args = items.popleft()
            try:
                fn(*args)
            except Exception:  # noqa: BLE001 - user code must never kill the worker
                logger.exception("%s %r raised", self._what, getattr(fn, "__name__", fn))

    def on_worker_thread(self) -> bool:
        """True when the current thread is one of this dispatcher's workers."""
        return threading.current_thread() in self._workers

    def stop(self, timeout: float = 2.0, *, discard: bool = False) -> List[Tuple[Callable[..., Any], Tuple[Any, ...]]]:
        """Stop accepting work and join the workers (never the current thread), all within ``timeout`` seconds.

        ``discard=False``: the workers run the backlog first (within ``timeout``). ``discard=True``: the
        backlog is removed at once and returned (so the caller can settle what the library itself
        queued); nothing queued starts, and a callable already running is waited for within ``timeout``.
        """
        with self._cond:
            if self._stopped:
                return []
            self._stopped = True
            discarded = list(self._items) if discard else []
            if discard:
                self._items.clear()
            workers = list(self._workers)
            self._cond.notify_all()
        deadline = time.monotonic() + timeout  # one bound for all workers together
        for w in workers:
            join(w, max(0.0, deadline - time.monotonic()))
        return discarded


class NotificationQueue:
    """A bounded, thread-safe queue of :class:`~mcpsync.types.ServerNotification`.

    ``get(timeout)`` blocks for at most ``timeout`` seconds (None: until one
    arrives or the client closes) and raises :class:`queue.Empty` when nothing
    came. Iterating yields notifications until the client is closed. When more
    than ``maxsize`` notifications are waiting, the oldest are dropped (with a
    warning) so an unread queue never grows without bound.
    """

    def __init__(self, maxsize: int = 10000) -> None:
        self._items: Deque[ServerNotification] = collections.deque()
        self._maxsize = maxsize
        self._cond = threading.Condition(threading.Lock())
        self._closed = False
        self._dropped = 0

    def put(self, item: ServerNotification) -> None:
        """Add one notification (called by the session; never blocks)."""
        with self._cond:
            if self._closed:
                return
            if len(self._items) >= self._maxsize:
                self._items.popleft()
                self._dropped += 1
                if self._dropped == 1 or self._dropped % 1000 == 0:
                    logger.warning("notification queue full; dropped %d oldest notification(s)", self._dropped)
            self._items.append(item)
            self._cond.notify()

    def get(self, timeout: Optional[float] = None) -> ServerNotification:
        """Remove and return the oldest notification, waiting up to ``timeout`` seconds."""
        with self._cond:
            if not self._cond.wait_for(lambda: self._items or self._closed, timeout):
                raise queue.Empty
            if self._items:
                return self._items.popleft()
            raise queue.Empty

    def get_nowait(self) -> ServerNotification:
        """Return the oldest notification or raise :class:`queue.Empty`."""
        return self.get(timeout=0)

    def drain(self) -> List[ServerNotification]:
        """Remove and return every waiting notification."""
        with self._cond:
            items = list(self._items)
            self._items.clear()
            return items

    def close(self) -> None:
        """Wake every waiter; iteration ends once the queue is empty."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def reset_after_fork(self) -> None:
        """In a forked child: a fresh lock (a dead thread may hold the old one), then closed."""
        self._cond = threading.Condition(threading.Lock())
        self.close()

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[ServerNotification]:
        while True:
            try:
                yield self.get()
            except queue.Empty:
                return


class RequestContext:
    """What a server-request handler gets besides method and params.

    Attributes:
        request_id: the id of the server's request.
        cancelled: a :class:`threading.Event` set when the server cancels the request;
            a long handler should check it and stop early (its answer is then discarded).
        server: the server's name.
    """

    __slots__ = ("request_id", "cancelled", "server")

    def __init__(self, request_id: Any, server: str) -> None:
        self.request_id = request_id
        self.cancelled = threading.Event()
        self.server = server


class BatchReply:
    """Collects the answers to a batch of server requests and sends them as one batch."""

    def __init__(self, send: Callable[[List[Any]], None], count: int) -> None:
        self._send = send
        self._left = count
        self._answers: List[Any] = []
        self._lock = threading.Lock()

    def add(self, answer: Optional[Dict[str, Any]]) -> None:
        with self._lock:
            if answer is not None:
                self._answers.append(answer)
            self._left -= 1
            done = self._left == 0
        if done and self._answers:
            self._send(self._answers)
