"""OAuthAuth on mcpsync's own HTTP transport (not a plain requests.Session): the 401 -> login/refresh ->
resend path runs through the transport's send path, which prepares requests without a cookie jar."""

from __future__ import annotations

from typing import Any, Dict

import pytest

import mcpsync
from tests.peers.authserver import AuthTestServer, approve_via_http, make_manager, no_auth_leaks, store  # noqa: F401
from tests.peers.httpserver import MCPTestServer
from tests.manager.test_manager_http import _mcp_behind
from mcpsync.client import HTTPOptions

pytestmark = pytest.mark.usefixtures("no_auth_leaks")


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_login_from_inside_the_first_request_then_refresh_after_revocation(make_manager, monkeypatch, protocol):
    with AuthTestServer() as auth, MCPTestServer() as mcp:
        _mcp_behind(auth, mcp, monkeypatch)
        oauth = make_manager(authorize_handler=approve_via_http)
        oauth.add_server("box", mcp.url)
        with mcpsync.connect(mcp.url, auth=oauth.auth("box", interactive=True), protocol=protocol) as client:
            assert any(t.name == "echo" for t in client.list_tools())  # 401, login, resend
            assert len(auth.token_requests("authorization_code")) == 1
            auth.access_tokens.clear()  # revoked server-side
            assert client.call_tool("echo", {"message": "hi"}).text == "hi"  # 401, refresh, resend
            assert len(auth.token_requests("refresh_token")) == 1
            assert len(auth.token_requests("authorization_code")) == 1


def _dpop_mcp_behind(auth: AuthTestServer, mcp: MCPTestServer, monkeypatch: Any, resource: str) -> None:
    """Like _mcp_behind, for DPoP-bound tokens: ``Authorization: DPoP`` and a proof the AS's checks accept
    (signature, typ, jwk, htm = the request's method, htu = its URL without the query, ath, jti, cnf binding)."""
    from urllib.parse import urlsplit

    from tests.peers import httpserver

    auth.prm["resource"] = resource
    challenge = 'DPoP resource_metadata="%s%s"' % (auth.base, auth.prm_header_path)
    original = httpserver._Handler._auth_ok

    def auth_ok(handler: Any, msg: Any) -> bool:
        scheme, _, token = handler.headers.get("Authorization", "").partition(" ")
        with auth.lock:
            info = auth.access_tokens.get(token)
        ok = info is not None and scheme == "DPoP" and info.get("jkt")
        if ok:
            try:
                htu = "http://127.0.0.1:%d%s" % (mcp.port, urlsplit(handler.path).path)
                ok = auth.verify_dpop(handler.headers.get("DPoP"), handler.command, htu, token=token) == info["jkt"]
            except Exception:  # noqa: BLE001 - any bad proof is a 401
                ok = False
        if not ok:
            handler.reply(401, b'{"error":"unauthorized"}', headers={"WWW-Authenticate": challenge})
            return False
        return original(handler, msg)

    monkeypatch.setattr(httpserver._Handler, "_auth_ok", auth_ok)


@pytest.mark.parametrize("kind", ["auto", "legacy", "sse"])
def test_dpop_bound_tokens_over_the_transport(make_manager, monkeypatch, kind):
    # auto: the 2026-07-28 era (POSTs); legacy: the handshake era (POSTs, the GET stream, DELETE on close);
    # sse: legacy HTTP+SSE (the GET stream and POSTs to the message endpoint, whose query the htu drops)
    with AuthTestServer() as auth, MCPTestServer() as mcp:
        url = mcp.sse_url() if kind == "sse" else mcp.url
        _dpop_mcp_behind(auth, mcp, monkeypatch, "http://127.0.0.1:%d" % mcp.port if kind == "sse" else mcp.url)
        auth.dpop_algs = ["ES256"]
        oauth = make_manager(authorize_handler=approve_via_http)
        oauth.add_server("box", url)
        options: Dict[str, Any] = {"http": HTTPOptions(transport="sse")} if kind == "sse" else {"protocol": kind}
        with mcpsync.connect(url, auth=oauth.auth("box", interactive=True), **options) as client:
            assert client.call_tool("echo", {"message": "hi"}).text == "hi"
            assert client.call_tool("echo", {"message": "again"}).text == "again"
        assert oauth.store.get("box")["tokens"]["tokenType"] == "DPoP"
        authorized = [r for r in mcp.log if r.headers.get("authorization")]
        assert len(authorized) >= 3 and all(r.headers["authorization"].startswith("DPoP ") for r in authorized)
        assert len({r.headers["dpop"] for r in authorized}) == len(authorized)  # a fresh proof each request
        assert auth.dpop_errors == []
        if kind != "auto":
            assert "GET" in {r.method for r in authorized}
