"""What the client's feature parts (2026-07-28 features, tasks) use of the client that owns them.

The feature parts see their client only through :class:`ClientHost`: a narrow interface of public-named,
documented members. :class:`~mcpsync.client.core_port.CorePort` implements it over a
:class:`~mcpsync.Client`; the feature parts import nothing above them (no import circle) and
reach no private member of the core.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Protocol

from ..session import RequestHandle, Session, Timeout
from ..transports.base import Transport
from ..types import ProgressEvent, Tool

__all__ = ["ClientHost"]


class ClientHost(Protocol):
    """The client as its feature parts see it. Thread-safe as the client is."""

    @property
    def name(self) -> str:
        """The server's name."""

    @property
    def era(self) -> Optional[str]:
        """``"legacy"`` or ``"modern"`` once negotiated, else None."""

    @property
    def protocol_version(self) -> Optional[str]:
        """The negotiated protocol revision."""

    @property
    def server_capabilities(self) -> Dict[str, Any]:
        """The server's capabilities."""

    @property
    def use_cache(self) -> bool:
        """Whether listings may be cached."""

    @property
    def auto_relisten(self) -> bool:
        """Whether a listen stream that ended is opened again."""

    @property
    def on_tools_changed(self) -> Optional[Callable[[], object]]:
        """The user's tools/list_changed callback."""

    @property
    def on_prompts_changed(self) -> Optional[Callable[[], object]]:
        """The user's prompts/list_changed callback."""

    @property
    def on_resources_changed(self) -> Optional[Callable[[], object]]:
        """The user's resources/list_changed callback."""

    @property
    def on_task_status(self) -> Optional[Callable[[Any], object]]:
        """The user's task status callback."""

    @property
    def follows_tools(self) -> bool:
        """True once ``Client.follow_tool_changes()`` was called."""

    @property
    def transport_kind(self) -> Optional[str]:
        """``"stdio"``, ``"http"`` or ``"sse"``."""

    @property
    def transport(self) -> Transport:
        """The open transport."""

    @property
    def session(self) -> Session:
        """The open session (raises ClientClosed when there is none)."""

    @property
    def connected(self) -> bool:
        """True while the session is open and the connection alive."""

    def stamp(self, params: Optional[Dict[str, Any]]) -> Dict[str, Any]:
        """``params`` with the 2026-07-28 ``_meta`` envelope added (a fresh dict). Does not block."""

    def call(
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
        """Send ``method`` through the request funnel and return its complete result (blocks up to ``timeout``)."""

    def request_once(self, method: str, params: Optional[Dict[str, Any]]) -> Any:
        """One request through the middleware chain (stamped in the modern era), without its completion: the
        raw result. Blocks until it is answered."""

    def request_async(
        self, method: str, params: Optional[Dict[str, Any]], *, before_send: Callable[[Any], None]
    ) -> RequestHandle[Any]:
        """Send ``method`` without waiting (no timeout); the interceptors' hooks see it. Does not block."""

    def authorize_tool(
        self, name: str, arguments: Dict[str, Any], lookup: Optional[Callable[[str], Optional[Tool]]] = None
    ) -> Dict[str, Any]:
        """Run the tool policy and approval handler: the arguments to send (raises ToolDenied). Blocks as long
        as the approval handler does."""

    def complete(
        self,
        method: str,
        params: Dict[str, Any],
        result: Any,
        timeout: Timeout,
        total: Optional[float],
        progress: Optional[Callable[[ProgressEvent], object]],
        progress_token: bool,
    ) -> Any:
        """Modern era: finish a result (``input_required`` rounds, tasks); blocks until it is final."""

    def route_notification(self, method: str, params: Dict[str, Any]) -> None:
        """Deliver a notification to caches, callbacks and the notification queue."""

    def fulfil_input_requests(self, requests: Dict[str, Any], method: str) -> Dict[str, Any]:
        """Answer each entry of ``inputRequests`` through the user's handlers."""

    # ------------------------------------------------------------------ for extensions that keep state per server

    @property
    def server_key(self) -> Any:
        """The server's identity (its URL, or its command and working directory; a JSON-able tuple): what a cache
        of this server's answers is keyed on. Does not block."""

    def credentials(self) -> Dict[str, Any]:
        """What this client presents to its server, as configured: ``bearer_token``, ``headers``, ``auth``
        (remote servers) and ``env`` (a stdio server's environment); keys not set are left out. Secret values:
        an extension digests them and never logs nor stores them. Does not block."""

    def reconnect(self) -> None:
        """Close the connection and open a new one, negotiating afresh (the kept era verdict and transport
        choice are forgotten). Calls in flight on the old connection fail with ConnectionClosed. Blocks up to
        ``connect_timeout``."""

    def rediscover(self) -> Any:
        """Negotiate again on the open connection (2026-07-28: ``server/discover``) and take on the outcome
        (server info, capabilities, instructions); every cached listing and the tool index are dropped.
        Returns the :class:`~mcpsync.client.negotiate.Negotiated`. Blocks up to ``probe_timeout``."""
