"""One HTTP stack for every MCP request: whatever the auth, proxy or netrc configuration, a real call to a real
local server goes through the server's urllib3 pools (:class:`~mcpsync.transports.http.pool.PoolNet`).

For each configuration (plain, a bearer token, an ``mcpsync.Auth`` bearer flow, OAuth client credentials, DPoP,
a ``requests.auth.AuthBase``, an ``http://`` proxy, an ``https://`` proxy, SOCKS5, netrc):

* the transport's engine is :class:`~mcpsync.transports.http.pool.PoolNet` (an auth layer around it at most);
* the server (and the proxy) saw the calls, with the credentials the configuration says;
* a urllib3 connection pool was made to the MCP server or to the proxy (urllib3 is watched while the calls run);
* in a fresh interpreter, configurations that need no ``requests`` (bearer flows, proxies, SOCKS, netrc) never
  import ``requests``.

The removed ``engine=`` option (any value) and ``MCPSYNC_HTTP_ENGINE=requests`` are a ``ConfigError`` that says
what happened, and nothing reaches the server.
"""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import sys
from contextlib import ExitStack
from typing import Any, Dict, List, Set, Tuple

import pytest

import mcpsync
from mcpsync.client.flat import grouped
from mcpsync.httpauth import BearerAuth
from mcpsync.transports.http.pool import PoolNet

from tests.peers.authserver import AuthTestServer, approve_via_http, make_manager, no_auth_leaks, store  # noqa: F401
from tests.peers.httpserver import MCPTestServer
from tests.peers.proxyserver import ProxyServer, SocksServer
from tests.auth.test_auth_transport import _dpop_mcp_behind
from tests.transports.test_http_tls import _tls_server, pki  # noqa: F401 - the throwaway CA fixture
from tests.manager.test_manager_http import _mcp_behind
from mcpsync.client import HTTPOptions

pytestmark = [pytest.mark.usefixtures("no_auth_leaks"), pytest.mark.timeout(180)]

_ENV = ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY",
        "NETRC", "MCPSYNC_HTTP_ENGINE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")  # fmt: skip


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.netrc of the machine's user


@pytest.fixture
def urllib3_pools(monkeypatch: pytest.MonkeyPatch) -> List[Tuple[str, int]]:
    """Every urllib3 connection pool made while the test runs, as ``(host, port)``."""
    import urllib3.connectionpool

    made: List[Tuple[str, int]] = []
    original = urllib3.connectionpool.HTTPConnectionPool.__init__

    def watched(self: Any, host: str, port: Any = None, *args: Any, **kwargs: Any) -> None:
        made.append((host, int(port or 0)))
        original(self, host, port, *args, **kwargs)

    monkeypatch.setattr(urllib3.connectionpool.HTTPConnectionPool, "__init__", watched)
    return made


def _the_one_engine(client: mcpsync.Client) -> None:
    net = client.transport._net  # type: ignore[attr-defined]
    assert net.kind == "urllib3"
    inner = getattr(net, "inner", net)  # an auth layer runs around the pools, never instead of them
    assert isinstance(inner, PoolNet), type(inner)


def _calls(client: mcpsync.Client, tag: str) -> None:
    for i in range(2):
        assert client.call_tool("echo", {"message": "%s%d" % (tag, i)}).text == "%s%d" % (tag, i)
    handles = [client.call_tool_async("echo", {"message": "%s-a%d" % (tag, i)}) for i in range(4)]
    assert sorted(h.result(60).text for h in handles) == ["%s-a%d" % (tag, i) for i in range(4)]


def _requests_auth(token: str) -> Any:
    """A plain ``requests.auth.AuthBase`` (requests imported here, lazily)."""
    import requests

    class Token(requests.auth.AuthBase):
        def __call__(self, r: Any) -> Any:
            r.headers["Authorization"] = "Bearer " + token
            return r

    return Token()


