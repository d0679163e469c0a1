"""Transports: how frames reach a server. See :mod:`mcpsync.transports.base` for the contract.

:class:`StdioTransport` (a subprocess), :class:`StreamableHTTPTransport` and the legacy :class:`SSETransport`
load on first use; a :class:`mcpsync.Client` picks one from its target, so most programs never name them.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from .._lazy import exports as _exports
from .._lazy import table as _table
from .base import Transport, TransportSink

if _TYPE_CHECKING:  # what the lazy names are, for type checkers (nothing is imported at run time)
    from .http.legacy_sse import SSETransport
    from .http.transport import StreamableHTTPTransport
    from .stdio import StdioTransport

__all__ = ["SSETransport", "StdioTransport", "StreamableHTTPTransport", "Transport", "TransportSink"]

_LAZY = _table(
    {
        "http.legacy_sse": ("SSETransport",),
        "http.transport": ("StreamableHTTPTransport",),
        "stdio": ("StdioTransport",),
    }
)

__getattr__, __dir__ = _exports(__name__, _LAZY, globals())
