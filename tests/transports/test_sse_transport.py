"""Legacy HTTP+SSE (2024-11-05) and the transport="auto" fallback chain, against the real local server."""

from __future__ import annotations

import socket
import threading
from typing import Any, Iterator, List

import pytest

import mcpsync
from mcpsync.client.flat import grouped
from mcpsync.transports.http import remote as _remote

from tests.conftest import wait_for
from tests.peers.httpserver import MCPTestServer
from mcpsync.client import Callbacks, ClientOptions, HTTPOptions, ServerMemory

MB = 1024 * 1024


@pytest.fixture
def srv() -> Iterator[MCPTestServer]:
    with MCPTestServer(era="legacy") as s:
        yield s



def sse(srv: MCPTestServer, prefix: str = "", **options: Any) -> mcpsync.Client:
    options.setdefault("timeout", 20)
    options.setdefault("transport", "sse")
    return mcpsync.connect(srv.sse_url(prefix), **grouped(options, remote=True))


def test_calls_progress_and_notifications(srv: MCPTestServer) -> None:
    changed = threading.Event()
    with sse(srv, on_tools_changed=changed.set) as c:
        assert c.transport_kind == "sse" and c.era == "legacy"
        assert c.call_tool("echo", {"message": "héllo"}).text == "héllo"
        seen: List[float] = []
        assert not c.call_tool(
            "slow", {"seconds": 0.2, "steps": 3}, progress=lambda e: seen.append(e.progress)
        ).is_error
        assert wait_for(lambda: len(seen) == 3)
        c.call_tool("add_tool", {"name": "fresh"})
        assert changed.wait(10)


def test_server_requests_are_answered(srv: MCPTestServer) -> None:
    with sse(srv, sampling_handler=lambda r: r.reply("sampled " + r.text)) as c:
        assert "sampled hi" in c.call_tool("sample", {"prompt": "hi"}).text


def test_ten_megabyte_result(srv: MCPTestServer) -> None:
    with sse(srv) as c:
        assert len(c.call_tool("payload", {"size": 10 * MB}, timeout=60).text) == 10 * MB


@pytest.mark.parametrize("style", ["relative", "absolute", "full"])
def test_endpoint_resolution_behind_a_path_prefix(srv: MCPTestServer, style: str) -> None:
    srv.faults.endpoint_style = style
    with sse(srv, "prefix/") as c:
        assert c.transport.endpoint.startswith("http://127.0.0.1:%d/prefix/messages?sid=" % srv.port)
        assert c.call_tool("echo", {"message": "x"}).text == "x"
    posts = [r.path for r in srv.records("POST")]
    assert posts and all(p.startswith("/prefix/messages?sid=") for p in posts)


def test_cross_origin_endpoint_is_refused(srv: MCPTestServer) -> None:
    srv.faults.endpoint_style = "cross-origin"
    with pytest.raises(mcpsync.errors.ConnectError) as info:
        sse(srv)
    assert "another origin" in str(info.value)
    assert not srv.records("POST")


def test_401_on_the_stream_is_auth_required(srv: MCPTestServer) -> None:
    srv.faults.require_token = "t"
    with pytest.raises(mcpsync.errors.AuthRequired) as info:
        sse(srv)
    assert info.value.resource_metadata
    with sse(srv, bearer_token="t") as c:
        assert c.call_tool("echo", {"message": "x"}).text == "x"


def test_stream_loss_fails_pending_calls_then_reconnects_and_reinitializes(srv: MCPTestServer) -> None:
    with sse(srv) as c:
        handle = c.call_tool_async("slow", {"seconds": 30, "steps": 0})
        assert wait_for(lambda: bool(srv.records("POST", "tools/call")))
        srv.drop_sse_streams()
        with pytest.raises(mcpsync.errors.ConnectionClosed):
            handle.result(timeout=10)
        assert wait_for(lambda: len(srv.records("POST", "initialize")) == 2, 10)
        assert c.call_tool("echo", {"message": "back"}).text == "back"
        assert len(srv.records("GET")) == 2


def test_gives_up_after_the_reconnect_budget() -> None:
    lost = threading.Event()
    with MCPTestServer(era="legacy") as s:
        from mcpsync.transports.http.legacy_sse import SSETransport

        t = SSETransport(s.sse_url(), max_reconnect_attempts=1, max_retry_delay=0.1)
        c = mcpsync.connect(t, timeout=10, callbacks=Callbacks(on_connection_lost=lambda exc: lost.set()))
        try:
            s.faults.require_token = "now-required"
            s.drop_sse_streams()
            assert lost.wait(10)
            with pytest.raises(mcpsync.errors.ConnectionClosed):
                c.call_tool("echo", {"message": "x"})
        finally:
            c.close()


# ---------------------------------------------------------------------------- transport="auto"


