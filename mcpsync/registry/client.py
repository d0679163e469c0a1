"""A client for the MCP Registry's stable REST API (``/v0.1``), with a disk cache.

Endpoints used (``modelcontextprotocol/registry`` ``docs/reference/api/openapi.yaml``):

- ``GET /v0.1/servers?search=&version=latest&limit=&cursor=`` -- a page of
  ``{"servers": [{"server": <server.json>, "_meta": {...}}], "metadata": {"nextCursor": ..., "count": ...}}``;
- ``GET /v0.1/servers/{name}/versions`` -- every version of one server (same shape);
- ``GET /v0.1/servers/{name}/versions/{version}`` -- one ``{"server": ..., "_meta": ...}`` (``latest`` allowed).

Server names and versions are URL-encoded as one path segment each (``io.github.acme%2Fweather``).
The registry's own status lives in ``_meta["io.modelcontextprotocol.registry/official"]``
(``status``: ``active``, ``deprecated`` or ``deleted``, with an optional ``statusMessage``); a registry that
sends no ``_meta`` (a subregistry) counts as all ``active``. By default only ``active`` servers are listed;
``deprecated`` ones can be asked for, and come with their status message.

Hostile input: answers are read with a size cap, parsed defensively; an entry of the wrong shape is
skipped and logged (rate-limited), a page of the wrong shape raises :class:`~.errors.InvalidServerJson`.
Every failure is a :class:`~.errors.RegistryError`. The base URL is ``base_url=``, else
``$MCPSYNC_REGISTRY_URL``, else the official registry.

Thread-safety: a :class:`RegistryClient` may be shared by threads (a lock serializes its HTTP requests).
Deadlines: ``timeout`` bounds each call as a whole -- :meth:`~RegistryClient.search`, :meth:`~RegistryClient.get`,
:meth:`~RegistryClient.versions` (every page, redirect and read; waiting for another thread's request too), and
each page of :meth:`~RegistryClient.iter_servers` -- however slowly a registry trickles its answer
(:class:`~.deadline.Deadline`, checked between reads, each read bounded by what is left; the status line and
headers, read inside urllib3, go through :class:`~mcpsync.transports.http.deadline_reader.DeadlineReader`,
which bounds each of their reads the same way, through a proxy too). HTTP: mcpsync's urllib3 connections
(:class:`~.net.RegistryNet`), with the proxies and TLS verification of an MCP server's connections.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union
from urllib.parse import quote, urlencode, urlsplit

from .cache import DiskCache, default_cache_dir
from .deadline import Deadline, read_body
from .net import RegistryNet
from .errors import InvalidServerJson, RegistryError, RegistryNotFound, RegistryUnavailable

__all__ = [
    "DEFAULT_REGISTRY_URL",
    "ENV_REGISTRY_URL",
    "RegistryClient",
    "RegistryEntry",
    "registry_url",
]

log = logging.getLogger(__name__)

DEFAULT_REGISTRY_URL = "https://registry.modelcontextprotocol.io"
"""The official MCP Registry."""
ENV_REGISTRY_URL = "MCPSYNC_REGISTRY_URL"
"""Environment variable: the registry (or subregistry) base URL."""
API = "v0.1"
OFFICIAL_META = "io.modelcontextprotocol.registry/official"
#: Largest registry answer read, in bytes.
MAX_BODY = 16 * 1024 * 1024
#: Pages followed at most by one listing (a registry that keeps sending cursors cannot loop us forever).
MAX_PAGES = 1000
STATUSES = ("active", "deprecated", "deleted")

_WARN_INTERVAL = 30.0


def registry_url(base_url: Optional[str] = None, environ: Optional[Mapping[str, str]] = None) -> str:
    """The registry base URL to use: ``base_url``, else ``$MCPSYNC_REGISTRY_URL``, else the official one.

    Trailing slashes and a trailing ``/v0.1`` are removed. Raises :class:`~.errors.RegistryError` when it is
    not an http(s) URL.
    """
    environ = os.environ if environ is None else environ
    url = base_url or environ.get(ENV_REGISTRY_URL) or DEFAULT_REGISTRY_URL
    url = url.strip().rstrip("/")
    if url.endswith("/" + API):
        url = url[: -len(API) - 1]
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise RegistryError("the registry URL must be an http(s) URL, not %r" % url)
    return url


@dataclass(frozen=True)
class RegistryEntry:
    """One version of one server, as the registry lists it.

    Attributes:
        name: the server's registry name (``io.github.acme/weather``).
        version: this version.
        description: the server's description ("" when absent).
        status: ``active``, ``deprecated`` or ``deleted`` (``active`` when the registry says nothing).
        status_message: why it is deprecated or deleted, when the registry says.
        is_latest: whether this is the latest version (None when the registry says nothing).
        published_at / updated_at: timestamps as the registry sent them (strings), or None.
        server: the whole ``server.json`` document (a copy of the registry's data; treat as untrusted).
        registry_url: the base URL of the registry it came from.
    """

    name: str
    version: str
    description: str
    status: str
    status_message: Optional[str]
    is_latest: Optional[bool]
    published_at: Optional[str]
    updated_at: Optional[str]
    server: Dict[str, Any] = field(repr=False, compare=False)
    registry_url: str = ""

    @property
    def title(self) -> str:
        """The display title (``title``, else the name)."""
        title = self.server.get("title")
        return title if isinstance(title, str) and title else self.name

    @property
    def deprecated(self) -> bool:
        return self.status == "deprecated"


def parse_entry(item: Any, registry: str = "") -> RegistryEntry:
    """A :class:`RegistryEntry` from one ``{"server": ..., "_meta": ...}`` object (or a bare server.json).

    Raises :class:`~.errors.InvalidServerJson` when it lacks a string name and version.
    """
    if not isinstance(item, dict):
        raise InvalidServerJson("a registry entry must be an object, not %s" % type(item).__name__)
    inner = item.get("server")
    server: Dict[str, Any] = inner if isinstance(inner, dict) else item
    name, version = server.get("name"), server.get("version")
    if not isinstance(name, str) or not name or "/" not in name or len(name) > 200:
        raise InvalidServerJson("a registry entry without a valid name (namespace/name): %r" % (name,)[:200])
    if not isinstance(version, str) or not version or len(version) > 255:
        raise InvalidServerJson("registry entry %s has no valid version" % name)
    raw_meta = item.get("_meta")
    meta: Dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
    raw_official = meta.get(OFFICIAL_META)
    official: Dict[str, Any] = raw_official if isinstance(raw_official, dict) else {}
    status = official.get("status", server.get("status", "active"))
    status = status if isinstance(status, str) and status in STATUSES else "active"
    message = official.get("statusMessage")
    is_latest = official.get("isLatest")
    description = server.get("description")

    def text(key: str) -> Optional[str]:
        value = official.get(key)
        return value if isinstance(value, str) else None

    return RegistryEntry(
        name=name,
        version=version,
        description=description if isinstance(description, str) else "",
        status=status,
        status_message=message if isinstance(message, str) and message else None,
        is_latest=is_latest if isinstance(is_latest, bool) else None,
        published_at=text("publishedAt"),
        updated_at=text("updatedAt"),
        server=server,
        registry_url=registry,
    )


class RegistryClient:
    """Read an MCP Registry (``/v0.1``). See the module docstring.

    Args:
        base_url: the registry (default ``$MCPSYNC_REGISTRY_URL``, else the official registry).
        cache_dir: where answers are cached (default ``<mcpsync cache dir>/registry``); ``False`` disables the
            disk cache.
        ttl: seconds a cached answer is used without asking the registry (default 300); after that it is
            revalidated with its ETag.
        timeout: seconds for each call as a whole (a search with all its pages, a get), whatever the network
            does; each network operation (connect, each read) gets at most what is left.
        session: no longer accepted (a :class:`~mcpsync.errors.ConfigError` if given): the client sends with
            mcpsync's own urllib3 connections (proxies from the environment, as for MCP servers).
        statuses: the statuses listed by default (``("active",)``).
    """

    def __init__(
        self,
        base_url: Optional[str] = None,
        *,
        cache_dir: Union[str, None, bool] = None,
        ttl: float = 300.0,
        timeout: float = 30.0,
        session: Any = None,
        statuses: Sequence[str] = ("active",),
    ) -> None:
        self.base_url = registry_url(base_url)
        if cache_dir is False:
            self.cache: Optional[DiskCache] = None
        else:
            directory = cache_dir if isinstance(cache_dir, str) else os.path.join(default_cache_dir(), "registry")
            self.cache = DiskCache(directory)
        self.ttl = float(ttl)
        self.timeout = float(timeout)
        self.statuses = tuple(statuses)
        if session is not None:
            from ..errors import ConfigError

            raise ConfigError("RegistryClient(session=...) is gone: the registry client sends with mcpsync's "
                              "urllib3 connections (set proxies with HTTPS_PROXY / NO_PROXY)")
        self._net: Optional[RegistryNet] = None
        self._lock = threading.Lock()
        self._last_warning: Dict[str, float] = {}  # warning key -> when it was last logged
        self._warn_lock = threading.Lock()

    def __repr__(self) -> str:
        return "RegistryClient(%r)" % self.base_url

    def _warn(self, key: str, message: str, *args: Any) -> None:
        """A warning at most once per ``_WARN_INTERVAL`` seconds for ``key`` (registry garbage is rate-limited)."""
        now = time.monotonic()
        with self._warn_lock:
            if now - self._last_warning.get(key, -1e9) < _WARN_INTERVAL:
                return
            self._last_warning[key] = now
        log.warning(message, *args)

    def __enter__(self) -> "RegistryClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Close the HTTP connections. Idempotent; never blocks."""
        with self._lock:
            net, self._net = self._net, None
        if net is not None:
            net.close()

    # ------------------------------------------------------------------ HTTP

    def _http(self) -> RegistryNet:
        if self._net is None:
            from ..__version__ import __version__

            self._net = RegistryNet({"User-Agent": "mcpsync/%s" % __version__, "Accept": "application/json",
                                     "Accept-Encoding": "gzip, deflate"})
        return self._net

    def _deadline(self, what: str) -> Deadline:
        return Deadline(self.timeout, "the registry request (%s to %s)" % (what, self.base_url))

    def _fetch(self, path: str, params: Optional[Dict[str, str]] = None, *, refresh: bool = False,
               deadline: Optional[Deadline] = None) -> Any:
        """GET ``path`` (JSON), through the cache, within ``deadline`` (default: ``timeout`` from now). Raises
        RegistryNotFound (404) or RegistryUnavailable."""
        url = "%s/%s%s" % (self.base_url, API, path)
        if params:
            url += "?" + urlencode(sorted(params.items()))
        cached = self.cache.get(url) if self.cache is not None else None
        if cached is not None and not refresh and cached.age() < self.ttl:
            return self._decode(cached.body, url)
        headers = {"If-None-Match": cached.etag} if cached is not None and cached.etag else {}
        try:
            status, body, etag = self._get(url, headers, deadline or self._deadline(path))
        except RegistryUnavailable as exc:
            if cached is not None:
                self._warn(
                    "stale:" + self.base_url,
                    "registry %s unreachable (%s); using a cached answer from %d s ago",
                    self.base_url,
                    exc.message,
                    int(cached.age()),
                )
                return self._decode(cached.body, url)
            raise
        if status == 304 and cached is not None:
            if self.cache is not None:
                self.cache.put(url, cached.body, etag or cached.etag)
            return self._decode(cached.body, url)
        if status == 404:
            raise RegistryNotFound("not found in the registry %s: %s" % (self.base_url, path))
        if status != 200:
            if cached is not None and status >= 500:
                self._warn("stale:" + self.base_url, "registry %s answered HTTP %d; using a cached answer",
                           self.base_url, status)
                return self._decode(cached.body, url)
            raise RegistryUnavailable("registry %s answered HTTP %d for %s" % (self.base_url, status, path),
                                      status=status, url=url)
        value = self._decode(body, url)
        if self.cache is not None:
            self.cache.put(url, body, etag)
        return value

    def _get(self, url: str, headers: Dict[str, str], deadline: Deadline) -> Tuple[int, str, Optional[str]]:
        if not self._lock.acquire(timeout=deadline.clip(self.timeout, url)):  # another thread's request
            raise deadline.error(url)
        try:
            net = self._http()
            # the status line and headers too: every read ends by the deadline
            resp = net.get(url, deadline, self.timeout, headers=headers,
                           what="reaching the registry %s" % self.base_url)
            try:
                chunks = list(read_body(resp, deadline, self.timeout, url=url, max_bytes=MAX_BODY))
            finally:
                resp.close()
        finally:
            self._lock.release()
        try:
            text = b"".join(chunks).decode("utf-8-sig")
        except UnicodeDecodeError:
            if resp.status_code != 200:
                text = ""
            else:
                raise InvalidServerJson("the registry's answer for %s is not UTF-8" % url) from None
        etag = resp.headers.get("ETag")
        return resp.status_code, text, etag if isinstance(etag, str) and len(etag) < 1024 else None

    @staticmethod
    def _decode(body: str, url: str) -> Any:
        try:
            return json.loads(body)
        except RecursionError:
            raise InvalidServerJson("the registry's answer for %s is nested too deeply" % url) from None
        except ValueError as exc:
            raise InvalidServerJson("the registry's answer for %s is not JSON: %s" % (url, exc)) from None

    # ------------------------------------------------------------------ API

    def _entries(self, page: Any, where: str) -> Tuple[List[RegistryEntry], Optional[str]]:
        if not isinstance(page, dict) or not isinstance(page.get("servers", []), list):
            raise InvalidServerJson("registry %s: %s is not a list of servers" % (self.base_url, where))
        out = []
        for i, item in enumerate(page.get("servers") or []):
            try:
                out.append(parse_entry(item, self.base_url))
            except InvalidServerJson as exc:
                self._warn("entry:" + self.base_url, "registry %s: skipping %s servers[%d]: %s",
                           self.base_url, where, i, exc.message)
        raw = page.get("metadata")
        cursor = raw.get("nextCursor") if isinstance(raw, dict) else None
        return out, cursor if isinstance(cursor, str) and cursor else None

    def _keep(self, entry: RegistryEntry, statuses: Optional[Sequence[str]]) -> bool:
        return entry.status in (self.statuses if statuses is None else tuple(statuses))

    def iter_servers(
        self,
        search: Optional[str] = None,
        *,
        version: Optional[str] = "latest",
        page_size: int = 100,
        updated_since: Optional[str] = None,
        statuses: Optional[Sequence[str]] = None,
        limit: Optional[int] = None,
        refresh: bool = False,
        deadline: Optional[Deadline] = None,
    ) -> Iterator[RegistryEntry]:
        """Every server (latest versions by default) matching ``search`` (a substring of the name), page after
        page (``cursor``), filtered by status (default: this client's ``statuses``). Stops after ``limit``
        entries. Blocks on one HTTP request per page, each within ``timeout`` (or all within ``deadline``)."""
        params: Dict[str, str] = {"limit": str(max(1, min(int(page_size), 100)))}
        if search:
            params["search"] = search
        if version:
            params["version"] = version
        if updated_since:
            params["updated_since"] = updated_since
        if statuses is not None and any(s != "active" for s in statuses) and "deleted" in statuses:
            params["include_deleted"] = "true"
        seen_cursors = set()
        count = 0
        for _ in range(MAX_PAGES):
            page = self._fetch("/servers", params, refresh=refresh, deadline=deadline)
            entries, cursor = self._entries(page, "/servers")
            for entry in entries:
                if self._keep(entry, statuses):
                    yield entry
                    count += 1
                    if limit is not None and count >= limit:
                        return
            if cursor is None or cursor in seen_cursors:
                return
            seen_cursors.add(cursor)
            params = dict(params, cursor=cursor)

    def search(self, text: Optional[str] = None, *, limit: Optional[int] = 50, **kwargs: Any) -> List[RegistryEntry]:
        """The latest versions of the servers whose name contains ``text`` (at most ``limit``); see
        :meth:`iter_servers` for the keyword arguments. Every page within one ``timeout``."""
        kwargs.setdefault("deadline", self._deadline("search"))
        return list(self.iter_servers(text, limit=limit, **kwargs))

    def versions(self, name: str, *, refresh: bool = False) -> List[RegistryEntry]:
        """Every version of the server ``name`` the registry has (any status), as listed."""
        page = self._fetch("/servers/%s/versions" % quote(_check_name(name), safe=""), refresh=refresh)
        entries, _cursor = self._entries(page, "versions of %s" % name)
        return [e for e in entries if e.name == name]

    def get(
        self,
        name: str,
        version: str = "latest",
        *,
        statuses: Optional[Sequence[str]] = ("active", "deprecated"),
        refresh: bool = False,
    ) -> RegistryEntry:
        """One version (default ``latest``) of the server ``name``.

        A ``deprecated`` server is returned (with its ``status_message``; a warning is logged); a ``deleted``
        one raises :class:`~.errors.RegistryNotFound` unless ``statuses`` includes it.
        """
        path = "/servers/%s/versions/%s" % (quote(_check_name(name), safe=""), quote(version or "latest", safe=""))
        entry = parse_entry(self._fetch(path, refresh=refresh), self.base_url)
        if entry.name != name:
            raise InvalidServerJson("the registry answered %s for %s" % (entry.name, name))
        if statuses is not None and entry.status not in statuses:
            raise RegistryNotFound(
                "%s %s is %s%s" % (name, entry.version, entry.status,
                                   (": " + entry.status_message) if entry.status_message else "")
            )
        if entry.deprecated:
            log.warning("%s %s is deprecated%s", name, entry.version,
                        (": " + entry.status_message) if entry.status_message else "")
        return entry


def _check_name(name: str) -> str:
    if not isinstance(name, str) or "/" not in name or not name.strip() or len(name) > 200:
        raise RegistryError("a registry server name looks like namespace/name, not %r" % (name,))
    return name
