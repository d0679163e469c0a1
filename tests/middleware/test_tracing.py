"""OpenTelemetry spans per the MCP semantic conventions, recorded with the SDK's in-memory exporter,
against the real example server; trace context injected into the request ``_meta``."""

from __future__ import annotations

import subprocess
import sys
from typing import Any, Dict, Iterator, List

import pytest
from mcpsync.client import ClientOptions

pytest.importorskip("opentelemetry.sdk.trace", reason="opentelemetry-sdk (test extra) is not installed")

from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import SpanKind, StatusCode  # noqa: E402

import mcpsync  # noqa: E402
from mcpsync.middleware import Interceptor, OpenTelemetryTracing, RequestInfo  # noqa: E402
from tests.conftest import server_cmd  # noqa: E402


@pytest.fixture()
def exporter() -> Iterator[InMemorySpanExporter]:
    exp = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exp))
    yield exp
    provider.shutdown()


def tracing(exporter: InMemorySpanExporter) -> OpenTelemetryTracing:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return OpenTelemetryTracing(tracer_provider=provider)


class MetaSpy(Interceptor):
    """Records the _meta each request leaves with (it runs inside the tracing interceptor)."""

    def __init__(self) -> None:
        self.metas: List[Dict[str, Any]] = []

    def on_request(self, info: RequestInfo) -> None:
        meta = (info.params or {}).get("_meta") or {}
        self.metas.append(dict(meta))


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_spans_follow_the_mcp_semantic_conventions(exporter: InMemorySpanExporter, era: str) -> None:
    spy = MetaSpy()
    with mcpsync.connect(
        server_cmd("--era", era), options=ClientOptions(tracing=tracing(exporter)), middleware=[spy]
    ) as c:
        c.list_tools()
        assert c.call_tool("echo", {"message": "hi"}).text == "hi"
        assert c.call_tool("fail", {"message": "boom"}).is_error
        with pytest.raises(mcpsync.RemoteError) as err:
            c.get_prompt("no-such-prompt")
        c.read_resource("example://hello")
        version = c.protocol_version
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert {"tools/list", "tools/call echo", "tools/call fail", "prompts/get no-such-prompt", "resources/read"} <= set(
        spans
    )
    opening = spans["initialize" if era == "legacy" else "server/discover"]  # the handshake is traced too
    assert (opening.attributes or {})["mcp.protocol.version"] and opening.kind is SpanKind.CLIENT
    echo = spans["tools/call echo"]
    assert echo.kind is SpanKind.CLIENT
    a = echo.attributes or {}
    assert a["mcp.method.name"] == "tools/call" and a["gen_ai.tool.name"] == "echo"
    assert a["gen_ai.operation.name"] == "execute_tool"
    assert a["mcp.protocol.version"] == version and a["network.transport"] == "pipe"
    assert a["jsonrpc.request.id"].isdigit()
    assert "error.type" not in a and echo.status.status_code is StatusCode.UNSET
    fail = spans["tools/call fail"]
    assert (fail.attributes or {})["error.type"] == "tool_error" and fail.status.status_code is StatusCode.ERROR
    bad = spans["prompts/get no-such-prompt"]
    assert (bad.attributes or {})["error.type"] == str(err.value.code)
    assert (bad.attributes or {})["gen_ai.prompt.name"] == "no-such-prompt"
    assert bad.status.status_code is StatusCode.ERROR and bad.status.description == err.value.message
    assert (spans["resources/read"].attributes or {})["mcp.resource.uri"] == "example://hello"
    # W3C trace context of each request's own span rides its _meta
    traced = [m for m in spy.metas if "traceparent" in m]
    assert len(traced) == len(spy.metas) >= 5
    ids = {
        format(s.context.trace_id, "032x") + format(s.context.span_id, "016x") for s in exporter.get_finished_spans()
    }
    for m in traced:
        _, trace_id, span_id, _ = m["traceparent"].split("-")
        assert trace_id + span_id in ids


def test_a_parent_span_and_tracestate_propagate(exporter: InMemorySpanExporter) -> None:
    spy = MetaSpy()
    tracer_option = tracing(exporter)
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("app")
    with mcpsync.connect(server_cmd(), options=ClientOptions(tracing=tracer_option), middleware=[spy]) as c:
        with tracer.start_as_current_span("handle-request") as parent:
            c.call_tool("echo", {"message": "x"})
    call = [s for s in exporter.get_finished_spans() if s.name == "tools/call echo"][0]
    assert call.parent is not None and call.parent.span_id == parent.get_span_context().span_id
    assert call.context.trace_id == parent.get_span_context().trace_id


