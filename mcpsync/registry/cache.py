"""The registry client's disk cache: one small JSON file per URL, written atomically.

Each file holds the URL, the answer's ``ETag`` (when the registry sent one), when it was stored and the body.
A fresh entry (younger than the TTL) is used without asking the registry; an older one is revalidated with
``If-None-Match`` (a ``304`` makes it fresh again); when the registry cannot be reached, a stale entry is used
rather than failing (the registry promises no uptime), with a warning. A damaged file reads as absent and is
replaced. Files are created 0600 in a 0700 directory; they hold only public registry data.

Thread- and process-safe: readers see either the old or the new file (an atomic rename); concurrent writers of
the same URL race harmlessly (the last complete answer wins). On Windows a writer whose rename meets a reader
holding the file open retries it, bounded (:func:`mcpsync._files.replace`).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Optional

from .._files import URLCache, cache_root, record_number

__all__ = ["CachedAnswer", "DiskCache", "default_cache_dir", "ENV_CACHE_DIR"]

log = logging.getLogger(__name__)

ENV_CACHE_DIR = "MCPSYNC_CACHE_DIR"
"""Environment variable: mcpsync's cache directory (the registry cache is its ``registry`` subdirectory)."""

#: Cache files larger than this are ignored (and replaced), so a damaged cache cannot exhaust memory.
MAX_CACHE_FILE = 32 * 1024 * 1024


def default_cache_dir() -> str:
    """mcpsync's per-user cache directory (not created); see :func:`mcpsync._files.cache_root`."""
    return cache_root()


@dataclass(frozen=True)
class CachedAnswer:
    """One cached registry answer."""

    url: str
    body: str
    etag: Optional[str]
    stored_at: float

    def age(self) -> float:
        """Seconds since the answer was stored (or last revalidated)."""
        return max(0.0, time.time() - self.stored_at)


class DiskCache(URLCache):
    """Registry answers on disk, by URL. Blocks on small file I/O only."""

    def __init__(self, directory: str) -> None:
        super().__init__(directory, MAX_CACHE_FILE)

    def get(self, url: str) -> Optional[CachedAnswer]:
        """The cached answer for ``url``, or None (absent, damaged, or for another URL)."""
        raw = self._read(url)
        if raw is None:
            return None
        body, etag, stored = raw.get("body"), raw.get("etag"), record_number(raw.get("storedAt"))
        if not isinstance(body, str) or stored is None:
            return None
        return CachedAnswer(url, body, etag if isinstance(etag, str) else None, stored)

    def put(self, url: str, body: str, etag: Optional[str]) -> None:
        """Store (or refresh) the answer for ``url``. A failure to write is logged, never raised."""
        try:
            self._write(url, {"etag": etag, "storedAt": time.time(), "body": body})
        except OSError as exc:
            log.warning("registry cache: cannot write to %s: %s", self.directory, exc.strerror or exc)
