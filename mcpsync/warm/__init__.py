"""Warm starts: :class:`WarmCache` keeps on disk what a reconnect may reuse (the negotiated era, the transport
choice, discover results and listings, each for as long as it may be trusted), so the next connection to the
same server skips those round trips. See docs/guides/http.md. Names load on first use.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from .._lazy import exports as _exports
from .._lazy import table as _table

if _TYPE_CHECKING:  # the lazy names, for type checkers ("X as X" re-exports each; nothing is imported at run time)
    from .cache import WarmCache as WarmCache

_LAZY = _table(
    {
        ".cache": ("WarmCache",),
    }
)
__all__ = sorted(_LAZY)

__getattr__, __dir__ = _exports(__name__, _LAZY, globals())
