"""2026-07-28 era features: the response cache, listen streams, tool filtering.

:class:`ModernFeatures` is a part of the client core (it sees the client as a
:class:`~mcpsync.client.host.ClientHost`). Its cache honours
``ttlMs`` (absent or negative: not cached) and ``cacheScope`` (private entries
are partitioned by the credential in use); list_changed and resources/updated
evict. Listen streams are :class:`Subscription` objects. Tasks live in
:mod:`mcpsync.client.tasks`.
"""

from __future__ import annotations

import logging
import threading
import time
from types import MappingProxyType
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from .._dispatch import NotificationQueue
from ..errors import ConnectionClosed, MCPError, RequestCancelled
from ..session import RequestHandle
from ..types import ServerNotification, Tool
from .host import ClientHost, host_of

__all__ = ["ModernFeatures", "Subscription", "listen_filter"]

logger = logging.getLogger(__name__)

TERMINAL = ("completed", "failed", "cancelled")


class Subscription:
    """A ``subscriptions/listen`` stream (2026-07-28 era). Thread-safe.

    Iterate it (blocking) or pass ``on_event``; each item is a
    :class:`~mcpsync.types.ServerNotification`. ``acknowledged`` is set once the server
    confirmed the filter; ``refused`` then says what it did not honour.
    ``close()`` ends the stream.
    """

    def __init__(
        self,
        features: "ModernFeatures",
        filter_: Dict[str, Any],
        on_event: Optional[Callable[[ServerNotification], object]],
        auto_relisten: bool,
    ) -> None:
        self._features = features
        self.filter = filter_
        self.on_event = on_event
        self.auto_relisten = auto_relisten
        self.acknowledged = threading.Event()
        self.honoured: Dict[str, Any] = {}
        self.refused: Dict[str, Any] = {}
        self.events = NotificationQueue()
        self.request_id: Any = None
        self._handle: Optional[RequestHandle[Any]] = None
        self._closed = False
        self._restarts = 0
        self.ended = threading.Event()

    def _start(self) -> None:
        client = self._features.client
        params = client.stamp({"notifications": self.filter})

        def register(request_id: Any) -> None:
            self.request_id = request_id
            self._features.subs[request_id] = self

        handle = client.request_async("subscriptions/listen", params, before_send=register)
        self._handle = handle
        handle.add_done_callback(self._on_done)

    def _on_done(self, handle: RequestHandle[Any]) -> None:
        self._features.subs.pop(handle.request_id, None)
        if self._closed:
            self.ended.set()
            self.events.close()
            return
        try:
            handle.result(timeout=0)
            graceful = True
        except (ConnectionClosed, RequestCancelled):
            graceful = False
            self._closed = True
        except MCPError as exc:
            logger.info("[%s] listen stream ended: %s", self._features.client.name, exc)
            graceful = False
        if graceful or not self.auto_relisten or self._closed or not self._features.client.connected:
            self.ended.set()
            self.events.close()
            return
        self._restarts += 1
        delay = min(30.0, 0.25 * (2 ** min(self._restarts, 7)))
        logger.info("[%s] re-opening listen stream in %.2fs", self._features.client.name, delay)
        t = threading.Timer(delay, self._restart)
        t.daemon = True
        t.name = "mcpsync-relisten:%s" % self._features.client.name
        t.start()

    def _restart(self) -> None:
        if self._closed or not self._features.client.connected:
            self.ended.set()
            self.events.close()
            return
        try:
            self._start()
        except MCPError as exc:
            logger.warning("[%s] could not re-open listen stream: %s", self._features.client.name, exc)
            self.ended.set()
            self.events.close()

    def _deliver(self, method: str, params: Dict[str, Any]) -> None:
        if method == "notifications/subscriptions/acknowledged":
            listed = params.get("notifications")
            honoured = listed if isinstance(listed, dict) else params
            self.honoured = {k: v for k, v in honoured.items() if k != "_meta"}
            self.refused = _refused(self.filter, self.honoured)
            if self.refused:
                logger.warning("[%s] listen: server refused %s", self._features.client.name, self.refused)
            self._restarts = 0
            self.acknowledged.set()
            return
        note = ServerNotification(method=method, params=params, server=self._features.client.name)
        self.events.put(note)
        if self.on_event is not None:
            self._features.client.session.dispatch(self.on_event, note)

    def wait_acknowledged(self, timeout: Optional[float] = 10.0) -> bool:
        """Block until the server acknowledged the filter (True) or ``timeout`` passed (False)."""
        return self.acknowledged.wait(timeout)

    def get(self, timeout: Optional[float] = None) -> ServerNotification:
        """The next event; raises :class:`queue.Empty` after ``timeout`` seconds or once closed."""
        return self.events.get(timeout)

    def __iter__(self) -> Iterator[ServerNotification]:
        return iter(self.events)

    def close(self) -> None:
        """End the stream (cancels the listen request). Idempotent."""
        if self._closed:
            return
        self._closed = True
        h = self._handle
        if h is not None and not h.done():
            h.cancel("listen closed by the client")
        self.events.close()
        self.ended.set()


