"""The reader that bounds every read of an answer, its status line and headers too, by an overall deadline.

A peer that trickles its answer a byte at a time never trips a per-read timeout. When a call of
:class:`~mcpsync.transports.http.pool.PoolNet` carries a deadline (``send(..., deadline=...)``), the answer's
socket is read through :class:`DeadlineReader`: before each read the socket's timeout is clipped to what is left
of the deadline, so no read, and so no call, outlives it, and no thread is needed to interrupt it.

Thread-safety: a reader belongs to one answer, read by one thread.
"""

from __future__ import annotations

import io
import socket
from typing import Any, Optional

__all__ = ["DeadlineReader"]


class DeadlineReader(io.RawIOBase):
    """A response's socket reader whose every read waits at most what is left of ``deadline`` (its
    ``remaining()``): the socket's timeout is clipped to that before the read and restored after it, and once
    nothing is left a read raises ``socket.timeout`` without waiting. Blocks at most that long per read."""

    def __init__(self, inner: Any, sock: socket.socket, deadline: Any) -> None:
        super().__init__()
        self._inner = inner
        self._sock = sock
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> Optional[int]:
        left = self._deadline.remaining()
        if left <= 0.0:
            raise socket.timeout("the call's deadline passed")
        before = self._sock.gettimeout()
        self._sock.settimeout(left if before is None else min(before, left))
        try:
            n: Optional[int] = self._inner.readinto(buffer)
            return n
        finally:
            try:
                self._sock.settimeout(before)
            except OSError:  # closed meanwhile
                pass

    def close(self) -> None:
        try:
            self._inner.close()
        finally:
            super().close()
