"""Proxies and netrc on the standard-library engine, through a real local forward/CONNECT proxy
(tests/peers/proxyserver.py) and a SOCKS5 proxy: configuration, the environment (HTTP(S)_PROXY, ALL_PROXY, NO_PROXY
with CIDR and *), the operating system's settings, CONNECT tunnels for https, Basic proxy credentials, 407 as a
typed error."""

from __future__ import annotations

import os
import urllib.request
from typing import Any, Dict, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mcpsync
from mcpsync.client.flat import grouped
from mcpsync.transports.http.net import make_net
from mcpsync.transports.http.proxy import bypass, proxy_table
from mcpsync.transports.http.options import HTTPOptions

from tests.conftest import fuzz_examples
from tests.peers.httpserver import MCPTestServer
from tests.peers.proxyserver import ProxyServer, SocksServer
from tests.transports.test_http_tls import _tls_server, pki  # noqa: F401 - the throwaway CA fixture

_PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
               "NO_PROXY", "NETRC", "REQUEST_METHOD")  # fmt: skip


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    for name in _PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.netrc of the machine's user


@pytest.fixture
def proxy() -> Iterator[ProxyServer]:
    with ProxyServer() as p:
        yield p


def _engine(client: Any) -> Any:
    return client.transport._net


# ---------------------------------------------------------------------------------------------- plain http


