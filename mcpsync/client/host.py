"""What the client's feature parts (2026-07-28 features, tasks) use of the client that owns them.

:class:`~mcpsync.client.core.ClientCore` builds those parts and hands itself to them; they see it
only through :class:`ClientHost`, so they import nothing above them (no import circle).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Protocol

from ..session import Session, Timeout
from ..transports.base import Transport
from ..types import ProgressEvent, Tool

if TYPE_CHECKING:
    from .pipeline import Pipeline


__all__ = ["ClientHost"]


class ClientHost(Protocol):
    """The client as its feature parts see it (implemented by :class:`~mcpsync.client.core.ClientCore`)."""

    @property
    def name(self) -> str: ...

    @property
    def era(self) -> Optional[str]: ...

    @property
    def server_capabilities(self) -> Dict[str, Any]: ...

    @property
    def use_cache(self) -> bool: ...

    @property
    def auto_relisten(self) -> bool: ...

    @property
    def on_tools_changed(self) -> Optional[Callable[[], object]]: ...

    @property
    def on_prompts_changed(self) -> Optional[Callable[[], object]]: ...

    @property
    def on_resources_changed(self) -> Optional[Callable[[], object]]: ...

    @property
    def on_task_status(self) -> Optional[Callable[[Any], object]]: ...

    #: The production controls (interceptors, tracing, retries, policy), or None when none is configured.
    _pipeline: Optional["Pipeline"]
    _tools_by_name: Dict[str, Tool]  # the last listing (name -> Tool)
    _follow_tools: bool  # Client.follow_tool_changes() was called

    @property
    def protocol_version(self) -> Optional[str]: ...

    @property
    def transport_kind(self) -> Optional[str]: ...

    @property
    def transport(self) -> Transport: ...

    @property
    def session(self) -> Session:
        """The open session (raises ClientClosed when there is none)."""

    @property
    def connected(self) -> bool:
        """True while the session is open and the connection alive."""

    def _stamp(self, params: Optional[Dict[str, Any]]) -> Dict[str, Any]:
        """``params`` with the 2026-07-28 ``_meta`` envelope added (a fresh dict)."""

    def _call(
        self,
        method: str,
        params: Optional[Dict[str, Any]] = None,
        *,
        timeout: Timeout = ...,
        max_total_timeout: Any = ...,
        progress: Optional[Callable[[ProgressEvent], object]] = None,
        progress_token: bool = False,
        owned_params: bool = False,
    ) -> Any:
        """Send ``method`` through the request funnel and return its complete result."""

    def _request_once(self, method: str, params: Optional[Dict[str, Any]]) -> Any:
        """One request through the pipeline (stamped in the modern era), without its completion: the raw result."""

    def _authorize_tool(
        self, name: str, arguments: Dict[str, Any], lookup: Optional[Callable[[str], Optional[Tool]]] = None
    ) -> Dict[str, Any]:
        """Apply the tool policy and approval handler: the arguments to send (raises ToolDenied)."""

    def _complete(
        self,
        method: str,
        params: Dict[str, Any],
        result: Any,
        timeout: Timeout,
        total: Optional[float],
        progress: Optional[Callable[[ProgressEvent], object]],
        progress_token: bool,
    ) -> Any:
        """Modern era: finish a result (``input_required`` rounds, tasks)."""

    def _route_notification(self, method: str, params: Dict[str, Any]) -> None:
        """Deliver a notification to caches, callbacks and the notification queue."""

    def fulfil_input_requests(self, requests: Dict[str, Any], method: str) -> Dict[str, Any]:
        """Answer each entry of ``inputRequests`` through the user's handlers."""
