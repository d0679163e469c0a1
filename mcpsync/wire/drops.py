"""Rate-limited logging of dropped frames: one warning per kind, then a periodic summary.

A hostile or broken peer can send millions of bad frames; each is dropped in isolation (the
connection stays up), and the log must stay readable. :class:`DropLog` logs the first frame of
each *kind* (``"invalid envelope"``, ``"handler error: TypeError"``...) at WARNING with a short
excerpt, later ones at DEBUG, and at most one WARNING summary per kind every ``interval`` seconds
with the count dropped since the last one. Thread-safe; never raises.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable, Dict, List, Optional

__all__ = ["DropLog"]


class DropLog:
    """Counts dropped frames per kind and logs them without flooding.

    Args:
        logger: where to log.
        name: the server's display name (prefixes every line).
        interval: seconds between two WARNING summaries of the same kind.
        clock: a monotonic clock (tests inject one).
    """

    def __init__(
        self,
        logger: logging.Logger,
        name: str,
        interval: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._logger = logger
        self._name = name
        self._interval = interval
        self._clock = clock
        self._lock = threading.Lock()
        self._total: Dict[str, int] = {}
        self._unreported: Dict[str, int] = {}
        self._last_warning: Dict[str, float] = {}

    def drop(self, kind: str, detail: str = "", exc_info: Optional[BaseException] = None) -> None:
        """Record one dropped frame of ``kind``; ``detail`` is a short excerpt (never secrets)."""
        try:
            now = self._clock()
            with self._lock:
                n = self._total.get(kind, 0) + 1
                self._total[kind] = n
                first = n == 1
                summary = 0
                if not first:
                    pending = self._unreported.get(kind, 0) + 1
                    if now - self._last_warning.get(kind, now) >= self._interval:
                        summary = pending
                        pending = 0
                        self._last_warning[kind] = now
                    self._unreported[kind] = pending
                else:
                    self._last_warning[kind] = now
            log = self._logger
            if first:
                log.warning(
                    "[%s] dropped a frame (%s): %s; further frames of this kind are logged at DEBUG",
                    self._name,
                    kind,
                    detail,
                    exc_info=exc_info,
                )
            elif summary:
                log.warning("[%s] dropped %d more frame(s) (%s, %d in all)", self._name, summary, kind, n)
            elif log.isEnabledFor(logging.DEBUG):
                log.debug("[%s] dropped a frame (%s): %s", self._name, kind, detail)
        except Exception:  # noqa: BLE001 - logging a drop must never raise into a reader
            pass

    def counts(self) -> Dict[str, int]:
        """Frames dropped so far, per kind."""
        with self._lock:
            return dict(self._total)

    def kinds(self) -> List[str]:
        """The kinds seen so far."""
        with self._lock:
            return list(self._total)

    @property
    def total(self) -> int:
        """Frames dropped so far, all kinds together."""
        with self._lock:
            return sum(self._total.values())