@pytest.mark.parametrize("kind", ["modern", "legacy", "sse"])
def test_http_through_the_proxy_from_the_environment(
    proxy: ProxyServer, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    with MCPTestServer(era="modern" if kind == "modern" else "legacy") as srv:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        url = srv.sse_url() if kind == "sse" else srv.url
        options: Dict[str, Any] = {"transport": "sse"}
        if kind != "sse":
            options = {"transport": "http", "protocol": "legacy" if kind == "legacy" else "auto"}
        with mcpsync.connect(url, timeout=30, **grouped(options, remote=True)) as client:
            assert _engine(client).kind == "urllib3"
            for i in range(5):
                assert client.call_tool("echo", {"message": str(i)}).text == str(i)
            handles = [client.call_tool_async("echo", {"message": "a%d" % i}) for i in range(8)]
            assert sorted(h.result(30).text for h in handles) == sorted("a%d" % i for i in range(8))
        posts = [t for m, t, _ in proxy.forwarded if m == "POST"]
        assert len(posts) == len(srv.records("POST")) >= 14  # every request went through the proxy
        assert all(t.startswith("http://127.0.0.1:%d/" % srv.port) for t in posts)  # absolute form
        if kind != "modern":
            assert any(m == "GET" for m, _, _ in proxy.forwarded)  # the event stream too
        assert proxy.connections < len(proxy.forwarded)  # keep-alive to the proxy


def test_explicit_proxies_and_all_proxy(proxy: ProxyServer, monkeypatch: pytest.MonkeyPatch) -> None:
    with MCPTestServer(era="modern") as srv:
        with mcpsync.connect(
            srv.url, http=HTTPOptions(transport="http", proxies={"all": proxy.url}), timeout=30
        ) as client:
            assert client.call_tool("echo", {"message": "x"}).text == "x"
        assert proxy.forwarded
        seen = len(proxy.forwarded)
        monkeypatch.setenv("ALL_PROXY", proxy.url)
        with mcpsync.connect(srv.url, http=HTTPOptions(transport="http"), timeout=30) as client:
            assert client.call_tool("echo", {"message": "y"}).text == "y"
        assert len(proxy.forwarded) > seen
        seen = len(proxy.forwarded)
        with mcpsync.connect(srv.url, http=HTTPOptions(transport="http", trust_env=False), timeout=30) as client:
            assert client.call_tool("echo", {"message": "z"}).text == "z"
        assert len(proxy.forwarded) == seen  # trust_env=False: the environment is ignored


@pytest.mark.parametrize("no_proxy", ["127.0.0.0/8", "*", "127.0.0.1", "localhost,127.0.0.1:{port}"])
def test_no_proxy_sends_directly(proxy: ProxyServer, monkeypatch: pytest.MonkeyPatch, no_proxy: str) -> None:
    with MCPTestServer(era="modern") as srv:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.setenv("NO_PROXY", no_proxy.format(port=srv.port))
        with mcpsync.connect(srv.url, http=HTTPOptions(transport="http"), timeout=30) as client:
            assert client.call_tool("echo", {"message": "direct"}).text == "direct"
        assert proxy.forwarded == [] and proxy.connections == 0


def test_no_proxy_for_another_port_still_proxies(proxy: ProxyServer, monkeypatch: pytest.MonkeyPatch) -> None:
    with MCPTestServer(era="modern") as srv:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1:%d,10.0.0.0/8,example.com" % (srv.port + 1))
        with mcpsync.connect(srv.url, http=HTTPOptions(transport="http"), timeout=30) as client:
            assert client.call_tool("echo", {"message": "p"}).text == "p"
        assert proxy.forwarded


def test_the_operating_system_proxy_settings(proxy: ProxyServer, monkeypatch: pytest.MonkeyPatch) -> None:
    # urllib.request.getproxies() reads macOS System Configuration / the Windows registry when no variable is
    # set; Linux has no such store, so the platform and that store are stood in for here
    from mcpsync.transports.http import proxy as http_proxy

    monkeypatch.setattr(http_proxy.sys, "platform", "darwin")
    monkeypatch.setattr(urllib.request, "getproxies", lambda: {"http": proxy.url, "no": "example.com"})
    with MCPTestServer(era="modern") as srv:
        with mcpsync.connect(srv.url, http=HTTPOptions(transport="http"), timeout=30) as client:
            assert client.call_tool("echo", {"message": "os"}).text == "os"
        assert proxy.forwarded


# ---------------------------------------------------------------------------------------------- credentials


def test_proxy_credentials_from_the_url(monkeypatch: pytest.MonkeyPatch) -> None:
    with ProxyServer(credentials=("us er", "p@ss:w/rd")) as proxy, MCPTestServer(era="modern") as srv:
        monkeypatch.setenv("HTTP_PROXY", proxy.url_with_credentials)
        with mcpsync.connect(srv.url, http=HTTPOptions(transport="http"), timeout=30) as client:
            assert client.call_tool("echo", {"message": "a"}).text == "a"
        assert proxy.forwarded and all(auth == proxy.expected for _, _, auth in proxy.forwarded)
        assert proxy.refused == 0
        assert all("proxy-authorization" not in r.headers for r in srv.log)  # never passed on to the server


def test_a_407_is_a_typed_proxy_error_without_the_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    with ProxyServer(credentials=("user", "right")) as proxy, MCPTestServer(era="modern") as srv:
        monkeypatch.setenv("HTTP_PROXY", proxy.url_with_credentials.replace("right", "wrong-secret"))
        with pytest.raises(mcpsync.errors.ProxyError) as info:
            mcpsync.connect(srv.url, http=HTTPOptions(transport="http"), timeout=30)
        assert info.value.status_code == 407 and isinstance(info.value, mcpsync.errors.ConnectError)
        assert "wrong-secret" not in str(info.value) and "407" in str(info.value)
        assert srv.log == []


def test_netrc_credentials_for_the_server(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login alice password s3cret\n")
    os.chmod(netrc, 0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    with MCPTestServer(era="modern") as srv:
        with mcpsync.connect(srv.url, http=HTTPOptions(transport="http"), timeout=30) as client:
            assert _engine(client).kind == "urllib3"
            assert client.call_tool("echo", {"message": "n"}).text == "n"
        assert {r.headers.get("authorization") for r in srv.log} == {"Basic YWxpY2U6czNjcmV0"}
        with mcpsync.connect(srv.url, http=HTTPOptions(transport="http"), timeout=30, bearer_token="tok") as client:
            client.call_tool("echo", {"message": "b"})
        assert srv.log[-1].headers.get("authorization") == "Bearer tok"  # a token wins over netrc


# ---------------------------------------------------------------------------------------------- https


@pytest.mark.parametrize("credentials", [None, ("u", "pw")])
def test_https_through_a_connect_tunnel(pki: Dict[str, str], monkeypatch: pytest.MonkeyPatch, credentials: Any) -> None:
    with ProxyServer(credentials=credentials) as proxy, _tls_server(pki) as srv:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url_with_credentials if credentials else proxy.url)
        url = "https://127.0.0.1:%d/mcp" % srv.port
        with mcpsync.connect(url, http=HTTPOptions(transport="http", verify=pki["ca.crt"]), timeout=30) as client:
            assert _engine(client).kind == "urllib3"
            for i in range(3):
                assert client.call_tool("echo", {"message": "t%d" % i}).text == "t%d" % i
        assert proxy.tunnels and all(t == "127.0.0.1:%d" % srv.port for t, _ in proxy.tunnels)
        assert all(auth == proxy.expected for _, auth in proxy.tunnels)
        assert proxy.forwarded == []  # nothing in the clear
        assert len(proxy.tunnels) < len(srv.records("POST"))  # a tunnel carries several requests


def test_https_407_and_a_refused_tunnel_are_typed(pki: Dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    with ProxyServer(credentials=("u", "pw")) as proxy, _tls_server(pki) as srv:
        url = "https://127.0.0.1:%d/mcp" % srv.port
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        with pytest.raises(mcpsync.errors.ProxyError) as info:
            mcpsync.connect(url, http=HTTPOptions(transport="http", verify=pki["ca.crt"]), timeout=30)
        assert info.value.status_code == 407
    with ProxyServer() as proxy, _tls_server(pki) as srv:
        url = "https://127.0.0.1:%d/mcp" % srv.port
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        proxy.connect_answer = b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n"
        with pytest.raises(mcpsync.errors.ProxyError) as info:
            mcpsync.connect(url, http=HTTPOptions(transport="http", verify=pki["ca.crt"]), timeout=30)
        assert info.value.status_code == 502
        proxy.connect_answer = b""  # hangs up on the CONNECT
        with pytest.raises(mcpsync.errors.ProxyError) as info:
            mcpsync.connect(url, http=HTTPOptions(transport="http", verify=pki["ca.crt"]), timeout=30)
        assert info.value.status_code == 0
        proxy.connect_answer = b"garbage\r\n\r\n"
        with pytest.raises(mcpsync.errors.ProxyError):
            mcpsync.connect(url, http=HTTPOptions(transport="http", verify=pki["ca.crt"]), timeout=30)
        assert srv.log == []


# ---------------------------------------------------------------------------------------------- per-call cost
# What the proxied round trip costs the client (bench/README.md): one kept-alive connection to the proxy, or one
# tunnel, carries every sequential call, and the proxy credentials go with each forwarded request, not per
# connection only.


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_sequential_calls_share_one_connection_to_a_forward_proxy(era: str) -> None:
    with ProxyServer(credentials=("u", "pw")) as proxy, MCPTestServer(era=era) as srv:
        proxies = {"http": proxy.url_with_credentials}
        # no event stream (a legacy-era client keeps it open on a connection of its own): the calls only
        options: Dict[str, Any] = {"protocol": era, "timeout": 30, "proxies": proxies, "get_stream": False}
        with mcpsync.connect(srv.url, **grouped(dict(options, transport="http"), remote=True)) as client:
            for i in range(20):
                assert client.call_tool("echo", {"message": str(i)}).text == str(i)
            calls = [t for m, t, _ in proxy.forwarded if m == "POST"]
        posts = srv.records("POST")
        assert len(calls) == len(posts) >= 20  # every call went through the proxy, once
        assert all(auth == proxy.expected for _, _, auth in proxy.forwarded)  # on every request
        assert proxy.connections == 1
        # the proxy relays a client connection on a server connection of its own: one server peer
        assert len({r.peer for r in srv.log}) == 1


def test_sequential_calls_share_one_connect_tunnel(pki: Dict[str, str]) -> None:
    with ProxyServer(credentials=("u", "pw")) as proxy, _tls_server(pki) as srv:
        url = "https://127.0.0.1:%d/mcp" % srv.port
        proxies = {"https": proxy.url_with_credentials}
        with mcpsync.connect(
            url, http=HTTPOptions(transport="http", verify=pki["ca.crt"], proxies=proxies), timeout=30
        ) as client:
            for i in range(20):
                assert client.call_tool("echo", {"message": str(i)}).text == str(i)
        assert proxy.forwarded == []  # nothing in the clear
        assert len(srv.records("POST")) >= 20
        assert proxy.tunnels == [("127.0.0.1:%d" % srv.port, proxy.expected)]  # one tunnel carried them all
        assert proxy.connections == 1


# ---------------------------------------------------------------------------------------------- the rule


def test_every_proxy_scheme_requests_speaks_is_spoken_and_another_is_refused_by_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = "https://mcp.example.com/mcp"
    for proxy_url in ("http://proxy:3128", "proxy:3128", "https://proxy:3129", "socks5://proxy:1080",
                      "socks5h://proxy:1080", "socks4://proxy:1080", "socks4a://proxy:1080"):  # fmt: skip
        net = make_net(url, HTTPOptions(proxies={"https": proxy_url}))
        assert net.kind == "urllib3"
        net.close()
    with pytest.raises(mcpsync.ConfigError, match="ftp:// proxy"):
        make_net(url, HTTPOptions(proxies={"https": "ftp://proxy:21"}))
    make_net("http://mcp.example.com/mcp", HTTPOptions(proxies={"https": "ftp://p:1"})).close()  # not used for http
    monkeypatch.setenv("HTTPS_PROXY", "ftp://proxy:21")
    with pytest.raises(mcpsync.ConfigError, match="ftp:// proxy"):
        make_net(url, HTTPOptions())
    monkeypatch.setenv("NO_PROXY", ".example.com")
    make_net(url, HTTPOptions()).close()
    with pytest.raises(mcpsync.ConfigError, match="ftp:// proxy"):
        make_net(url.replace("example.com", "example.org"), HTTPOptions())


def test_no_proxy_matching_rules() -> None:
    assert bypass("api.example.com", 443, "example.com")
    assert bypass("api.example.com", 443, ".example.com")
    assert bypass("example.com", 443, ".example.com")
    assert not bypass("badexample.com", 443, "example.com")
    assert bypass("10.1.2.3", 80, "10.0.0.0/8")
    assert not bypass("11.1.2.3", 80, "10.0.0.0/8")
    assert bypass("::1", 80, "::1/128")
    assert bypass("[fd00::5]", 80, "fd00::/8")
    assert bypass("host", 8080, "host:8080") and not bypass("host", 8081, "host:8080")
    assert bypass("anything", 1, " foo , * ")
    assert not bypass("host", 1, "") and not bypass("host", 1, None)
    table = proxy_table(HTTPOptions(proxies={"https": "http://p:1", "all://h.example": "http://q:2"}))
    assert table.url_for("https://x.example/mcp") == "http://p:1"
    assert table.url_for("http://h.example/mcp") == "http://q:2"
    assert table.url_for("http://x.example/mcp") is None


def test_the_environment_is_read_as_urllib_reads_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpsync.transports.http.proxy import environment_proxies

    monkeypatch.setenv("HTTPS_PROXY", "http://upper:1")
    monkeypatch.setenv("https_proxy", "http://lower:2")
    monkeypatch.setenv("ALL_PROXY", "socks5h://all:3")
    monkeypatch.setenv("no_proxy", "a.example")
    assert environment_proxies() == urllib.request.getproxies_environment()
    monkeypatch.setenv("HTTP_PROXY", "http://cgi-header:4")
    monkeypatch.setenv("REQUEST_METHOD", "GET")  # under CGI, HTTP_PROXY may come from a client's Proxy: header
    assert "http" not in environment_proxies()
    assert environment_proxies() == urllib.request.getproxies_environment()


def test_a_plain_connection_imports_no_proxy_machinery() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from mcpsync.transports.http.net import make_net\n"
        "from mcpsync.transports.http.options import HTTPOptions\n"
        "make_net('http://127.0.0.1:9/mcp', HTTPOptions()).close()\n"
        "print(sorted(m for m in ('urllib.request', 'netrc', 'socks', 'urllib3.contrib.socks') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


@settings(max_examples=300, deadline=None)
@given(host=st.text(max_size=40), port=st.integers(0, 70000), no_proxy=st.text(max_size=80))
def test_no_proxy_never_raises(host: str, port: int, no_proxy: str) -> None:
    assert bypass(host, port, no_proxy) in (True, False)


def test_an_https_proxy_for_http_and_https_servers(pki: Dict[str, str]) -> None:
    # TLS to the proxy; for an https server, TLS to the server inside it (TLS in TLS)
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki["server.crt"], pki["server.key"])
    with ProxyServer(credentials=("u", "pw"), tls=context) as proxy, _tls_server(pki) as tls:
        with MCPTestServer(era="legacy") as plain:
            options: Dict[str, Any] = {"proxies": {"all": proxy.url_with_credentials}, "verify": pki["ca.crt"]}
            for url in (plain.url, "https://127.0.0.1:%d/mcp" % tls.port):
                flat = dict(options, transport="http")
                with mcpsync.connect(url, timeout=30, **grouped(flat, remote=True)) as client:
                    assert _engine(client).kind == "urllib3"
                    for i in range(3):
                        assert client.call_tool("echo", {"message": "t%d" % i}).text == "t%d" % i
                    handles = [client.call_tool_async("echo", {"message": "a%d" % i}) for i in range(4)]
                    assert sorted(h.result(30).text for h in handles) == ["a0", "a1", "a2", "a3"]
        assert proxy.tunnels and all(auth == proxy.expected for _, auth in proxy.tunnels)
        assert proxy.forwarded and all(auth == proxy.expected for _, _, auth in proxy.forwarded)
        assert all("proxy-authorization" not in r.headers for r in tls.log + plain.log)


def test_an_https_proxy_with_an_untrusted_certificate_is_a_connect_error(
    pki: Dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki["server.crt"], pki["server.key"])
    monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    with ProxyServer(tls=context) as proxy, MCPTestServer(era="modern") as srv:
        with pytest.raises(mcpsync.errors.ConnectError, match="(?i)certificate|tls|ssl"):
            mcpsync.connect(srv.url, http=HTTPOptions(transport="http", proxies={"http": proxy.url}), timeout=30)
        assert srv.log == []


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(answer=st.one_of(
    st.binary(max_size=300),
    st.builds(lambda code, junk: b"HTTP/1.1 %d X\r\n\r\n" % code + junk, st.integers(100, 599), st.binary(max_size=64)),
))  # fmt: skip
def test_a_hostile_connect_answer_is_a_connect_error_and_nothing_hangs(
    pki: Dict[str, str], monkeypatch: pytest.MonkeyPatch, answer: bytes
) -> None:
    with ProxyServer() as proxy, _tls_server(pki) as srv:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        proxy.connect_answer = answer
        url = "https://127.0.0.1:%d/mcp" % srv.port
        with pytest.raises(mcpsync.errors.ConnectError):  # ProxyError, or a TLS error after a 2xx with junk
            mcpsync.connect(
                url, http=HTTPOptions(transport="http", verify=pki["ca.crt"]), timeout=30, connect_timeout=10
            )
        assert srv.log == []


# what a forward proxy may send back instead of the server's answer: any bytes, a status line and junk, or a
# complete answer of its own with any common status
_FORWARD_ANSWERS = st.one_of(
    st.binary(max_size=200),
    st.builds(lambda code, rest: b"HTTP/1.1 %d X\r\n" % code + rest, st.integers(100, 599), st.binary(max_size=80)),
    st.builds(
        lambda code: b"HTTP/1.1 %d From The Proxy\r\nContent-Length: 0\r\n\r\n" % code,
        st.sampled_from([200, 202, 204, 301, 400, 403, 404, 407, 413, 429, 500, 502, 503, 504]),
    ),
)


@settings(max_examples=fuzz_examples(40, 20), deadline=None, suppress_health_check=list(HealthCheck))
@given(era=st.sampled_from(["legacy", "modern"]), answer=_FORWARD_ANSWERS)
def test_a_hostile_forward_proxy_answer_fails_that_call_only_and_nothing_is_sent_twice(era: str, answer: bytes) -> None:
    """A forward proxy answers one forwarded ``tools/call`` with junk and hangs up, without forwarding it: that
    call fails with an MCPError within its timeout and is never sent again, and once the proxy behaves the same
    client's calls are answered.

    One race no client can win is allowed: when the junk is a whole answer without ``Connection: close``, the
    next request can go out on that connection before the proxy's close arrives, and the close then resets it.
    Bytes of that request were sent, so it fails (``ConnectionClosed``) and is not sent again (RFC 9112 9.3.1:
    a POST is never retried automatically); the call after it is answered."""
    with ProxyServer() as proxy, MCPTestServer(era=era) as srv:
        with mcpsync.connect(
            srv.url, http=HTTPOptions(transport="http", proxies={"http": proxy.url}), protocol=era, timeout=30
        ) as c:
            proxy.forward_answer = answer
            with pytest.raises(mcpsync.MCPError):
                c.call_tool("echo", {"message": "lost"}, timeout=3)
            proxy.forward_answer = None
            try:
                assert c.call_tool("echo", {"message": "next"}, timeout=10).text == "next"
            except mcpsync.errors.ConnectionClosed:
                pass  # the keep-alive race above
            assert c.call_tool("echo", {"message": "third"}, timeout=10).text == "third"
        sent = [r.body["params"]["arguments"]["message"] for r in srv.records("POST", "tools/call")]
        assert sent in (["next", "third"], ["third"])  # "lost" never arrives, nothing arrives twice


# ---------------------------------------------------------------------------------------------- SOCKS5


@pytest.mark.parametrize("scheme", ["socks5", "socks5h"])
@pytest.mark.parametrize("credentials", [None, ("sock user", "p@ss")])
def test_socks5_for_http_and_https(pki: Dict[str, str], scheme: str, credentials: Any) -> None:
    with SocksServer(credentials=credentials) as socks, MCPTestServer(era="modern") as plain, _tls_server(pki) as tls:
        proxy = (socks.url_with_credentials if credentials else socks.url).replace("socks5h://", scheme + "://")
        for url in (plain.url.replace("127.0.0.1", "localhost"), "https://localhost:%d/mcp" % tls.port):
            with mcpsync.connect(
                url, http=HTTPOptions(transport="http", verify=pki["ca.crt"], proxies={"all": proxy}), timeout=30
            ) as c:
                assert _engine(c).kind == "urllib3"
                assert c.call_tool("echo", {"message": "via socks"}).text == "via socks"
        kinds = {kind for _, kind in socks.tunnels}
        if scheme == "socks5h":  # the proxy resolves the name
            assert kinds == {"3"}
            assert {t for t, _ in socks.tunnels} == {"localhost:%d" % plain.port, "localhost:%d" % tls.port}
        else:  # resolved here: the proxy gets an address
            assert kinds and "3" not in kinds
        assert socks.refused == 0


def test_socks5_refusals_are_typed() -> None:
    with SocksServer(credentials=("u", "right")) as socks, MCPTestServer(era="modern") as srv:
        bad = socks.url_with_credentials.replace("right", "wrong-secret")
        with pytest.raises(mcpsync.errors.ProxyError) as info:
            mcpsync.connect(srv.url, http=HTTPOptions(transport="http", proxies={"http": bad}), timeout=30)
        assert info.value.status_code == 407 and "wrong-secret" not in str(info.value)
        with pytest.raises(mcpsync.errors.ProxyError) as info:
            mcpsync.connect(
                srv.url, http=HTTPOptions(transport="http", proxies={"http": socks.url}), timeout=30
            )  # no credentials
        assert info.value.status_code == 407
    with SocksServer() as socks, MCPTestServer(era="modern") as srv:
        socks.connect_answer = b"\x05\x02\x00\x01" + bytes(6)  # not allowed by ruleset
        with pytest.raises(mcpsync.errors.ProxyError, match="not allowed"):
            mcpsync.connect(srv.url, http=HTTPOptions(transport="http", proxies={"http": socks.url}), timeout=30)
        socks.connect_answer = b""
        with pytest.raises(mcpsync.errors.ProxyError):
            mcpsync.connect(srv.url, http=HTTPOptions(transport="http", proxies={"http": socks.url}), timeout=30)
        assert srv.log == []


# a SOCKS answer of any bytes, and ones shaped like a reply (version, code, reserved, address type, the rest)
_SOCKS_ANSWERS = st.one_of(
    st.binary(max_size=40),
    st.builds(
        lambda version, code, kind, rest: bytes([version, code, 0, kind]) + rest,
        st.sampled_from([0, 1, 4, 5]),
        st.integers(0, 255),
        st.sampled_from([0, 1, 3, 4, 9]),
        st.binary(max_size=24),
    ),
)


@settings(max_examples=fuzz_examples(60, 30), deadline=None, suppress_health_check=list(HealthCheck))
@given(
    step=st.sampled_from(["socks5 greeting", "socks5 auth", "socks5 connect", "socks4 connect"]),
    answer=_SOCKS_ANSWERS,
)
def test_a_hostile_socks_answer_is_a_typed_error_and_nothing_hangs(step: str, answer: bytes) -> None:
    """Whatever a SOCKS proxy answers to the greeting, the username/password or the CONNECT (then hanging up):
    the connect fails with an MCPError (a ProxyError where the answer says no) within its timeouts, the server
    sees nothing, and the proxy's credentials are in no message."""
    credentials = ("sock user", "sock-secret") if step == "socks5 auth" else None
    with SocksServer(credentials=credentials) as socks, MCPTestServer(era="modern") as srv:
        if step == "socks5 greeting":
            socks.greeting_answer = answer
        elif step == "socks5 auth":
            socks.auth_answer = answer
        else:
            socks.connect_answer = answer
        proxy = socks.url_with_credentials if credentials else socks.url
        proxy = proxy.replace("socks5h://", step.split()[0] + "://")
        with pytest.raises(mcpsync.MCPError) as info:
            mcpsync.connect(
                srv.url, http=HTTPOptions(transport="http", proxies={"http": proxy}), timeout=30, connect_timeout=10
            )
        assert srv.log == []
        assert "sock-secret" not in str(info.value)


@pytest.mark.parametrize("scheme", ["socks4", "socks4a"])
def test_socks4_for_http_and_https(pki: Dict[str, str], scheme: str) -> None:
    with SocksServer(credentials=("ident", "")) as socks, MCPTestServer(era="modern") as plain, _tls_server(pki) as tls:
        proxy = "%s://ident@127.0.0.1:%d" % (scheme, socks.port)
        for url in (plain.url.replace("127.0.0.1", "localhost"), "https://localhost:%d/mcp" % tls.port):
            with mcpsync.connect(
                url, http=HTTPOptions(transport="http", verify=pki["ca.crt"], proxies={"all": proxy}), timeout=30
            ) as c:
                assert _engine(c).kind == "urllib3"
                assert c.call_tool("echo", {"message": "via socks4"}).text == "via socks4"
        assert {kind for _, kind in socks.tunnels} == ({"4a"} if scheme == "socks4a" else {"4"})
        assert socks.refused == 0
        with pytest.raises(mcpsync.errors.ProxyError, match="rejected"):
            mcpsync.connect(
                plain.url,
                http=HTTPOptions(transport="http", proxies={"all": proxy.replace("ident@", "x@")}),
                timeout=30,
            )
        assert socks.refused >= 1


def test_a_socks_proxy_without_pysocks_names_the_extra_and_warns_nothing(monkeypatch: Any) -> None:
    """urllib3.contrib.socks warns at import when PySocks is missing; mcpsync asks first and says what to install."""
    import importlib.util
    import warnings

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "socks" else real(name, *a))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(mcpsync.errors.ConfigError, match=r"PySocks \(pip install 'mcpsync\[socks\]'\)"):
            mcpsync.Client(
                "http://127.0.0.1:9/mcp", http=HTTPOptions(proxies={"all": "socks5h://127.0.0.1:9"}), connect_timeout=5
            ).open()