CONFIGURATIONS = ["plain", "bearer_token", "auth_flow", "oauth", "dpop", "requests_auth", "http_proxy",
                  "https_proxy", "socks5", "netrc"]  # fmt: skip


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
def test_every_configuration_is_carried_by_the_servers_urllib3_pools(
    configuration: str,
    urllib3_pools: List[Tuple[str, int]],
    make_manager: Any,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    pki: Dict[str, str],  # noqa: F811
    tmp_path: Any,
) -> None:
    with ExitStack() as stack:
        mcp = stack.enter_context(MCPTestServer(era="modern"))
        url = mcp.url
        options: Dict[str, Any] = {"transport": "http", "timeout": 60}
        watched: Set[int] = {mcp.port}  # where the calls' urllib3 pool connects: the server, or its proxy
        expect_authorization = None
        proxy: Any = None
        if configuration == "bearer_token":
            mcp.faults.require_token = "tok"
            options["bearer_token"] = "tok"
        elif configuration == "auth_flow":
            mcp.faults.require_token = "tok"
            options["auth"] = BearerAuth("tok")
        elif configuration == "requests_auth":
            mcp.faults.require_token = "tok"
            options["auth"] = _requests_auth("tok")
        elif configuration in ("oauth", "dpop"):
            auth = stack.enter_context(AuthTestServer())
            if configuration == "oauth":
                _mcp_behind(auth, mcp, monkeypatch)
                auth.add_client("svc", method="client_secret_post", secret="s3")
                oauth = make_manager()
                oauth.add_server("box", url, {"grant": "client_credentials", "clientId": "svc", "clientSecret": "s3",
                                              "tokenEndpointAuthMethod": "client_secret_post",
                                              "authorizationServer": auth.issuer})  # fmt: skip
                assert oauth.probe_challenge("box")
                options["auth"] = oauth.auth("box")
            else:
                _dpop_mcp_behind(auth, mcp, monkeypatch, url)
                auth.dpop_algs = ["ES256"]
                oauth = make_manager(authorize_handler=approve_via_http)
                oauth.add_server("box", url)
                options["auth"] = oauth.auth("box", interactive=True)
        elif configuration == "http_proxy":
            proxy = stack.enter_context(ProxyServer(credentials=("u", "pw")))
            monkeypatch.setenv("HTTP_PROXY", proxy.url_with_credentials)
        elif configuration == "https_proxy":  # TLS to the proxy, then TLS to an https server inside the tunnel
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(pki["server.crt"], pki["server.key"])
            proxy = stack.enter_context(ProxyServer(tls=context))
            mcp = stack.enter_context(_tls_server(pki))
            url = "https://127.0.0.1:%d/mcp" % mcp.port
            watched.add(mcp.port)
            options.update(proxies={"all": proxy.url}, verify=pki["ca.crt"])
        elif configuration == "socks5":
            proxy = stack.enter_context(SocksServer(credentials=("sock", "pw")))
            options["proxies"] = {"all": proxy.url_with_credentials}
        elif configuration == "netrc":
            netrc = tmp_path / "netrc"
            netrc.write_text("machine 127.0.0.1 login alice password s3cret\n")
            os.chmod(netrc, 0o600)
            monkeypatch.setenv("NETRC", str(netrc))
            expect_authorization = "Basic YWxpY2U6czNjcmV0"
        if proxy is not None:
            watched.add(proxy.port)  # a forward proxy gets the pool; a tunnel's pool is keyed by the server
        del urllib3_pools[:]  # the setup's own requests (probe_challenge: OAuth discovery) are not MCP requests
        with mcpsync.connect(url, **grouped(options, remote=True)) as client:
            _the_one_engine(client)
            _calls(client, configuration)
        calls = mcp.records("POST", "tools/call")
        assert len({r.body["params"]["arguments"]["message"] for r in calls}) == 6  # every call reached the server
        if expect_authorization is not None:
            assert {r.headers.get("authorization") for r in mcp.log} == {expect_authorization}
        if configuration == "dpop":
            assert all(r.headers.get("authorization", "").startswith("DPoP ") for r in calls)
        if configuration == "http_proxy":
            assert len([t for m, t, _ in proxy.forwarded if m == "POST"]) == len(mcp.records("POST"))
        if configuration in ("https_proxy", "socks5"):
            assert proxy.tunnels and all(t == "127.0.0.1:%d" % mcp.port for t, _ in proxy.tunnels)
        reached = {port for _, port in urllib3_pools}
        assert reached & watched, urllib3_pools  # urllib3 carried the MCP requests


