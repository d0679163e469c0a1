"""Where a server notification goes: the caches it invalidates, the user's callbacks, the client's log and queue.

:class:`NotificationRouter` is a part of the client core. It runs on the transport's reader thread, so it only
routes: caches are evicted in place, and every piece of user code (``on_tools_changed``, ``on_log``,
``on_notification``...) is handed to the session's dispatcher, which runs it on the client's dispatch thread
(bounded: see :mod:`mcpsync._dispatch`). ``notifications/message`` is queued only when someone will see it.
"""

from __future__ import annotations

import logging
from types import MappingProxyType
from typing import Any, Callable, Dict, Optional, Protocol

from ..types import ServerNotification
from ..wire import jsonrpc
from ..wire import protocol as P

__all__ = ["NotificationRouter"]

#: MCP log levels -> logging levels
LEVELS = MappingProxyType({
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
})


class RoutingClient(Protocol):
    """What the router reads of its client (declared here, so this module imports no client)."""

    name: str
    notifications: Any
    on_tools_changed: Optional[Callable[[], object]]
    on_prompts_changed: Optional[Callable[[], object]]
    on_resources_changed: Optional[Callable[[], object]]
    on_resource_updated: Optional[Callable[[str], object]]
    on_notification: Optional[Callable[[ServerNotification], object]]
    on_log: Optional[Callable[[Dict[str, Any]], object]]
    _session: Any
    _modern: Any
    _extensions: Any
    _tools_epoch: int


def level_of(params: Dict[str, Any]) -> int:
    """The ``logging`` level of a ``notifications/message``."""
    return LEVELS.get(str(params.get("level", "info")), logging.INFO)


class NotificationRouter:
    """Routes one client's server notifications (see the module documentation). Thread-safe: it keeps no
    state of its own beyond the server logger."""

    def __init__(self, client: RoutingClient) -> None:
        self._client = client
        self.server_logger = logging.getLogger("mcpsync.server.%s" % client.name)

    def on_notification(self, method: str, params: Dict[str, Any]) -> None:
        """A notification from the session: listen streams first, then :meth:`route`."""
        modern = self._client._modern  # noqa: SLF001 - the owner's parts
        # ids are type-checked before any lookup: an object or array id is unhashable
        if method == "notifications/cancelled":
            target = params.get("requestId")
            if jsonrpc.is_valid_id(target) and modern.server_ended(target):
                return  # the server ended one of our listen streams
        meta = params.get("_meta")
        if isinstance(meta, dict) and P.META_SUBSCRIPTION_ID in meta:
            sub_id = meta[P.META_SUBSCRIPTION_ID]
            if jsonrpc.is_valid_id(sub_id) and modern.on_subscription_notification(sub_id, method, params):
                return
        self.route(method, params)

    def route(self, method: str, params: Dict[str, Any]) -> None:
        """Evict what the notification makes stale, queue it, and dispatch the callbacks it concerns."""
        c = self._client
        session = c._session  # noqa: SLF001
        dispatch = session.dispatch if session is not None else None
        modern = c._modern  # noqa: SLF001
        if method.endswith("/list_changed"):
            for extension in c._extensions:  # noqa: SLF001
                extension.list_changed(method[len("notifications/") : -len("list_changed")])  # "tools/"...
        if method == "notifications/tools/list_changed":
            modern.evict_list("tools")
            c._tools_epoch += 1  # the toolkits' staleness check (Client.tools_epoch)
            if c.on_tools_changed and dispatch:
                dispatch(c.on_tools_changed)
        elif method == "notifications/prompts/list_changed":
            modern.evict_list("prompts")
            if c.on_prompts_changed and dispatch:
                dispatch(c.on_prompts_changed)
        elif method == "notifications/resources/list_changed":
            modern.evict_list("resources")
            if c.on_resources_changed and dispatch:
                dispatch(c.on_resources_changed)
        elif method == "notifications/resources/updated":
            uri = params.get("uri")
            if isinstance(uri, str):
                modern.evict_read(uri)
                if c.on_resource_updated and dispatch:
                    dispatch(c.on_resource_updated, uri)
        elif method == "notifications/message":
            # queued only when someone will see it: on_log, or a logging level that lets it through
            if dispatch and (c.on_log is not None or self.server_logger.isEnabledFor(level_of(params))):
                dispatch(self.deliver_log, params)
        note = ServerNotification(method=method, params=params, server=c.name)
        c.notifications.put(note)
        if c.on_notification and dispatch:
            dispatch(c.on_notification, note)

    def deliver_log(self, params: Dict[str, Any]) -> None:
        """A server log message to the ``mcpsync.server.<name>`` logger and ``on_log`` (dispatch thread)."""
        name = params.get("logger")
        log = self.server_logger.getChild(name) if isinstance(name, str) and name else self.server_logger
        log.log(level_of(params), "%s", params.get("data"))
        on_log = self._client.on_log
        if on_log is not None:
            on_log(params)
