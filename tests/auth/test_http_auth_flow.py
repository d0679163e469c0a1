"""The engine-neutral auth interface (mcpsync.Auth) on the standard-library engine, against real local servers:
OAuth (a real authorization server, tokens refreshed during the run), custom flows, and requests auths."""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Dict, Iterator, List, Tuple

import pytest

import mcpsync
from mcpsync.client.flat import grouped
from mcpsync.httpauth import MAX_ROUND_TRIPS, Auth, AuthFlow, AuthRequest, BearerAuth
from mcpsync.transports.http.auth import AuthNet, RequestsHookNet
from tests.peers.authserver import AuthTestServer, approve_via_http, make_manager, no_auth_leaks, store  # noqa: F401
from tests.peers.httpserver import MCPTestServer
from tests.conftest import WAIT_BOUND
from tests.auth.test_http_auth_hooks import ResendOn401
from tests.manager.test_manager_http import _mcp_behind
from mcpsync.client import HTTPOptions

pytestmark = pytest.mark.usefixtures("no_auth_leaks")


def _engine(client: Any) -> Any:
    return client.transport._net


class TokenOn401(Auth):
    """Sends nothing first; on a 401 resends with the token (per-request state in the generator only)."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.challenges = 0
        self._lock = threading.Lock()

    def auth_flow(self, request: AuthRequest) -> AuthFlow:
        response = yield request
        if response.status_code == 401:
            with self._lock:
                self.challenges += 1
            assert "resource_metadata" in (response.headers.get("WWW-Authenticate") or "")
            request.set_header("authorization", "Bearer " + self.token)
            yield request


@pytest.mark.parametrize("kind", ["auto", "legacy", "sse"])
def test_a_custom_flow_resends_after_a_401_and_no_call_runs_twice(kind: str) -> None:
    with MCPTestServer(era="legacy" if kind != "auto" else "modern") as srv:
        srv.faults.require_token = "good"
        auth = TokenOn401("good")
        url = srv.sse_url() if kind == "sse" else srv.url
        options: Dict[str, Any] = {"transport": "sse"} if kind == "sse" else {"protocol": kind, "transport": "http"}
        with mcpsync.connect(url, auth=auth, timeout=30, **grouped(options, remote=True)) as client:
            engine = _engine(client)
            assert engine.kind == "urllib3" and isinstance(engine, AuthNet)
            for i in range(3):
                assert client.call_tool("echo", {"message": "m%d" % i}).text == "m%d" % i
        if kind == "sse":  # the test server guards the event stream's GET only (its POSTs ride the session)
            assert auth.challenges == 1
            assert srv.records("GET")[-1].headers.get("authorization") == "Bearer good"
            return
        assert auth.challenges >= 3
        calls = srv.records("POST", "tools/call")
        accepted = [r for r in calls if r.headers.get("authorization") == "Bearer good"]
        assert len(accepted) == 3  # each call ran exactly once
        assert len(calls) == 6  # and was refused once first (the server answered 401 before running it)


class Endless(Auth):
    """Asks for another round trip forever while ``loop`` is set."""

    def __init__(self) -> None:
        self.loop = True

    def auth_flow(self, request: AuthRequest) -> AuthFlow:
        while True:
            yield request
            if not self.loop:
                return


def test_a_flow_that_never_accepts_an_answer_is_stopped_and_the_client_stays_usable() -> None:
    with MCPTestServer(era="modern") as srv:
        auth = Endless()
        auth.loop = False
        with mcpsync.connect(srv.url, auth=auth, timeout=30) as client:
            auth.loop = True
            before = len(srv.records("POST", "tools/call"))
            with pytest.raises(mcpsync.AuthError, match="giving up"):
                client.call_tool("echo", {"message": "x"})
            assert len(srv.records("POST", "tools/call")) - before == MAX_ROUND_TRIPS
            auth.loop = False
            assert client.call_tool("echo", {"message": "y"}).text == "y"


class Refuse(Auth):
    def auth_flow(self, request: AuthRequest) -> AuthFlow:
        response = yield request
        if response.status_code == 401:
            raise mcpsync.errors.AuthRequired("no credentials for this server", status_code=401)


def test_an_error_raised_in_the_flow_reaches_the_caller_typed() -> None:
    with MCPTestServer(era="modern") as srv:
        with mcpsync.connect(srv.url, auth=Refuse(), timeout=30) as client:
            srv.faults.require_token = "never"
            with pytest.raises(mcpsync.errors.AuthRequired, match="no credentials"):
                client.call_tool("echo", {"message": "x"})
            srv.faults.require_token = None
            assert client.call_tool("echo", {"message": "ok"}).text == "ok"


def test_bearer_auth_object() -> None:
    with MCPTestServer(era="modern") as srv:
        srv.faults.require_token = "tok"
        with mcpsync.connect(srv.url, auth=BearerAuth("tok"), timeout=30) as client:
            assert client.call_tool("echo", {"message": "b"}).text == "b"
        assert "tok" not in repr(BearerAuth("tok"))
    with pytest.raises(mcpsync.ConfigError):
        BearerAuth("two\nlines")


def test_a_requests_auth_with_a_resending_response_hook_runs_on_the_standard_library_engine() -> None:
    with MCPTestServer(era="legacy") as srv:
        srv.faults.require_token = "good"
        auth = ResendOn401("good")
        with mcpsync.connect(
            srv.url, protocol="legacy", http=HTTPOptions(transport="http"), auth=auth, timeout=30
        ) as client:
            engine = _engine(client)
            assert engine.kind == "urllib3" and isinstance(engine, RequestsHookNet)
            assert client.call_tool("echo", {"message": "hi"}).text == "hi"
        assert auth.resent >= 2
        calls = srv.records("POST", "tools/call")
        assert [r.headers.get("authorization") for r in calls] == [None, "Bearer good"]


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_oauth_client_credentials_on_the_standard_library_engine_with_a_refresh_mid_run(
    make_manager: Any, monkeypatch: pytest.MonkeyPatch, protocol: str
) -> None:
    with AuthTestServer() as auth, MCPTestServer() as mcp:
        _mcp_behind(auth, mcp, monkeypatch)
        auth.add_client("svc", method="client_secret_post", secret="s3")
        oauth = make_manager()
        oauth.add_server(
            "box",
            mcp.url,
            {
                "grant": "client_credentials",
                "clientId": "svc",
                "clientSecret": "s3",
                "tokenEndpointAuthMethod": "client_secret_post",
                "authorizationServer": auth.issuer,
            },
        )
        assert oauth.probe_challenge("box")  # where the server's metadata is (what a first 401 would say)
        with mcpsync.connect(mcp.url, auth=oauth.auth("box"), protocol=protocol, timeout=30) as client:
            engine = _engine(client)
            assert engine.kind == "urllib3" and isinstance(engine, AuthNet)
            assert client.call_tool("echo", {"message": "1"}).text == "1"
            assert len(auth.token_requests("client_credentials")) == 1
            auth.access_tokens.clear()  # revoked server-side: the next call gets a 401, a new token, a resend
            assert client.call_tool("echo", {"message": "2"}).text == "2"
            assert len(auth.token_requests("client_credentials")) == 2
            assert client.call_tool("echo", {"message": "3"}).text == "3"
            auth.access_tokens.clear()  # revoked again, now under 8 calls in flight (async handles)
            handles = [client.call_tool_async("echo", {"message": "a%d" % i}) for i in range(8)]
            assert sorted(h.result(60).text for h in handles) == sorted("a%d" % i for i in range(8))
        messages: List[Any] = [r.body["params"]["arguments"]["message"] for r in mcp.records("POST", "tools/call")]
        assert messages[:4] == ["1", "2", "2", "3"]  # the refused "2" was resent once, with the new token
        with auth.lock:
            valid = set(auth.access_tokens)
        accepted = [
            r.body["params"]["arguments"]["message"]
            for r in mcp.records("POST", "tools/call")[4:]
            if r.headers.get("authorization", "")[7:] in valid
        ]
        assert sorted(accepted) == sorted("a%d" % i for i in range(8))  # each in-flight call ran exactly once


@contextlib.contextmanager
def _logged_in(make_manager: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Tuple[Any, Any, Any]]:
    """A real authorization server, an MCP server behind it, and a manager logged in to it as ``box``."""
    with AuthTestServer() as auth, MCPTestServer() as mcp:
        _mcp_behind(auth, mcp, monkeypatch)
        oauth = make_manager(authorize_handler=approve_via_http)
        oauth.add_server("box", mcp.url)
        assert oauth.probe_challenge("box")
        oauth.authenticate("box")
        yield auth, mcp, oauth


def test_oauth_reads_the_store_at_most_every_reuse_interval_and_a_401_drops_the_token(
    make_manager: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpsync.auth import oauth_auth

    with _logged_in(make_manager, monkeypatch) as (auth, mcp, oauth):
        reads: List[str] = []
        real = oauth.get_access_token

        def counted(name: str, **kwargs: Any) -> Any:
            reads.append(name)
            return real(name, **kwargs)

        monkeypatch.setattr(oauth, "get_access_token", counted)
        monkeypatch.setattr(oauth_auth, "TOKEN_REUSE_SECONDS", 3600.0)  # no expiry of the reuse within the test
        with mcpsync.connect(mcp.url, auth=oauth.auth("box"), timeout=30) as client:
            for i in range(10):
                assert client.call_tool("echo", {"message": str(i)}).text == str(i)
            assert len(reads) == 1
            auth.access_tokens.clear()  # revoked: the cached token gets a 401, is dropped, and refreshed once
            assert client.call_tool("echo", {"message": "after"}).text == "after"
            assert len(auth.token_requests("refresh_token")) == 1
            assert client.call_tool("echo", {"message": "again"}).text == "again"
            assert len(reads) == 1  # the refreshed token is the cached one now


def test_when_the_reuse_runs_out_one_thread_reads_the_store_and_the_others_keep_sending(
    make_manager: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The racy point held open: the one thread re-reading the store is stopped inside the read; calls on other
    threads meanwhile send with the token they have, without reading the store or waiting for that read."""
    from mcpsync.auth import oauth_auth

    with _logged_in(make_manager, monkeypatch) as (_auth, mcp, oauth):
        real = oauth.get_access_token
        inside, go = threading.Event(), threading.Event()
        reads: List[str] = []
        hold = threading.Event()

        def held(name: str, **kwargs: Any) -> Any:
            reads.append(threading.current_thread().name)
            if hold.is_set() and not inside.is_set():  # the first re-read once armed: hold it
                inside.set()
                assert go.wait(WAIT_BOUND)
            return real(name, **kwargs)

        monkeypatch.setattr(oauth, "get_access_token", held)
        monkeypatch.setattr(oauth_auth, "TOKEN_REUSE_SECONDS", 0.0)  # every call finds the reuse run out
        with mcpsync.connect(mcp.url, auth=oauth.auth("box"), timeout=30) as client:
            assert client.call_tool("echo", {"message": "first"}).text == "first"
            reads.clear()
            hold.set()
            reader = threading.Thread(
                target=client.call_tool, args=("echo", {"message": "held"}), name="mcpsync-test-reader", daemon=True
            )
            reader.start()
            assert inside.wait(WAIT_BOUND)
            for i in range(5):  # the reader is still inside the store: these neither read nor wait
                assert client.call_tool("echo", {"message": str(i)}).text == str(i)
            assert reads == ["mcpsync-test-reader"]
            go.set()
            reader.join(WAIT_BOUND)
            assert not reader.is_alive()
            assert client.call_tool("echo", {"message": "after"}).text == "after"
            assert len(reads) == 2  # with nobody reading, a run-out reuse reads again
        sent = [r.headers.get("authorization") for r in mcp.records("POST", "tools/call")]
        assert len(sent) == 8 and len(set(sent)) == 1  # one token for every call


