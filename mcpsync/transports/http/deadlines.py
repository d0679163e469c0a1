"""Read timeouts for blocking sockets: a deadline per connection and one watchdog thread that enforces them.

Used by the standard-library HTTP engine (:mod:`mcpsync.transports.http.engine`); a connection is a
:class:`Waiter`.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Optional, Protocol, Set

__all__ = ["Deadlines", "Waiter"]


class Waiter(Protocol):
    """A connection whose waits are bounded: its socket, the limit in force, the current deadline."""

    sock: socket.socket
    limit: Optional[float]  # seconds without a byte (None: unbounded)
    deadline: Optional[float]  # the monotonic time the current wait must end by
    expired: bool  # set by the watchdog when it shut the socket down


class Deadlines:
    """Read timeouts without socket timeouts: one watchdog thread per engine shuts a socket down when its
    wait outlives the read timeout, and the reader then raises ``ReadTimeout``.

    A socket with a timeout makes CPython ``poll()`` before every ``send``/``recv`` (two system calls
    that each release the GIL instead of one; with many threads every release waits to get it back), and
    each ``settimeout`` is a system call too. The engine's sockets stay blocking; arming, extending and
    clearing a deadline is an attribute write and a set operation (the watchdog is only woken when a
    deadline earlier than the one it sleeps towards appears). The semantics are a socket timeout's: the
    bound is renewed before every read (seconds without a byte) and covers sending too.
    """

    def __init__(self, name: str) -> None:
        self._name = name
        self._armed: Set[Waiter] = set()
        self._cond = threading.Condition(threading.Lock())
        self._wake_at = float("inf")
        self._thread: Optional[threading.Thread] = None
        self._stopped = False

    def arm(self, conn: Waiter, seconds: Optional[float]) -> None:
        """From now on, every wait on ``conn`` ends after ``seconds`` without a byte (None: no bound)."""
        conn.limit = seconds
        if seconds is None:
            conn.deadline = None
            self._armed.discard(conn)
            return
        deadline = time.monotonic() + seconds
        conn.deadline = deadline
        self._armed.add(conn)
        if deadline < self._wake_at or self._thread is None:
            with self._cond:
                if self._stopped:
                    return
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._run, name="mcpsync-http-deadlines:%s" % self._name, daemon=True
                    )
                    self._thread.start()
                if deadline < self._wake_at:
                    self._wake_at = deadline
                    self._cond.notify()

    def renew(self, conn: Waiter) -> None:
        """A new wait on ``conn`` starts now (under the same limit): a later deadline, nobody to wake."""
        limit = conn.limit
        if limit is not None:
            conn.deadline = time.monotonic() + limit

    def clear(self, conn: Waiter) -> None:
        conn.limit = conn.deadline = None
        self._armed.discard(conn)

    def _run(self) -> None:
        with self._cond:
            while not self._stopped:
                now = time.monotonic()
                soonest = float("inf")
                for conn in list(self._armed):
                    deadline = conn.deadline
                    if deadline is None:
                        self._armed.discard(conn)
                    elif deadline <= now:
                        conn.expired = True
                        conn.deadline = None
                        self._armed.discard(conn)
                        try:
                            conn.sock.shutdown(socket.SHUT_RDWR)  # the blocked reader (or sender) wakes up now
                        except OSError:
                            pass
                    elif deadline < soonest:
                        soonest = deadline
                self._wake_at = soonest
                self._cond.wait(None if soonest == float("inf") else soonest - now)

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(2.0)

    def after_fork_in_child(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._stopped = True
        self._thread = None
        self._armed = set()
