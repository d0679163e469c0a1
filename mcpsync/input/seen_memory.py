"""Used token ids in this process's memory: :class:`MemorySeenStore`."""

from __future__ import annotations

import threading
import time
from typing import Dict

from ..errors import InputSeenStoreError

__all__ = ["MemorySeenStore"]


class MemorySeenStore:
    """Used token ids in a dict, for one process (its threads share it; other processes do not see it).

    Holds at most ``maxsize`` ids that have not expired: when it is full, ``claim`` first drops the expired
    ones, and if none expired raises :class:`~mcpsync.InputSeenStoreError` (the token is refused; no id is
    ever evicted early, since that would let its token through again). Thread-safe; never blocks on I/O.
    """

    location = "memory"

    def __init__(self, maxsize: int = 100_000) -> None:
        if maxsize < 1:
            from ..errors import ConfigError

            raise ConfigError("maxsize must be at least 1")
        self.maxsize = maxsize
        self._lock = threading.Lock()
        self._seen: Dict[str, float] = {}

    def claim(self, token_id: str, expires_at: float) -> bool:
        """See :meth:`mcpsync.input.SeenStore.claim`."""
        now = time.time()
        with self._lock:
            kept = self._seen.get(token_id)
            if kept is not None and kept > now:
                return False
            if len(self._seen) >= self.maxsize:
                self._seen = {k: v for k, v in self._seen.items() if v > now}
                if len(self._seen) >= self.maxsize:
                    raise InputSeenStoreError(
                        "the in-memory seen store holds %d unexpired token ids (its maxsize); refusing the token"
                        % self.maxsize
                    )
            self._seen[token_id] = expires_at
            return True

    def __len__(self) -> int:
        with self._lock:
            return len(self._seen)

    def __repr__(self) -> str:
        return "MemorySeenStore(maxsize=%d)" % self.maxsize
