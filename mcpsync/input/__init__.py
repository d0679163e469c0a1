"""Resumable input: a tool call that needs an answer from a person becomes :class:`InputRequired`.

The call is parked behind a signed token; :func:`render_form` / :func:`parse_form` turn its questions into a web
form and back; a seen store (:class:`MemorySeenStore`, :class:`FileSeenStore`, :class:`RedisSeenStore`, or
:func:`open_seen_store` from a URL) makes each token work once. The errors are in :mod:`mcpsync.errors`
(``InputTokenError`` and its subclasses, ``InputSeenStoreError``). See docs/guides/input.md. Names load on
first use.
"""

from types import MappingProxyType as _MappingProxyType
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any
from typing import List as _List

from .._lazy import exports as _exports

if _TYPE_CHECKING:  # what the lazy names are, for type checkers (nothing is imported at run time)
    from ..client.deferred import InputExpired, InputQuestion, InputRequired
    from ..client.forms import parse_form, render_form
    from ..client.seen import SeenStore, open_seen_store
    from ..client.seen_file import FileSeenStore
    from ..client.seen_memory import MemorySeenStore
    from ..client.seen_redis import RedisSeenStore

__all__ = [
    "FileSeenStore",
    "InputExpired",
    "InputQuestion",
    "InputRequired",
    "MemorySeenStore",
    "RedisSeenStore",
    "SeenStore",
    "open_seen_store",
    "parse_form",
    "render_form",
]

_LAZY = _MappingProxyType(
    {
        "FileSeenStore": "..client.seen_file",
        "InputExpired": "..client.deferred",
        "InputQuestion": "..client.deferred",
        "InputRequired": "..client.deferred",
        "MemorySeenStore": "..client.seen_memory",
        "RedisSeenStore": "..client.seen_redis",
        "SeenStore": "..client.seen",
        "open_seen_store": "..client.seen",
        "parse_form": "..client.forms",
        "render_form": "..client.forms",
    }
)

_load, _names = _exports(__name__, _LAZY, globals())


def __getattr__(name: str) -> _Any:
    return _load(name)


def __dir__() -> _List[str]:
    return _names()