def listen_filter(
    *, tools: bool = False, prompts: bool = False, resources: bool = False, resource_uris: Optional[List[str]] = None
) -> Dict[str, Any]:
    """The ``notifications`` filter of a ``subscriptions/listen`` request: the list_changed notifications asked
    for, and ``notifications/resources/updated`` of ``resource_uris`` (copied)."""
    asked = {"toolsListChanged": tools, "promptsListChanged": prompts, "resourcesListChanged": resources}
    flt: Dict[str, Any] = {key: True for key, wanted in asked.items() if wanted}
    if resource_uris:
        flt["resourceSubscriptions"] = list(resource_uris)
    return flt


def _refused(asked: Dict[str, Any], honoured: Dict[str, Any]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for k, v in asked.items():
        if k == "resourceSubscriptions":
            raw = honoured.get(k)
            got = {u for u in raw if isinstance(u, str)} if isinstance(raw, list) else set()
            missing = [u for u in v if u not in got]
            if missing:
                out[k] = missing
        elif v and not honoured.get(k):
            out[k] = v
    return out


class ModernFeatures:
    """Cache, listen streams and tasks for one client. Thread-safe."""

    def __init__(self, client: Any) -> None:
        #: the client (a :class:`~mcpsync.Client`), as the narrow ClientHost these features use
        self.client: ClientHost = host_of(client)
        self._cache: Dict[Tuple[Any, ...], Tuple[float, Any]] = {}
        self._lock = threading.Lock()
        self.subs: Dict[Any, Subscription] = {}
        self._implicit: Optional[Subscription] = None
        self._resource_uris: List[str] = []
        self._local = threading.local()

    # ---------------------------------------------------------------- cache

    def _partition(self, scope: Any) -> str:
        if scope != "private":
            return ""
        key = getattr(self.client.session.transport, "credential_key", None)
        return str(key() if callable(key) else "")

    def _get(self, key: Tuple[Any, ...]) -> Any:
        if not self.client.use_cache:
            return None
        with self._lock:
            for part in ("", self._partition("private")):
                entry = self._cache.get(key + (part,))
                if entry is not None:
                    if entry[0] > time.monotonic():
                        return entry[1]
                    del self._cache[key + (part,)]
        return None

    def _put(self, key: Tuple[Any, ...], result: Any) -> None:
        if not self.client.use_cache or not isinstance(result, dict):
            return
        if getattr(self._local, "mrtr", False):  # never cache results that needed input rounds
            self._local.mrtr = False
            return
        ttl = result.get("ttlMs")
        if not isinstance(ttl, (int, float)) or isinstance(ttl, bool) or ttl <= 0:
            return
        part = self._partition(result.get("cacheScope", "private"))
        with self._lock:
            self._cache[key + (part,)] = (time.monotonic() + ttl / 1000.0, result)

    def mark_mrtr(self) -> None:
        """Note that the current thread's request went through input rounds (not cacheable)."""
        self._local.mrtr = True

    def cached_list(self, method: str, cursor: Optional[str]) -> Any:
        """A fresh cached page, or None."""
        return self._get(("list", method, cursor))

    def store_list(self, method: str, cursor: Optional[str], result: Any) -> None:
        """Cache a page per its ttlMs."""
        self._put(("list", method, cursor), result)

    def seed_list(self, method: str, cursor: Optional[str], result: Any, seconds: float) -> None:
        """Put a page kept from an earlier process (an extension's ``opened`` hook) in the cache for ``seconds``."""
        if not self.client.use_cache or not isinstance(result, dict) or seconds <= 0:
            return
        part = self._partition(result.get("cacheScope", "private"))
        with self._lock:
            self._cache[("list", method, cursor, part)] = (time.monotonic() + seconds, result)

    def cached_read(self, uri: str) -> Any:
        """A fresh cached read, or None."""
        return self._get(("read", uri))

    def store_read(self, uri: str, result: Any) -> None:
        """Cache a read per its ttlMs."""
        self._put(("read", uri), result)

    def evict_list(self, kind: str) -> None:
        """Drop cached pages of tools, prompts or resources (on list_changed)."""
        methods = {"tools": ("tools/list",), "prompts": ("prompts/list",)}.get(
            kind, ("resources/list", "resources/templates/list")
        )
        with self._lock:
            for k in [k for k in self._cache if k[0] == "list" and k[1] in methods]:
                del self._cache[k]

    def evict_read(self, uri: str) -> None:
        """Drop cached reads of ``uri`` (on resources/updated)."""
        with self._lock:
            for k in [k for k in self._cache if k[0] == "read" and k[1] == uri]:
                del self._cache[k]

    def clear_cache(self) -> None:
        """Forget everything cached."""
        with self._lock:
            self._cache.clear()

    # ---------------------------------------------------------------- tools

    def filter_tools(self, tools: List[Tool]) -> List[Tool]:
        """Let the transport drop tools with invalid ``x-mcp-header`` annotations (HTTP, 2026-07-28)."""
        if self.client.era != "modern":
            return tools
        register = getattr(self.client.session.transport, "register_tools", None)
        if register is None:
            return tools
        keep = register([t.raw for t in tools])
        names = {t.get("name") for t in keep if isinstance(t, dict)}
        return [t for t in tools if t.name in names]

    # ---------------------------------------------------------------- listen

    def listen(
        self,
        filter_: Dict[str, Any],
        on_event: Optional[Callable[[ServerNotification], object]] = None,
        auto_relisten: Optional[bool] = None,
    ) -> Subscription:
        """Open a listen stream for the notifications ``filter_`` names (see :func:`listen_filter`); see
        :class:`Subscription`. Does not wait for the server's acknowledgement."""
        relisten = self.client.auto_relisten if auto_relisten is None else auto_relisten
        sub = Subscription(self, filter_, on_event, relisten)
        sub._start()  # noqa: SLF001
        return sub

    def on_subscription_notification(self, sub_id: Any, method: str, params: Dict[str, Any]) -> bool:
        sub = self.subs.get(sub_id)
        if sub is None:
            return False
        if sub is self._implicit:
            if method != "notifications/subscriptions/acknowledged":
                self.client.route_notification(method, params)
            else:
                sub._deliver(method, params)  # noqa: SLF001
            return True
        if method != "notifications/subscriptions/acknowledged" and not self._implicit_covers(method, params):
            # exactly as for subscribe_resource(): caches evicted, on_resource_updated / on_*_changed /
            # on_notification fired and the client's notification queue fed (once: when the implicit
            # stream also carries this event, it does that); then the stream's own events
            self.client.route_notification(method, params)
        sub._deliver(method, params)  # noqa: SLF001
        return True

    def _implicit_covers(self, method: str, params: Dict[str, Any]) -> bool:
        """True when the implicit stream (list_changed callbacks, subscribe_resource) also gets this event."""
        implicit = self._implicit
        if implicit is None or implicit.request_id not in self.subs:
            return False
        flt = implicit.filter
        if method == "notifications/resources/updated":
            return params.get("uri") in (flt.get("resourceSubscriptions") or [])
        key = _LIST_CHANGED_FILTER.get(method)
        return key is not None and bool(flt.get(key))

    def server_ended(self, request_id: Any) -> bool:
        """The server sent notifications/cancelled for a listen request: end it (it re-listens if enabled)."""
        if request_id not in self.subs:
            return False
        self.client.session.on_request_error(
            request_id, MCPError("the server ended the listen stream", server=self.client.name)
        )
        return True

    def _reopen_implicit(self) -> None:
        c = self.client
        old = self._implicit
        want_tools, want_prompts, want_resources = c.follows("tools"), c.follows("prompts"), c.follows("resources")
        want_any = want_tools or want_prompts or want_resources or self._resource_uris
        if not want_any:
            self._implicit = None
            if old is not None:
                old.close()
            return
        caps = c.server_capabilities
        flt = listen_filter(
            tools=want_tools and _has(caps, "tools", "listChanged"),
            prompts=want_prompts and _has(caps, "prompts", "listChanged"),
            resources=want_resources and _has(caps, "resources", "listChanged"),
            resource_uris=self._resource_uris,
        )
        sub = self.listen(flt)
        self._implicit = sub
        if old is not None:
            old.close()

    def after_open(self) -> None:
        c = self.client
        if c.era != "modern":
            return
        if c.follows("tools") or c.follows("prompts") or c.follows("resources"):
            try:
                self._reopen_implicit()
            except MCPError as exc:
                logger.warning("[%s] could not open the listen stream for list_changed: %s", c.name, exc)

    def follow_tools(self) -> None:
        """The implicit listen stream carries tools/list_changed from now on (the client's ``_follow_tools``
        is set by the caller); reopened at once when connected in this era."""
        c = self.client
        if c.era == "modern" and _has(c.server_capabilities, "tools", "listChanged"):
            self._reopen_implicit()

    def subscribe_resource(self, uri: str) -> None:
        """Legacy-style subscription mapped onto the implicit listen stream."""
        if uri not in self._resource_uris:
            self._resource_uris.append(uri)
            self._reopen_implicit()

    def unsubscribe_resource(self, uri: str) -> None:
        if uri in self._resource_uris:
            self._resource_uris.remove(uri)
            self._reopen_implicit()

    def close(self, after_fork: bool = False) -> None:
        """End every listen stream (no re-listen). ``after_fork``: in a forked child, with fresh queue locks."""
        for sub in list(self.subs.values()):
            sub._closed = True  # noqa: SLF001 - the session close fails them; no re-listen
            if after_fork:  # fresh synchronisation objects: a dead thread may hold the old ones' locks
                sub.events.reset_after_fork()
                sub.ended = threading.Event()
            else:
                sub.events.close()
            sub.ended.set()
        self.subs.clear()
        if after_fork:
            self._lock = threading.Lock()


_LIST_CHANGED_FILTER = MappingProxyType({
    "notifications/tools/list_changed": "toolsListChanged",
    "notifications/prompts/list_changed": "promptsListChanged",
    "notifications/resources/list_changed": "resourcesListChanged",
})


def _has(caps: Dict[str, Any], cap: str, sub: str) -> bool:
    c = caps.get(cap)
    return isinstance(c, dict) and bool(c.get(sub))
