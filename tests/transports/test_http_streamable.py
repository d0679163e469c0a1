"""Streamable HTTP against a real local server (tests/peers/httpserver.py) in both eras and both answer modes."""

from __future__ import annotations

import logging
import threading
from typing import Any, Iterator, List

import pytest

import mcpsync

from tests.conftest import wait_for
from tests.peers.httpserver import MCPTestServer
from mcpsync.client import Callbacks, HTTPOptions

MB = 1024 * 1024


@pytest.fixture(params=["sse", "json"])
def mode(request: pytest.FixtureRequest) -> str:
    """How the server answers requests: event streams or single JSON bodies."""
    return str(request.param)


@pytest.fixture
def server(era: str, mode: str) -> Iterator[MCPTestServer]:
    with MCPTestServer(era=era, response_mode=mode) as srv:
        yield srv


@pytest.fixture
def legacy() -> Iterator[MCPTestServer]:
    with MCPTestServer(era="legacy") as srv:
        yield srv


@pytest.fixture
def modern() -> Iterator[MCPTestServer]:
    with MCPTestServer(era="modern") as srv:
        yield srv



def connect(srv: MCPTestServer, **options: Any) -> mcpsync.Client:
    options.setdefault("timeout", 20)
    return mcpsync.connect(srv.url, **options)


# ---------------------------------------------------------------------------- basics


def test_both_eras_basic_calls(server: MCPTestServer, era: str) -> None:
    with connect(server) as c:
        assert c.era == era
        assert c.transport_kind == "http"
        assert {"echo", "add", "slow"} <= {t.name for t in c.list_tools()}
        assert c.call_tool("echo", {"message": "héllo ✓"}).text == "héllo ✓"
        assert c.call_tool("add", {"a": 2, "b": 3}).structured_content == {"sum": 5}
        assert c.read_resource(c.list_resources()[0].uri).contents
        assert c.get_prompt("greet", {"name": "Ada"}) is not None


def test_progress_notifications_arrive_before_the_result(era: str) -> None:
    with MCPTestServer(era=era, response_mode="sse") as srv, connect(srv) as c:
        seen: List[float] = []
        r = c.call_tool("slow", {"seconds": 0.2, "steps": 4}, progress=lambda ev: seen.append(ev.progress))
        assert not r.is_error
        assert wait_for(lambda: len(seen) == 4)
        assert seen == sorted(seen)


def test_ten_megabyte_result(server: MCPTestServer) -> None:
    with connect(server) as c:
        text = c.call_tool("payload", {"size": 10 * MB}, timeout=60).text
        assert len(text) == 10 * MB


def test_message_size_limit(server: MCPTestServer) -> None:
    from mcpsync.transports.http.transport import StreamableHTTPTransport

    with mcpsync.connect(StreamableHTTPTransport(server.url, max_message_size=MB), timeout=20) as c:
        with pytest.raises(mcpsync.errors.MessageTooLarge):
            c.call_tool("payload", {"size": 2 * MB})
        assert c.call_tool("echo", {"message": "still fine"}).text == "still fine"


def test_concurrent_calls_from_many_threads(server: MCPTestServer) -> None:
    with connect(server) as c:
        errors: List[BaseException] = []

        def work(i: int) -> None:
            try:
                for j in range(5):
                    msg = "%d-%d" % (i, j)
                    assert c.call_tool("echo", {"message": msg}).text == msg
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors


# ---------------------------------------------------------------------------- handshake-era headers and sessions


