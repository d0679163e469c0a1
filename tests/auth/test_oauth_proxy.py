"""OAuth requests made on behalf of a server follow that server's HTTP settings (proxies, ``no_proxy``,
``trust_env``, ``verify``, ``cert``), against real local servers.

The MCP server and the authorization server are reachable only through a local forward/CONNECT proxy: they are
named ``mcp.internal.test`` and ``auth.internal.test``, names only the proxy resolves (its host map), as a
corporate proxy resolves internal hosts. A request that bypasses the proxy cannot even resolve the name. No proxy
variable is set in the environment (unless a test sets one on purpose).
"""

from __future__ import annotations

import os
import shutil
import ssl
import subprocess
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mcpsync
from mcpsync.errors import AuthError, MCPError
from mcpsync.transports.http.oauth_route import OAuthRoute
from mcpsync.transports.http.options import HTTPOptions
from tests.peers.authserver import AuthTestServer, make_manager, no_auth_leaks, store  # noqa: F401
from tests.peers.httpserver import MCPTestServer
from tests.peers.proxyserver import ProxyServer, SocksServer
from tests.manager.test_manager_http import _mcp_behind

pytestmark = pytest.mark.usefixtures("no_auth_leaks")

MCP_HOST = "mcp.internal.test"
AUTH_HOST = "auth.internal.test"
HOSTS = {MCP_HOST: "127.0.0.1", AUTH_HOST: "127.0.0.1"}
_PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")


@pytest.fixture(autouse=True)
def _no_proxy_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


def _internal(auth: AuthTestServer, mcp: MCPTestServer, monkeypatch: pytest.MonkeyPatch, scheme: str = "http") -> str:
    """Make ``auth`` the authorization server of ``mcp`` under the internal names; the MCP URL."""
    base = "%s://%s:%d" % (scheme, AUTH_HOST, auth.port)
    auth.base = base
    auth.issuer = base + auth.issuer_path
    auth.server_url = base + auth.mcp_path
    for key in ("issuer", "authorization_endpoint", "token_endpoint", "registration_endpoint"):
        auth.metadata[key] = auth.metadata[key].replace("http://127.0.0.1:%d" % auth.port, base)
    auth.prm["authorization_servers"] = [auth.issuer]
    _mcp_behind(auth, mcp, monkeypatch)
    url = "http://%s:%d/mcp" % (MCP_HOST, mcp.port)
    auth.prm["resource"] = url
    return url


def _client_credentials(auth: AuthTestServer) -> Dict[str, Any]:
    auth.add_client("svc", method="client_secret_post", secret="s3")
    return {
        "grant": "client_credentials",
        "clientId": "svc",
        "clientSecret": "s3",
        "tokenEndpointAuthMethod": "client_secret_post",
        "authorizationServer": auth.issuer,
    }


def _through(proxy: ProxyServer) -> List[str]:
    """The hosts the proxy carried requests to (forwarded and tunnelled)."""
    with proxy.lock:
        hosts = [target.split("/")[2].rsplit(":", 1)[0] for _, target, _ in proxy.forwarded]
        hosts += [target.rsplit(":", 1)[0] for target, _ in proxy.tunnels]
    return hosts