def test_timeouts_and_lost_connections_set_error_type(exporter: InMemorySpanExporter) -> None:
    with mcpsync.connect(server_cmd(), options=ClientOptions(tracing=tracing(exporter))) as c:
        with pytest.raises(mcpsync.RequestTimeout):
            c.call_tool("slow", {"seconds": 5, "steps": 1}, timeout=0.2, max_total_timeout=0.3)
        with pytest.raises(mcpsync.errors.ConnectionClosed):
            c.call_tool("crash", {"code": 3})
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert (spans["tools/call slow"].attributes or {})["error.type"] == "timeout"
    crash = spans["tools/call crash"]
    assert (crash.attributes or {})["error.type"] == "mcpsync.errors.ServerExited"
    assert crash.status.status_code is StatusCode.ERROR


def test_static_trace_context_is_sent_in_both_eras_and_a_span_wins(exporter: InMemorySpanExporter) -> None:
    static = {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "tracestate": "a=b"}
    for era in ("legacy", "modern"):
        spy = MetaSpy()
        with mcpsync.connect(
            server_cmd("--era", era), options=ClientOptions(trace_context=static, tracing=False), middleware=[spy]
        ) as c:
            c.call_tool("echo", {"message": "x"})
        assert spy.metas[-1]["traceparent"] == static["traceparent"] and spy.metas[-1]["tracestate"] == "a=b"
    spy = MetaSpy()
    with mcpsync.connect(
        server_cmd(), options=ClientOptions(trace_context=static, tracing=tracing(exporter)), middleware=[spy]
    ) as c:
        c.call_tool("echo", {"message": "x"})
    assert spy.metas[-1]["traceparent"] != static["traceparent"]


def test_auto_tracing_uses_the_global_provider_once_the_app_imported_opentelemetry() -> None:
    # A fresh interpreter: the app sets the global provider; tracing="auto" (the default) picks it up.
    code = (
        "from opentelemetry import trace\n"
        "from opentelemetry.sdk.trace import TracerProvider\n"
        "from opentelemetry.sdk.trace.export import SimpleSpanProcessor\n"
        "from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter\n"
        "exp = InMemorySpanExporter(); p = TracerProvider(); p.add_span_processor(SimpleSpanProcessor(exp))\n"
        "trace.set_tracer_provider(p)\n"
        "import mcpsync\n"
        "with mcpsync.connect(%r) as c:\n"
        "    c.call_tool('echo', {'message': 'x'})\n"
        "print(sorted(s.name for s in exp.get_finished_spans()))\n" % (server_cmd(),)
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "tools/call echo" in out.stdout


def test_without_opentelemetry_imported_nothing_is_imported_or_built() -> None:
    code = (
        "import sys, mcpsync\n"
        "with mcpsync.connect(%r) as c:\n"
        "    c.call_tool('echo', {'message': 'x'})\n"
        "    assert c._pipeline is None\n"
        "bad = sorted(m for m in sys.modules\n"
        "             if m.startswith('opentelemetry') or m.endswith(('.pipeline', '.tracing')))\n"
        "print(bad)\n" % (server_cmd(),)
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_tracing_true_needs_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # makes "from opentelemetry import ..." fail
    with pytest.raises(mcpsync.ConfigError, match=r"mcpsync\[otel\]"):
        mcpsync.Client(server_cmd(), options=ClientOptions(tracing=True))
    assert trace is not None


def test_auto_tracing_stays_off_when_opentelemetry_is_imported_but_not_configured() -> None:
    # e.g. the official SDK imports the OpenTelemetry API: without a provider set, no pipeline is built
    code = (
        "import sys, opentelemetry.trace, mcpsync\nc = mcpsync.Client(['python3', '-c', 'pass'])\nprint(c._pipeline)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "None"


def test_http_spans_carry_tcp_and_the_session_id(exporter: InMemorySpanExporter) -> None:
    from tests.peers.httpserver import MCPTestServer

    with MCPTestServer(era="legacy") as srv:
        with mcpsync.connect(srv.url, options=ClientOptions(tracing=tracing(exporter))) as c:
            c.call_tool("echo", {"message": "x"})
            sid = c.transport.session_headers().get("Mcp-Session-Id")
        spans = {s.name: s for s in exporter.get_finished_spans()}
        posted = [
            r for r in srv.log if r.method == "POST" and isinstance(r.body, dict) and r.body.get("id") is not None
        ]
    call = spans["tools/call echo"].attributes or {}
    assert sid and call["mcp.session.id"] == sid and call["network.transport"] == "tcp"
    assert (spans["initialize"].attributes or {})["network.transport"] == "tcp"
    # the traceparent that reached the server is the span's own
    body = [r.body for r in posted if r.body.get("method") == "tools/call"][0]
    ctx = spans["tools/call echo"].context
    assert body["params"]["_meta"]["traceparent"].split("-")[1:3] == [
        format(ctx.trace_id, "032x"),
        format(ctx.span_id, "016x"),
    ]