def test_legacy_session_id_and_version_headers(legacy: MCPTestServer) -> None:
    with connect(legacy) as c:
        c.call_tool("echo", {"message": "x"})
        sid = c.transport.session_headers()["Mcp-Session-Id"]
    init = legacy.records("POST", "initialize")[-1]
    assert "mcp-session-id" not in init.headers and "mcp-protocol-version" not in init.headers
    call = legacy.records("POST", "tools/call")[-1]
    assert call.headers["mcp-session-id"] == sid
    assert call.headers["mcp-protocol-version"] == "2025-11-25"
    assert call.headers["accept"] == "application/json, text/event-stream"
    assert call.headers["content-type"] == "application/json"
    note = legacy.records("POST", "notifications/initialized")[-1]
    assert note.headers["mcp-session-id"] == sid
    delete = legacy.records("DELETE")[-1]
    assert delete.headers["mcp-session-id"] == sid


def test_expired_session_is_renewed_once_and_the_call_replayed(legacy: MCPTestServer) -> None:
    with connect(legacy) as c:
        c.call_tool("echo", {"message": "before"})
        old = c.transport.session_headers()["Mcp-Session-Id"]
        legacy.expire_sessions()  # like a server restart
        assert c.call_tool("echo", {"message": "after"}).text == "after"
        assert c.transport.session_headers()["Mcp-Session-Id"] != old
        assert len(legacy.records("POST", "initialize")) == 2
        assert len(legacy.records("POST", "notifications/initialized")) == 2
        assert c.call_tool("echo", {"message": "later"}).text == "later"


def test_second_404_is_session_expired_without_a_loop(legacy: MCPTestServer) -> None:
    with connect(legacy) as c:
        legacy.faults.always_404 = True
        with pytest.raises(mcpsync.errors.SessionExpired):
            c.call_tool("echo", {"message": "x"})
        assert len(legacy.records("POST", "initialize")) == 2  # one renewal, no loop
        assert len(legacy.records("POST", "tools/call")) == 2  # the call and one replay


@pytest.mark.parametrize("reply", ["200-empty", "200-null", "204", "200-text", "200-json-empty-object"])
def test_any_2xx_accepted_for_notifications(reply: str) -> None:
    with MCPTestServer(era="legacy") as srv:
        srv.faults.notification_reply = reply
        with connect(srv) as c:
            assert c.call_tool("echo", {"message": "ok"}).text == "ok"
            c.notify("notifications/roots/list_changed")


def test_get_stream_405_stops_quietly(legacy: MCPTestServer, caplog: pytest.LogCaptureFixture) -> None:
    legacy.faults.get_status = 405
    with caplog.at_level(logging.WARNING, logger="mcpsync"), connect(legacy) as c:
        assert wait_for(lambda: len(legacy.records("GET")) == 1)
        assert c.call_tool("echo", {"message": "x"}).text == "x"
        assert c.connected
    assert len(legacy.records("GET")) == 1
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.parametrize("status", [404, 406, 500])
def test_get_stream_other_statuses_never_surface(legacy: MCPTestServer, status: int) -> None:
    legacy.faults.get_status = status
    with connect(legacy) as c:
        assert wait_for(lambda: len(legacy.records("GET")) >= 1)
        assert c.call_tool("echo", {"message": "x"}).text == "x"


def test_get_stream_delivers_unsolicited_notifications(legacy: MCPTestServer) -> None:
    changed = threading.Event()
    with connect(legacy, callbacks=Callbacks(on_tools_changed=changed.set)) as c:
        assert wait_for(lambda: len(legacy.get_streams) == 1)
        c.call_tool("add_tool", {"name": "fresh"})
        assert changed.wait(10)
        assert "fresh" in {t.name for t in c.list_tools()}


def test_server_requests_on_the_response_stream(legacy: MCPTestServer) -> None:
    def sampler(request: Any) -> Any:
        return request.reply("sampled: " + request.text)

    with connect(legacy, sampling_handler=sampler) as c:
        r = c.call_tool("sample", {"prompt": "hello"})
        assert "sampled: hello" in r.text
    # the answer to the server's request was POSTed back
    assert any(isinstance(rec.body, dict) and "result" in rec.body for rec in legacy.records("POST"))