def test_client_credentials_end_to_end_through_the_servers_proxy(
    make_manager: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with AuthTestServer() as auth, MCPTestServer() as mcp, ProxyServer(hosts=HOSTS) as proxy:
        url = _internal(auth, mcp, monkeypatch)
        oauth = make_manager()
        oauth.add_server("box", url, _client_credentials(auth))
        with pytest.raises(AuthError):  # the default OAuth session goes direct: the internal name does not resolve
            oauth.login("box")
        assert not auth.token_requests()
        with mcpsync.connect(
            url, auth=oauth.auth("box"), http=HTTPOptions(proxies={"all": proxy.url}), timeout=30
        ) as client:
            assert oauth.probe_challenge("box")  # the unauthenticated probe of the MCP URL: through the proxy too
            assert client.call_tool("echo", {"message": "1"}).text == "1"  # 401, discovery, token, resend
            auth.access_tokens.clear()  # revoked: the next call gets a new token, through the proxy again
            assert client.call_tool("echo", {"message": "2"}).text == "2"
        assert len(auth.token_requests("client_credentials")) == 2
        hosts = _through(proxy)
        assert AUTH_HOST in hosts and MCP_HOST in hosts
        with proxy.lock:
            carried = [target for _, target, _ in proxy.forwarded]
        assert any(t.endswith("/token") for t in carried) and any("/.well-known/" in t for t in carried)
        assert "http://%s:%d/mcp" % (MCP_HOST, mcp.port) in carried  # the probe's POST among them


def test_interactive_login_and_probe_from_a_manager_through_its_proxy(
    store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.peers.authserver import free_port

    with AuthTestServer() as auth, MCPTestServer() as mcp, ProxyServer(hosts=HOSTS) as proxy:
        url = _internal(auth, mcp, monkeypatch)

        def browser(request: Any) -> str:  # the user's browser reaches the authorization page through the proxy
            with requests.get(request.url, allow_redirects=False, timeout=30, proxies={"http": proxy.url}) as resp:
                assert resp.status_code == 302, resp.text
                return str(resp.headers["Location"])

        oauth_options = {"store": store, "callback_port": free_port(), "authorize_handler": browser}
        cfg = {"box": {"url": url}}
        client_options = {"proxies": {"all": proxy.url}}
        with mcpsync.Manager(cfg, oauth_options=oauth_options, client_options=client_options) as mgr:
            assert mgr.status("box").status == "needs_auth"
            status = mgr.authenticate("box")  # probe, discovery, registration, code exchange: all via the proxy
            assert status.status == "connected", status
            assert mgr.call_tool("echo", {"message": "hi"}, server="box").text == "hi"
        assert [e["path"] for e in auth.log if e["path"] == "/register"]  # dynamic registration happened
        assert len(auth.token_requests("authorization_code")) == 1
        assert AUTH_HOST in _through(proxy)


def test_no_proxy_sends_the_oauth_requests_it_names_direct(make_manager: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """``no_proxy`` as the engine applies it (a CIDR here): the authorization server at 127.0.0.1 is reached
    direct, the MCP server (an internal name) through the proxy."""
    with AuthTestServer() as auth, MCPTestServer() as mcp, ProxyServer(hosts=HOSTS) as proxy:
        _mcp_behind(auth, mcp, monkeypatch)
        url = "http://%s:%d/mcp" % (MCP_HOST, mcp.port)
        auth.prm["resource"] = url
        oauth = make_manager()
        oauth.add_server("box", url, _client_credentials(auth))
        proxies = {"all": proxy.url, "no_proxy": "127.0.0.0/8"}
        with mcpsync.connect(url, auth=oauth.auth("box"), http=HTTPOptions(proxies=proxies), timeout=30) as client:
            assert client.call_tool("echo", {"message": "x"}).text == "x"
        assert auth.token_requests("client_credentials")
        assert set(_through(proxy)) == {MCP_HOST}


def test_trust_env_false_keeps_the_oauth_requests_off_the_environments_proxy(
    make_manager: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with AuthTestServer() as auth, MCPTestServer() as mcp, ProxyServer() as trap:
        _mcp_behind(auth, mcp, monkeypatch)
        oauth = make_manager()
        oauth.add_server("box", mcp.url, _client_credentials(auth))
        monkeypatch.setenv("HTTP_PROXY", trap.url)
        monkeypatch.setenv("http_proxy", trap.url)
        with mcpsync.connect(mcp.url, auth=oauth.auth("box"), http=HTTPOptions(trust_env=False), timeout=30) as client:
            assert oauth.probe_challenge("box")
            assert client.call_tool("echo", {"message": "y"}).text == "y"
        assert auth.token_requests("client_credentials")
        assert trap.connections == 0


# ---------------------------------------------------------------------------------------------- TLS


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, str]:
    if shutil.which("openssl") is None and os.environ.get("CI") != "true":
        pytest.skip("needs the openssl command")
    d = tmp_path_factory.mktemp("pki")
    (d / "san.ext").write_text("subjectAltName=DNS:%s,DNS:%s\n" % (AUTH_HOST, MCP_HOST))
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=mcpsync oauth test CA",
             "-keyout", "ca.key", "-out", "ca.crt", cwd=d)  # fmt: skip
    for who in ("server", "client"):
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=" + AUTH_HOST, "-keyout", who + ".key",
                 "-out", who + ".csr", cwd=d)  # fmt: skip
        _openssl("x509", "-req", "-in", who + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                 "-days", "2", "-extfile", "san.ext", "-out", who + ".crt", cwd=d)  # fmt: skip
    return {k: str(d / k) for k in ("ca.crt", "server.crt", "server.key", "client.crt", "client.key")}


@pytest.fixture
def tls_auth(pki: Dict[str, str]) -> Iterator[AuthTestServer]:
    """The authorization server over TLS with a certificate of the private CA, asking for a client certificate
    (optional: the test decides whether one is required)."""
    with AuthTestServer() as auth:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(pki["server.crt"], pki["server.key"])
        ctx.load_verify_locations(pki["ca.crt"])
        ctx.verify_mode = ssl.CERT_OPTIONAL
        auth.httpd.socket = ctx.wrap_socket(auth.httpd.socket, server_side=True)
        auth.tls_context = ctx  # type: ignore[attr-defined]
        yield auth


def test_verify_and_cert_reach_an_authorization_server_with_a_private_ca_through_the_proxy(
    tls_auth: AuthTestServer,
    pki: Dict[str, str],
    make_manager: Any,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    auth = tls_auth
    with MCPTestServer() as mcp, ProxyServer(hosts=HOSTS) as proxy:
        url = _internal(auth, mcp, monkeypatch, scheme="https")
        oauth = make_manager()
        oauth.add_server("box", url, _client_credentials(auth))
        proxies = {"all": proxy.url}
        # without the private CA the token endpoint is not trusted: a typed error, no token obtained
        with pytest.raises(MCPError) as caught:  # the first 401 comes at open(): OAuth runs there
            with mcpsync.connect(url, auth=oauth.auth("box"), http=HTTPOptions(proxies=proxies), timeout=30) as client:
                client.call_tool("echo", {"message": "no"})
        assert "s3" not in str(caught.value)
        assert not auth.token_requests()
        # verify= names the CA bundle: discovery and token requests go through the CONNECT tunnel, verified
        with mcpsync.connect(
            url, auth=oauth.auth("box"), http=HTTPOptions(proxies=proxies, verify=pki["ca.crt"]), timeout=30
        ) as c:
            assert c.call_tool("echo", {"message": "ca"}).text == "ca"
        assert len(auth.token_requests("client_credentials")) == 1
        with proxy.lock:
            assert any(t.startswith(AUTH_HOST + ":") for t, _ in proxy.tunnels)
        # the OAuth manager's own verify= still applies where the client leaves verify at its default
        from mcpsync.auth.store import CredentialStore

        defaults = make_manager(verify=pki["ca.crt"], store=CredentialStore(str(tmp_path / "other.json")))
        defaults.add_server("box", url, _client_credentials(auth))
        with mcpsync.connect(url, auth=defaults.auth("box"), http=HTTPOptions(proxies=proxies), timeout=30) as c:
            assert c.call_tool("echo", {"message": "manager ca"}).text == "manager ca"
        assert len(auth.token_requests("client_credentials")) == 2
        # a client certificate (mutual TLS) the authorization server requires
        auth.tls_context.verify_mode = ssl.CERT_REQUIRED  # type: ignore[attr-defined]
        oauth.remove_auth("box")
        cert = (pki["client.crt"], pki["client.key"])
        with pytest.raises(MCPError):  # no certificate: the handshake is refused
            with mcpsync.connect(
                url, auth=oauth.auth("box"), http=HTTPOptions(proxies=proxies, verify=pki["ca.crt"]), timeout=30
            ) as c:
                c.call_tool("echo", {"message": "no cert"})
        with mcpsync.connect(
            url, auth=oauth.auth("box"), http=HTTPOptions(proxies=proxies, verify=pki["ca.crt"], cert=cert), timeout=30
        ) as c:
            assert c.call_tool("echo", {"message": "mtls"}).text == "mtls"
        assert len(auth.token_requests("client_credentials")) == 3


# ---------------------------------------------------------------------------------------------- faults


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    answer=st.sampled_from([407, 502, 503, 0]),
    path=st.sampled_from(["forward", "connect"]),
    password=st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=8, max_size=16),
)
def test_a_proxy_refusing_the_oauth_requests_is_a_typed_error_without_credentials(
    answer: int, path: str, password: str
) -> None:
    """Whatever the proxy answers on the OAuth path (407, a 5xx, a hang-up), forwarding or tunnelling: an
    ``MCPError`` (an ``AuthError``) whose message names neither the proxy's credentials nor the client secret."""
    import tempfile

    from mcpsync.auth import OAuthManager
    from mcpsync.auth.store import CredentialStore

    with AuthTestServer() as auth, ProxyServer(hosts=HOSTS) as proxy, tempfile.TemporaryDirectory() as tmp:
        scheme = "https" if path == "connect" else "http"
        base = "%s://%s:%d" % (scheme, AUTH_HOST, auth.port)
        raw = b"" if answer == 0 else b"HTTP/1.1 %d Refused\r\nContent-Length: 0\r\nConnection: close\r\n\r\n" % answer
        if path == "connect":
            proxy.connect_answer = raw
        else:
            proxy.forward_answer = raw
        proxy_url = proxy.url.replace("://", "://alice:%s@" % password)
        with OAuthManager(store=CredentialStore(os.path.join(tmp, "auth.json"))) as oauth:
            oauth.add_server(
                "box",
                "%s://%s:%d/mcp" % (scheme, MCP_HOST, auth.port),
                {"grant": "client_credentials", "clientId": "svc", "clientSecret": "client-secret-" + password,
                 "tokenEndpointAuthMethod": "client_secret_post", "authorizationServer": base},
            )  # fmt: skip
            oauth.use_http("box", OAuthRoute(HTTPOptions(proxies={"all": proxy_url})))
            assert oauth.probe_challenge("box") is False  # the probe fails quietly (logged), as a direct one does
            with pytest.raises(MCPError) as caught:
                oauth.login("box")
        assert isinstance(caught.value, AuthError)
        text = str(caught.value) + repr(caught.value)
        assert password not in text and "alice" not in text
        assert not auth.log  # nothing got past the proxy


