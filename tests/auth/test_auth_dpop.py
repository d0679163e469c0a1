"""DPoP (RFC 9449) against the local authorization server: bound tokens, fresh proofs, nonces, refresh."""

from __future__ import annotations

import builtins
import json
import logging
import os
import stat
import threading

import pytest
import requests

from mcpsync.auth import dpop as _dpop
from mcpsync.auth.dpop import DPoPKey, NonceCache, access_token_hash, choose_alg, htu
from mcpsync.errors import AuthError, AuthRequired, ConfigError, OAuthError
from tests.peers.authserver import _b64url_decode, make_manager, manager, no_auth_leaks, srv, store  # noqa: F401

pytestmark = pytest.mark.usefixtures("no_auth_leaks")


def call(url, auth, method="GET"):
    with requests.Session() as session:
        with session.request(method, url, auth=auth, timeout=60) as resp:
            return resp.status_code


def jwt_parts(token):
    head, body, _ = token.split(".")
    return json.loads(_b64url_decode(head)), json.loads(_b64url_decode(body))


def mcp_requests(srv):
    return srv.requests_to(srv.mcp_path)


def test_proof_shape_and_key_round_trip():
    key = DPoPKey.generate()
    proof = key.proof("post", "https://MCP.example.com/mcp?session=1#frag", access_token="tok", nonce="n-1")
    header, claims = jwt_parts(proof)
    assert header["typ"] == "dpop+jwt" and header["alg"] == "ES256"
    assert header["jwk"] == key.public_jwk and "d" not in header["jwk"]
    assert claims["htm"] == "POST" and claims["htu"] == "https://mcp.example.com/mcp"
    assert claims["ath"] == access_token_hash("tok") and claims["nonce"] == "n-1"
    assert isinstance(claims["iat"], int) and claims["jti"]
    assert jwt_parts(key.proof("GET", "https://h/x"))[1]["jti"] != claims["jti"]
    again = DPoPKey.from_jwk(json.loads(json.dumps(key.to_jwk())))
    assert again.thumbprint == key.thumbprint and again.public_jwk == key.public_jwk
    secret = key.to_jwk()["d"]
    assert secret not in repr(key) and "d" not in key.public_jwk
    for bad in (None, [], {"alg": "ES256"}, {"alg": "ES256", "kty": "EC", "crv": "P-256", "x": "!", "y": "", "d": ""}):
        with pytest.raises(ConfigError):
            DPoPKey.from_jwk(bad)
    assert htu("https://h") == "https://h/"


def test_rs256_key_round_trip():
    key = DPoPKey.generate("RS256")
    assert key.public_jwk["kty"] == "RSA" and DPoPKey.from_jwk(key.to_jwk()).thumbprint == key.thumbprint


def test_algorithm_choice():
    assert choose_alg(None) == "ES256" and choose_alg(["ES256", "RS256"]) == "ES256"
    assert choose_alg(["PS256", "RS256"]) == "RS256" and choose_alg(["RS256"], "RS256") == "RS256"
    with pytest.raises(AuthError, match="ES256 or RS256"):
        choose_alg(["EdDSA", "PS256"])
    with pytest.raises(ConfigError):
        choose_alg(None, "HS256")


def test_nonce_cache_is_per_origin_and_rejects_bad_nonces():
    cache = NonceCache(limit=2)
    assert cache.put("https://A.example/token?x", "n1")
    assert cache.get("https://a.example/other") == "n1" and cache.get("https://b.example/") is None
    for bad in ("", "has space", 'q"uote', "back\\slash", "x" * 600, None, 5):
        assert not cache.put("https://a.example", bad)
    cache.put("https://b.example", "n2")
    cache.put("https://c.example", "n3")
    assert cache.get("https://a.example") is None  # bounded: the oldest went


