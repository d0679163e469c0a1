"""Near-instant reconnects: what a client may keep about a server between processes.

A :class:`WarmCache` persists, per server identity and auth context, what the protocol lets a client reuse:

- the era verdict (which revision the server spoke) and the remote transport that worked (Streamable HTTP or
  legacy SSE), for ``max_age`` seconds: a reconnect skips the probe;
- in the 2026-07-28 era, the ``server/discover`` result (server info, capabilities, instructions) while its
  ``ttlMs`` lasts: a reconnect skips ``server/discover`` altogether;
- in the 2026-07-28 era, listing pages (``tools/list``...) while their ``ttlMs`` lasts: a reconnect skips the
  listings, and a ``tools/call`` is the connection's only round trip.

Nothing else: no token, header value or credential is written (the auth context is part of the file name
as a SHA-256 digest), no result of a call, nothing of the handshake era's session. A server that changed is
noticed on its first answer (its ``serverInfo`` differs, or it refuses the era) and the client recovers
transparently: the entry is dropped, and a refused request is sent again on a freshly negotiated connection
(the refusal proves it did not run).

Files are JSON, one per server identity, written atomically (a temporary file renamed into place) with mode
0600 in a 0700 directory; junk in a file is logged and ignored. Thread- and process-safe: the last writer
wins, and every reader sees a whole file.

What a file says decides which tools a client lists and calls, so a file is trusted as ssh trusts its keys:
one owned by another user, or writable by its group or others, is ignored with a warning (on Windows,
which has no POSIX owners and modes, this check is skipped: the cache lives in the user's private
``%LOCALAPPDATA%``). Each entry also names the server identity it was written for (the digest its file is
named after): an entry copied in from another server's file is ignored. Either way the client negotiates
afresh and its next save replaces the file with a private one of its own.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Optional, Union

from .._files import write_atomically
from .._trust import untrusted_reason
from ..client.hooks import ClientExtension
from ..client.host import host_of

if TYPE_CHECKING:
    from ..client.client import Client
    from ..client.host import ClientHost

__all__ = ["WarmCache", "WarmStart", "default_cache_dir"]

logger = logging.getLogger(__name__)

_VERSION = 1
#: list methods whose pages are kept (2026-07-28, with ttlMs)
LIST_METHODS = ("tools/list", "prompts/list", "resources/list", "resources/templates/list")
_MAX_FILE = 8 * 1024 * 1024  # a cache file larger than this is junk


def default_cache_dir() -> Path:
    """The ``warm`` subdirectory of mcpsync's cache directory: ``$MCPSYNC_CACHE_DIR/warm``, else
    ``~/.cache/mcpsync/warm`` (``$XDG_CACHE_HOME``; ``~/Library/Caches/mcpsync/warm`` on macOS,
    ``%LOCALAPPDATA%\\mcpsync\\Cache\\warm`` on Windows), beside the registry cache's ``registry``."""
    from .._files import cache_root

    return Path(cache_root()) / "warm"


