"""Workload identity federation: the RFC 7523 jwt-bearer grant with an application-supplied JWT."""

from __future__ import annotations

import itertools
import time

import pytest
import requests

from mcpsync.auth import OAuthConfig
from mcpsync.auth._jwt import sign_jwt
from mcpsync.errors import AuthError, ConfigError, OAuthError
from tests.peers.authserver import make_manager, no_auth_leaks, srv, store  # noqa: F401

pytestmark = pytest.mark.usefixtures("no_auth_leaks")
WORKLOAD_ISSUER = "https://kubernetes.default.svc"


def call(url, auth):
    with requests.Session() as session:
        with session.get(url, auth=auth, timeout=60) as resp:
            return resp.status_code


@pytest.fixture
def workload(srv):
    """A workload identity: its signing key is trusted by the authorization server."""
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    srv.workload_keys[WORKLOAD_ISSUER] = key.public_key()
    srv.add_client("workload-client", method="none")
    counter = itertools.count()
    issued = []

    def make(audience=None, lifetime=300):
        now = int(time.time())
        claims = {
            "iss": WORKLOAD_ISSUER,
            "sub": "system:serviceaccount:prod:agent",
            "aud": audience or srv.issuer,
            "iat": now,
            "exp": now + lifetime,
            "jti": "w-%d" % next(counter),
        }
        token = sign_jwt(claims, key, "ES256")
        issued.append(token)
        return token

    make.issued = issued
    return make


def config(assertion, **extra):
    value = {"grant": "jwt_bearer", "clientId": "workload-client", "assertion": assertion}
    value.update(extra)
    return value


def test_callable_assertion_gets_a_token_without_a_browser(srv, make_manager, workload):
    m = make_manager(authorize_handler=None, open_browser=lambda url: pytest.fail("no browser"))
    m.add_server("srv", srv.server_url, config(workload))
    assert call(srv.server_url, m.auth("srv")) == 200
    forms = [e["form"] for e in srv.token_requests()]
    assert len(forms) == 1
    assert forms[0]["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    assert forms[0]["assertion"] == workload.issued[0] and forms[0]["resource"] == srv.server_url
    assert forms[0]["client_id"] == "workload-client"
    assert srv.requests_to("/authorize") == [] and srv.requests_to("/register") == []
    # the token is revoked server-side: the next request gets a new one with a fresh assertion
    srv.access_tokens.clear()
    assert call(srv.server_url, m.auth("srv")) == 200
    assert [e["form"]["assertion"] for e in srv.token_requests()] == workload.issued[:2]
    assert workload.issued[0] != workload.issued[1]


def test_static_assertion_and_no_client_id(srv, make_manager, workload):
    m = make_manager()
    m.add_server("srv", srv.server_url, {"grant": "jwt_bearer", "assertion": workload()})
    assert m.get_access_token("srv")
    assert "client_id" not in srv.token_requests()[0]["form"]
    assert m.get_auth_status("srv") == "authenticated"


@pytest.mark.parametrize(
    "case,error",
    [("scope", "invalid_scope"), ("audience", "invalid_grant"), ("expired", "invalid_grant")],
)
def test_errors_surface_without_retry_or_grant_switch(srv, make_manager, workload, case, error):
    if case == "scope":
        assertion, extra = workload, {"scope": "forbidden"}
    elif case == "audience":
        assertion, extra = (lambda: workload(audience="https://wrong.example")), {}
    else:
        assertion, extra = (lambda: workload(lifetime=-60)), {}
    m = make_manager()
    m.add_server("srv", srv.server_url, config(assertion, **extra))
    with pytest.raises(OAuthError) as info:
        call(srv.server_url, m.auth("srv", interactive=True))
    assert info.value.error == error and info.value.server == "srv"
    assert len(srv.token_requests()) == 1  # one jwt-bearer request, nothing else
    assert srv.requests_to("/authorize") == []


def test_assertion_file_is_read_for_every_token_request(srv, make_manager, workload, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(workload() + "\n")
    m = make_manager()
    m.add_server("srv", srv.server_url, {"grant": "jwt_bearer", "assertionFile": str(token_file)})
    assert call(srv.server_url, m.auth("srv")) == 200
    token_file.write_text(workload())  # the platform rotated the token
    srv.access_tokens.clear()
    assert call(srv.server_url, m.auth("srv")) == 200
    assert [e["form"]["assertion"] for e in srv.token_requests()] == workload.issued
    token_file.unlink()
    srv.access_tokens.clear()
    with pytest.raises(AuthError, match="assertion file"):
        call(srv.server_url, m.auth("srv"))


def test_bad_assertions_are_clear_errors_before_any_token_request(srv, make_manager):
    def broken():
        raise RuntimeError("token file missing")

    for assertion, match in ((broken, "callable failed"), (lambda: "not-a-jwt", "compact JWT"), (lambda: None, "JWT")):
        m = make_manager()
        m.add_server("srv", srv.server_url, config(assertion))
        with pytest.raises(AuthError, match=match):
            m.get_access_token("srv")
    assert srv.token_requests() == []


def test_config_validation_and_aliases():
    with pytest.raises(ConfigError, match="assertion"):
        OAuthConfig(grant="jwt_bearer")
    with pytest.raises(ConfigError, match="not both"):
        OAuthConfig(grant="jwt_bearer", assertion="a.b.c", assertion_file="/x")
    cfg = OAuthConfig.from_value({"grant": "jwt_bearer", "assertion": "a.b.c", "dpop": True, "dpopAlg": "RS256"})
    assert cfg.grant == "jwt_bearer" and not cfg.interactive and cfg.dpop is True and cfg.dpop_alg == "RS256"
    assert "a.b.c" not in repr(cfg)
    with pytest.raises(ConfigError):
        OAuthConfig(dpop_alg="HS256")


def test_jwt_bearer_with_dpop_binds_the_token(srv, make_manager, workload):
    srv.dpop_algs = ["ES256"]
    m = make_manager()
    m.add_server("srv", srv.server_url, config(workload))
    assert call(srv.server_url, m.auth("srv")) == 200
    assert m.store.get("srv")["tokens"]["tokenType"] == "DPoP"
    assert "DPoP" in srv.token_requests()[0]["headers"] and srv.dpop_errors == []
