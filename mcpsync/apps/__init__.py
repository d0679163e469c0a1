"""MCP Apps hosting (``io.modelcontextprotocol/ui``): the View channel (:class:`AppBridge`) and the glue for web
hosts (:mod:`mcpsync.apps.web`, any WSGI app: Flask, Django) and desktop hosts (:mod:`mcpsync.apps.desktop`,
pywebview). The page itself is fetched and verified by :func:`app_for` (``mcpsync.apps.app_for(client, tool)``,
built on the client's public API; it blocks for its requests and is thread-safe). See ``docs/guides/apps.md``.

Nothing here is imported by ``import mcpsync``; names load on first use.
"""

from types import MappingProxyType as _MappingProxyType
from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:  # pragma: no cover
    from .bridge import APPS_PROTOCOL_VERSION, AppBridge, HostCallbacks
    from .desktop import DesktopApp
    from .page import AppResource, app_for
    from .web import AppSession, AppWebHost

__all__ = [
    "APPS_PROTOCOL_VERSION",
    "AppBridge",
    "AppResource",
    "AppSession",
    "AppWebHost",
    "DesktopApp",
    "HostCallbacks",
    "app_for",
]

_LAZY = _MappingProxyType({
    "APPS_PROTOCOL_VERSION": "bridge",
    "AppBridge": "bridge",
    "AppResource": "page",
    "app_for": "page",
    "HostCallbacks": "bridge",
    "AppSession": "web",
    "AppWebHost": "web",
    "DesktopApp": "desktop",
})


__getattr__, __dir__ = exports(__name__, _LAZY, globals())