class WarmCache:
    """A directory of what reconnects may reuse (see the module documentation). Thread-safe.

    Args:
        directory: where the files live (default :func:`default_cache_dir`).
        max_age: seconds an era verdict and transport choice are trusted (default one day); discover
            results and listings last as long as the server's ``ttlMs`` says, never longer than this.
    """

    def __init__(self, directory: Union[str, "os.PathLike[str]", None] = None, *, max_age: float = 86400.0) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.max_age = float(max_age)
        self._lock = threading.Lock()

    def attach(self, client: Any) -> "WarmStart":
        """The registration hook of ``Client(extensions=[cache])``: this cache's hooks for ``client`` (a
        :class:`~mcpsync.client.hooks.ClientExtension`). Does not block; opens nothing."""
        return WarmStart(client, self)

    @classmethod
    def coerce(cls, value: Any) -> Optional["WarmCache"]:
        """What a flat ``warm_cache`` setting (configuration files, ``Manager(client_options=...)``) takes:
        None/False (off), True (the default directory), a path, or a WarmCache."""
        if value is None or value is False:
            return None
        if value is True:
            return cls()
        if isinstance(value, WarmCache):
            return value
        if isinstance(value, (str, os.PathLike)):
            return cls(value)
        from ..errors import ConfigError

        raise ConfigError("warm_cache must be True, False, None, a directory or a mcpsync.warm.WarmCache")

    @staticmethod
    def key(identity: Any) -> str:
        """The file name for a server identity (any JSON-able value): a SHA-256 digest, so nothing of the
        identity (URLs, commands, credential digests) is readable from the directory listing."""
        text = json.dumps(identity, sort_keys=True, default=repr, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / ("%s.json" % key)

    def load(self, key: str) -> Optional[Dict[str, Any]]:
        """The entry under ``key`` if it is whole, of this version, younger than ``max_age``, written for this
        ``key`` and in a file only this user may write (see the module documentation); else None."""
        path = self._path(key)
        try:
            with open(path, "rb") as f:
                problem = untrusted_reason(os.fstat(f.fileno()))
                if problem is not None:
                    logger.warning(
                        "ignoring the warm cache file %s: %s (only this user's private files are trusted)",
                        path,
                        problem,
                    )
                    return None
                raw = f.read(_MAX_FILE + 1)
        except FileNotFoundError:
            return None
        except OSError as exc:
            logger.debug("warm cache %s unreadable: %s", path, exc)
            return None
        try:
            if len(raw) > _MAX_FILE:
                raise ValueError("too large")
            entry = json.loads(raw)
            if not isinstance(entry, dict) or entry.get("v") != _VERSION:
                raise ValueError("not a version %d entry" % _VERSION)
            saved = entry.get("savedAt")
            if not isinstance(saved, (int, float)) or isinstance(saved, bool):
                raise ValueError("no savedAt")
            if entry.get("era") not in ("modern", "legacy") or not isinstance(entry.get("protocolVersion"), str):
                raise ValueError("no era")
        except ValueError as exc:
            logger.warning("ignoring the damaged warm cache file %s (%s)", path, exc)
            return None
        if entry.get("server") != key:
            logger.warning("ignoring the warm cache file %s: its entry was written for another server", path)
            return None
        if time.time() - saved > self.max_age or saved > time.time() + 300:
            return None
        return entry

    def save(self, key: str, entry: Dict[str, Any]) -> None:
        """Write ``entry`` atomically (mode 0600, directory 0700). Failures are logged, never raised: a cache
        that cannot be written only costs the next connection its shortcut."""
        entry = dict(entry, v=_VERSION, server=key)  # bound to its identity: a copy under another name is refused
        entry.setdefault("savedAt", time.time())
        try:
            data = json.dumps(entry, separators=(",", ":")).encode("utf-8")
            with self._lock:
                self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
                write_atomically(self._path(key), data)
        except (OSError, TypeError, ValueError) as exc:
            logger.warning("could not write the warm cache in %s: %s", self.directory, exc)

    def forget(self, key: str) -> None:
        """Drop the entry under ``key`` (nothing when there is none)."""
        try:
            os.unlink(self._path(key))
        except FileNotFoundError:
            pass
        except OSError as exc:
            logger.debug("could not remove warm cache entry %s: %s", key, exc)

    def clear(self) -> None:
        """Drop every entry in the directory."""
        try:
            names = os.listdir(self.directory)
        except OSError:
            return
        for name in names:
            if name.endswith(".json") and len(name) == 69:
                self.forget(name[:-5])

    def __repr__(self) -> str:
        return "WarmCache(%r, max_age=%g)" % (str(self.directory), self.max_age)


class WarmLink:
    """One client's view of its entry: what the open may reuse and what the session learns. Thread-safe."""

    def __init__(self, cache: WarmCache, key: str) -> None:
        self.cache = cache
        self.key = key
        self._lock = threading.Lock()
        self.entry: Dict[str, Any] = cache.load(key) or {}
        self.unconfirmed = False  # opened from the entry and no answer has confirmed it yet

    # --- what the open may reuse ----------------------------------------------------------------

    def era(self) -> Optional[str]:
        return self.entry.get("era") if self.entry else None

    def protocol_version(self) -> Optional[str]:
        v = self.entry.get("protocolVersion")
        return v if isinstance(v, str) else None

    def transport(self) -> Optional[str]:
        t = self.entry.get("transport")
        return t if t in ("http", "sse") else None

    def discover(self) -> Optional[Dict[str, Any]]:
        """The kept ``server/discover`` outcome while its ttlMs lasts (2026-07-28), else None."""
        d = self.entry.get("discover")
        if self.era() != "modern" or not isinstance(d, dict):
            return None
        expires = d.get("expiresAt")
        if not isinstance(expires, (int, float)) or expires <= time.time():
            return None
        if not isinstance(d.get("capabilities"), dict):
            return None
        return d

    def pages(self) -> Dict[str, Any]:
        """``{"method|cursor": (result, seconds left)}`` of the listing pages still fresh."""
        out: Dict[str, Any] = {}
        lists = self.entry.get("lists")
        if not isinstance(lists, dict):
            return out
        now = time.time()
        for k, v in lists.items():
            if not isinstance(v, dict) or not isinstance(v.get("result"), dict):
                continue
            expires = v.get("expiresAt")
            if isinstance(expires, (int, float)) and expires > now:
                out[k] = (v["result"], expires - now)
        return out

    # --- what the session learns ----------------------------------------------------------------

    def agreed(self, era: str, version: str, transport: Optional[str], discover: Optional[Dict[str, Any]]) -> None:
        """A cold negotiation's outcome: keep the verdict (and the discover result, with its ttlMs)."""
        with self._lock:
            same = self.entry.get("era") == era and self.entry.get("protocolVersion") == version
            entry: Dict[str, Any] = {"era": era, "protocolVersion": version, "savedAt": time.time()}
            if transport in ("http", "sse"):
                entry["transport"] = transport
            if discover is not None:
                entry["discover"] = discover
            if same and isinstance(self.entry.get("lists"), dict):
                entry["lists"] = self.entry["lists"]
            self.entry = entry
            self.cache.save(self.key, entry)

    def store_page(self, method: str, cursor: Optional[str], result: Dict[str, Any], ttl_ms: float) -> None:
        """Keep a listing page for ``ttl_ms`` (capped by ``max_age``)."""
        if method not in LIST_METHODS or not self.entry:
            return
        seconds = min(ttl_ms / 1000.0, self.cache.max_age)
        with self._lock:
            lists = dict(self.entry.get("lists") or {})
            lists["%s|%s" % (method, cursor or "")] = {"result": result, "expiresAt": time.time() + seconds}
            self.entry = dict(self.entry, lists=lists)
            self.cache.save(self.key, self.entry)

    def forget_pages(self, method_prefix: str = "") -> None:
        """Drop kept pages (of methods starting with ``method_prefix``; all by default)."""
        with self._lock:
            lists = self.entry.get("lists")
            if not isinstance(lists, dict) or not lists:
                return
            kept = {k: v for k, v in lists.items() if method_prefix and not k.startswith(method_prefix)}
            self.entry = dict(self.entry, lists=kept)
            self.cache.save(self.key, self.entry)

    def forget(self) -> None:
        """The server changed: drop the whole entry."""
        with self._lock:
            self.entry = {}
            self.unconfirmed = False
            self.cache.forget(self.key)


# --------------------------------------------------------------------------- one client's warm start


class WarmStart(ClientExtension):
    """A client's use of a :class:`WarmCache`, as a :class:`~mcpsync.client.hooks.ClientExtension`: hooks on
    open, around the first 2026-07-28 request after a warm open, on listings and on list_changed. Inert
    without a cache. Thread-safe."""

    def __init__(self, client: "Client", cache: Optional[WarmCache]) -> None:
        self._client = client
        #: what this extension uses of the client beyond its public API (mcpsync.client.host.ClientHost)
        self._port: "ClientHost" = host_of(client)
        self.cache = cache
        self.link: Optional[WarmLink] = None

    def identity(self) -> Any:
        """The server identity and auth context the entry is kept under (digested into the file name)."""
        return ["mcpsync-warm", 1, self._port.server_key, self.auth_context()]

    def auth_context(self) -> Dict[str, Any]:
        """What tells the client's credentials apart, as digests: the bearer token, the headers, the auth
        hook's type and ``name``, a stdio server's environment. Never the values themselves."""

        def digest(value: Any) -> str:
            return hashlib.sha256(repr(value).encode("utf-8", "replace")).hexdigest()[:32]

        opts = self._port.credentials()
        out: Dict[str, Any] = {}
        if opts.get("bearer_token"):
            out["bearer"] = digest(opts["bearer_token"])
        headers = opts.get("headers")
        if isinstance(headers, dict) and headers:
            out["headers"] = digest(sorted((str(k).lower(), str(v)) for k, v in headers.items()))
        auth = opts.get("auth")
        if auth is not None:
            out["auth"] = [type(auth).__qualname__, str(getattr(auth, "name", ""))]
        env = opts.get("env")
        if isinstance(env, dict) and env:
            out["env"] = digest(sorted(env.items()))
        return out

    def before_open(self, target: Any) -> None:
        """Load the entry; steer the transport choice and (handshake era) the probe with what it says."""
        if self.cache is None:
            return
        link = self.link = WarmLink(self.cache, WarmCache.key(self.identity()))
        c = self._client
        if isinstance(target, str) and link.transport() is not None:
            c.memory.remember_transport(target, link.transport() or "http")
        version = link.protocol_version()
        if c.protocol == "auto" and link.era() == "legacy" and version is not None:
            c.memory.remember_era(self._port.server_key, version)  # skip the discover probe

    def prior(self, session: Any) -> Optional[Any]:
        """A :class:`~mcpsync.client.negotiate.Negotiated` from a fresh kept discover result (2026-07-28),
        after telling the transport the revision; None to negotiate as usual."""
        link = self.link
        if link is None or self._client.protocol not in ("auto", "modern"):
            return None
        d = link.discover()
        version = link.protocol_version()
        from ..wire import protocol as P

        if d is None or version not in P.MODERN_VERSIONS:
            return None
        from ..types import Implementation
        from ..client.negotiate import Negotiated

        session.transport.set_protocol(version, "modern")
        link.unconfirmed = True
        instructions = d.get("instructions")
        return Negotiated(
            era="modern",
            protocol_version=version or "",
            server_info=Implementation.from_dict(d.get("serverInfo")),
            server_capabilities=dict(d["capabilities"]),
            instructions=instructions if isinstance(instructions, str) else None,
        )

    def negotiated(self, agreed: Any, transport: Optional[str]) -> None:
        """A cold negotiation succeeded: keep its verdict."""
        self.agreed(agreed, transport)

    def opened(self, seed: Any) -> None:
        """Seed the in-memory listing cache with the fresh kept pages (2026-07-28)."""
        for key, (page, seconds) in self.pages().items():
            method, _, cursor = key.partition("|")
            seed(method, cursor or None, page, seconds)

    def listed(self, method: str, cursor: Optional[str], result: Any) -> None:
        """A listing page was kept in memory: keep it on disk too."""
        self.note_page(method, cursor, result)

    def list_changed(self, method_prefix: str) -> None:
        """The kept pages of that kind are stale."""
        self.evict(method_prefix)

    def handle(self, request: Any, next: Any) -> Any:  # noqa: A002
        """Around the wire request (2026-07-28): a request refused because the kept verdict is stale (it did not
        run) is sent again on a freshly negotiated connection; a first answer from a server that changed makes
        the client discover again."""
        if self.link is None or not self.link.unconfirmed:
            return next(request)
        from ..errors import MCPError

        try:
            result = next(request)
        except MCPError as exc:
            if not self.refused(exc):
                raise
            self._port.reconnect()
            return next(request)
        if not self.confirm(result):  # the server changed: discover again, keep the fresh outcome
            self.agreed(self._port.rediscover(), self._client.transport_kind)
        return result

    def agreed(self, agreed: Any, transport: Optional[str]) -> None:
        """A cold negotiation succeeded: keep its verdict (and its discover result for its ttlMs)."""
        link = self.link
        if link is None:
            return
        discover = None
        if agreed.era == "modern" and agreed.ttl_ms:
            seconds = min(agreed.ttl_ms / 1000.0, link.cache.max_age)
            discover = {
                "serverInfo": agreed.server_info.raw,
                "capabilities": agreed.server_capabilities,
                "instructions": agreed.instructions,
                "expiresAt": time.time() + seconds,
            }
        link.agreed(agreed.era, agreed.protocol_version, transport, discover)

    def pages(self) -> Dict[str, Any]:
        """Fresh kept listing pages to seed the in-memory cache with (2026-07-28)."""
        link = self.link
        return link.pages() if link is not None and self._client.era == "modern" else {}

    def note_page(self, method: str, cursor: Optional[str], result: Any) -> None:
        """A listing page was cached in memory: keep it on disk for its ttlMs too."""
        link = self.link
        if link is None or self._client.era != "modern" or not isinstance(result, dict):
            return
        ttl = result.get("ttlMs")
        if isinstance(ttl, (int, float)) and not isinstance(ttl, bool) and ttl > 0:
            link.store_page(method, cursor, result, float(ttl))

    def evict(self, method_prefix: str) -> None:
        """list_changed: the kept pages of that kind are stale."""
        if self.link is not None:
            self.link.forget_pages(method_prefix)

    @property
    def unconfirmed(self) -> bool:
        """Opened from the entry, and no answer has confirmed the server is still what it kept."""
        return self.link is not None and self.link.unconfirmed

    def confirm(self, result: Any) -> bool:
        """The first answer after a warm open: True when the server is what the entry said. A changed
        ``serverInfo`` (name or version) drops the entry and returns False (the caller refreshes)."""
        link = self.link
        if link is None or not link.unconfirmed:
            return True
        link.unconfirmed = False
        from ..wire import protocol as P

        meta = result.get("_meta") if isinstance(result, dict) else None
        info = meta.get(P.META_SERVER_INFO) if isinstance(meta, dict) else None
        if not isinstance(info, dict):
            return True
        kept = self._client.server_info
        if info.get("name") == kept.name and info.get("version", "") == kept.version:
            return True
        logger.info(
            "[%s] the server changed since it was cached (%s %s -> %s %s); refreshing",
            self._client.name,
            kept.name,
            kept.version,
            info.get("name"),
            info.get("version"),
        )
        link.forget()
        return False

    def refused(self, exc: BaseException) -> bool:
        """The first request after a warm open was refused in a way that proves it did not run and says the
        server no longer speaks the kept era (an unsupported version, an invalid request, HTTP 400/404)."""
        link = self.link
        if link is None or not link.unconfirmed:
            return False
        from ..errors import HTTPStatusError, InvalidRequest, UnsupportedVersionError

        stale = isinstance(exc, (UnsupportedVersionError, InvalidRequest)) or (
            isinstance(exc, HTTPStatusError) and exc.status_code in (400, 404)
        )
        if stale:
            logger.info("[%s] the cached protocol verdict was refused (%s); negotiating again", self._client.name, exc)
            link.forget()
        return stale
