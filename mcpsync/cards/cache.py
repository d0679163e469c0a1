"""The on-disk cache of catalogs and cards, shared by every process of the user (:class:`CardCache`).

One small JSON file per URL under ``<cache dir>/cards`` (the cache directory of the registry cache:
``$MCPSYNC_CACHE_DIR``, else the platform's), holding the body, its ``ETag``, when it was stored and for how
long it is fresh (``Cache-Control: max-age``; ``no-cache`` or no header: 0, always revalidated). A fresh entry
is used without a request; a stale one is revalidated with ``If-None-Match`` (a ``304`` makes it fresh again and
costs no body). Only answers that passed every check are written (``no-store`` ones never are), atomically
(:func:`mcpsync._files.write_atomically`: 0600 files in a 0700 directory). A damaged, oversized or foreign file
reads as absent. Thread- and process-safe: readers see the old or the new file, whole; concurrent writers of one
URL race harmlessly (the last complete answer wins). Blocks on small file I/O only.
"""

from __future__ import annotations

import logging
import os
import re
import time
from dataclasses import dataclass
from typing import Optional

from .._files import URLCache, record_number

__all__ = ["CachedDocument", "CardCache", "cache_policy", "default_card_cache_dir"]

log = logging.getLogger(__name__)

#: Cache files larger than this are ignored (a damaged cache cannot exhaust memory).
MAX_CACHE_FILE = 4 * 1024 * 1024
#: The longest freshness honoured, whatever ``max-age`` says (one day).
MAX_FRESHNESS = 86400.0


def default_card_cache_dir() -> str:
    """``<mcpsync's cache directory>/cards`` (not created)."""
    from ..registry.cache import default_cache_dir

    return os.path.join(default_cache_dir(), "cards")


def cache_policy(cache_control: Optional[str]) -> Optional[float]:
    """Seconds an answer stays fresh under ``cache_control``: None for ``no-store`` (never stored), 0 for
    ``no-cache`` or no ``max-age`` (stored, revalidated every time), else ``max-age`` (at most a day; this is a
    private cache, so ``private`` answers are kept too).
    """
    if not cache_control:
        return 0.0
    directives = {}
    for part in cache_control.lower().split(","):
        key, _, value = part.strip().partition("=")
        directives[key.strip()] = value.strip().strip('"')
    if "no-store" in directives:
        return None
    if "no-cache" in directives:
        return 0.0
    raw = directives.get("max-age", "")
    if not re.fullmatch(r"\d{1,10}", raw):
        return 0.0
    return min(float(raw), MAX_FRESHNESS)


@dataclass(frozen=True)
class CachedDocument:
    """One cached answer."""

    url: str
    body: bytes
    etag: Optional[str]
    content_type: str
    stored_at: float
    max_age: float

    def fresh(self, now: Optional[float] = None) -> bool:
        """Whether it may be used without asking the server."""
        age = (time.time() if now is None else now) - self.stored_at
        return 0 <= age < self.max_age


class CardCache(URLCache):
    """Catalog and card answers on disk, by URL (``directory`` defaults to :func:`default_card_cache_dir`)."""

    def __init__(self, directory: Optional[str] = None) -> None:
        super().__init__(directory if directory is not None else default_card_cache_dir(), MAX_CACHE_FILE)

    def get(self, url: str) -> Optional[CachedDocument]:
        """The cached answer for ``url``, or None (absent, damaged, or another URL's)."""
        raw = self._read(url)
        if raw is None:
            return None
        body, etag, ctype = raw.get("body"), raw.get("etag"), raw.get("contentType")
        stored, max_age = record_number(raw.get("storedAt")), record_number(raw.get("maxAge"))
        if not isinstance(body, str) or not isinstance(ctype, str) or stored is None or max_age is None:
            return None
        etag = etag if isinstance(etag, str) else None
        return CachedDocument(url, body.encode("utf-8"), etag, ctype, stored, max_age)

    def put(self, url: str, body: bytes, etag: Optional[str], content_type: str, max_age: float) -> None:
        """Store (or refresh) the answer for ``url``. A failure to write is logged, never raised."""
        try:
            record = {
                "etag": etag,
                "contentType": content_type,
                "storedAt": time.time(),
                "maxAge": max_age,
                "body": body.decode("utf-8"),
            }
            self._write(url, record)
        except (OSError, UnicodeDecodeError) as exc:
            log.warning("card cache: cannot write to %s: %s", self.directory, exc)
