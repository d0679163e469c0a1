"""OpenTelemetry tracing: one CLIENT span per request, following the semantic conventions for MCP.

Active when ``opentelemetry-api`` is installed (``pip install 'mcpsync[otel]'``) and the application
has set a tracer provider (``trace.set_tracer_provider``) before the client was created, or when
``tracing=True`` is given; ``tracing=False`` turns it off. Without the package nothing is imported
and nothing runs: the check is one ``sys.modules`` lookup per client (a library that merely imports
the OpenTelemetry API, with no provider set, does not turn tracing on).

Each request becomes a span named ``"{mcp.method.name} {target}"`` (``tools/call echo``,
``prompts/get greet``; just the method when there is no low-cardinality target), of kind CLIENT,
with ``mcp.method.name``, ``mcp.protocol.version``, ``mcp.session.id`` (HTTP sessions),
``jsonrpc.request.id``, ``gen_ai.tool.name`` and ``gen_ai.operation.name=execute_tool`` for tool
calls, ``gen_ai.prompt.name``, ``mcp.resource.uri``, ``network.transport`` (``pipe`` for stdio,
``tcp`` for HTTP), and on failure ``error.type`` (the JSON-RPC code, ``timeout``, ``tool_error`` for a
tool result with ``isError``, or the exception's class) with the span status ERROR. The span's
context is injected into the request's ``params._meta`` (``traceparent``, ``tracestate``, and
``baggage`` when set) with the globally configured propagator.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Dict, Optional

from ..__version__ import __version__
from ..errors import ConfigError, RemoteError, RequestTimeout
from .interceptors import Interceptor, RequestInfo

__all__ = ["OpenTelemetryTracing"]

_TARGETS = MappingProxyType({"tools/call": "gen_ai.tool.name", "prompts/get": "gen_ai.prompt.name"})
_URI_METHODS = ("resources/read", "resources/subscribe", "resources/unsubscribe")


class OpenTelemetryTracing(Interceptor):
    """The tracing interceptor (built in; the client puts it first in the chain).

    Args:
        tracer_provider: the provider to use (default: the global one set by the application).
    """

    def __init__(self, tracer_provider: Any = None) -> None:
        try:
            from opentelemetry import propagate, trace
        except ImportError as exc:
            raise ConfigError("tracing=True needs opentelemetry-api: pip install 'mcpsync[otel]'") from exc
        self._trace = trace
        self._propagate = propagate
        self._tracer = trace.get_tracer("mcpsync", __version__, tracer_provider=tracer_provider)
        self._client_kind = trace.SpanKind.CLIENT

    def on_request(self, info: RequestInfo) -> None:
        params = info.params if isinstance(info.params, dict) else {}
        attributes: Dict[str, Any] = {"mcp.method.name": info.method}
        name = info.method
        key = _TARGETS.get(info.method)
        target = params.get("name") if key else None
        if isinstance(target, str) and target:
            name = "%s %s" % (info.method, target)
            attributes[key] = target  # type: ignore[index]
            if info.method == "tools/call":
                attributes["gen_ai.operation.name"] = "execute_tool"
        if info.method in _URI_METHODS and isinstance(params.get("uri"), str):
            attributes["mcp.resource.uri"] = params["uri"]
        if info.protocol_version:
            attributes["mcp.protocol.version"] = info.protocol_version
        if info.transport:
            attributes["network.transport"] = "pipe" if info.transport == "stdio" else "tcp"
        if info.session_id:
            attributes["mcp.session.id"] = info.session_id
        span = self._tracer.start_span(name, kind=self._client_kind, attributes=attributes)
        info.state[self] = span
        carrier: Dict[str, str] = {}
        self._propagate.inject(carrier, context=self._trace.set_span_in_context(span))
        if carrier:
            new = dict(params)
            meta = new.get("_meta")
            meta = dict(meta) if isinstance(meta, dict) else {}
            meta.update(carrier)
            new["_meta"] = meta
            info.params = new

    def _finish(self, info: RequestInfo) -> Optional[Any]:
        span = info.state.pop(self, None)
        if span is not None and info.request_id is not None:
            span.set_attribute("jsonrpc.request.id", str(info.request_id))
        if span is not None and info.session_id:
            span.set_attribute("mcp.session.id", info.session_id)
        return span

    def on_result(self, info: RequestInfo, result: Dict[str, Any]) -> Dict[str, Any]:
        span = self._finish(info)
        if span is None:
            return result
        if info.method == "tools/call" and isinstance(result, dict) and result.get("isError") is True:
            span.set_attribute("error.type", "tool_error")
            span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, _tool_error_text(result)))
        span.end()
        return result

    def on_error(self, info: RequestInfo, error: BaseException) -> None:
        span = self._finish(info)
        if span is None:
            return
        if isinstance(error, RemoteError):
            error_type = str(error.code)
            span.set_attribute("rpc.response.status_code", error_type)
            description = error.message
        elif isinstance(error, RequestTimeout):
            error_type, description = "timeout", str(error)
        else:
            error_type = "%s.%s" % (type(error).__module__, type(error).__qualname__)
            description = getattr(error, "message", None) or str(error)
        span.set_attribute("error.type", error_type)
        span.record_exception(error)
        span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, description))
        span.end()


def _tool_error_text(result: Dict[str, Any]) -> str:
    content = result.get("content")
    if isinstance(content, list):
        for block in content:
            text = block.get("text") if isinstance(block, dict) and block.get("type") == "text" else None
            if isinstance(text, str):
                return text[:200]
    return "tool reported isError"