def test_login_binds_the_token_and_every_request_carries_a_fresh_proof(srv, manager):
    srv.dpop_algs = ["ES256"]
    manager.authenticate("srv")
    entry = manager.store.get("srv")
    assert entry["tokens"]["tokenType"] == "DPoP"
    assert entry["dpopKey"]["alg"] == "ES256" and "d" in entry["dpopKey"]
    assert stat.S_IMODE(os.stat(manager.store.path).st_mode) == 0o600
    token_request = srv.token_requests("authorization_code")[0]
    assert "DPoP" in token_request["headers"]
    auth = manager.auth("srv")
    assert call(srv.server_url, auth) == 200
    assert call(srv.server_url + "?page=2#frag", auth, "POST") == 200  # htu drops query and fragment
    assert call(srv.server_url, auth, "DELETE") != 401
    seen = mcp_requests(srv)
    assert [r["headers"]["Authorization"].split()[0] for r in seen] == ["DPoP"] * 3
    proofs = [jwt_parts(r["headers"]["DPoP"])[1] for r in seen]
    assert [p["htm"] for p in proofs] == ["GET", "POST", "DELETE"]
    assert len({p["jti"] for p in proofs}) == 3
    assert all(p["ath"] == access_token_hash(entry["tokens"]["accessToken"]) for p in proofs)
    assert srv.dpop_errors == []


def test_bound_token_presented_as_bearer_is_refused(srv, manager):
    srv.dpop_algs = ["ES256"]
    manager.authenticate("srv")
    token = manager.store.get("srv")["tokens"]["accessToken"]
    with requests.get(srv.server_url, headers={"Authorization": "Bearer " + token}, timeout=30) as resp:
        assert resp.status_code == 401


def test_refreshed_token_stays_bound_to_the_stored_key_in_another_process(srv, manager, make_manager):
    srv.dpop_algs = ["ES256"]
    manager.authenticate("srv")
    thumb = DPoPKey.from_jwk(manager.store.get("srv")["dpopKey"]).thumbprint
    manager.store.update("srv", lambda e: e["tokens"].__setitem__("expiresAt", 1))
    fresh = make_manager(authorize_handler=None, open_browser=lambda url: pytest.fail("no browser"))
    fresh.add_server("srv", srv.server_url)
    assert call(srv.server_url, fresh.auth("srv")) == 200
    refresh = srv.token_requests("refresh_token")
    assert len(refresh) == 1
    header, _ = jwt_parts(refresh[0]["headers"]["DPoP"])
    assert (
        DPoPKey.from_jwk(dict(header["jwk"], d=manager.store.get("srv")["dpopKey"]["d"], alg="ES256")).thumbprint
        == thumb
    )
    assert fresh.store.get("srv")["tokens"]["tokenType"] == "DPoP" and srv.dpop_errors == []


def test_nonces_at_the_authorization_server_and_the_resource(srv, manager):
    srv.dpop_algs = ["ES256"]
    srv.dpop_nonce_as = "as-nonce-1"
    srv.dpop_nonce_rs = "rs-nonce-1"
    manager.authenticate("srv")
    codes = srv.token_requests("authorization_code")
    assert len(codes) == 2  # use_dpop_nonce, then the retry with it
    assert "nonce" not in jwt_parts(codes[0]["headers"]["DPoP"])[1]
    assert jwt_parts(codes[1]["headers"]["DPoP"])[1]["nonce"] == "as-nonce-1"
    auth = manager.auth("srv")
    assert call(srv.server_url, auth) == 200
    assert call(srv.server_url, auth) == 200
    nonces = [jwt_parts(r["headers"]["DPoP"])[1].get("nonce") for r in mcp_requests(srv)]
    assert nonces == [None, "rs-nonce-1", "rs-nonce-1"]  # challenged once, then remembered
    assert srv.dpop_errors == []


