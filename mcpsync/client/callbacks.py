"""The less common event callbacks of a client, grouped: :class:`Callbacks` (``Client(callbacks=...)``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional

from ..errors import ConfigError

if TYPE_CHECKING:
    from .tasks import TaskHandle

__all__ = ["Callbacks"]


@dataclass(frozen=True)
class Callbacks:
    """Callbacks for server events; ``Client(target, callbacks=Callbacks(on_tools_changed=refresh))``.

    Every callback runs on the client's dispatch thread, one at a time and never on a reader thread; it may
    call the client (even ``close()``). When 1000 callbacks wait behind a slow one, newer ones are dropped and
    counted in :attr:`mcpsync.Client.dropped_callbacks`. None runs after ``close()`` returns. Immutable and
    thread-safe. (``on_notification``, which sees every notification, is a keyword of the client itself.)

    Args:
        on_log: called with each log message's params (``{"level", "logger", "data"}``); log messages also go
            to the ``mcpsync.server.<name>`` logger. Ask for a level with ``ClientOptions(log_level=...)``.
        on_tools_changed: called (no arguments) when the server's tool list changed. In the 2026-07-28 era
            the client opens a listen stream for it.
        on_prompts_changed: the same for the prompt list.
        on_resources_changed: the same for the resource list.
        on_resource_updated: called with the URI of a subscribed resource that changed.
        on_connection_lost: called with the error when the connection ends by itself (not by ``close()``).
        on_task_status: called with a :class:`~mcpsync.tasks.TaskHandle` whenever a task's status changes
            while ``call_tool`` waits for it.
    """

    on_log: Optional[Callable[[Dict[str, Any]], object]] = None
    on_tools_changed: Optional[Callable[[], object]] = None
    on_prompts_changed: Optional[Callable[[], object]] = None
    on_resources_changed: Optional[Callable[[], object]] = None
    on_resource_updated: Optional[Callable[[str], object]] = None
    on_connection_lost: Optional[Callable[[BaseException], object]] = None
    on_task_status: Optional[Callable[["TaskHandle"], object]] = None

    def __post_init__(self) -> None:
        for name in self.__dataclass_fields__:
            if getattr(self, name) is not None and not callable(getattr(self, name)):
                raise ConfigError("Callbacks.%s must be callable" % name)
