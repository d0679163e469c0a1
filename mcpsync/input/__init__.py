"""Resumable input: a tool call that needs an answer from a person becomes :class:`InputRequired`.

The client extension :class:`DeferInput` (``Client(..., extensions=[DeferInput()])``) makes a client's calls defer
the server's questions instead of asking its handlers; :func:`deferring` switches that per call (per thread);
:func:`resume` / :func:`resume_tool` continue the call with the answers, and :func:`pending_input` holds the
handshake era's parked questions. The call is kept as plain data or behind a signed token; :func:`render_form`
/ :func:`parse_form` turn its questions into a web form and back; a seen store (:class:`MemorySeenStore`,
:class:`FileSeenStore`, :class:`RedisSeenStore`, or :func:`open_seen_store` from a URL) makes each token work
once. The errors are in :mod:`mcpsync.errors`
(``InputTokenError`` and its subclasses, ``InputSeenStoreError``). See docs/guides/input.md. Names load on
first use.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from .._lazy import exports as _exports
from .._lazy import table as _table

if _TYPE_CHECKING:  # the lazy names, for type checkers ("X as X" re-exports each; nothing is imported at run time)
    from .deferred import InputExpired as InputExpired, InputQuestion as InputQuestion, InputRequired as InputRequired
    from .extension import DeferInput as DeferInput, deferring as deferring, pending_input as pending_input
    from .forms import parse_form as parse_form, render_form as render_form
    from .parked import ParkedInputs as ParkedInputs
    from .resume import resume as resume, resume_tool as resume_tool
    from .seen import SeenStore as SeenStore, open_seen_store as open_seen_store
    from .seen_file import FileSeenStore as FileSeenStore
    from .seen_memory import MemorySeenStore as MemorySeenStore
    from .seen_redis import RedisSeenStore as RedisSeenStore

_LAZY = _table(
    {
        ".deferred": ("InputExpired", "InputQuestion", "InputRequired"),
        ".extension": ("DeferInput", "deferring", "pending_input"),
        ".forms": ("parse_form", "render_form"),
        ".parked": ("ParkedInputs",),
        ".resume": ("resume", "resume_tool"),
        ".seen": ("SeenStore", "open_seen_store"),
        ".seen_file": ("FileSeenStore",),
        ".seen_memory": ("MemorySeenStore",),
        ".seen_redis": ("RedisSeenStore",),
    }
)
__all__ = sorted(_LAZY)

__getattr__, __dir__ = _exports(__name__, _LAZY, globals())
