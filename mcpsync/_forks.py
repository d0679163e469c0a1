"""Fork awareness: the current process id, kept current by an ``os.register_at_fork`` hook.

A client holds threads, pipes and sockets that do not survive ``os.fork()`` (gunicorn
``--preload``, Celery prefork, multiprocessing's "fork" start method): in the child the reader
threads are gone, so a call would wait for an answer nobody reads. Objects record :func:`pid`
when they are made and compare it on use (an attribute read, no system call); a mismatch means
"made in another process". :func:`after_fork_in_child` registers work to do in a new child
(replace locks another thread may have held at fork time, release inherited descriptors); the
hooks run in registration order and never raise.
"""

from __future__ import annotations

import logging
import os
import threading
import types
import weakref
from typing import Any, Callable, List, Optional

from .errors import ForkedClientError

__all__ = ["after_fork_in_child", "forked_error", "pid"]

logger = logging.getLogger(__name__)

_pid = os.getpid()
# Process-wide by nature (os.register_at_fork is): each entry gives its hook, or None once the hook's object is gone.
_hooks: List[Callable[[], Optional[Callable[[], None]]]] = []
_hooks_lock = threading.Lock()


def pid() -> int:
    """The current process id (updated in a forked child before any user code runs)."""
    return _pid


def forked_error(parent_pid: int, **context: Any) -> ForkedClientError:
    """The error for using, in this process, something opened in the process ``parent_pid``."""
    return ForkedClientError(
        "this client was opened in process %d and cannot be used in the forked child process %d "
        "(its connection and threads stayed in the parent); open clients after forking "
        "(e.g. in gunicorn's post_fork or Celery's worker_process_init hook, or inside the "
        "multiprocessing worker), let them reopen in the child (ClientOptions(after_fork='reopen'), the default), "
        "or use a Manager, which reopens its servers in the child" % (parent_pid, _pid),
        parent_pid=parent_pid,
        child_pid=_pid,
        **context,
    )


def after_fork_in_child(hook: Callable[[], None]) -> None:
    """Run ``hook()`` in every child forked from now on (after the pid is updated).

    A bound method is held weakly: registering ``obj.method`` does not keep ``obj`` alive, and the hook goes
    away with it (a Manager registers its own reset this way). Thread-safe; does not block."""
    entry: Callable[[], Optional[Callable[[], None]]]
    if isinstance(hook, types.MethodType):
        entry = weakref.WeakMethod(hook)
    else:
        entry = lambda: hook  # noqa: E731
    with _hooks_lock:
        _hooks[:] = [h for h in _hooks if h() is not None] + [entry]


def _in_child() -> None:
    global _pid, _hooks_lock
    _pid = os.getpid()
    _hooks_lock = threading.Lock()  # a thread of the parent may have held it at fork time
    for entry in list(_hooks):
        hook = entry()
        if hook is None:
            continue
        try:
            hook()
        except Exception:  # noqa: BLE001 - a hook must never break the child
            logger.debug("after-fork hook %r failed", hook, exc_info=True)


if hasattr(os, "register_at_fork"):  # POSIX; Windows has no fork
    os.register_at_fork(after_in_child=_in_child)
