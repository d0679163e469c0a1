"""MCP Apps hosting (``io.modelcontextprotocol/ui``): the View channel (:class:`AppBridge`) and the glue for web
hosts (:mod:`mcpsync.apps.web`, any WSGI app: Flask, Django) and desktop hosts (:mod:`mcpsync.apps.desktop`,
pywebview). The page itself is fetched and verified by :func:`app_for` (``mcpsync.apps.app_for(client, tool)``,
built on the client's public API; it blocks for its requests and is thread-safe). See ``docs/guides/apps.md``.

Nothing here is imported by ``import mcpsync``; names load on first use.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from .._lazy import exports as _exports
from .._lazy import table as _table

if _TYPE_CHECKING:  # the lazy names, for type checkers ("X as X" re-exports each; nothing is imported at run time)
    from .bridge import APPS_PROTOCOL_VERSION as APPS_PROTOCOL_VERSION, AppBridge as AppBridge
    from .bridge import HostCallbacks as HostCallbacks
    from .desktop import DesktopApp as DesktopApp
    from .page import AppResource as AppResource, app_for as app_for
    from .web import AppSession as AppSession, AppWebHost as AppWebHost

_LAZY = _table(
    {
        ".bridge": ("APPS_PROTOCOL_VERSION", "AppBridge", "HostCallbacks"),
        ".desktop": ("DesktopApp",),
        ".page": ("AppResource", "app_for"),
        ".web": ("AppSession", "AppWebHost"),
    }
)
__all__ = sorted(_LAZY)

__getattr__, __dir__ = _exports(__name__, _LAZY, globals())
