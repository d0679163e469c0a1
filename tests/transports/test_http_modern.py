"""Streamable HTTP, 2026-07-28 era: metadata headers, x-mcp-header, cancellation, re-issue, era detection."""

from __future__ import annotations

import base64
import logging
import threading
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

import mcpsync
from mcpsync.transports.http import headers as _mcpheaders
from mcpsync.transports.base import TransportSink
from mcpsync.transports.http.transport import StreamableHTTPTransport

from tests.conftest import wait_for
from tests.peers.httpserver import MCPTestServer
from mcpsync.client import HTTPOptions

V = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": V,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
}


class FakeSink(TransportSink):
    """Records what a transport reports."""

    def __init__(self) -> None:
        self.messages: List[Any] = []
        self.errors: List[Tuple[Any, BaseException]] = []
        self.closed: List[Optional[BaseException]] = []
        self.event = threading.Event()

    def on_message(self, message: Any) -> None:
        self.messages.append(message)
        self.event.set()

    def on_request_error(self, request_id: Any, exc: BaseException) -> None:
        self.errors.append((request_id, exc))
        self.event.set()

    def on_close(self, exc: Optional[BaseException]) -> None:
        self.closed.append(exc)

    def answers(self, rid: Any) -> List[Dict[str, Any]]:
        return [m for m in self.messages if isinstance(m, dict) and m.get("id") == rid and "method" not in m]


@pytest.fixture
def modern() -> Iterator[MCPTestServer]:
    with MCPTestServer(era="modern") as srv:
        yield srv


def req(rid: Any, method: str, params: Optional[Dict[str, Any]] = None, version: str = V) -> Dict[str, Any]:
    p = dict(params or {})
    meta = dict(META)
    meta["io.modelcontextprotocol/protocolVersion"] = version
    p["_meta"] = meta
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": p}


# ---------------------------------------------------------------------------- header encoding (pure)


@pytest.mark.parametrize(
    "value, encoded",
    [
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        ("a\tb", "a\tb"),
    ],
)
def test_header_value_encoding_matches_the_spec_examples(value: str, encoded: str) -> None:
    assert _mcpheaders.encode_header_value(value) == encoded


def _tool(props: Dict[str, Any], name: str = "t") -> Dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object", "properties": props}}


@pytest.mark.parametrize(
    "props, reason",
    [
        ({"a": {"type": "string", "x-mcp-header": ""}}, "empty"),
        ({"a": {"type": "string", "x-mcp-header": "Bad Name"}}, "token"),
        ({"a": {"type": "string", "x-mcp-header": "X\r\nY"}}, "token"),
        ({"a": {"type": "string", "x-mcp-header": "R"}, "b": {"type": "string", "x-mcp-header": "r"}}, "twice"),
        ({"a": {"type": "number", "x-mcp-header": "N"}}, "type"),
        ({"a": {"type": "object", "x-mcp-header": "O"}}, "type"),
        ({"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "I"}}}, "reachable"),
        ({"a": {"anyOf": [{"type": "string", "x-mcp-header": "A"}]}}, "reachable"),
        ({"a": {"type": "integer", "maximum": 2**60, "x-mcp-header": "Big"}}, "safe range"),
    ],
)
def test_invalid_annotations_are_rejected(props: Dict[str, Any], reason: str) -> None:
    spec, why = _mcpheaders.tool_header_spec(_tool(props))
    assert spec is None and why is not None and reason in why


def test_valid_annotations_and_param_headers() -> None:
    tool = _tool(
        {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "Count"},
            "flag": {"type": ["boolean", "null"], "x-mcp-header": "Flag"},
            "nested": {"type": "object", "properties": {"deep": {"type": "string", "x-mcp-header": "Deep"}}},
            "plain": {"type": "string"},
        }
    )
    spec, why = _mcpheaders.tool_header_spec(tool)
    assert why is None and spec is not None
    headers = _mcpheaders.param_headers(spec, {"region": "ü", "n": 42, "flag": False, "nested": {"deep": "x"}})
    assert headers == {
        "Mcp-Param-Region": "=?base64?w7w=?=",
        "Mcp-Param-Count": "42",
        "Mcp-Param-Flag": "false",
        "Mcp-Param-Deep": "x",
    }
    assert _mcpheaders.param_headers(spec, {"region": None}) == {}


# ---------------------------------------------------------------------------- against the server


def test_method_and_name_headers(modern: MCPTestServer) -> None:
    with mcpsync.connect(modern.url, timeout=20) as c:
        c.call_tool("echo", {"message": "x"})
        c.get_prompt("greet", {"name": "Ada"})
        with pytest.raises(mcpsync.errors.ResourceNotFound):
            c.read_resource("example://ünïcode thing")  # the server checked the decoded Mcp-Name first
    call = modern.records("POST", "tools/call")[-1].headers
    assert call["mcp-method"] == "tools/call" and call["mcp-name"] == "echo"
    assert call["mcp-protocol-version"] == V
    read = modern.records("POST", "resources/read")[-1].headers
    assert read["mcp-name"] == "=?base64?%s?=" % base64.b64encode("example://ünïcode thing".encode()).decode()
    assert modern.records("POST", "prompts/get")[-1].headers["mcp-name"] == "greet"
    assert "mcp-session-id" not in call
    assert not modern.records("GET") and not modern.records("DELETE")


def test_protocol_headers_are_kept_per_name_and_each_call_gets_its_own(modern: MCPTestServer) -> None:
    """The headers of a (version, method, name) are built once and kept (at most 256 kept); every call still sends
    its own name and a request's x-mcp-header values never leak into the kept headers of the next call."""
    with mcpsync.connect(modern.url, timeout=20) as c:
        for i in range(300):
            with pytest.raises(mcpsync.errors.MCPError):
                c.get_prompt("p%d" % i)  # the server knows none of them: it still saw each one's own headers
        table = c.session.transport._protocol_header_table  # noqa: SLF001 - the cache's bound
        assert 0 < len(table) <= 256
        c.call_tool("echo", {"message": "x"})
        c.call_tool("echo", {"message": "y"})
    names = [r.headers["mcp-name"] for r in modern.records("POST", "prompts/get")]
    assert names == ["p%d" % i for i in range(300)]
    calls = modern.records("POST", "tools/call")[-2:]
    assert [r.headers["mcp-name"] for r in calls] == ["echo", "echo"]
    assert all(not any(k.startswith("mcp-param-") for k in r.headers) for r in calls)


def test_x_mcp_header_params_are_mirrored(modern: MCPTestServer) -> None:
    modern.add_tool(
        {
            "name": "routed",
            "description": "echoes",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "count": {"type": "integer", "x-mcp-header": "Count"},
                    "dry": {"type": "boolean", "x-mcp-header": "Dry-Run"},
                    "query": {"type": "string"},
                },
            },
        }
    )
    with mcpsync.connect(modern.url, timeout=20) as c:
        assert c.get_tool("routed") is None
        c.list_tools()
        r = c.call_tool("routed", {"region": "eu-wést", "count": 3, "dry": True, "query": "q"})
        assert not r.is_error
        r = c.call_tool("routed", {"query": "no headers needed"})
        assert not r.is_error
    h = modern.records("POST", "tools/call")[0].headers
    assert h["mcp-param-count"] == "3" and h["mcp-param-dry-run"] == "true"
    assert h["mcp-param-region"].startswith("=?base64?")
    assert "mcp-param-region" not in modern.records("POST", "tools/call")[1].headers


