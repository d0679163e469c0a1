"""Thread helpers: every mcpsync thread is a named daemon, joined with a timeout, never by itself; and
:class:`KeyedLocks`, the lock per server name that makes a refresh or a login single flight."""

from __future__ import annotations

import threading
from typing import Any, Callable, Dict, Generic, Optional, TypeVar

__all__ = ["KeyedLocks", "join", "spawn"]

_L = TypeVar("_L")


def spawn(name: str, target: Callable[..., Any], *args: Any) -> threading.Thread:
    """Start and return a daemon thread called ``name`` running ``target(*args)``."""
    thread = threading.Thread(target=target, args=args, name=name, daemon=True)
    thread.start()
    return thread


def join(thread: Optional[threading.Thread], timeout: float) -> bool:
    """Join ``thread`` for at most ``timeout`` seconds; never joins the current thread.

    Returns True when the thread is no longer alive (or is the current thread,
    which will end on its own once it returns).
    """
    if thread is None:
        return True
    if thread is threading.current_thread():
        return True
    thread.join(timeout)
    return not thread.is_alive()


class KeyedLocks(Generic[_L]):
    """One lock per key (a server name), made by ``factory`` (``threading.Lock``, ``threading.RLock``) the first
    time the key is asked for, then kept: the keys are the servers one manager knows, a small bounded set.

    Thread-safe: threads asking for the same new key at once all get the one lock made. Calling it blocks only
    for the short internal guard, never for the lock it returns.
    """

    def __init__(self, factory: Callable[[], _L]) -> None:
        self._factory = factory
        self._guard = threading.Lock()
        self._locks: Dict[str, _L] = {}

    def __call__(self, key: str) -> _L:
        """The lock of ``key`` (not acquired: use it in a ``with``)."""
        with self._guard:
            lock = self._locks.get(key)
            if lock is None:
                lock = self._locks[key] = self._factory()
            return lock