def test_auto_falls_back_to_sse_on_405_and_remembers(srv: MCPTestServer) -> None:
    url = srv.sse_url()
    memory = ServerMemory()  # what the two clients share (as a Manager's clients do)
    with mcpsync.connect(url, timeout=20, options=ClientOptions(memory=memory)) as c:
        assert c.transport_kind == "sse"
        assert c.call_tool("echo", {"message": "x"}).text == "x"
        assert c.memory is memory
    assert memory.transport(url) == "sse"
    assert [r.method for r in srv.records()][:2] == ["POST", "POST"]  # discover probe, then initialize
    before = len(srv.records("POST"))
    with mcpsync.connect(url, timeout=20, options=ClientOptions(memory=memory)) as c:
        assert c.transport_kind == "sse"
    # the remembered kind goes first: no Streamable HTTP attempt this time
    assert not [r for r in srv.records("POST")[before:] if r.path == "/sse"]


def test_a_clients_own_memory_is_not_shared(srv: MCPTestServer) -> None:
    """Without a shared memory each client learns for itself: nothing is kept at module level."""
    url = srv.sse_url()
    with mcpsync.connect(url, timeout=20) as c:
        assert c.transport_kind == "sse"
        assert c.memory.transport(url) == "sse"
    before = len(srv.records("POST"))
    with mcpsync.connect(url, timeout=20) as c:
        assert c.transport_kind == "sse"
        assert c.memory.transport(url) == "sse"
    # a fresh client tries Streamable HTTP first again (its POST to the SSE URL is refused with 405)
    assert [r for r in srv.records("POST")[before:] if r.path == "/sse"]


def test_auto_prefers_streamable_http(srv: MCPTestServer) -> None:
    with mcpsync.connect(srv.url, timeout=20) as c:
        assert c.transport_kind == "http"
    assert not srv.records("GET") or all(r.path == "/mcp" for r in srv.records("GET"))


@pytest.mark.parametrize("fault", ["401", "403", "500", "502"])
def test_auto_never_falls_back_on_auth_or_server_errors(srv: MCPTestServer, fault: str) -> None:
    if fault == "401":
        srv.faults.require_token = "t"
    elif fault == "403":
        srv.faults.legacy_post_status = 403
    else:
        srv.faults.legacy_post_status = int(fault)
    with pytest.raises(mcpsync.MCPError) as info:
        mcpsync.connect(srv.url, timeout=10)
    if fault == "401":
        assert isinstance(info.value, mcpsync.errors.AuthRequired)
    assert not srv.records("GET"), "must not try the SSE transport"


def test_auto_never_falls_back_on_network_errors() -> None:
    with socket.socket() as s:  # bound, never listening: connections are refused and no one else gets the port
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        with pytest.raises(mcpsync.errors.ConnectError):
            mcpsync.connect("http://127.0.0.1:%d/mcp" % port, timeout=5, connect_timeout=5)


def test_auto_reports_both_errors_when_both_fail(srv: MCPTestServer) -> None:
    with pytest.raises(mcpsync.MCPError) as info:
        mcpsync.connect("http://127.0.0.1:%d/nothing-here" % srv.port, timeout=10)
    text = str(info.value)
    assert "http" in text and "sse" in text and "404" in text


def test_forced_transports(srv: MCPTestServer) -> None:
    with pytest.raises(mcpsync.MCPError):
        mcpsync.connect(srv.sse_url(), http=HTTPOptions(transport="http"), timeout=10)
    assert not srv.records("GET")
    with mcpsync.connect(srv.url, http=HTTPOptions(transport="http"), timeout=20) as c:
        assert c.transport_kind == "http"


def test_should_fall_back_policy() -> None:
    f = _remote.should_fall_back
    assert f(mcpsync.errors.HTTPStatusError(status_code=400))
    assert f(mcpsync.errors.HTTPStatusError(status_code=404))
    assert f(mcpsync.errors.HTTPStatusError(status_code=405))
    for status in (401, 403, 406, 500, 502):
        assert not f(mcpsync.errors.HTTPStatusError(status_code=status))
    assert not f(mcpsync.errors.AuthRequired())
    assert not f(mcpsync.errors.InsufficientScope())
    assert not f(mcpsync.errors.ConnectError("refused"))
    assert not f(mcpsync.errors.ConnectionClosed("reset"))
    assert not f(mcpsync.RequestTimeout(timeout=1))
    assert not f(mcpsync.errors.MethodNotFound(-32601, "nope"))
    assert not f(mcpsync.errors.UnsupportedVersionError(-32022, "no"))


def test_parse_www_authenticate() -> None:
    p = _remote.parse_www_authenticate
    got = p(
        'Bearer realm="mcp", error="invalid_token", error_description="The \\"token\\" expired", '
        'resource_metadata="https://x/.well-known/oauth-protected-resource", scope="a b"'
    )
    assert got == {
        "scheme": "Bearer",
        "realm": "mcp",
        "error": "invalid_token",
        "error_description": 'The "token" expired',
        "resource_metadata": "https://x/.well-known/oauth-protected-resource",
        "scope": "a b",
    }
    assert p('Basic realm="x", Bearer error=insufficient_scope, scope="files:read"')["scope"] == "files:read"
    assert p("Bearer") == {"scheme": "Bearer"}
    assert p("") == {}
    assert p("Negotiate abc==")["token68"] == "abc=="
