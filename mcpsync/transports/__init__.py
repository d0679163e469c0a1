"""Transports: how frames reach a server. See :mod:`mcpsync.transports.base` for the contract.

:class:`StdioTransport` (a subprocess), :class:`StreamableHTTPTransport` and the legacy :class:`SSETransport`
load on first use; a :class:`mcpsync.Client` picks one from its target, so most programs never name them.
"""

from types import MappingProxyType as _MappingProxyType
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any
from typing import List as _List

from .._lazy import exports as _exports
from .base import Transport, TransportSink

if _TYPE_CHECKING:  # what the lazy names are, for type checkers (nothing is imported at run time)
    from .http.legacy_sse import SSETransport
    from .http.transport import StreamableHTTPTransport
    from .stdio import StdioTransport

__all__ = ["SSETransport", "StdioTransport", "StreamableHTTPTransport", "Transport", "TransportSink"]

_LAZY = _MappingProxyType(
    {
        "SSETransport": "http.legacy_sse",
        "StdioTransport": "stdio",
        "StreamableHTTPTransport": "http.transport",
    }
)

_load, _names = _exports(__name__, _LAZY, globals())


def __getattr__(name: str) -> _Any:
    return _load(name)


def __dir__() -> _List[str]:
    return _names()
