"""The process's open clients: closed at interpreter exit, abandoned in a forked child.

:class:`~mcpsync.Client` calls :func:`track` once open and :func:`untrack` when closed.
The set holds weak references: a client nobody uses any more is not kept alive by it.
"""

from __future__ import annotations

import atexit
import weakref
from typing import Optional, Protocol

from .. import _forks

__all__ = ["track", "untrack"]


class Tracked(Protocol):
    """What the registry does with an open client."""

    def close(self, timeout: Optional[float] = None) -> None: ...

    def _abandon_after_fork(self) -> None: ...


# Process-wide by nature: interpreter exit and fork are process events (weak references: no client is kept alive).
_OPEN: "weakref.WeakSet[Tracked]" = weakref.WeakSet()


def _close_all_at_exit() -> None:
    for client in list(_OPEN):
        try:
            client.close(timeout=1.0)
        except Exception:  # noqa: BLE001
            pass


def _abandon_forked_clients() -> None:
    """In a new child process: every client inherited from the parent is abandoned (fds released, no I/O)."""
    for client in list(_OPEN):
        client._abandon_after_fork()  # noqa: SLF001


_forks.after_fork_in_child(_abandon_forked_clients)
atexit.register(_close_all_at_exit)  # closes nothing when no client is open


def track(client: Tracked) -> None:
    """Remember an open client (and close it at interpreter exit if nobody did)."""
    _OPEN.add(client)


def untrack(client: Tracked) -> None:
    """Forget a closed client."""
    _OPEN.discard(client)
