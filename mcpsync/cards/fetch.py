"""Fetch AI Catalogs and Server Cards over HTTP, checked and cached (:class:`CardFetcher`).

Each request goes through ``urllib3`` (a ``PoolManager`` you pass, or one the fetcher makes and closes), with
``Accept: application/mcp-server-card+json`` for a card and ``application/ai-catalog+json`` for a catalog.
Every URL -- the first, each redirect (followed by hand, at most ``max_redirects``, a loop refused) and each
remote a card names -- passes the :class:`~.safety.URLPolicy`. An answer must have the right ``Content-Type``
(the media type, or ``application/json``), be at most ``max_bytes`` (the rest is never read), decode as JSON and
pass the v1 Server Card schema; only then is it cached (:class:`~.cache.CardCache`): ``Cache-Control`` decides
how long it is fresh (no request while it is; less the ``Age`` a shared cache reports), its ``ETag`` is sent back
as ``If-None-Match`` once it is stale, and a ``304`` reuses the cached body. When the host cannot be reached or
answers 5xx or 429, a cached copy is used (stale, with a warning); a 4xx other than 429 means the document is
gone and raises. Anything else raises a :class:`~.errors.CardError` and writes nothing.

Blocking: each call blocks for its requests, each bounded by ``timeout`` seconds (connect and each read).
Thread-safe: several threads may fetch through one fetcher; :meth:`CardFetcher.close` ends its own pools.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any, Dict, List, Mapping, Optional, Set, Tuple, Union
from urllib.parse import urljoin, urlsplit

from .cache import CachedDocument, CardCache, cache_policy
from .errors import (
    CardContentTypeError,
    CardError,
    CardInvalid,
    CardNotFound,
    CardRedirectError,
    CardTooLarge,
    CardUnavailable,
)
from .model import CARD_MEDIA_TYPE, CATALOG_MEDIA_TYPE, CatalogEntry, ServerCard, parse_card, parse_catalog
from .safety import AllowLocal, Resolver, URLPolicy

__all__ = ["CardFetcher", "DEFAULT_MAX_BYTES", "catalog_url"]

log = logging.getLogger(__name__)

#: The largest catalog or card read (bytes).
DEFAULT_MAX_BYTES = 1024 * 1024
_REDIRECTS = (301, 302, 303, 307, 308)
_WELL_KNOWN = "/.well-known/ai-catalog.json"


def catalog_url(domain: str) -> str:
    """The catalog URL for ``domain``: ``https://{domain}/.well-known/ai-catalog.json`` for a bare domain (or
    ``host:port``); a URL without a path gets the well-known path; a URL with a path is used as it is."""
    if "://" not in domain:
        return "https://%s%s" % (domain.strip().strip("/"), _WELL_KNOWN)
    parts = urlsplit(domain)
    if parts.path in ("", "/"):
        return "%s://%s%s" % (parts.scheme, parts.netloc, _WELL_KNOWN)
    return domain


def _media_type(value: Optional[str]) -> str:
    return (value or "").split(";", 1)[0].strip().lower()


class CardFetcher:
    """Fetches, checks and caches catalogs and cards.

    Args:
        pool: a ``urllib3.PoolManager`` (or ``ProxyManager``) to send through; by default the fetcher makes its
            own from ``verify`` and ``proxy`` and closes it in :meth:`close`.
        verify: TLS verification: True (the system's CAs), False, a CA bundle path, or an ``ssl.SSLContext``.
        proxy: an ``http(s)://`` proxy URL for every request; None: the environment's (``HTTPS_PROXY``,
            ``NO_PROXY``...) when ``trust_env``.
        trust_env: read proxies from the environment.
        timeout: seconds for connecting and for each read.
        max_bytes: the largest answer read.
        max_redirects: the most redirects followed for one fetch.
        max_cards: the most Server Card entries :meth:`discover` fetches (a catalog listing more is refused).
        cache: a :class:`~.cache.CardCache`, a directory for one, True (the default directory) or False (none).
        allow_local / allow_other_domains / resolver: the :class:`~.safety.URLPolicy` opt-ins.
    """

    def __init__(
        self,
        *,
        pool: Any = None,
        verify: Any = True,
        proxy: Optional[str] = None,
        trust_env: bool = True,
        timeout: float = 10.0,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_redirects: int = 5,
        max_cards: int = 100,
        cache: Union[CardCache, str, bool] = True,
        allow_local: AllowLocal = False,
        allow_other_domains: bool = False,
        resolver: Optional[Resolver] = None,
    ) -> None:
        self.policy = URLPolicy.make(allow_local, allow_other_domains, resolver)
        self.timeout = float(timeout)
        self.max_bytes = int(max_bytes)
        self.max_redirects = int(max_redirects)
        self.max_cards = int(max_cards)
        self.verify = verify
        self.proxy = proxy
        self.trust_env = trust_env
        if cache is True:
            self.cache: Optional[CardCache] = CardCache()
        elif cache is False:
            self.cache = None
        elif isinstance(cache, str):
            self.cache = CardCache(cache)
        else:
            self.cache = cache
        self._given_pool = pool
        self._pools: Dict[Optional[str], Any] = {}
        self._lock = threading.Lock()
        self._closed = False

    def __enter__(self) -> "CardFetcher":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Close the pools this fetcher made (a pool passed in is left open). Idempotent."""
        with self._lock:
            pools, self._pools = list(self._pools.values()), {}
            self._closed = True
        for pool in pools:
            pool.clear()

    # ------------------------------------------------------------------ pools

    def _tls_args(self) -> Dict[str, Any]:
        import ssl

        verify = self.verify
        if isinstance(verify, ssl.SSLContext):
            return {"ssl_context": verify}
        if verify is False:
            log.warning("card fetches: TLS certificates are not verified (verify=False)")
            return {"cert_reqs": "CERT_NONE"}
        if isinstance(verify, str):
            import os

            return {"cert_reqs": "CERT_REQUIRED", ("ca_cert_dir" if os.path.isdir(verify) else "ca_certs"): verify}
        return {"cert_reqs": "CERT_REQUIRED"}

    def _proxy_for(self, url: str) -> Optional[str]:
        if self.proxy:
            return self.proxy
        if not self.trust_env:
            return None
        from ..transports.http.proxy import bypass, environment_proxies

        parts = urlsplit(url)
        proxies = environment_proxies()
        port = parts.port or (443 if parts.scheme == "https" else 80)
        if not proxies or bypass(parts.hostname or "", port, proxies.get("no")):
            return None
        return proxies.get(parts.scheme) or proxies.get("all")

    def _pool(self, url: str) -> Any:
        with self._lock:
            if self._closed:
                raise CardError("the card fetcher is closed", url=url)
        if self._given_pool is not None:
            return self._given_pool
        proxy = self._proxy_for(url)
        with self._lock:
            if self._closed:
                raise CardError("the card fetcher is closed", url=url)
            pool = self._pools.get(proxy)
            if pool is None:
                import urllib3

                args = dict(self._tls_args(), headers={"User-Agent": _user_agent()})
                if proxy is None:
                    pool = urllib3.PoolManager(**args)
                elif proxy.lower().startswith(("socks4", "socks5")):
                    try:
                        from urllib3.contrib.socks import SOCKSProxyManager
                    except ImportError as exc:
                        raise CardUnavailable("a SOCKS proxy needs PySocks: %s" % exc, url=url) from None
                    pool = SOCKSProxyManager(proxy, **args)
                else:
                    proxy_url, proxy_headers = _proxy_and_headers(proxy)
                    pool = urllib3.ProxyManager(proxy_url, proxy_headers=proxy_headers, **args)
                self._pools[proxy] = pool
            return pool

    # ------------------------------------------------------------------ one document

    def _request(self, url: str, accept: str, etag: Optional[str]) -> Any:
        import urllib3

        headers = {"Accept": accept, "User-Agent": _user_agent()}
        if etag:
            headers["If-None-Match"] = etag
        try:
            return self._pool(url).request(
                "GET", url, headers=headers, redirect=False, retries=False, preload_content=False,
                timeout=urllib3.Timeout(connect=self.timeout, read=self.timeout),
            )
        except urllib3.exceptions.HTTPError as exc:
            raise CardUnavailable("cannot fetch %s: %s" % (url, exc), url=url) from None
        except (OSError, ValueError) as exc:
            raise CardUnavailable("cannot fetch %s: %s" % (url, exc), url=url) from None

    def _read(self, response: Any, url: str) -> bytes:
        import urllib3

        declared = response.headers.get("Content-Length")
        if declared and declared.strip().isdigit() and int(declared) > self.max_bytes:
            raise CardTooLarge("%s is %s bytes (at most %d are read)" % (url, declared, self.max_bytes), url=url)
        chunks: List[bytes] = []
        size = 0
        try:
            while True:
                chunk = response.read(65536, decode_content=True)
                if not chunk:
                    break
                size += len(chunk)
                if size > self.max_bytes:
                    raise CardTooLarge("%s is larger than %d bytes" % (url, self.max_bytes), url=url)
                chunks.append(chunk)
        except urllib3.exceptions.HTTPError as exc:
            raise CardUnavailable("reading %s failed: %s" % (url, exc), url=url) from None
        except OSError as exc:
            raise CardUnavailable("reading %s failed: %s" % (url, exc), url=url) from None
        return b"".join(chunks)

    def get(self, url: str, accept: str) -> Tuple[Any, Optional[str], Optional[float], bytes, str]:
        """``(decoded JSON, etag, freshness or None for no-store, body, content type)`` of ``url``, from the cache
        while fresh. Nothing is cached here: call :meth:`remember` once the document passed its checks."""
        self.policy.check(url)
        cached = self.cache.get(url) if self.cache is not None else None
        if cached is not None and cached.fresh():
            log.debug("card cache: %s is fresh", url)
            return _decode(cached.body, url), cached.etag, None, cached.body, cached.content_type
        try:
            return self._fetch(url, accept, cached)
        except CardUnavailable as exc:
            if cached is None or (exc.status and exc.status < 500 and exc.status != 429):
                raise  # nothing to fall back on, or the host says the document is gone (404, 410...)
            log.warning("%s; using the copy of %s cached %d s ago", exc.message, url, max(0, time.time() -
                                                                                         cached.stored_at))
            return _decode(cached.body, url), cached.etag, None, cached.body, cached.content_type

    def _fetch(self, url: str, accept: str, cached: Optional[CachedDocument]) -> Tuple[
            Any, Optional[str], Optional[float], bytes, str]:
        current = url
        seen: Set[str] = {url}
        for _hop in range(self.max_redirects + 1):
            response = self._request(current, accept, cached.etag if cached is not None else None)
            reusable = False
            try:
                status = int(response.status)
                if status in _REDIRECTS:
                    location = response.headers.get("Location")
                    if not location:
                        raise CardRedirectError("%s redirected without a Location" % current, url=current)
                    target = urljoin(current, location.strip())
                    self.policy.check(target, "redirect target")
                    if target in seen:
                        raise CardRedirectError("redirect loop at %s" % target, url=target)
                    seen.add(target)
                    current = target
                    continue
                freshness = cache_policy(response.headers.get("Cache-Control"))
                age = (response.headers.get("Age") or "").strip()
                if freshness and age.isdigit():  # a shared cache on the way already held it that long
                    freshness = max(0.0, freshness - float(age))
                if status == 304:
                    if cached is None:
                        raise CardInvalid("%s answered 304 to a request without a validator" % current, url=url)
                    etag = response.headers.get("ETag") or cached.etag
                    return _decode(cached.body, url), etag, freshness, cached.body, cached.content_type
                if status != 200:
                    raise CardUnavailable("%s answered HTTP %d" % (current, status), url=current, status=status)
                ctype = _media_type(response.headers.get("Content-Type"))
                if ctype not in (accept, "application/json"):
                    raise CardContentTypeError("%s answered %r, not %s" % (current, ctype or "no content type",
                                                                         accept), url=current)
                body = self._read(response, current)
                reusable = True
                return _decode(body, current), response.headers.get("ETag"), freshness, body, ctype
            finally:
                if reusable:
                    response.release_conn()
                else:  # a body left unread (a redirect, an error, too large): the connection is not reused
                    response.close()
                    response.release_conn()
        raise CardRedirectError("more than %d redirects from %s" % (self.max_redirects, url), url=url)

    def remember(self, url: str, etag: Optional[str], freshness: Optional[float], body: bytes, ctype: str) -> None:
        """Cache a checked answer (``freshness`` None: ``no-store``, not cached)."""
        if self.cache is not None and freshness is not None:
            self.cache.put(url, body, etag, ctype, freshness)

    # ------------------------------------------------------------------ catalogs and cards

    def fetch_card(self, url: str) -> ServerCard:
        """The Server Card at ``url``, checked (schema, and every remote whose URL has no ``{variables}``
        against the policy and the card's domain). Raises a CardError; caches only a card that passed."""
        document, etag, freshness, body, ctype = self.get(url, CARD_MEDIA_TYPE)
        card = parse_card(document, url, etag)
        self.check_remotes(card)
        self.remember(url, etag, freshness, body, ctype)
        return card

    def check_remotes(self, card: ServerCard) -> None:
        """Every remote whose URL has no ``{variables}`` passes the policy and the card's domain rule (a
        templated one is checked once its variables are filled in)."""
        for remote in card.remotes:
            if "{" not in remote.url:
                self.policy.check_remote(remote.url, card.source_url)

    def fetch_catalog(self, domain_or_url: str) -> List[CatalogEntry]:
        """The Server Card entries of the AI Catalog of ``domain_or_url`` (see :func:`catalog_url`)."""
        url = catalog_url(domain_or_url)
        document, etag, freshness, body, ctype = self.get(url, CATALOG_MEDIA_TYPE)
        entries = parse_catalog(document, url)
        for entry in entries:
            if entry.url is not None:
                self.policy.check(urljoin(url, entry.url), "catalog entry %s" % entry.identifier)
            else:
                card = parse_card(entry.data, url)
                self.check_remotes(card)
        self.remember(url, etag, freshness, body, ctype)
        return entries

    def card_for(self, entry: CatalogEntry) -> ServerCard:
        """The card of a catalog entry: fetched from its ``url`` (relative to the catalog), or its inline
        ``data`` (whose domain is the catalog's)."""
        if entry.url is not None:
            return self.fetch_card(urljoin(entry.catalog_url, entry.url))
        card = parse_card(entry.data, entry.catalog_url)
        self.check_remotes(card)
        return card

    def discover(self, domain_or_url: str, identifier: Optional[str] = None) -> List[ServerCard]:
        """The Server Cards a domain's AI Catalog lists (only the entry ``identifier``, or whose card is named
        ``identifier``, when given). Raises CardNotFound when there is none."""
        entries = self.fetch_catalog(domain_or_url)
        if len(entries) > self.max_cards:
            raise CardInvalid("%s lists %d Server Cards (at most %d are fetched; max_cards=)" % (
                catalog_url(domain_or_url), len(entries), self.max_cards), url=catalog_url(domain_or_url))
        cards = []
        for entry in entries:
            if identifier is not None and entry.identifier != identifier and not (
                    isinstance(entry.data, Mapping) and entry.data.get("name") == identifier):
                if entry.url is None:
                    continue
                card = self.card_for(entry)
                if card.name != identifier:
                    continue
                cards.append(card)
                continue
            cards.append(self.card_for(entry))
        if not cards:
            raise CardNotFound("%s lists no Server Card%s" % (
                catalog_url(domain_or_url), "" if identifier is None else " for %r" % identifier),
                url=catalog_url(domain_or_url))
        return cards


def _proxy_and_headers(proxy: str) -> Tuple[str, Dict[str, str]]:
    """An http(s) proxy URL without its credentials, and the ``Proxy-Authorization`` header they make."""
    import urllib3
    from urllib.parse import unquote

    parts = urlsplit(proxy)
    if parts.username is None:
        return proxy, {}
    netloc = parts.hostname or ""
    if ":" in netloc:
        netloc = "[%s]" % netloc
    if parts.port:
        netloc += ":%d" % parts.port
    auth = "%s:%s" % (unquote(parts.username), unquote(parts.password or ""))
    return "%s://%s" % (parts.scheme, netloc), dict(urllib3.make_headers(proxy_basic_auth=auth))


def _decode(body: bytes, url: str) -> Any:
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise CardInvalid("%s is not JSON: %s" % (url, str(exc)[:200]), url=url) from None


def _user_agent() -> str:
    from ..__version__ import __version__

    return "mcpsync/%s" % __version__