def test_socks_end_to_end_when_pysocks_is_installed(make_manager: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("socks")
    with AuthTestServer() as auth, MCPTestServer() as mcp, SocksServer(hosts=HOSTS) as proxy:
        url = _internal(auth, mcp, monkeypatch)
        oauth = make_manager()
        oauth.add_server("box", url, _client_credentials(auth))
        with mcpsync.connect(
            url, auth=oauth.auth("box"), http=HTTPOptions(proxies={"all": proxy.url}), timeout=30
        ) as client:
            assert client.call_tool("echo", {"message": "s"}).text == "s"
        assert auth.token_requests("client_credentials")


def test_the_same_settings_keep_one_session_and_new_settings_replace_it(make_manager: Any) -> None:
    oauth = make_manager()
    oauth.add_server("a", "http://127.0.0.1:1/mcp")
    oauth.add_server("b", "http://127.0.0.1:2/mcp")
    oauth.use_http("a", OAuthRoute(HTTPOptions(proxies={"all": "http://127.0.0.1:9"})))
    first = oauth._http("a")
    oauth.use_http("a", OAuthRoute(HTTPOptions(proxies={"all": "http://127.0.0.1:9"})))  # a reconnect: same key
    assert oauth._http("a") is first
    oauth.use_http("b", OAuthRoute(HTTPOptions(proxies={"all": "http://127.0.0.1:9"})))
    assert oauth._http("b") is first  # one session per distinct settings
    oauth.use_http("a", OAuthRoute(HTTPOptions(trust_env=False)))
    assert oauth._http("a") is not first and oauth._http("b") is first
    oauth.use_http("a", None)
    assert oauth._http("a") is oauth._http()  # back to the manager's default session


def test_cli_login_of_a_configured_server_uses_its_proxy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``mcpsync auth login NAME`` for a server whose configuration sets ``options: {proxies: ...}``: the probe,
    discovery, registration and code exchange go through that proxy (the browser reaches it through it too)."""
    import json
    import threading
    import webbrowser

    from mcpsync.cli.app import main
    from tests.peers.authserver import free_port

    with AuthTestServer() as auth, ProxyServer(hosts=HOSTS) as proxy:
        base = "http://%s:%d" % (AUTH_HOST, auth.port)
        auth.base, auth.issuer, auth.server_url = base, base, base + auth.mcp_path
        for key in ("issuer", "authorization_endpoint", "token_endpoint", "registration_endpoint"):
            auth.metadata[key] = auth.metadata[key].replace("http://127.0.0.1:%d" % auth.port, base)
        auth.prm["authorization_servers"] = [base]
        auth.prm["resource"] = auth.server_url
        threads: List[threading.Thread] = []

        def browser(url: str, *args: Any, **kwargs: Any) -> bool:
            def run() -> None:  # follows the redirect to the loopback callback (direct: no_proxy for it)
                proxies = {"http": proxy.url, "no_proxy": "127.0.0.1"}
                with requests.get(url, timeout=30, proxies=proxies) as resp:
                    assert resp.status_code == 200

            thread = threading.Thread(target=run)
            thread.start()
            threads.append(thread)
            return True

        monkeypatch.setattr(webbrowser, "open", browser)
        config = tmp_path / "mcp.json"
        config.write_text(
            json.dumps({"box": {"url": auth.server_url, "options": {"proxies": {"all": proxy.url}}}})  # native format
        )
        argv = ["auth", "login", "box", "--config", str(config), "--auth-file", str(tmp_path / "a.json"),
                "--callback-port", str(free_port())]  # fmt: skip
        try:
            assert main(argv) == 0
        finally:
            for thread in threads:
                thread.join(60)
        assert "logged in to box (authenticated)" in capsys.readouterr().out
        assert auth.token_requests("authorization_code")
        with proxy.lock:
            carried = [target for _, target, _ in proxy.forwarded]
        assert any(t.endswith("/token") for t in carried) and any(t.endswith("/register") for t in carried)


@pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")  # urllib3's, for verify=False
def test_verify_false_and_an_ssl_context_for_the_authorization_server(
    tls_auth: AuthTestServer, pki: Dict[str, str], make_manager: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    auth = tls_auth
    with MCPTestServer() as mcp, ProxyServer(hosts=HOSTS) as proxy:
        url = _internal(auth, mcp, monkeypatch, scheme="https")
        oauth = make_manager()
        oauth.add_server("box", url, _client_credentials(auth))
        proxies = {"all": proxy.url}
        with mcpsync.connect(
            url, auth=oauth.auth("box"), http=HTTPOptions(proxies=proxies, verify=False), timeout=30
        ) as client:
            assert client.call_tool("echo", {"message": "unverified"}).text == "unverified"
        oauth.remove_auth("box")
        context = ssl.create_default_context(cafile=pki["ca.crt"])
        with mcpsync.connect(
            url, auth=oauth.auth("box"), http=HTTPOptions(proxies=proxies, verify=context), timeout=30
        ) as client:
            assert client.call_tool("echo", {"message": "context"}).text == "context"
        assert len(auth.token_requests("client_credentials")) == 2
