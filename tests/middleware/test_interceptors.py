"""The interceptor chain around requests and results: order, rewriting, redaction, errors, threads,
per-request HTTP headers; against the real example server (stdio) and the local HTTP test server."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest

import mcpsync
from mcpsync.middleware import Interceptor, RequestInfo
from mcpsync.manager.manager import Manager
from tests.conftest import misbehaving_cmd, server_cmd, wait_for

from tests.peers.httpserver import MCPTestServer
from mcpsync.client import ClientOptions, HTTPOptions


class Recorder(Interceptor):
    def __init__(self, name: str, events: List[Tuple[str, ...]]) -> None:
        self.name = name
        self.events = events
        self.threads: List[str] = []

    def on_request(self, info: RequestInfo) -> None:
        self.events.append((self.name, "request", info.method))
        self.threads.append(threading.current_thread().name)

    def on_result(self, info: RequestInfo, result: Dict[str, Any]) -> Dict[str, Any]:
        self.events.append((self.name, "result", info.method, str(info.request_id)))
        self.threads.append(threading.current_thread().name)
        return result

    def on_error(self, info: RequestInfo, error: BaseException) -> None:
        self.events.append((self.name, "error", info.method, type(error).__name__))
        self.threads.append(threading.current_thread().name)


def test_hooks_run_in_onion_order_on_the_calling_thread() -> None:
    events: List[Tuple[str, ...]] = []
    a, b = Recorder("a", events), Recorder("b", events)
    with mcpsync.connect(server_cmd(), middleware=[a, b]) as c:
        # the opening request went through the chain too (never retried)
        assert events[0][:3] == ("a", "request", "server/discover") and events[-1][:3] == (
            "a",
            "result",
            "server/discover",
        )
        del events[:]
        c.call_tool("echo", {"message": "x"})
        assert events[0] == ("a", "request", "tools/call") and events[1] == ("b", "request", "tools/call")
        assert events[2][:3] == ("b", "result", "tools/call") and events[3][:3] == ("a", "result", "tools/call")
        assert events[2][3] == events[3][3] and events[2][3].isdigit()  # the JSON-RPC id is known by then
        del events[:]
        with pytest.raises(mcpsync.RemoteError):
            c.get_prompt("no-such-prompt")
        assert [e[:2] for e in events] == [("a", "request"), ("b", "request"), ("b", "error"), ("a", "error")]
        c.ping()
        c.list_tools()
    me = threading.current_thread().name
    assert set(a.threads) == {me} and set(b.threads) == {me}
    ping = "server/discover" if c.era == "modern" else "ping"  # the 2026-07-28 era has no ping
    assert ("a", "request", ping) in events and ("a", "request", "tools/list") in events


class Rewriter(Interceptor):
    """Rewrites arguments on the way out and redacts results on the way in."""

    def on_request(self, info: RequestInfo) -> None:
        if info.tool == "echo" and info.params is not None:
            info.params["arguments"]["message"] = info.params["arguments"]["message"] + " (rewritten)"

    def on_result(self, info: RequestInfo, result: Dict[str, Any]) -> Dict[str, Any]:
        if info.tool != "echo":
            return result
        content = [dict(b, text=b["text"].replace("secret", "******")) for b in result.get("content", [])]
        return dict(result, content=content)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_arguments_are_rewritten_and_results_redacted(era: str) -> None:
    args = {"message": "my secret"}
    with mcpsync.connect(server_cmd("--era", era), middleware=[Rewriter()]) as c:
        assert c.call_tool("echo", args).text == "my ****** (rewritten)"
    assert args == {"message": "my secret"}  # the caller's dict is never changed


def test_a_failing_on_request_sends_nothing_and_the_client_stays_usable(tmp_path: Path) -> None:
    record = tmp_path / "requests.jsonl"
    events: List[Tuple[str, ...]] = []

    class Veto(Interceptor):
        def on_request(self, info: RequestInfo) -> None:
            if info.tool == "add":
                raise mcpsync.ToolDenied("no adding here", tool="add", reason="veto", server=info.server)

    with mcpsync.connect(misbehaving_cmd("--record", str(record)), middleware=[Recorder("outer", events), Veto()]) as c:
        with pytest.raises(mcpsync.ToolDenied):
            c.call_tool("add", {"a": 1, "b": 2})
        assert events[-1] == ("outer", "error", "tools/call", "ToolDenied")
        assert c.call_tool("echo", {"message": "ok"}).text == "ok"
    calls = [json.loads(line)["tool"] for line in record.read_text().splitlines() if '"tools/call"' in line]
    assert calls == ["echo"]


def test_a_failing_on_result_reaches_the_outer_interceptors_as_an_error() -> None:
    events: List[Tuple[str, ...]] = []

    class Broken(Interceptor):
        def on_result(self, info: RequestInfo, result: Dict[str, Any]) -> Dict[str, Any]:
            if info.tool is not None:
                raise ValueError("redaction failed")
            return result

    with mcpsync.connect(server_cmd(), middleware=[Recorder("outer", events), Broken()]) as c:
        with pytest.raises(ValueError, match="redaction failed"):
            c.call_tool("echo", {"message": "x"})
    assert events[-1] == ("outer", "error", "tools/call", "ValueError")


def test_async_calls_report_on_the_dispatch_thread() -> None:
    events: List[Tuple[str, ...]] = []
    rec = Recorder("r", events)
    with mcpsync.connect(server_cmd(), middleware=[rec, Rewriter()]) as c:
        del events[:], rec.threads[:]  # (the opening request)
        handle = c.call_tool_async("echo", {"message": "async"})
        assert handle.result(timeout=10).text == "async (rewritten)"  # on_request rewrites async calls too
        assert wait_for(lambda: len(events) == 2)
        bad = c.call_tool_async("crash", {"code": 3})
        with pytest.raises(mcpsync.errors.ConnectionClosed):
            bad.result(timeout=10)
        assert wait_for(lambda: len(events) == 4)
    assert rec.threads[0] == threading.current_thread().name
    assert rec.threads[1].startswith("mcpsync-dispatch:") and rec.threads[3].startswith("mcpsync-dispatch:")
    assert events[3][:2] == ("r", "error")


@pytest.fixture(params=["legacy", "modern"])
def http_server(request: pytest.FixtureRequest) -> Iterator[MCPTestServer]:
    with MCPTestServer(era=request.param) as srv:
        yield srv


class Tenant(Interceptor):
    def on_request(self, info: RequestInfo) -> None:
        if info.tool == "echo":
            info.headers["X-Tenant"] = "tenant-7"
            info.headers["Content-Type"] = "text/plain"  # protocol headers win


def test_headers_are_injected_into_that_request_only(http_server: MCPTestServer) -> None:
    with mcpsync.connect(http_server.url, middleware=[Tenant()]) as c:
        c.call_tool("echo", {"message": "x"})
        c.call_tool("add", {"a": 1, "b": 2})
    posts = [r for r in http_server.log if r.method == "POST" and isinstance(r.body, dict)]
    echo = [r for r in posts if (r.body.get("params") or {}).get("name") == "echo"]
    add = [r for r in posts if (r.body.get("params") or {}).get("name") == "add"]
    assert echo and all(r.headers.get("x-tenant") == "tenant-7" for r in echo)
    assert echo[0].headers.get("content-type") == "application/json"
    assert add and all("x-tenant" not in r.headers for r in add)


def test_headers_ride_legacy_sse_posts_too() -> None:
    with MCPTestServer(era="legacy") as srv:
        with mcpsync.connect(srv.sse_url(), http=HTTPOptions(transport="sse"), middleware=[Tenant()]) as c:
            c.call_tool("echo", {"message": "x"})
        echo = [
            r
            for r in srv.log
            if r.method == "POST" and isinstance(r.body, dict) and r.body.get("method") == "tools/call"
        ]
        assert echo and echo[0].headers.get("x-tenant") == "tenant-7"


def test_manager_client_options_apply_interceptors() -> None:
    events: List[Tuple[str, ...]] = []
    with Manager({"ex": {"command": server_cmd()}}, client_options={"interceptors": [Recorder("m", events)]}) as mgr:
        mgr.call_tool("ex_echo", {"message": "x"})
    assert ("m", "request", "tools/call") in events


def test_bad_interceptor_objects_are_config_errors() -> None:
    with pytest.raises(mcpsync.ConfigError):
        mcpsync.Client(server_cmd(), middleware=[object()])  # type: ignore[list-item]
    with pytest.raises(mcpsync.ConfigError):
        mcpsync.Client(server_cmd(), middleware=[3])  # type: ignore[arg-type]


class _Watch(Interceptor):
    """Sets an event when a request of ``method`` got its result (or error) through the chain."""

    def __init__(self, method: str) -> None:
        self.method = method
        self.requested = threading.Event()
        self.ended = threading.Event()
        self.meta: List[Any] = []

    def on_request(self, info: RequestInfo) -> None:
        if info.method == self.method:
            if isinstance(info.params, dict):
                info.params.setdefault("_meta", {})["x-intercepted"] = True
            self.meta.append(info.params)
            self.requested.set()

    def on_result(self, info: RequestInfo, result: Dict[str, Any]) -> Dict[str, Any]:
        if info.method == self.method:
            self.ended.set()
        return result

    def on_error(self, info: RequestInfo, error: BaseException) -> None:
        if info.method == self.method:
            self.ended.set()


def test_keepalive_pings_go_through_the_chain() -> None:
    watch = _Watch("ping")
    with mcpsync.connect(server_cmd(), protocol="legacy", options=ClientOptions(keepalive=0.05), middleware=[watch]):
        assert watch.requested.wait(30) and watch.ended.wait(30)


def test_listen_streams_go_through_the_chain() -> None:
    watch = _Watch("subscriptions/listen")
    with mcpsync.connect(
        server_cmd(), protocol="modern", options=ClientOptions(auto_relisten=False), middleware=[watch]
    ) as c:
        sub = c.listen(tools=True)
        assert watch.requested.is_set()  # on_request ran on the opening thread, before the stream was sent
        assert watch.meta and watch.meta[0]["_meta"]["x-intercepted"] is True
        sub.close()
        assert watch.ended.wait(30)  # the stream's end reached on_result / on_error
