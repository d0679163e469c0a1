"""Thread helpers: every mcpsync thread is a named daemon, joined with a timeout, never by itself."""

from __future__ import annotations

import threading
from typing import Any, Callable, Optional

__all__ = ["join", "spawn"]


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
