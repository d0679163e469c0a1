"""Long-running tool calls as tasks: :func:`start_task` returns a :class:`TaskHandle`, a
:class:`~mcpsync.handles.Handle` like a request's (``result``, ``done``, ``cancel``, ``add_done_callback``) with
``poll`` and ``status`` besides; :func:`resume_task` gives a handle for a task started earlier, possibly by another
process, from its id. See docs/guides/client.md. Names load on first use.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from .._lazy import exports as _exports
from .._lazy import table as _table

if _TYPE_CHECKING:  # the lazy names, for type checkers ("X as X" re-exports each; nothing is imported at run time)
    from ..client.tasks import TaskHandle as TaskHandle, resume_task as resume_task, start_task as start_task

_LAZY = _table(
    {
        "..client.tasks": ("TaskHandle", "resume_task", "start_task"),
    }
)
__all__ = sorted(_LAZY)

__getattr__, __dir__ = _exports(__name__, _LAZY, globals())
