"""Long-running tool calls as tasks: :func:`start_task` returns a :class:`TaskHandle` (``poll``, ``wait``,
``cancel``); :func:`resume_task` gives a handle for a task started earlier, possibly by another process, from its
id. See docs/guides/client.md. Names load on first use.
"""

from types import MappingProxyType as _MappingProxyType
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any
from typing import List as _List

from .._lazy import exports as _exports

if _TYPE_CHECKING:  # what the lazy names are, for type checkers (nothing is imported at run time)
    from ..client.tasks import TaskHandle, resume_task, start_task

__all__ = [
    "TaskHandle",
    "resume_task",
    "start_task",
]

_LAZY = _MappingProxyType(
    {
        "TaskHandle": "..client.tasks",
        "resume_task": "..client.tasks",
        "start_task": "..client.tasks",
    }
)

_load, _names = _exports(__name__, _LAZY, globals())


def __getattr__(name: str) -> _Any:
    return _load(name)


def __dir__() -> _List[str]:
    return _names()
