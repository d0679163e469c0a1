"""The client's production controls in one place: tool policy and approval, interceptors, tracing,
retries and static trace context. :class:`~mcpsync.Client` holds one
:class:`Pipeline` (or None when nothing is configured, so the hot path pays one ``is None`` test) and
calls it at three narrow points: :meth:`Pipeline.authorize_tool` (the gate stage of the chain: tool policy and
approval, as :class:`~mcpsync.client.policy_gate.PolicyGate` and :class:`~mcpsync.client.approval_gate.ApprovalGate`
middleware) before a tool call is built, :meth:`Pipeline.call` around each request of the funnel (retry, trace
context, tracing, the ``middleware=`` entries), :meth:`Pipeline.filter_tools` on listings.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Protocol, Sequence, Tuple, TypeVar, Union

from ..errors import ConfigError
from ..session import RequestHandle, Session
from ..wire import protocol as P
from ..transports.base import Transport
from ..types import Tool
from . import interceptors as _chain
from .interceptors import Interceptor
from .middleware import Middleware, Next, RequestInfo, own_params, run_chain
from .approval_gate import LOOKUP, ApprovalGate
from .policy import ApprovalHandler, ToolPolicy
from .policy_gate import PolicyGate
from .retry import Retry

__all__ = ["Pipeline", "PipelineHost", "RetryMiddleware", "SendFn", "TraceContext", "TracingOption"]

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

#: ``send(params, on_sent)``: send one request with ``params``; ``on_sent(request_id)`` runs once the id is known.
SendFn = Callable[[Optional[Dict[str, Any]], Callable[[Any], None]], Any]
#: ``"auto"`` (on when the application set an OpenTelemetry tracer provider), True, False, or a configured tracer.
TracingOption = Union[bool, str, Interceptor]


class PipelineHost(Protocol):
    """What the pipeline reads of its client."""

    @property
    def name(self) -> str: ...

    @property
    def era(self) -> Optional[str]: ...

    @property
    def protocol_version(self) -> Optional[str]: ...

    @property
    def transport_kind(self) -> Optional[str]: ...

    @property
    def connected(self) -> bool: ...

    @property
    def transport(self) -> Transport: ...

    _tools_by_name: Dict[str, Tool]  # the last listing (name -> Tool)


class Pipeline:
    """Policy, approval, interceptors, tracing, retry and trace context of one client. Thread-safe
    (immutable after construction)."""

    def __init__(
        self,
        *,
        policy: Optional[ToolPolicy] = None,
        approval_handler: Optional[ApprovalHandler] = None,
        interceptors: Sequence[Middleware] = (),
        retry: Optional[Retry] = None,
        trace_context: Optional[Mapping[str, str]] = None,
    ) -> None:
        self.policy = policy
        self.approval_handler = approval_handler
        #: the gate stage, the head of the chain for a tool call: the policy, then the approval handler
        gates: List[Middleware] = []
        if policy is not None:
            gates.append(PolicyGate(policy))
        if approval_handler is not None:
            gates.append(ApprovalGate(approval_handler))
        self.gates: Tuple[Middleware, ...] = tuple(gates)
        #: the ``middleware=[...]`` entries (Interceptor or Middleware objects), the tracer first when tracing is on
        self.interceptors: Tuple[Middleware, ...] = tuple(interceptors)
        #: the Interceptor entries: all a non-blocking request runs (its hooks, not ``handle``)
        self.observers: Tuple[Interceptor, ...] = tuple(i for i in self.interceptors if isinstance(i, Interceptor))
        self.retry = retry
        # the client's own dict (client.trace_context): later changes to it apply to later requests
        self.trace_context: Dict[str, str] = (
            trace_context if isinstance(trace_context, dict) else dict(trace_context or {})
        )

    @classmethod
    def build(
        cls,
        *,
        allowed_tools: Optional[Iterable[str]] = None,
        disabled_tools: Optional[Iterable[str]] = None,
        approval_handler: Optional[ApprovalHandler] = None,
        interceptors: Optional[Iterable[Middleware]] = None,
        retry: Optional[Retry] = None,
        tracing: TracingOption = "auto",
        trace_context: Optional[Mapping[str, str]] = None,
    ) -> Optional["Pipeline"]:
        """The pipeline for a client's options, or None when none of them asks for anything."""
        policy = ToolPolicy.of(allowed_tools, disabled_tools)
        items: List[Middleware] = list(interceptors or ())
        for item in items:
            if not isinstance(item, Middleware):
                raise ConfigError(
                    "interceptors must be mcpsync.middleware.Interceptor or Middleware instances, got %r" % (item,)
                )
        if approval_handler is not None and not callable(approval_handler):
            raise ConfigError("approval_handler must be callable")
        if retry is not None and not isinstance(retry, Retry):
            raise ConfigError("retry must be an mcpsync.middleware.Retry")
        if trace_context is not None and not (
            isinstance(trace_context, Mapping)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in trace_context.items())
        ):
            raise ConfigError("trace_context must map strings to strings")
        tracer = _tracer(tracing)
        if tracer is not None:
            items.insert(0, tracer)  # outermost: its span covers the other interceptors
        if policy is None and approval_handler is None and not items and retry is None and not trace_context:
            return None
        return cls(
            policy=policy,
            approval_handler=approval_handler,
            interceptors=items,
            retry=retry,
            trace_context=trace_context,
        )

    # ------------------------------------------------------------------ tools

    def filter_tools(self, tools: List[Tool]) -> List[Tool]:
        """The listed tools the policy allows."""
        return self.policy.filter(tools) if self.policy is not None else tools

    def authorize_tool(
        self,
        host: PipelineHost,
        name: str,
        arguments: Dict[str, Any],
        lookup: Optional[Callable[[str], Optional[Tool]]] = None,
    ) -> Dict[str, Any]:
        """Run the call through the gate stage of the chain (:attr:`gates`: the policy, then the approval
        handler); the arguments to send. Runs once per call, before the call is built, so a refused call
        never reaches the later stages (retry, tracing, interceptors) nor the wire.

        ``lookup(name)`` finds the tool's definition for the handler (default: the last listing).
        Blocks as long as the approval handler does.

        Raises:
            ToolDenied: the policy or the handler refused (nothing is sent).
        """
        if not self.gates:
            return arguments
        info = RequestInfo(
            host.name,
            "tools/call",
            {"name": name, "arguments": dict(arguments)},
            era=host.era,
            protocol_version=host.protocol_version,
            transport=host.transport_kind,
        )
        info.state[LOOKUP] = lookup if lookup is not None else host._tools_by_name.get  # noqa: SLF001

        def built(request: RequestInfo) -> Dict[str, Any]:
            sent = (request.params or {}).get("arguments")
            return dict(sent) if isinstance(sent, dict) else {}

        result: Dict[str, Any] = run_chain(self.gates, info, built)
        return result

    # ------------------------------------------------------------------ requests

    def _info(self, host: PipelineHost, method: str, params: Optional[Dict[str, Any]], attempt: int) -> RequestInfo:
        """The request as the chain sees it: its own copy of ``params`` and the trace context in its ``_meta``
        (for the non-blocking requests, which run no chain)."""
        params = own_params(method, params)
        if self.trace_context:
            params = with_trace_context(params, self.trace_context)
        session_id = None
        if host.transport_kind == "http":  # only Streamable HTTP has sessions
            try:
                session_id = host.transport.session_headers().get("Mcp-Session-Id")
            except Exception:  # noqa: BLE001 - no session: no id
                pass
        return RequestInfo(
            host.name,
            method,
            params,
            era=host.era,
            protocol_version=host.protocol_version,
            transport=host.transport_kind,
            session_id=session_id,
            attempt=attempt,
        )

    def _on_sent(self, host: PipelineHost, info: RequestInfo) -> Callable[[Any], None]:
        def sent(request_id: Any) -> None:
            info.request_id = request_id
            if info.headers:
                host.transport.set_request_headers(request_id, info.headers)

        return sent

    def _forget(self, host: PipelineHost, info: RequestInfo) -> None:
        if info.headers and info.request_id is not None:
            try:
                host.transport.set_request_headers(info.request_id, None)
            except Exception:  # noqa: BLE001 - the client may be closing
                pass

    def chain_for(self, host: PipelineHost, method: str, params: Optional[Dict[str, Any]]) -> List[Middleware]:
        """The middleware a blocking request runs through, outermost first (the order of
        :mod:`mcpsync.client.middleware`): retry (when it allows ``method``), trace context, interceptors."""
        items: List[Middleware] = []
        retry = self.retry
        if retry is not None:
            tool = None
            if method == "tools/call" and isinstance(params, dict) and isinstance(params.get("name"), str):
                tool = host._tools_by_name.get(params["name"])  # noqa: SLF001
            if retry.allows(method, tool):
                items.append(RetryMiddleware(retry, lambda: host.connected))
        if self.trace_context:
            items.append(TraceContext(self.trace_context))
        items.extend(self.interceptors)
        return items

    def call(self, host: PipelineHost, method: str, params: Optional[Dict[str, Any]], send: SendFn) -> Any:
        """Run one request through the chain (:meth:`chain_for`); returns the raw result."""
        info = RequestInfo(
            host.name,
            method,
            own_params(method, params),
            era=host.era,
            protocol_version=host.protocol_version,
            transport=host.transport_kind,
            session_id=self._session_id(host),
        )

        def terminal(request: RequestInfo) -> Any:
            try:
                return send(request.params, self._on_sent(host, request))
            finally:
                self._forget(host, request)

        return run_chain(self.chain_for(host, method, params), info, terminal)

    @staticmethod
    def _session_id(host: PipelineHost) -> Optional[str]:
        if host.transport_kind != "http":  # only Streamable HTTP has sessions
            return None
        try:
            value = host.transport.session_headers().get("Mcp-Session-Id")
        except Exception:  # noqa: BLE001 - no session: no id
            return None
        return value if isinstance(value, str) else None

    def handshake(
        self, host: PipelineHost, session: Session, method: str, params: Dict[str, Any], timeout: Optional[float]
    ) -> Any:
        """An opening request (``initialize``, ``server/discover``) through the chain; never retried."""
        info = RequestInfo(host.name, method, own_params(method, params), attempt=1)
        info.transport = session.transport.kind
        if method == "initialize":
            version = params.get("protocolVersion")
        else:
            meta = params.get("_meta")
            version = meta.get(P.META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
        info.protocol_version = version if isinstance(version, str) else None
        transport = session.transport

        def terminal(request: RequestInfo) -> Any:
            def sent(request_id: Any) -> None:
                request.request_id = request_id
                if request.headers:
                    transport.set_request_headers(request_id, request.headers)

            try:
                return session.request(method, request.params, timeout=timeout, before_send=sent)
            finally:
                if request.headers and request.request_id is not None:
                    transport.set_request_headers(request.request_id, None)

        items: List[Middleware] = [TraceContext(self.trace_context)] if self.trace_context else []
        items.extend(self.interceptors)
        return run_chain(items, info, terminal)

    def request_async(
        self,
        host: PipelineHost,
        method: str,
        params: Optional[Dict[str, Any]],
        send: Callable[[Optional[Dict[str, Any]], Callable[[Any], None]], "RequestHandle[_T]"],
        before_send: Optional[Callable[[Any], None]] = None,
    ) -> "RequestHandle[_T]":
        """A non-blocking request through the chain (no retries): ``on_request`` now, on this thread, then
        ``send(params, before_send)`` sends the params the interceptors left and returns the handle;
        ``on_result`` / ``on_error`` run on the dispatch thread when it ends. The ``before_send`` given to
        ``send`` records the request id for the chain, then runs this one's. Blocks only for ``send``."""
        info = self._info(host, method, params, 1)
        entered = _chain.enter(self.observers, info)
        sent = self._on_sent(host, info)
        before = sent
        if before_send is not None:

            def before(request_id: Any) -> None:
                sent(request_id)
                before_send(request_id)

        try:
            handle = send(info.params, before)
        except BaseException as exc:
            self._forget(host, info)
            _chain.fail(entered, info, exc)
            raise
        self._watch(host, info, entered, handle)
        return handle

    def _watch(
        self, host: PipelineHost, info: RequestInfo, entered: List[Interceptor], handle: "RequestHandle[Any]"
    ) -> None:
        """Run ``on_result`` / ``on_error`` on the dispatch thread when ``handle``'s request ends."""
        if not entered and not info.headers:
            return

        def done(h: "RequestHandle[Any]") -> None:
            self._forget(host, info)
            try:
                raw = h._pending.future.result(0)  # noqa: SLF001 - the raw result, before the client's transform
            except BaseException as exc:  # noqa: BLE001 - reported to the interceptors
                _chain.fail(entered, info, exc)
                return
            try:
                _chain.succeed(entered, info, raw)
            except Exception:  # noqa: BLE001 - observers only here; nothing to raise to
                logger.warning("[%s] interceptor failed in on_result of an async request", info.server, exc_info=True)

        handle.add_done_callback(done)


def with_trace_context(params: Optional[Dict[str, Any]], context: Mapping[str, str]) -> Optional[Dict[str, Any]]:
    """``params`` (owned by the caller) with ``context``'s entries in its ``_meta`` where not set already."""
    if not context:
        return params
    params = params if params is not None else {}
    meta = params.get("_meta")
    meta = dict(meta) if isinstance(meta, dict) else {}
    for key, value in context.items():
        meta.setdefault(key, value)
    params["_meta"] = meta
    return params


class TraceContext(Middleware):
    """Step 2 of the chain: static trace context (``trace_context=``) into each request's ``_meta``; an entry the
    request's own ``_meta`` has already wins. Reads the client's live dict (later changes apply)."""

    def __init__(self, context: Mapping[str, str]) -> None:
        self.context = context

    def handle(self, request: RequestInfo, next: Next) -> Any:  # noqa: A002
        request.params = with_trace_context(request.params, self.context)
        return next(request)


class RetryMiddleware(Middleware):
    """Step 1 of the chain: the rest of the chain once per attempt, each with a fresh copy of the request,
    as long as ``retry`` allows and the client is still connected (``connected()``). Blocks for the back-off
    delays between attempts."""

    def __init__(self, retry: Retry, connected: Callable[[], bool]) -> None:
        self.retry = retry
        self.connected = connected

    def handle(self, request: RequestInfo, next: Next) -> Any:  # noqa: A002
        retry = self.retry
        attempt = request.attempt
        while True:
            try:
                return next(request.fresh(attempt))
            except Exception as exc:  # noqa: BLE001 - re-raised unless the retry policy says otherwise
                if not self.connected():
                    raise
                retry = retry.increment(request.method, exc)  # raises exc when it may not be retried
                retry.sleep(retry.last_delay)
                attempt += 1


def _tracer(tracing: TracingOption) -> Optional[Interceptor]:
    if tracing is False or tracing is None:
        return None
    if isinstance(tracing, Interceptor):
        return tracing
    if tracing == "auto":
        from .otel import otel_configured

        if not otel_configured():
            return None
    elif tracing is not True:
        raise ConfigError("tracing must be 'auto', True, False or an OpenTelemetryTracing")
    from .tracing import OpenTelemetryTracing

    return OpenTelemetryTracing()
