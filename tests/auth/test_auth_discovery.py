"""Discovery: WWW-Authenticate, protected resource metadata, authorization server metadata, fallbacks."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional, Tuple

import pytest

from tests.peers.authserver import AuthTestServer, make_manager, manager, no_auth_leaks, srv, store  # noqa: F401
from mcpsync.auth.discovery import (
    Discovery,
    authorization_server_metadata_urls,
    canonical_resource,
    parse_www_authenticate,
    protected_resource_metadata_urls,
    resource_matches,
)
from mcpsync.auth.http_direct import DirectHTTP
from mcpsync.wire.http_call import OAuthAnswer
from mcpsync.errors import AuthError

pytestmark = pytest.mark.usefixtures("no_auth_leaks")


@pytest.fixture
def http():
    session = DirectHTTP()
    yield session
    session.close()


def test_parse_www_authenticate():
    header = (
        'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", '
        'scope="files:read files:write", error="insufficient_scope", error_description="need \\"more\\""'
    )
    assert parse_www_authenticate(header) == {
        "resource_metadata": "https://mcp.example.com/.well-known/oauth-protected-resource",
        "scope": "files:read files:write",
        "error": "insufficient_scope",
        "error_description": 'need "more"',
    }
    assert parse_www_authenticate('Basic realm="x", Bearer error=invalid_token') == {"error": "invalid_token"}
    assert parse_www_authenticate("Bearer") == {}
    assert parse_www_authenticate(None) == {}


def test_canonical_resource_and_matching():
    assert canonical_resource("HTTPS://MCP.Example.com:443/mcp#frag") == "https://mcp.example.com/mcp"
    assert canonical_resource("https://mcp.example.com/") == "https://mcp.example.com"
    assert canonical_resource("http://localhost:8080/a/") == "http://localhost:8080/a/"
    assert resource_matches("https://mcp.example.com/mcp", "https://MCP.example.com/mcp")
    assert resource_matches("https://mcp.example.com", "https://mcp.example.com/mcp")
    assert not resource_matches("https://mcp.example.com/mc", "https://mcp.example.com/mcp")
    assert not resource_matches("https://other.example.com/mcp", "https://mcp.example.com/mcp")


def test_candidate_url_orders():
    assert protected_resource_metadata_urls("https://h/public/mcp", "https://h/custom") == [
        "https://h/custom",
        "https://h/.well-known/oauth-protected-resource/public/mcp",
        "https://h/.well-known/oauth-protected-resource",
    ]
    assert authorization_server_metadata_urls("https://as/tenant1") == [
        "https://as/.well-known/oauth-authorization-server/tenant1",
        "https://as/.well-known/openid-configuration/tenant1",
        "https://as/tenant1/.well-known/openid-configuration",
    ]
    assert authorization_server_metadata_urls("https://as") == [
        "https://as/.well-known/oauth-authorization-server",
        "https://as/.well-known/openid-configuration",
    ]


@pytest.mark.parametrize("location", ["header", "path", "root"])
def test_protected_resource_metadata_each_location(srv, http, location):
    srv.prm_locations = {location}
    challenge = {"resource_metadata": srv.base + srv.prm_header_path} if location == "header" else {}
    prm, meta = Discovery(http).discover(srv.server_url, challenge)
    assert prm.resource == srv.server_url and meta.issuer == srv.issuer
    expected_first = {
        "header": srv.prm_header_path,
        "path": "/.well-known/oauth-protected-resource/mcp",
        "root": "/.well-known/oauth-protected-resource",
    }[location]
    assert expected_first in srv.paths("GET")


def test_header_url_tried_first_then_path_then_root(srv, http):
    srv.prm_locations = {"root"}
    Discovery(http).discover(srv.server_url, {"resource_metadata": srv.base + srv.prm_header_path})
    assert srv.paths("GET")[:3] == [
        srv.prm_header_path,
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ]


@pytest.mark.parametrize(
    "kind,issuer_path",
    [("oauth", ""), ("oidc", ""), ("oauth", "/tenant1"), ("oidc", "/tenant1"), ("oidc_suffix", "/tenant1")],
)
def test_authorization_server_metadata_variants(kind, issuer_path, http):
    with AuthTestServer(issuer_path=issuer_path) as server:
        server.as_locations = {kind}
        prm, meta = Discovery(http).discover(server.server_url)
        assert meta.issuer == server.issuer
        gets = [p for p in server.paths("GET") if "oauth-protected-resource" not in p]
        expected = [u[len(server.base) :] for u in authorization_server_metadata_urls(server.issuer)]
        # tried in the spec's order, stopping at the one that exists
        assert gets == expected[: gets.index(gets[-1]) + 1]
        assert meta.url.endswith(gets[-1])


def test_issuer_mismatch_is_skipped(srv, http):
    srv.as_locations = {"oauth", "oidc"}
    srv.metadata = dict(srv.metadata, issuer="https://someone-else.example.com")
    with pytest.raises(AuthError, match="no authorization server metadata"):
        Discovery(http).discover(srv.server_url)


def test_any_4xx_moves_to_the_next_candidate(srv, http):
    # the resource_metadata URL answers 404 (a CDN would say 403): the next candidate is used
    prm, meta = Discovery(http).discover(srv.server_url, {"resource_metadata": srv.base + "/forbidden"})
    assert prm is not None and srv.paths("GET")[0] == "/forbidden"


def test_resource_mismatch_stops_before_any_authorization(srv, manager):
    srv.prm = dict(srv.prm, resource="https://evil.example.com/mcp")
    with pytest.raises(AuthError, match="not for"):
        manager.start_auth("srv")
    assert not any(p.endswith(("/authorize", "/register", "/token")) for p in srv.paths())


@pytest.mark.parametrize("issuer_path", ["", "/oauth"])
def test_legacy_2025_03_26_metadata_at_origin(srv, http, issuer_path):
    # The backcompat form: metadata at the MCP origin, issuer = that origin (0.2 suite) or the
    # origin plus a path (0.1.16 suite's "/oauth").
    srv.prm_locations = set()
    srv.as_locations = set()
    srv.legacy_metadata_ok = True
    srv.metadata = dict(srv.metadata, issuer=srv.base + issuer_path)
    prm, meta = Discovery(http).discover(srv.server_url)
    assert prm is None and meta.legacy and meta.issuer == srv.base + issuer_path
    assert meta.token_endpoint == srv.base + "/token"


@pytest.mark.parametrize(
    "issuer",
    [
        "https://evil.example.com",
        "http://127.0.0.2:{port}",
        "http://127.0.0.1:1",
        "https://127.0.0.1:{port}",
        "junk",
        7,
    ],
)
def test_legacy_metadata_with_a_foreign_issuer_is_refused(srv, manager, issuer):
    # Issue 9 defect 7 (RFC 8414 section 3.3): with no PRM, metadata from the MCP origin whose
    # issuer names another origin must not be used: no registration, authorization or token request.
    srv.prm_locations = set()
    srv.as_locations = set()
    srv.legacy_metadata_ok = True
    srv.metadata = dict(srv.metadata, issuer=issuer.format(port=srv.port) if isinstance(issuer, str) else issuer)
    with pytest.raises(AuthError, match="RFC 8414"):
        manager.authenticate("srv")
    assert not any(p.endswith(("/authorize", "/register", "/token")) for p in srv.paths())
    assert manager.get_auth_status("srv") == "not_authenticated"


def test_legacy_metadata_issuer_case_and_default_port_fold(http):
    from mcpsync.auth.discovery import same_origin

    assert same_origin("HTTPS://Example.COM:443/oauth", "https://example.com/mcp")
    assert not same_origin("https://example.com.evil.net", "https://example.com")
    assert not same_origin("https://user@example.com", "https://example.com")
    assert not same_origin("", "https://example.com")


def test_legacy_default_endpoints_login(srv, manager):
    srv.prm_locations = set()
    srv.as_locations = set()
    manager.authenticate("srv")
    assert manager.get_auth_status("srv") == "authenticated"
    posts = srv.paths("POST")
    # no metadata anywhere: the server was asked for its challenge once (it may name metadata only there)
    assert posts == ["/mcp", "/register", "/token"]


def test_protocol_version_header_on_discovery(srv, make_manager):
    m = make_manager(protocol_version="2025-11-25")
    m.add_server("srv", srv.server_url)
    m.start_auth("srv")
    for entry in srv.log:
        if entry["method"] == "GET" and "/.well-known/" in entry["path"]:
            assert entry["headers"].get("MCP-Protocol-Version") == "2025-11-25"


class CannedHTTP:
    """An OAuthHTTPCall answering from a table (URL -> status, JSON) and recording every request."""

    def __init__(self, table: Dict[str, Tuple[int, Any]]) -> None:
        self.table = table
        self.calls: List[Tuple[str, str, Dict[str, str]]] = []

    def request(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str],
        body: Optional[bytes] = None,
        timeout: float = 30.0,
        follow_redirects: bool = True,
    ) -> OAuthAnswer:
        self.calls.append((method, url, dict(headers)))
        status, doc = self.table.get(url, (404, None))
        return OAuthAnswer(status, {}, json.dumps(doc).encode() if doc is not None else b"", url)

    def close(self) -> None:
        pass


def test_request_shape_of_discovery():
    http = CannedHTTP(
        {
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp": (403, None),
            "https://mcp.example.com/.well-known/oauth-protected-resource": (
                200,
                {"resource": "https://mcp.example.com/mcp", "authorization_servers": ["https://as.example.com/t"]},
            ),
            "https://as.example.com/.well-known/openid-configuration/t": (401, None),
            "https://as.example.com/t/.well-known/openid-configuration": (
                200,
                {
                    "issuer": "https://as.example.com/t",
                    "authorization_endpoint": "https://as.example.com/a",
                    "token_endpoint": "https://as.example.com/tok",
                },
            ),
        }
    )
    prm, meta = Discovery(http, protocol_version="2026-07-28").discover("https://mcp.example.com/mcp")
    assert meta.token_endpoint == "https://as.example.com/tok"
    assert http.calls[-1][1] == "https://as.example.com/t/.well-known/openid-configuration"
    assert all(method == "GET" and h["MCP-Protocol-Version"] == "2026-07-28" for method, _, h in http.calls)
