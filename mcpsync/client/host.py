"""What the client's feature parts (2026-07-28 features, tasks) use of the client that owns them.

The feature parts (:mod:`~mcpsync.client.modern`, :mod:`~mcpsync.client.tasks`) see their
:class:`~mcpsync.Client` only through a :class:`ClientHost`: a narrow set of public-named, documented members.
:class:`ClientHost` is the one place outside the client's own module that knows the client's private members;
the feature parts reach none of them, and import nothing above them (no import circle).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Literal, Optional

from ..session import DEFAULT, RequestHandle, Session, Timeout
from ..types import Tool

__all__ = ["ClientHost", "host_of"]


class ClientHost:
    """The client as its feature parts see it. Holds no state of its own beyond the client: thread-safe as the
    client is; cheap to build. Nothing here blocks unless its documentation says so."""

    __slots__ = ("client",)

    def __init__(self, client: Any) -> None:
        #: the :class:`mcpsync.Client` this host stands for
        self.client = client

    def __repr__(self) -> str:
        return "ClientHost(%r)" % (self.client,)

    # ------------------------------------------------------------------ state

    @property
    def name(self) -> str:
        """The server's name."""
        return str(self.client.name)

    @property
    def era(self) -> Optional[str]:
        """``"legacy"`` or ``"modern"`` once negotiated, else None."""
        era: Optional[str] = self.client.era
        return era

    @property
    def server_capabilities(self) -> Dict[str, Any]:
        """The server's capabilities."""
        caps: Dict[str, Any] = self.client.server_capabilities
        return caps

    @property
    def use_cache(self) -> bool:
        """Whether listings may be cached."""
        return bool(self.client.use_cache)

    @property
    def auto_relisten(self) -> bool:
        """Whether a listen stream that ended is opened again."""
        return bool(self.client.auto_relisten)

    @property
    def connected(self) -> bool:
        """True while the session is open and the connection alive."""
        return bool(self.client.connected)

    @property
    def session(self) -> Session:
        """The open session (raises ClientClosed when there is none)."""
        session: Session = self.client.session
        return session

    def follows(self, kind: Literal["tools", "prompts", "resources"]) -> bool:
        """True when the user wants ``notifications/<kind>/list_changed``: an ``on_<kind>_changed`` callback is
        set (or, for tools, ``Client.follow_tool_changes()`` was called)."""
        if kind == "tools" and self.client._follow_tools:  # noqa: SLF001 - this class is the client's own view
            return True
        return bool(getattr(self.client, "on_%s_changed" % kind))

    @property
    def on_task_status(self) -> Optional[Callable[[Any], object]]:
        """The user's task status callback."""
        callback: Optional[Callable[[Any], object]] = self.client.on_task_status
        return callback

    # ------------------------------------------------------------------ requests

    def stamp(self, params: Optional[Dict[str, Any]]) -> Dict[str, Any]:
        """``params`` with the 2026-07-28 ``_meta`` envelope added (a fresh dict). Does not block."""
        stamped: Dict[str, Any] = self.client._stamp(params)  # noqa: SLF001
        return stamped

    def call(self, method: str, params: Optional[Dict[str, Any]] = None, *, timeout: Timeout = DEFAULT) -> Any:
        """Send ``method`` through the request funnel and return its complete result (blocks up to ``timeout``)."""
        return self.client._call(method, params, timeout=timeout)  # noqa: SLF001

    def request_once(self, method: str, params: Optional[Dict[str, Any]]) -> Any:
        """One request through the middleware chain (stamped in the modern era), without its completion: the
        raw result. Blocks until it is answered."""
        return self.client._request_once(method, params)  # noqa: SLF001

    def request_async(
        self, method: str, params: Optional[Dict[str, Any]], *, before_send: Callable[[Any], None]
    ) -> RequestHandle[Any]:
        """Send ``method`` without waiting (no timeout); the interceptors' hooks see it. Does not block."""
        session = self.session

        def send(sent: Optional[Dict[str, Any]], before: Callable[[Any], None]) -> RequestHandle[Any]:
            return session.request_async(method, sent, timeout=None, before_send=before)

        pipeline = self.client._pipeline  # noqa: SLF001 - interceptors and tracing see the request too
        if pipeline is None:
            return send(params, before_send)
        handle: RequestHandle[Any] = pipeline.request_async(self.client, method, params, send, before_send)
        return handle

    def authorize_tool(
        self, name: str, arguments: Dict[str, Any], lookup: Optional[Callable[[str], Optional[Tool]]] = None
    ) -> Dict[str, Any]:
        """Run the tool policy and approval handler: the arguments to send (raises ToolDenied). Blocks as long
        as the approval handler does."""
        authorized: Dict[str, Any] = self.client._authorize_tool(name, arguments, lookup)  # noqa: SLF001
        return authorized

    def complete(self, method: str, params: Dict[str, Any], result: Any) -> Any:
        """Modern era: finish the ``result`` of ``method`` sent with ``params`` (``input_required`` rounds, tasks),
        with no timeout and no progress; blocks until it is final."""
        return self.client._complete(method, params, result, None, None, None, False)  # noqa: SLF001

    def route_notification(self, method: str, params: Dict[str, Any]) -> None:
        """Deliver a notification to caches, callbacks and the notification queue."""
        self.client._route_notification(method, params)  # noqa: SLF001

    def fulfil_input_requests(self, requests: Dict[str, Any], method: str) -> Dict[str, Any]:
        """Answer each entry of ``inputRequests`` through the user's handlers."""
        answers: Dict[str, Any] = self.client.fulfil_input_requests(requests, method)
        return answers


    # ------------------------------------------------------------------ for extensions that keep state per server

    @property
    def server_key(self) -> Any:
        """The server's identity (its URL, or its command and working directory; a JSON-able tuple): what a cache
        of this server's answers is keyed on. Does not block."""
        return self.client._cache_key()  # noqa: SLF001 - this class is the client's own view

    def credentials(self) -> Dict[str, Any]:
        """What this client presents to its server, as configured: ``bearer_token``, ``headers``, ``auth``
        (remote servers) and ``env`` (a stdio server's environment); keys not set are left out. Secret values:
        an extension digests them and never logs nor stores them. Does not block."""
        remote = self.client._remote_options  # noqa: SLF001
        out = {k: remote[k] for k in ("bearer_token", "headers", "auth") if remote.get(k) is not None}
        env = self.client._stdio_options.get("env")  # noqa: SLF001
        if env:
            out["env"] = env
        return out

    def reconnect(self) -> None:
        """Close the connection and open a new one, negotiating afresh (the kept era verdict and transport
        choice are forgotten). Calls in flight on the old connection fail with ConnectionClosed. Blocks up to
        ``connect_timeout``."""
        self.client._reconnect_cold()  # noqa: SLF001

    def rediscover(self) -> Any:
        """Negotiate again on the open connection (2026-07-28: ``server/discover``) and take on the outcome
        (server info, capabilities, instructions); every cached listing and the tool index are dropped.
        Returns the :class:`~mcpsync.client.negotiate.Negotiated`. Blocks up to ``probe_timeout``."""
        client = self.client
        agreed = client._negotiator().negotiate(client.session)  # noqa: SLF001
        client._agreed(agreed)  # noqa: SLF001
        client.clear_cache()
        with client._tools_lock:  # noqa: SLF001
            client._tools_by_name = {}  # noqa: SLF001
        return agreed


def host_of(client: Any) -> ClientHost:
    """``client`` (a :class:`mcpsync.Client`) as its feature parts see it; a host is returned as it is."""
    return client if isinstance(client, ClientHost) else ClientHost(client)
