"""MCP Apps hosting (``io.modelcontextprotocol/ui``): the View channel (:class:`AppBridge`) and the glue for web
hosts (:mod:`mcpsync.apps.web`, any WSGI app: Flask, Django) and desktop hosts (:mod:`mcpsync.apps.desktop`,
pywebview). The page itself is fetched and verified by :meth:`mcpsync.Client.app_for`. See ``docs/guides/apps.md``.

Nothing here is imported by ``import mcpsync``; names load on first use.
"""

from types import MappingProxyType as _MappingProxyType
from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:  # pragma: no cover
    from .page import AppResource
    from .bridge import APPS_PROTOCOL_VERSION, AppBridge, HostCallbacks
    from .desktop import DesktopApp
    from .web import AppSession, AppWebHost

__all__ = [
    "APPS_PROTOCOL_VERSION",
    "AppBridge",
    "AppResource",
    "AppSession",
    "AppWebHost",
    "DesktopApp",
    "HostCallbacks",
]

_LAZY = _MappingProxyType({
    "APPS_PROTOCOL_VERSION": "bridge",
    "AppBridge": "bridge",
    "AppResource": ".page",
    "HostCallbacks": "bridge",
    "AppSession": "web",
    "AppWebHost": "web",
    "DesktopApp": "desktop",
})


__getattr__, __dir__ = exports(__name__, _LAZY, globals())
