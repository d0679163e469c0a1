"""Run user code off the I/O threads: an ordered dispatcher and a notification queue.

:class:`Dispatcher` is a small pool of named daemon threads fed by a queue. The
session uses one with a single worker for callbacks (so they run in order) and
one with a few workers for server-request handlers (so a slow sampling handler
does not delay a ping). Workers start lazily and stop on a sentinel.

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
from typing import TYPE_CHECKING, Any, Callable, Deque, Dict, Iterator, List, Optional

from ._threads import join, spawn

if TYPE_CHECKING:  # pragma: no cover
    from .types import ServerNotification

__all__ = ["BatchReply", "Dispatcher", "NotificationQueue", "RequestContext"]

logger = logging.getLogger(__name__)

_STOP = object()


class Dispatcher:
    """Runs submitted callables on up to ``max_workers`` named daemon threads. Thread-safe.

    Exceptions raised by a callable are logged and swallowed: user code can never
    kill a worker.
    """

    def __init__(self, name: str, max_workers: int = 1) -> None:
        self._name = name
        self._max = max_workers
        self._queue: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
        self._workers: List[threading.Thread] = []
        self._idle = 0
        self._lock = threading.Lock()
        self._stopped = False

    def submit(self, fn: Callable[..., Any], *args: Any) -> bool:
        """Queue ``fn(*args)``; returns False (and drops it) once the dispatcher is stopped."""
        with self._lock:
            if self._stopped:
                return False
            if self._idle == 0 and len(self._workers) < self._max:
                self._workers.append(spawn("%s-%d" % (self._name, len(self._workers)), self._run))
                self._idle += 1
            self._idle -= 1
        self._queue.put((fn, args))
        return True

    def _run(self) -> None:
        get = self._queue.get
        while True:
            item = get()
            if item is _STOP:
                return
            fn, args = item
            try:
                fn(*args)
            except Exception:  # noqa: BLE001 - user code must never kill the worker
                logger.exception("callback %r raised", getattr(fn, "__name__", fn))
            finally:
                with self._lock:
                    self._idle += 1

    def on_worker_thread(self) -> bool:
        """True when the current thread is one of this dispatcher's workers."""
        return threading.current_thread() in self._workers

    def stop(self, timeout: float = 2.0) -> None:
        """Stop accepting work, let queued work finish, and join the workers (not the current thread)."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            workers = list(self._workers)
        for _ in workers:
            self._queue.put(_STOP)
        deadline = time.monotonic() + timeout  # one bound for all workers together
        for w in workers:
            join(w, max(0.0, deadline - time.monotonic()))


class NotificationQueue:
    """A bounded, thread-safe queue of :class:`~mcpsync.ServerNotification`.

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