@pytest.mark.parametrize("fault", ["status-405", "status-404", "status-500", "reset"])
def test_delete_on_close_is_best_effort(legacy: MCPTestServer, fault: str) -> None:
    if fault == "reset":
        legacy.faults.drop_delete = True
    else:
        legacy.faults.delete_status = int(fault.split("-")[1])
    c = connect(legacy)
    c.call_tool("echo", {"message": "x"})
    c.close()  # never raises
    c.close()
    assert len(legacy.records("DELETE")) == 1


# ---------------------------------------------------------------------------- resumability (handshake era)


def test_stream_cut_twice_resumes_with_last_event_id(legacy: MCPTestServer) -> None:
    legacy.faults.priming = True
    legacy.faults.retry_ms = 10
    with connect(legacy) as c:
        legacy.faults.cut_streams = 2
        legacy.faults.cut_after = 1
        seen: List[float] = []
        r = c.call_tool("slow", {"seconds": 0.3, "steps": 3}, progress=lambda ev: seen.append(ev.progress))
        assert not r.is_error
    gets = [g for g in legacy.records("GET") if "last-event-id" in g.headers]
    assert len(gets) == 2
    assert gets[0].headers["last-event-id"].endswith("-1")


def test_resume_is_seeded_from_the_priming_event_id(legacy: MCPTestServer) -> None:
    legacy.faults.priming = True
    legacy.faults.retry_ms = 10
    with connect(legacy) as c:
        legacy.faults.cut_streams = 2
        legacy.faults.cut_after = 0  # cut right after the priming event, then the resumed stream at once
        assert c.call_tool("echo", {"message": "resumed"}).text == "resumed"
    ids = [g.headers["last-event-id"] for g in legacy.records("GET") if "last-event-id" in g.headers]
    assert len(ids) == 2 and all(i.endswith("-0") for i in ids)


def test_eof_before_response_fails_the_call_and_the_session_survives(legacy: MCPTestServer) -> None:
    with connect(legacy) as c:
        legacy.faults.eof_before_response = 1
        with pytest.raises(mcpsync.errors.ConnectionClosed):
            c.call_tool("echo", {"message": "lost"})
        assert c.call_tool("echo", {"message": "next"}).text == "next"


# ---------------------------------------------------------------------------- failures of one call


@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_errors_fail_only_that_call(server: MCPTestServer, status: int) -> None:
    with connect(server) as c:
        server.faults.post_statuses = [status]
        with pytest.raises(mcpsync.errors.HTTPStatusError) as info:
            c.call_tool("echo", {"message": "x"})
        assert info.value.status_code == status
        assert "simulated failure" in info.value.body
        assert info.value.method == "tools/call"
        assert c.call_tool("echo", {"message": "y"}).text == "y"


def test_connection_reset_fails_only_that_call(server: MCPTestServer) -> None:
    with connect(server) as c:
        server.faults.reset_posts = 1
        with pytest.raises(mcpsync.TransportError):
            c.call_tool("echo", {"message": "x"})
        assert c.call_tool("echo", {"message": "y"}).text == "y"


def test_401_raises_auth_required_with_the_challenge(server: MCPTestServer) -> None:
    with connect(server) as c:
        server.faults.require_token = "s3cret"
        with pytest.raises(mcpsync.errors.AuthRequired) as info:
            c.call_tool("echo", {"message": "x"})
        assert info.value.status_code == 401
        assert info.value.resource_metadata == "http://127.0.0.1/.well-known/oauth-protected-resource"
        assert info.value.www_authenticate["realm"] == "mcp"
        server.faults.require_token = None
        assert c.call_tool("echo", {"message": "y"}).text == "y"


def test_bearer_token_and_custom_headers(server: MCPTestServer) -> None:
    server.faults.require_token = "s3cret"
    with connect(server, bearer_token="s3cret", headers={"X-Api-Key": "k1"}) as c:
        assert c.call_tool("echo", {"message": "y"}).text == "y"
    rec = server.records("POST", "tools/call")[-1]
    assert rec.headers["authorization"] == "Bearer s3cret"
    assert rec.headers["x-api-key"] == "k1"


