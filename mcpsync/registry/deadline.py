"""One overall time bound for a registry call, checked between reads, and the body reader that honours it.

A registry (or a bundle host) that trickles its answer a byte at a time never trips a per-read timeout; a
:class:`Deadline` bounds the whole call instead. The HTTP code asks it before each network step: :meth:`clip`
gives the timeout for the next step (the per-read timeout, or less when the deadline is nearer) and raises
:class:`~.errors.RegistryUnavailable` once the time is up. :func:`read_body` reads a streamed response in
single reads (``read1``: whatever has arrived, never waiting for a full buffer), setting the socket's timeout to
the clipped value before each, so no read outlives the deadline. The status line and headers are read inside
urllib3: :class:`~.net.RegistryNet` passes the deadline to the pool, whose answers are then read through
:class:`~mcpsync.transports.http.deadline_reader.DeadlineReader`, which clips the socket's timeout to the
deadline before each read; no thread is involved.

The reader needs from the response only ``read1(amt, decode_content=True)`` (or ``read``), ``close()`` and,
optionally, ``set_read_timeout(seconds)`` (to bound a read that is already waiting), as a
:class:`~mcpsync.transports.http.pool.PoolResponse` has.

Pure bookkeeping apart from the reads; a Deadline is used by one thread (one call) at a
time.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Iterator, Optional

from .errors import RegistryUnavailable

__all__ = ["Deadline", "read_body"]

#: The largest single read.
READ_SIZE = 65536


class Deadline:
    """``seconds`` from now, for the call ``what`` (named in the error). ``clock`` is injectable (tests)."""

    def __init__(self, seconds: float, what: str = "the registry call",
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = float(seconds)
        self.what = what
        self._clock = clock
        self._end = clock() + self.seconds

    def remaining(self) -> float:
        """Seconds left (never negative)."""
        return max(0.0, self._end - self._clock())

    def expired(self) -> bool:
        return self.remaining() <= 0.0

    def error(self, url: str = "") -> RegistryUnavailable:
        """The error of a call that ran out of time."""
        return RegistryUnavailable(
            "%s took longer than its timeout of %gs (the bound for the whole call, however slowly the answer "
            "arrives)%s" % (self.what, self.seconds, " for %s" % url if url else ""),
            url=url,
        )

    def check(self, url: str = "") -> None:
        """Raise :meth:`error` once the deadline has passed."""
        if self.expired():
            raise self.error(url)

    def clip(self, timeout: float, url: str = "") -> float:
        """The timeout for the next network step: ``timeout``, or what is left when that is less. Raises
        :meth:`error` when nothing is left."""
        left = self.remaining()
        if left <= 0.0:
            raise self.error(url)
        return min(float(timeout), left)


def _bound_socket(response: Any, seconds: float) -> None:
    """Make a read that is about to wait on ``response`` give up after ``seconds`` (its ``set_read_timeout``)."""
    set_read_timeout = getattr(response, "set_read_timeout", None)
    if set_read_timeout is not None:
        set_read_timeout(seconds)


def read_body(response: Any, deadline: Deadline, per_read: float, *, url: str = "",
              max_bytes: Optional[int] = None, too_large: Optional[Callable[[], BaseException]] = None,
              ) -> Iterator[bytes]:
    """The body of a streamed ``urllib3`` response, chunk by chunk, within ``deadline``.

    Each read waits at most ``per_read`` seconds (less when the deadline is nearer) and returns what has
    arrived. Raises :class:`~.errors.RegistryUnavailable` when the deadline passes or a read fails (the caller
    closes the response), and ``too_large()`` (default RegistryUnavailable) past ``max_bytes``.
    """
    read1 = getattr(response, "read1", None)
    size = 0
    while True:
        wait = deadline.clip(per_read, url)
        _bound_socket(response, wait)
        try:
            chunk = read1(READ_SIZE, decode_content=True) if read1 is not None else response.read(
                READ_SIZE, decode_content=True)
        except Exception as exc:  # noqa: BLE001 - urllib3's and the socket's errors alike
            if deadline.expired():
                raise deadline.error(url) from None
            raise RegistryUnavailable("reading %s failed: %s" % (url or "the answer", exc), url=url) from None
        if not chunk:
            if deadline.expired():  # cut short by the deadline: not the end of the answer
                raise deadline.error(url)
            return
        size += len(chunk)
        if max_bytes is not None and size > max_bytes:
            if too_large is not None:
                raise too_large()
            raise RegistryUnavailable("the answer for %s is larger than %d bytes" % (url, max_bytes), url=url)
        yield chunk