def test_resource_nonce_is_retried_once_only(srv, make_manager):
    srv.dpop_algs = ["ES256"]
    srv.dpop_nonce_rs = "the-real-nonce"
    srv.issue_refresh_tokens = False
    srv.add_client("app", redirect_uris=[], method="client_secret_basic", secret="s")
    m = make_manager()
    m.add_server("srv", srv.server_url, {"grant": "client_credentials", "clientId": "app", "clientSecret": "s"})
    original = srv.json

    def lying_json(status, doc, headers=None):
        if headers and "DPoP-Nonce" in headers and status == 401:
            headers = dict(headers, **{"DPoP-Nonce": "not-the-nonce"})
        return original(status, doc, headers)

    srv.json = lying_json
    with pytest.raises(AuthRequired, match="nonce"):
        call(srv.server_url, m.auth("srv"))
    seen = mcp_requests(srv)
    assert [jwt_parts(r["headers"]["DPoP"])[1].get("nonce") for r in seen] == [None, "not-the-nonce"]
    assert len(srv.token_requests()) == 1  # a nonce problem is not an authorization problem


def test_authorization_server_nonce_is_retried_once_only(srv, make_manager):
    srv.dpop_algs = ["ES256"]
    srv.dpop_nonce_as = "expected"
    srv.add_client("app", redirect_uris=[], method="client_secret_basic", secret="s")
    original = srv.json

    def lying_json(status, doc, headers=None):
        if headers and "DPoP-Nonce" in headers:
            headers = dict(headers, **{"DPoP-Nonce": "wrong"})
        return original(status, doc, headers)

    srv.json = lying_json
    m = make_manager()
    m.add_server("srv", srv.server_url, {"grant": "client_credentials", "clientId": "app", "clientSecret": "s"})
    with pytest.raises(OAuthError) as info:
        m.get_access_token("srv")
    assert info.value.error == "use_dpop_nonce"
    assert len(srv.token_requests("client_credentials")) == 2


def test_bearer_when_the_server_does_not_offer_dpop(srv, manager):
    manager.authenticate("srv")
    assert manager.store.get("srv")["tokens"]["tokenType"] == "Bearer"
    assert "dpopKey" not in manager.store.get("srv")
    assert call(srv.server_url, manager.auth("srv")) == 200
    request = mcp_requests(srv)[-1]
    assert request["headers"]["Authorization"].startswith("Bearer ") and "DPoP" not in request["headers"]


def test_dpop_false_keeps_bearer_tokens(srv, make_manager):
    srv.dpop_algs = ["ES256"]
    m = make_manager()
    m.add_server("srv", srv.server_url, {"dpop": False})
    m.authenticate("srv")
    assert m.store.get("srv")["tokens"]["tokenType"] == "Bearer"
    assert "DPoP" not in srv.token_requests("authorization_code")[0]["headers"]
    assert call(srv.server_url, m.auth("srv")) == 200


def test_dpop_true_sends_proofs_even_unadvertised(srv, make_manager):
    m = make_manager()
    m.add_server("srv", srv.server_url, {"dpop": True, "dpopAlg": "RS256"})
    m.authenticate("srv")
    proof = srv.token_requests("authorization_code")[0]["headers"]["DPoP"]
    assert jwt_parts(proof)[0]["alg"] == "RS256"
    # this server ignores DPoP and issues a Bearer token: it is used as one
    assert m.store.get("srv")["tokens"]["tokenType"] == "Bearer"
    assert call(srv.server_url, m.auth("srv")) == 200


def test_rs256_when_the_server_lists_only_that(srv, manager):
    srv.dpop_algs = ["RS256"]
    manager.authenticate("srv")
    assert manager.store.get("srv")["dpopKey"]["alg"] == "RS256"
    assert call(srv.server_url, manager.auth("srv")) == 200 and srv.dpop_errors == []


def test_unsupported_algorithms_stop_before_the_browser(srv, manager):
    srv.dpop_algs = ["EdDSA"]
    with pytest.raises(AuthError, match="ES256 or RS256"):
        manager.authenticate("srv")
    assert srv.requests_to("/authorize") == []