def test_tools_with_invalid_annotations_are_dropped_with_a_warning(
    modern: MCPTestServer, caplog: pytest.LogCaptureFixture
) -> None:
    modern.add_tool(
        {
            "name": "broken",
            "inputSchema": {"type": "object", "properties": {"x": {"type": "number", "x-mcp-header": "X"}}},
        }
    )
    with caplog.at_level(logging.WARNING, logger="mcpsync"), mcpsync.connect(modern.url, timeout=20) as c:
        names = {t.name for t in c.list_tools()}
    assert "broken" not in names and "echo" in names
    assert any("broken" in r.getMessage() for r in caplog.records)


def test_cancel_closes_the_stream_and_sends_no_notification(modern: MCPTestServer) -> None:
    with mcpsync.connect(modern.url, timeout=20) as c:
        progressed = threading.Event()
        handle = c.call_tool_async("slow", {"seconds": 30, "steps": 300}, progress=lambda ev: progressed.set())
        assert progressed.wait(10)
        assert handle.cancel()
        with pytest.raises(mcpsync.RequestCancelled):
            handle.result()
        assert c.call_tool("echo", {"message": "still here"}).text == "still here"
    assert not modern.records("POST", "notifications/cancelled")


def test_timeout_in_the_modern_era_closes_the_stream(modern: MCPTestServer) -> None:
    with mcpsync.connect(modern.url, timeout=20) as c:
        with pytest.raises(mcpsync.RequestTimeout):
            c.call_tool("slow", {"seconds": 30, "steps": 0}, timeout=0.5)
        assert c.call_tool("echo", {"message": "ok"}).text == "ok"
    assert not modern.records("POST", "notifications/cancelled")


def test_broken_stream_reissues_the_request_with_a_new_id(modern: MCPTestServer) -> None:
    with mcpsync.connect(modern.url, timeout=20) as c:
        modern.faults.eof_before_response = 1
        assert c.call_tool("echo", {"message": "again"}).text == "again"
        modern.faults.cut_streams = 1
        modern.faults.cut_after = 1
        assert not c.call_tool("slow", {"seconds": 0.3, "steps": 3}).is_error
    calls = modern.records("POST", "tools/call")
    assert len(calls) == 4
    assert calls[0].body["id"] != calls[1].body["id"]
    assert isinstance(calls[1].body["id"], str)


def test_a_stream_that_always_breaks_fails_the_call(modern: MCPTestServer) -> None:
    with mcpsync.connect(modern.url, timeout=20) as c:
        modern.faults.eof_before_response = 100
        with pytest.raises(mcpsync.errors.ConnectionClosed):
            c.call_tool("echo", {"message": "x"})
        modern.faults.eof_before_response = 0
        assert c.call_tool("echo", {"message": "y"}).text == "y"


