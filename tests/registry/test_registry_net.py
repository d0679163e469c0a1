"""The registry client and ``.mcpb`` downloads ride the MCP path's urllib3 pool: its proxies (from the
environment, HTTP and SOCKS), its redirect rules of their own (https anywhere, http only from http, at most five;
bundles https only) and the overall deadline, through a proxy too.

Peers: the local registry (tests/peers/registryserver.py), the local HTTP and SOCKS5 proxies
(tests/peers/proxyserver.py) and
a local server that only redirects (below), all over real sockets.
"""

from __future__ import annotations

import hashlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpsync.errors import ConfigError
from mcpsync.registry import RegistryClient, RegistryUnavailable
from mcpsync.registry.mcpb import download

from tests.conftest import wait_for
from tests.peers.proxyserver import ProxyServer, SocksServer
from tests.peers.registryserver import RegistryServer, entry, fixture

NAME = "io.github.acme/tenant-remote"


@pytest.fixture
def registry() -> Iterator[RegistryServer]:
    with RegistryServer([entry(fixture("npm-everything.json")), entry(fixture("remote-tenant.json"))]) as server:
        yield server


@pytest.fixture
def no_env_proxy(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for var in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(var, raising=False)
        monkeypatch.delenv(var.upper(), raising=False)
    return monkeypatch


class Redirector:
    """Answers every GET with ``status`` and ``Location: location``."""

    def __init__(self, status: int = 302) -> None:
        self.status = status
        self.location = "/"
        self.hits = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                outer.hits += 1
                self.send_response(outer.status)
                self.send_header("Location", outer.location)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="test-redirector", daemon=True)

    def __enter__(self) -> "Redirector":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5)


def test_the_registry_goes_through_the_http_proxy_of_the_environment(
    registry: RegistryServer, no_env_proxy: pytest.MonkeyPatch
) -> None:
    with ProxyServer() as proxy:
        no_env_proxy.setenv("HTTP_PROXY", proxy.url)
        with RegistryClient(registry.url, cache_dir=False, timeout=10) as client:
            assert client.get(NAME).name == NAME
        assert [t for _, t, _ in proxy.forwarded if "/v0.1/servers" in t]


def test_no_proxy_sends_the_registry_direct(registry: RegistryServer, no_env_proxy: pytest.MonkeyPatch) -> None:
    with ProxyServer() as proxy:
        no_env_proxy.setenv("HTTP_PROXY", proxy.url)
        no_env_proxy.setenv("NO_PROXY", "127.0.0.0/8")
        with RegistryClient(registry.url, cache_dir=False, timeout=10) as client:
            assert client.get(NAME).name == NAME
        assert proxy.forwarded == [] and proxy.connections == 0


def test_the_registry_goes_through_a_socks_proxy(registry: RegistryServer, no_env_proxy: pytest.MonkeyPatch) -> None:
    pytest.importorskip("socks")
    with SocksServer() as proxy:
        no_env_proxy.setenv("ALL_PROXY", proxy.url)
        with RegistryClient(registry.url, cache_dir=False, timeout=10) as client:
            assert [e.name for e in client.search("acme")]
        assert proxy.tunnels


def test_trickled_headers_through_a_proxy_still_end_at_the_deadline(
    registry: RegistryServer, no_env_proxy: pytest.MonkeyPatch
) -> None:
    registry.trickle, registry.trickle_headers = 0.05, True
    with ProxyServer() as proxy:
        no_env_proxy.setenv("HTTP_PROXY", proxy.url)
        with RegistryClient(registry.url, cache_dir=False, timeout=1) as client:
            with pytest.raises(RegistryUnavailable, match="took longer than its timeout of 1s"):
                client.get(NAME)
    assert wait_for(registry.trickle_cut.is_set)