def test_dpop_only_challenge_drives_dpop_and_interactive_login(srv, manager):
    srv.dpop_algs = ["ES256"]
    srv.dpop_only = True
    srv.metadata.pop("dpop_signing_alg_values_supported", None)
    assert call(srv.server_url, manager.auth("srv", interactive=True)) == 200
    assert manager.store.get("srv")["tokens"]["tokenType"] == "DPoP"
    first = mcp_requests(srv)[0]
    assert "Authorization" not in first["headers"]


@pytest.fixture(params=["cryptography", "jwt"])
def missing(request):
    """Each package of the jwt extra in turn (PyJWT signs, cryptography holds the keys)."""
    return request.param


def _without_cryptography(monkeypatch, package="cryptography"):
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == package or name.startswith(package + "."):
            raise ImportError("no cryptography")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)


def test_without_cryptography_a_dpop_only_server_names_the_extra(srv, manager, monkeypatch, missing):
    srv.dpop_algs = ["ES256"]
    srv.dpop_only = True
    _without_cryptography(monkeypatch, missing)
    assert not _dpop.crypto_available()
    with pytest.raises(ConfigError, match=r"DPoP.*pip install 'mcpsync\[jwt\]'") as info:
        call(srv.server_url, manager.auth("srv", interactive=True))
    assert info.value.server == "srv"
    assert srv.requests_to("/authorize") == [] and srv.token_requests() == []


def test_without_cryptography_an_optional_dpop_server_gets_bearer_tokens(srv, manager, monkeypatch, missing):
    srv.dpop_algs = ["ES256"]
    _without_cryptography(monkeypatch, missing)
    manager.authenticate("srv")
    assert manager.store.get("srv")["tokens"]["tokenType"] == "Bearer"
    assert call(srv.server_url, manager.auth("srv")) == 200


def test_without_cryptography_dpop_true_names_the_extra(srv, make_manager, monkeypatch):
    _without_cryptography(monkeypatch)
    m = make_manager()
    m.add_server("srv", srv.server_url, {"dpop": True})
    with pytest.raises(ConfigError, match=r"mcpsync\[jwt\]"):
        m.authenticate("srv")


def test_issuer_change_drops_the_key(srv, manager):
    from tests.peers.authserver import AuthTestServer

    srv.dpop_algs = ["ES256"]
    manager.authenticate("srv")
    old = manager.store.get("srv")["dpopKey"]["d"]
    with AuthTestServer() as other:
        other.dpop_algs = ["ES256"]
        srv.prm["authorization_servers"] = [other.issuer]
        other.prm = srv.prm
        manager.authenticate("srv")
        assert manager.store.get("srv")["dpopKey"]["d"] != old


def test_threads_share_the_key_and_never_replay_a_proof(srv, manager):
    srv.dpop_algs = ["ES256"]
    srv.dpop_nonce_rs = "rs-n"
    manager.authenticate("srv")
    auth = manager.auth("srv")
    barrier = threading.Barrier(8)
    results = []

    def worker():
        barrier.wait(timeout=30)
        results.append(call(srv.server_url, auth, "POST"))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert results == [200] * 8 and srv.dpop_errors == []


def test_private_key_never_logged_or_shown(srv, manager, caplog):
    caplog.set_level(logging.DEBUG)
    srv.dpop_algs = ["ES256"]
    srv.dpop_nonce_as = "n"
    srv.dpop_nonce_rs = "m"
    manager.authenticate("srv")
    call(srv.server_url, manager.auth("srv"))
    entry = manager.store.get("srv")
    secret = entry["dpopKey"]["d"]
    token = entry["tokens"]["accessToken"]
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert secret not in text and token not in text
    assert secret not in repr(manager) and secret not in repr(manager.auth("srv"))
