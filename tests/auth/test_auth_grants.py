"""Non-interactive grants: client credentials (secret, private_key_jwt ES256/RS256), enterprise ID-JAG."""

from __future__ import annotations

import builtins
import json

import pytest
import requests

from mcpsync.auth import _jwt
from mcpsync.errors import ConfigError, OAuthError
from tests.peers.authserver import _b64url_decode, make_manager, no_auth_leaks, srv, store, verify_jwt  # noqa: F401

pytestmark = pytest.mark.usefixtures("no_auth_leaks")
cryptography = pytest.importorskip("cryptography")


def call(url, auth):
    with requests.Session() as session:
        with session.get(url, auth=auth, timeout=30) as resp:
            return resp.status_code


def _keys(alg):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, rsa

    if alg == "ES256":
        key = ec.generate_private_key(ec.SECP256R1())
    else:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    return pem, key.public_key()


def test_client_credentials_with_client_secret_basic(srv, make_manager):
    srv.add_client("svc", method="client_secret_basic", secret="s3")
    m = make_manager(authorize_handler=None, open_browser=lambda u: pytest.fail("no browser"))
    m.add_server(
        "srv", srv.server_url, {"grant": "client_credentials", "clientId": "svc", "clientSecret": "s3", "scope": "read"}
    )
    assert call(srv.server_url, m.auth("srv")) == 200
    req = srv.token_requests("client_credentials")[0]
    assert req["headers"]["Authorization"].startswith("Basic ")
    assert req["form"]["resource"] == srv.server_url and req["form"]["scope"] == "read write"
    assert m.get_auth_status("srv") == "authenticated"


@pytest.mark.parametrize("alg", ["ES256", "RS256"])
def test_client_credentials_with_private_key_jwt(srv, make_manager, alg, tmp_path):
    pem, public = _keys(alg)
    key_file = tmp_path / "key.pem"
    key_file.write_text(pem)
    srv.add_client("svc", method="private_key_jwt", public_key=public)
    m = make_manager()
    m.add_server(
        "srv",
        srv.server_url,
        {"grant": "client_credentials", "clientId": "svc", "privateKey": str(key_file), "signingAlg": alg},
    )
    assert call(srv.server_url, m.auth("srv")) == 200
    form = srv.token_requests("client_credentials")[0]["form"]
    claims = verify_jwt(form["client_assertion"], public)
    assert claims["iss"] == claims["sub"] == "svc" and claims["aud"] == srv.issuer and claims["jti"]
    assert json.loads(_b64url_decode(form["client_assertion"].split(".")[0]))["alg"] == alg


def test_client_credentials_token_renewed_when_rejected(srv, make_manager):
    srv.add_client("svc", method="client_secret_post", secret="s3")
    m = make_manager()
    m.add_server(
        "srv",
        srv.server_url,
        {
            "grant": "client_credentials",
            "clientId": "svc",
            "clientSecret": "s3",
            "tokenEndpointAuthMethod": "client_secret_post",
        },
    )
    assert call(srv.server_url, m.auth("srv")) == 200
    srv.access_tokens.clear()
    assert call(srv.server_url, m.auth("srv")) == 200
    assert len(srv.token_requests("client_credentials")) == 2


def test_wrong_secret_is_an_oauth_error(srv, make_manager):
    srv.add_client("svc", method="client_secret_basic", secret="right")
    m = make_manager()
    m.add_server("srv", srv.server_url, {"grant": "client_credentials", "clientId": "svc", "clientSecret": "wrong"})
    with pytest.raises(OAuthError) as info:
        m.get_access_token("srv")
    assert info.value.error == "invalid_client" and "wrong" not in str(info.value)


def test_enterprise_managed_authorization(srv, make_manager):
    srv.add_client("idp-client", method="client_secret_basic", secret="idp-secret")
    srv.add_client("mcp-client", method="client_secret_basic", secret="as-secret")
    id_token = srv.issue_id_token("alice")
    m = make_manager()
    m.add_server(
        "srv",
        srv.server_url,
        {
            "grant": "enterprise",
            "clientId": "mcp-client",
            "clientSecret": "as-secret",
            "idpTokenEndpoint": srv.issuer + "/token",
            "idToken": lambda: id_token,
            "idpClientId": "idp-client",
            "idpClientSecret": "idp-secret",
        },
    )
    assert call(srv.server_url, m.auth("srv")) == 200
    exchange = srv.token_requests("urn:ietf:params:oauth:grant-type:token-exchange")[0]["form"]
    assert exchange["subject_token"] == id_token and exchange["audience"] == srv.issuer
    assert exchange["requested_token_type"] == "urn:ietf:params:oauth:token-type:id-jag"
    assert exchange["subject_token_type"] == "urn:ietf:params:oauth:token-type:id_token"
    assert exchange["resource"] == srv.server_url
    bearer = srv.token_requests("urn:ietf:params:oauth:grant-type:jwt-bearer")[0]["form"]
    assert bearer["assertion"].startswith("jag-") and bearer["resource"] == srv.server_url


def test_grant_configs_are_validated():
    from mcpsync.auth import OAuthConfig

    with pytest.raises(ConfigError):
        OAuthConfig(grant="client_credentials")
    with pytest.raises(ConfigError):
        OAuthConfig(grant="enterprise", client_id="x")
    with pytest.raises(ConfigError):
        OAuthConfig.from_value({"clientID": "typo"})
    with pytest.raises(ConfigError):
        OAuthConfig(client_metadata_url="http://insecure")
    assert OAuthConfig.from_value(False) is None


@pytest.mark.parametrize("package", ["cryptography", "jwt"])
def test_missing_cryptography_is_a_clear_error(monkeypatch, package):
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == package or name.startswith(package + "."):
            raise ImportError("no cryptography")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(ConfigError, match=r"pip install 'mcpsync\[jwt\]'"):
        _jwt.client_assertion("c", "aud", "-----BEGIN PRIVATE KEY-----\n")


def test_wrong_key_type_for_alg():
    pem, _ = _keys("RS256")
    with pytest.raises(ConfigError, match="ES256"):
        _jwt.sign_jwt({"a": 1}, pem, "ES256")
    with pytest.raises(ConfigError, match="unsupported"):
        _jwt.sign_jwt({"a": 1}, pem, "HS256")
