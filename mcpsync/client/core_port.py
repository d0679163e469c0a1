"""The client core as its feature parts see it: :class:`CorePort` implements the narrow
:class:`~mcpsync.client.host.ClientHost` over a :class:`~mcpsync.Client`.

This adapter is the one place outside the core that knows the core's private members; the feature parts
(:mod:`~mcpsync.client.modern`, :mod:`~mcpsync.client.tasks`) use only its public-named ones. Holds no state of
its own beyond the core: thread-safe as the core is; cheap to build.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional

from ..session import DEFAULT, RequestHandle, Session, Timeout
from ..transports.base import Transport
from ..types import ProgressEvent, Tool

__all__ = ["CorePort", "port_of"]


class CorePort:
    """:class:`~mcpsync.client.host.ClientHost` over a client core (see the module documentation)."""

    __slots__ = ("core",)

    def __init__(self, core: Any) -> None:
        #: the :class:`mcpsync.Client` this port serves
        self.core = core

    # ------------------------------------------------------------------ state

    @property
    def name(self) -> str:
        return str(self.core.name)

    @property
    def era(self) -> Optional[str]:
        era: Optional[str] = self.core.era
        return era

    @property
    def protocol_version(self) -> Optional[str]:
        version: Optional[str] = self.core.protocol_version
        return version

    @property
    def server_capabilities(self) -> Dict[str, Any]:
        caps: Dict[str, Any] = self.core.server_capabilities
        return caps

    @property
    def use_cache(self) -> bool:
        return bool(self.core.use_cache)

    @property
    def auto_relisten(self) -> bool:
        return bool(self.core.auto_relisten)

    @property
    def on_tools_changed(self) -> Optional[Callable[[], object]]:
        callback: Optional[Callable[[], object]] = self.core.on_tools_changed
        return callback

    @property
    def on_prompts_changed(self) -> Optional[Callable[[], object]]:
        callback: Optional[Callable[[], object]] = self.core.on_prompts_changed
        return callback

    @property
    def on_resources_changed(self) -> Optional[Callable[[], object]]:
        callback: Optional[Callable[[], object]] = self.core.on_resources_changed
        return callback

    @property
    def on_task_status(self) -> Optional[Callable[[Any], object]]:
        callback: Optional[Callable[[Any], object]] = self.core.on_task_status
        return callback

    @property
    def follows_tools(self) -> bool:
        return bool(self.core._follow_tools)  # noqa: SLF001 - this adapter is the core's own

    @property
    def transport_kind(self) -> Optional[str]:
        kind: Optional[str] = self.core.transport_kind
        return kind

    @property
    def transport(self) -> Transport:
        transport: Transport = self.core.transport
        return transport

    @property
    def session(self) -> Session:
        session: Session = self.core.session
        return session

    @property
    def connected(self) -> bool:
        return bool(self.core.connected)

    # ------------------------------------------------------------------ requests

    def stamp(self, params: Optional[Dict[str, Any]]) -> Dict[str, Any]:
        stamped: Dict[str, Any] = self.core._stamp(params)  # noqa: SLF001
        return stamped

    def call(
        self,
        method: str,
        params: Optional[Dict[str, Any]] = None,
        *,
        timeout: Timeout = DEFAULT,
        max_total_timeout: Any = DEFAULT,
        progress: Optional[Callable[[ProgressEvent], object]] = None,
        progress_token: bool = False,
        owned_params: bool = False,
    ) -> Any:
        return self.core._call(  # noqa: SLF001
            method,
            params,
            timeout=timeout,
            max_total_timeout=max_total_timeout,
            progress=progress,
            progress_token=progress_token,
            owned_params=owned_params,
        )

    def request_once(self, method: str, params: Optional[Dict[str, Any]]) -> Any:
        return self.core._request_once(method, params)  # noqa: SLF001

    def request_async(
        self, method: str, params: Optional[Dict[str, Any]], *, before_send: Callable[[Any], None]
    ) -> RequestHandle[Any]:
        pipeline = self.core._pipeline  # noqa: SLF001 - interceptors and tracing see the request too
        handle: RequestHandle[Any]
        if pipeline is None:
            handle = self.session.request_async(method, params, timeout=None, before_send=before_send)
        else:
            handle = pipeline.request_async(
                self.core, self.session, method, params, before_send=before_send, timeout=None
            )
        return handle

    def authorize_tool(
        self, name: str, arguments: Dict[str, Any], lookup: Optional[Callable[[str], Optional[Tool]]] = None
    ) -> Dict[str, Any]:
        authorized: Dict[str, Any] = self.core._authorize_tool(name, arguments, lookup)  # noqa: SLF001
        return authorized

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
        return self.core._complete(method, params, result, timeout, total, progress, progress_token)  # noqa: SLF001

    def route_notification(self, method: str, params: Dict[str, Any]) -> None:
        self.core._route_notification(method, params)  # noqa: SLF001

    def fulfil_input_requests(self, requests: Dict[str, Any], method: str) -> Dict[str, Any]:
        answers: Dict[str, Any] = self.core.fulfil_input_requests(requests, method)
        return answers

    # ------------------------------------------------------------------ for extensions

    @property
    def server_key(self) -> Any:
        return self.core._cache_key()  # noqa: SLF001

    def credentials(self) -> Dict[str, Any]:
        remote = self.core._remote_options  # noqa: SLF001
        out = {k: remote[k] for k in ("bearer_token", "headers", "auth") if remote.get(k) is not None}
        env = self.core._stdio_options.get("env")  # noqa: SLF001
        if env:
            out["env"] = env
        return out

    def reconnect(self) -> None:
        self.core._reconnect_cold()  # noqa: SLF001

    def rediscover(self) -> Any:
        core = self.core
        agreed = core._negotiator().negotiate(core.session)  # noqa: SLF001
        core._agreed(agreed)  # noqa: SLF001
        core.clear_cache()
        with core._tools_lock:  # noqa: SLF001
            core._tools_by_name = {}  # noqa: SLF001
        return agreed

    def __repr__(self) -> str:
        return "CorePort(%r)" % (self.core,)


def port_of(client: Any) -> CorePort:
    """``client`` (a :class:`mcpsync.Client`) as a :class:`CorePort`; a port is returned as it is."""
    return client if isinstance(client, CorePort) else CorePort(client)