def test_a_registry_redirect_is_followed_to_another_http_origin(
    registry: RegistryServer, no_env_proxy: pytest.MonkeyPatch
) -> None:
    with Redirector(307) as hop:
        hop.location = registry.url + "/v0.1/servers/" + NAME.replace("/", "%2F") + "/versions/latest"
        with RegistryClient(hop.url, cache_dir=False, timeout=10) as client:
            assert client.get(NAME).name == NAME
        assert hop.hits == 1


def test_a_redirect_loop_ends_after_five_hops(no_env_proxy: pytest.MonkeyPatch) -> None:
    with Redirector() as loop:
        loop.location = loop.url + "/again"
        with RegistryClient(loop.url, cache_dir=False, timeout=10) as client:
            with pytest.raises(RegistryUnavailable, match="more than 5 redirects") as info:
                client.get(NAME)
        assert getattr(info.value, "url", "").startswith(loop.url)
        assert loop.hits == 6


def test_a_bundle_redirect_to_plain_http_is_refused(no_env_proxy: pytest.MonkeyPatch) -> None:
    with RegistryServer([]) as server, Redirector() as hop:
        server.files["b.mcpb"] = b"bundle"
        hop.location = server.url + "/bundles/b.mcpb"
        with pytest.raises(RegistryUnavailable, match="refused a redirect to a http:// URL"):
            download(hop.url + "/b.mcpb", hashlib.sha256(b"bundle").hexdigest(), timeout=5)
        assert not [p for p, _q, _h in server.requests if "b.mcpb" in p]


def test_a_requests_session_is_refused_with_a_config_error() -> None:
    with pytest.raises(ConfigError, match="session=.*is gone"):
        RegistryClient("http://127.0.0.1:9", session=object())
    with pytest.raises(ConfigError, match="session=.*is gone"):
        download("https://example.invalid/b.mcpb", "0" * 64, session=object())


_WITHOUT_REQUESTS = r"""
import sys
sys.modules["requests"] = None  # as if not installed: any import of it fails
import mcpsync
from mcpsync.errors import ConfigError
from mcpsync.registry import RegistryClient
with RegistryClient(sys.argv[1], cache_dir=False, timeout=10) as client:
    print(client.get(sys.argv[2]).name)
try:
    with mcpsync.Client(sys.argv[1] + "/mcp", auth=lambda prepared: prepared) as c:
        c.connect()
except ConfigError as exc:
    print("refused:", "requests" in str(exc))
assert "requests" not in sys.modules or sys.modules["requests"] is None
"""


def test_the_registry_works_and_a_requests_auth_is_refused_without_requests(
    registry: RegistryServer, no_env_proxy: pytest.MonkeyPatch
) -> None:
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _WITHOUT_REQUESTS, registry.url, NAME], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == [NAME, "refused: True"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prefix=st.sampled_from(["", "/", "//127.0.0.1:1/", "http://127.0.0.1:1/", "https://127.0.0.1:1/", "ftp://x/",
                               "http://[::1", "http://%zz/", "https:", "http://user:pw@127.0.0.1:1/"]),
       rest=st.text(st.characters(max_codepoint=255, blacklist_characters="\r\n"), max_size=40),
       status=st.sampled_from([301, 302, 303, 307, 308]))
def test_any_redirect_ends_typed_or_followed(no_env_proxy: pytest.MonkeyPatch, prefix: str, rest: str,
                                             status: int) -> None:
    """Whatever a registry redirects to (hypothesis: schemes, authorities, bytes), the call ends with a
    RegistryError (never another exception, never a hang past the deadline) and the client stays usable."""
    from mcpsync.registry import RegistryError

    with Redirector(status) as hop:
        hop.location = prefix + rest
        with RegistryClient(hop.url, cache_dir=False, timeout=3) as client:
            with pytest.raises(RegistryError):
                client.get(NAME)
            hop.location = "/again"
            with pytest.raises(RegistryUnavailable, match="more than 5 redirects"):
                client.get(NAME)