_CHILD = r"""
import json, sys
import mcpsync
from mcpsync.client import HTTPOptions
from mcpsync.httpauth import BearerAuth
cfg = json.loads(sys.argv[1])
runs = [
    (cfg["plain"], {"auth": BearerAuth("tok"), "proxies": {"http": cfg["proxy"]}}),
    (cfg["plain"], {"bearer_token": "tok", "proxies": {"all": cfg["socks"]}}),
    (cfg["tls"], {"bearer_token": "tok", "proxies": {"all": cfg["https_proxy"]}, "verify": cfg["ca"]}),
    (cfg["plain"], {"bearer_token": "tok"}),
    (cfg["tls"], {"proxies": {"all": cfg["socks"]}, "verify": cfg["ca"]}),  # netrc's credentials, through SOCKS
]
for url, options in runs:
    with mcpsync.connect(url, timeout=60, http=HTTPOptions(transport="http", **options)) as client:
        assert client.call_tool("echo", {"message": "x"}).text == "x"
        assert client.transport._net.kind == "urllib3"
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] == "requests")))
"""


def test_auth_flows_proxies_and_netrc_never_import_requests(
    pki: Dict[str, str],  # noqa: F811
    tmp_path: Any,
) -> None:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki["server.crt"], pki["server.key"])
    with ProxyServer() as proxy, ProxyServer(tls=context) as https_proxy, SocksServer() as socks, \
            MCPTestServer(era="modern") as plain, _tls_server(pki) as tls:  # fmt: skip
        plain.faults.require_token = "tok"
        cfg = {"plain": plain.url, "tls": "https://127.0.0.1:%d/mcp" % tls.port, "proxy": proxy.url,
               "https_proxy": https_proxy.url, "socks": socks.url, "ca": pki["ca.crt"]}  # fmt: skip
        env = {k: v for k, v in os.environ.items() if k not in _ENV}
        netrc = tmp_path / "netrc"
        netrc.write_text("machine 127.0.0.1 login alice password s3cret\n")
        os.chmod(netrc, 0o600)
        env["NETRC"] = str(netrc)
        out = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(cfg)], env=env, capture_output=True,
                             text=True, timeout=120)  # fmt: skip
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout.strip().splitlines()[-1]) == []
        assert proxy.forwarded and https_proxy.tunnels and socks.tunnels  # each run went its way
        assert len(plain.records("POST", "tools/call")) == 3
        tls_calls = tls.records("POST", "tools/call")
        assert [r.headers.get("authorization") for r in tls_calls] == ["Bearer tok", "Basic YWxpY2U6czNjcmV0"]


def test_the_removed_engine_option_is_refused_and_nothing_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    with MCPTestServer(era="modern") as srv:
        for engine in ("requests", "stdlib", "auto"):
            with pytest.raises(mcpsync.ConfigError, match="engine option is gone") as info:
                mcpsync.connect(srv.url, http=HTTPOptions(transport="http"), timeout=30, engine=engine)  # type: ignore[arg-type]
            assert "urllib3 carries every request" in str(info.value) and "drop the engine argument" in str(info.value)
        monkeypatch.setenv("MCPSYNC_HTTP_ENGINE", "requests")
        with pytest.raises(mcpsync.ConfigError, match="MCPSYNC_HTTP_ENGINE=requests.*unset the variable"):
            mcpsync.connect(srv.url, http=HTTPOptions(transport="http"), timeout=30)
        with pytest.raises(mcpsync.ConfigError, match="MCPSYNC_HTTP_ENGINE=requests"):
            mcpsync.connect(srv.sse_url(), http=HTTPOptions(transport="sse"), timeout=30)
        assert srv.log == []
        monkeypatch.setenv("MCPSYNC_HTTP_ENGINE", "stdlib")  # a harmless leftover still works
        with mcpsync.connect(srv.url, http=HTTPOptions(transport="http"), timeout=30) as client:
            _the_one_engine(client)
            assert client.call_tool("echo", {"message": "ok"}).text == "ok"
