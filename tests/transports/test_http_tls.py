"""HTTPS against a real local TLS server through the HTTP engine: verification rules as ``requests`` has them.

A throwaway CA, a server certificate for 127.0.0.1 and a client certificate are made with the ``openssl``
command; the example MCP server is served over TLS (and, for the client-certificate test, requires one).
"""

from __future__ import annotations

import os
import shutil
import ssl
import subprocess
from pathlib import Path
from typing import Dict, Iterator

import pytest

import mcpsync

from tests.peers.httpserver import MCPTestServer
from mcpsync.client import HTTPOptions

pytestmark = pytest.mark.skipif(
    shutil.which("openssl") is None and os.environ.get("CI") != "true", reason="needs the openssl command"
)


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, str]:
    d = tmp_path_factory.mktemp("pki")
    (d / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=mcpsync test CA",
             "-keyout", "ca.key", "-out", "ca.crt", cwd=d)  # fmt: skip
    for who in ("server", "client"):
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", who + ".key",
                 "-out", who + ".csr", cwd=d)  # fmt: skip
        _openssl("x509", "-req", "-in", who + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                 "-days", "2", "-extfile", "san.ext", "-out", who + ".crt", cwd=d)  # fmt: skip
    return {k: str(d / k) for k in ("ca.crt", "server.crt", "server.key", "client.crt", "client.key")}


def _tls_server(pki: Dict[str, str], require_client_cert: bool = False) -> MCPTestServer:
    srv = MCPTestServer(era="modern", response_mode="json")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(pki["server.crt"], pki["server.key"])
    if require_client_cert:
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(pki["ca.crt"])
    srv._httpd.socket = ctx.wrap_socket(srv._httpd.socket, server_side=True)
    return srv


@pytest.fixture
def tls(pki: Dict[str, str]) -> Iterator[MCPTestServer]:
    with _tls_server(pki) as srv:
        yield srv


def _url(srv: MCPTestServer) -> str:
    return "https://127.0.0.1:%d/mcp" % srv.port


def test_a_ca_bundle_path_verifies_the_server(tls: MCPTestServer, pki: Dict[str, str]) -> None:
    with mcpsync.connect(_url(tls), http=HTTPOptions(transport="http", verify=pki["ca.crt"]), timeout=20) as c:
        assert c.call_tool("echo", {"message": "over tls"}).text == "over tls"


def test_an_untrusted_certificate_is_a_connect_error(tls: MCPTestServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    with pytest.raises(mcpsync.errors.ConnectError, match="(?i)tls|ssl|certificate"):
        mcpsync.connect(_url(tls), http=HTTPOptions(transport="http"), timeout=20)
    assert not tls.records("POST")


def test_requests_ca_bundle_from_the_environment_and_verify_false(
    tls: MCPTestServer, pki: Dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", pki["ca.crt"])
    with mcpsync.connect(_url(tls), http=HTTPOptions(transport="http"), timeout=20) as c:
        assert c.call_tool("echo", {"message": "env bundle"}).text == "env bundle"
    monkeypatch.delenv("REQUESTS_CA_BUNDLE")
    with mcpsync.connect(_url(tls), http=HTTPOptions(transport="http", verify=False), timeout=20) as c:
        assert c.call_tool("echo", {"message": "unverified"}).text == "unverified"


def test_an_ssl_context_and_a_client_certificate(pki: Dict[str, str]) -> None:
    with _tls_server(pki, require_client_cert=True) as srv:
        with pytest.raises(mcpsync.errors.ConnectError):
            mcpsync.connect(_url(srv), http=HTTPOptions(transport="http", verify=pki["ca.crt"]), timeout=20)
        cert = (pki["client.crt"], pki["client.key"])
        with mcpsync.connect(
            _url(srv), http=HTTPOptions(transport="http", verify=pki["ca.crt"], cert=cert), timeout=20
        ) as c:
            assert c.call_tool("echo", {"message": "mutual"}).text == "mutual"
        ctx = ssl.create_default_context(cafile=pki["ca.crt"])
        ctx.load_cert_chain(*cert)
        with mcpsync.connect(_url(srv), http=HTTPOptions(transport="http", verify=ctx), timeout=20) as c:
            assert c.call_tool("echo", {"message": "context"}).text == "context"