def test_requests_auth_base_plugs_in(server: MCPTestServer) -> None:
    import requests

    class TokenAuth(requests.auth.AuthBase):
        calls = 0

        def __call__(self, r: Any) -> Any:
            TokenAuth.calls += 1
            r.headers["Authorization"] = "Bearer dyn"
            return r

    server.faults.require_token = "dyn"
    with connect(server, auth=TokenAuth()) as c:
        assert c.call_tool("echo", {"message": "y"}).text == "y"
    assert TokenAuth.calls >= 2


def test_403_insufficient_scope(server: MCPTestServer) -> None:
    with connect(server) as c:
        server.faults.scopes["echo"] = "tools:echo"
        with pytest.raises(mcpsync.errors.InsufficientScope) as info:
            c.call_tool("echo", {"message": "x"})
        assert info.value.scope == "tools:echo"
        assert info.value.status_code == 403
        assert c.call_tool("add", {"a": 1, "b": 1}).structured_content == {"sum": 2}


def test_read_timeout_is_a_separate_knob(era: str) -> None:
    with MCPTestServer(era=era, response_mode="json") as srv:
        with connect(srv, http=HTTPOptions(read_timeout=0.3)) as c:
            with pytest.raises(mcpsync.RequestTimeout):  # a read timeout is a timeout, and is cancelled upstream
                c.call_tool("slow", {"seconds": 1.5, "steps": 0})
        with connect(srv) as c:  # default: no read timeout, the call timeout governs
            assert not c.call_tool("slow", {"seconds": 1.5, "steps": 0}, timeout=30).is_error


def test_idle_connections_dropped_by_the_server_are_replaced(server: MCPTestServer) -> None:
    with connect(server) as c:
        c.call_tool("echo", {"message": "x"})
        server.drop_connections()  # what an idle timeout on the server side does
        assert c.call_tool("echo", {"message": "after idle"}).text == "after idle"


def test_same_origin_redirect_is_followed(era: str) -> None:
    with MCPTestServer(era=era) as srv:
        with mcpsync.connect(
            "http://127.0.0.1:%d/moved" % srv.port, http=HTTPOptions(transport="http"), timeout=20
        ) as c:
            assert c.call_tool("echo", {"message": "x"}).text == "x"


def test_cross_origin_redirect_is_refused(era: str) -> None:
    with MCPTestServer(era=era) as srv:
        with pytest.raises(mcpsync.MCPError) as info:
            mcpsync.connect("http://127.0.0.1:%d/away" % srv.port, http=HTTPOptions(transport="http"), timeout=5)
        assert "307" in str(info.value)
        assert not [r for r in srv.records() if r.path == "/mcp"]


def test_proxy_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    with MCPTestServer(era="modern") as srv:
        monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:%d" % srv.port)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.delenv("http_proxy", raising=False)
        with mcpsync.connect("http://mcp.example.invalid/mcp", timeout=20) as c:
            assert c.call_tool("echo", {"message": "via proxy"}).text == "via proxy"
        assert srv.records("POST")[-1].path == "http://mcp.example.invalid/mcp"


def test_an_auth_hook_raising_auth_required_reaches_the_caller_unchanged(era: str) -> None:
    import requests

    class Refusing(requests.auth.AuthBase):
        armed = False

        def __call__(self, r: Any) -> Any:
            if Refusing.armed:
                raise mcpsync.errors.AuthRequired("log in first", www_authenticate={"scope": "x"})
            return r

    with MCPTestServer(era=era) as srv, connect(srv, auth=Refusing()) as c:
        Refusing.armed = True
        with pytest.raises(mcpsync.errors.AuthRequired) as info:
            c.call_tool("echo", {"message": "x"})
        assert info.value.scope == "x"
        Refusing.armed = False
        assert c.call_tool("echo", {"message": "y"}).text == "y"
