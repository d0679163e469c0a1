"""Warm starts: :class:`WarmCache` keeps what a server said at start-up (capabilities, tool lists) on disk so
the next process starts without waiting for it. See docs/http.md. Names load on first use.
"""

from types import MappingProxyType as _MappingProxyType
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any
from typing import List as _List

from .._lazy import exports as _exports

if _TYPE_CHECKING:  # what the lazy names are, for type checkers (nothing is imported at run time)
    from ..client.warm import WarmCache

__all__ = [
    "WarmCache",
]

_LAZY = _MappingProxyType(
    {
        "WarmCache": "..client.warm",
    }
)

_load, _names = _exports(__name__, _LAZY, globals())


def __getattr__(name: str) -> _Any:
    return _load(name)


def __dir__() -> _List[str]:
    return _names()