# ---------------------------------------------------------------------------- era detection at the transport level


def test_400_with_a_modern_error_body_reaches_the_session_as_that_error(modern: MCPTestServer) -> None:
    t = StreamableHTTPTransport(modern.url)
    sink = FakeSink()
    t.start(sink)
    try:
        t.send(req(1, "server/discover", version="2099-01-01"))
        (answer,) = sink.answers(1)
        assert answer["error"]["code"] == -32022
        assert answer["error"]["data"]["supported"] == [V]
        assert not sink.errors
    finally:
        t.close()
    assert sink.closed == [None]


@pytest.mark.parametrize(
    "body",
    [b"", b"not json", b'{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: no session"}}'],
)
def test_400_without_a_recognised_modern_body_is_an_http_status_error(modern: MCPTestServer, body: bytes) -> None:
    modern.faults.modern_400_body = body
    t = StreamableHTTPTransport(modern.url)
    sink = FakeSink()
    t.start(sink)
    try:
        t.send(req(1, "server/discover"))
        assert not sink.messages
        ((rid, exc),) = sink.errors
        assert rid == 1 and isinstance(exc, mcpsync.errors.HTTPStatusError) and exc.status_code == 400
    finally:
        t.close()


def test_a_modern_null_id_error_is_attributed_to_the_request(modern: MCPTestServer) -> None:
    modern.faults.modern_400_body = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32020,"message":"Header mismatch"}}'
    t = StreamableHTTPTransport(modern.url)
    sink = FakeSink()
    t.start(sink)
    try:
        t.send(req(7, "tools/call", {"name": "echo", "arguments": {}}))
        (answer,) = sink.answers(7)
        assert answer["error"]["code"] == -32020
    finally:
        t.close()


def test_202_to_a_request_is_an_error() -> None:
    with MCPTestServer(era="legacy") as srv:
        t = StreamableHTTPTransport(srv.url)
        sink = FakeSink()
        t.start(sink)
        try:
            t.send(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"},
                    },
                }
            )
            assert wait_for(lambda: bool(sink.answers(1)))
            t.set_protocol("2025-11-25", "legacy")
            srv.faults.legacy_post_status = 202
            t.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
            ((rid, exc),) = sink.errors
            assert rid == 2 and isinstance(exc, mcpsync.errors.HTTPStatusError) and exc.status_code == 202
        finally:
            t.close()


def test_send_after_close_raises_and_close_is_idempotent(modern: MCPTestServer) -> None:
    t = StreamableHTTPTransport(modern.url)
    t.start(FakeSink())
    t.close()
    t.close()
    with pytest.raises(mcpsync.errors.ConnectionClosed):
        t.send(req(1, "server/discover"))


def test_threads_are_named_and_gone_after_close(modern: MCPTestServer) -> None:
    with mcpsync.connect(modern.url, timeout=20) as c:
        c.call_tool("echo", {"message": "x"})  # a blocking call reads its stream in the calling thread
        h = c.call_tool_async("slow", {"seconds": 0.3, "steps": 2})  # a handle's stream has a reader thread
        assert wait_for(lambda: any(t.name.startswith("mcpsync-http-stream:") for t in threading.enumerate()))
        assert h.result().text == "done"
    assert wait_for(lambda: not [t for t in threading.enumerate() if t.name.startswith("mcpsync-http")])


def test_send_timeout_bounds_the_wait_for_a_json_answer() -> None:
    with MCPTestServer(era="modern", response_mode="json") as srv:
        t = StreamableHTTPTransport(srv.url)
        sink = FakeSink()
        t.start(sink)
        try:
            t.send(req(1, "tools/call", {"name": "slow", "arguments": {"seconds": 3, "steps": 0}}), timeout=0.3)
            ((rid, exc),) = sink.errors
            assert rid == 1 and isinstance(exc, mcpsync.RequestTimeout)
        finally:
            t.close()


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_idle_timeout_on_an_event_stream_times_out_once_and_never_reissues(era: str) -> None:
    with MCPTestServer(era=era, response_mode="sse") as srv:
        with mcpsync.connect(srv.url, http=HTTPOptions(transport="http")) as c:
            with pytest.raises(mcpsync.RequestTimeout):
                c.call_tool("slow", {"seconds": 1.5, "steps": 0}, timeout=0.4)
            assert c.call_tool("echo", {"message": "after"}).text == "after"
        calls = [r for r in srv.records(rpc="tools/call") if r.body["params"]["name"] == "slow"]
        assert len(calls) == 1  # a session timeout is a cancel, never a re-issue
        cancels = srv.records(rpc="notifications/cancelled")
        if era == "legacy":  # a disconnect is not a cancel there: it is said explicitly
            assert [r.body["params"]["requestId"] for r in cancels] == [calls[0].body["id"]]
        else:  # 2026-07-28: closing the stream is the cancellation; no notification on HTTP
            assert not cancels
