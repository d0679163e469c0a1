"""Warm starts: :class:`WarmCache` keeps on disk what a reconnect may reuse (the negotiated era, the transport
choice, discover results and listings, each for as long as it may be trusted), so the next connection to the
same server skips those round trips. See docs/guides/http.md. Names load on first use.
"""

from types import MappingProxyType as _MappingProxyType
from typing import TYPE_CHECKING as _TYPE_CHECKING

from .._lazy import exports as _exports

if _TYPE_CHECKING:  # what the lazy names are, for type checkers (nothing is imported at run time)
    from .cache import WarmCache

__all__ = [
    "WarmCache",
]

_LAZY = _MappingProxyType(
    {
        "WarmCache": ".cache",
    }
)

__getattr__, __dir__ = _exports(__name__, _LAZY, globals())