def test_a_requests_hook_that_reads_the_answer_it_returns() -> None:
    import requests

    seen: List[int] = []

    class LogBodies(requests.auth.AuthBase):
        def __call__(self, r: Any) -> Any:
            r.headers["Authorization"] = "Bearer good"
            r.register_hook("response", self.log)
            return r

        def log(self, r: Any, **kwargs: Any) -> Any:
            seen.append(len(r.content))  # reads the whole body of the answer the transport will use
            return r

    with MCPTestServer(era="modern", response_mode="json") as srv:
        srv.faults.require_token = "good"
        with mcpsync.connect(srv.url, http=HTTPOptions(transport="http"), auth=LogBodies(), timeout=30) as client:
            assert isinstance(_engine(client), RequestsHookNet)
            assert client.call_tool("echo", {"message": "logged"}).text == "logged"
        assert seen and all(n > 0 for n in seen)


def test_hostile_challenges_never_escape_untyped_and_the_client_stays_usable(
    make_manager: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from tests.peers import httpserver

    header_text = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=120)
    with AuthTestServer() as auth, MCPTestServer(era="modern") as mcp:
        _mcp_behind(auth, mcp, monkeypatch)
        accept_token = httpserver._Handler._auth_ok  # the resource server's check, set by _mcp_behind
        hostile: Dict[str, Any] = {}

        def auth_ok(handler: Any, msg: Any) -> bool:
            answer = hostile.pop("answer", None)  # the next request only
            if answer is not None:
                status, challenge, nonce = answer
                headers = {"WWW-Authenticate": challenge}
                if nonce:
                    headers["DPoP-Nonce"] = nonce
                handler.reply(status, b'{"error":"x"}', headers=headers)
                return False
            return accept_token(handler, msg)

        monkeypatch.setattr(httpserver._Handler, "_auth_ok", auth_ok)
        auth.add_client("svc", method="client_secret_post", secret="s3")
        oauth = make_manager()
        oauth.add_server(
            "box",
            mcp.url,
            {"grant": "client_credentials", "clientId": "svc", "clientSecret": "s3",
             "tokenEndpointAuthMethod": "client_secret_post", "authorizationServer": auth.issuer},
        )  # fmt: skip
        assert oauth.probe_challenge("box")
        with mcpsync.connect(mcp.url, auth=oauth.auth("box"), timeout=30) as client:

            @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
            @given(
                status=st.sampled_from([401, 403]),
                challenge=st.one_of(
                    header_text,
                    st.builds(lambda e, extra: 'DPoP error="%s", %s' % (e, extra),
                              st.sampled_from(["use_dpop_nonce", "invalid_token"]), header_text),
                    st.builds(lambda s: 'Bearer error="insufficient_scope", scope="%s"' % s, header_text),
                ),
                nonce=st.one_of(st.none(), header_text),
            )  # fmt: skip
            def one(status: int, challenge: str, nonce: Any) -> None:
                hostile["answer"] = (status, challenge, nonce)
                try:
                    client.call_tool("echo", {"message": "h"})
                except mcpsync.MCPError:
                    pass  # typed: AuthRequired, InsufficientScope, HTTPStatusError...
                hostile.clear()
                assert client.call_tool("echo", {"message": "ok"}).text == "ok"

            one()
