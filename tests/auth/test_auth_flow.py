"""Browser logins end to end: registration, PKCE, state/iss, scopes, paste-back, the status API."""

from __future__ import annotations

import re
import threading
from urllib.parse import parse_qsl, urlsplit

import pytest
import requests

from mcpsync.auth import OAuthManager
from mcpsync.errors import AuthError, CallbackError, ConfigError, NeedsClientRegistration, OAuthError
from tests.peers.authserver import (  # noqa: F401
    AuthTestServer,
    approve_via_http,
    free_port,
    make_manager,
    manager,
    no_auth_leaks,
    srv,
    store,
)

pytestmark = pytest.mark.usefixtures("no_auth_leaks")


def call(url, auth):
    with requests.Session() as session:
        with session.get(url, auth=auth, timeout=30) as resp:
            return resp.status_code, resp.json()


def query_of(url):
    return dict(parse_qsl(urlsplit(url).query))


def test_login_with_dynamic_registration_end_to_end(srv, manager):
    manager.authenticate("srv")
    reg = srv.requests_to("/register")[0]["json"]
    assert reg["redirect_uris"] == [manager.redirect_uri]
    assert reg["application_type"] == "native"
    assert reg["grant_types"] == ["authorization_code", "refresh_token"]
    assert reg["response_types"] == ["code"] and reg["token_endpoint_auth_method"] == "none"
    authz = srv.requests_to("/authorize")[0]["query"]
    assert authz["code_challenge_method"] == "S256" and len(authz["code_challenge"]) == 43
    assert re.fullmatch(r"[0-9a-f]{64}", authz["state"])
    assert authz["resource"] == srv.server_url and authz["redirect_uri"] == manager.redirect_uri
    token = srv.token_requests("authorization_code")[0]["form"]
    assert token["resource"] == srv.server_url and token["redirect_uri"] == manager.redirect_uri
    assert 43 <= len(token["code_verifier"]) <= 128
    assert manager.get_auth_status("srv") == "authenticated" and manager.has_stored_tokens("srv")
    assert call(srv.server_url, manager.auth("srv"))[0] == 200
    entry = manager.store.get("srv")
    assert entry["clientInfo"]["redirectUri"] == manager.redirect_uri
    assert entry["issuer"] == srv.issuer and entry["tokenEndpoint"] == srv.issuer + "/token"
    assert isinstance(entry["tokens"]["expiresAt"], int)
    assert "codeVerifier" not in entry and "oauthState" not in entry


def test_second_login_reuses_the_registration(srv, manager):
    manager.authenticate("srv")
    manager.authenticate("srv")
    assert len(srv.requests_to("/register")) == 1
    assert len(srv.token_requests("authorization_code")) == 2


def test_changed_redirect_uri_registers_again(srv, manager, make_manager):
    manager.authenticate("srv")
    other = make_manager()
    other.add_server("srv", srv.server_url)
    other.authenticate("srv")
    regs = srv.requests_to("/register")
    assert len(regs) == 2 and regs[1]["json"]["redirect_uris"] == [other.redirect_uri]


def test_configured_redirect_uri_is_used_byte_for_byte(srv, make_manager):
    uri = "http://localhost:%d/custom/cb" % free_port()
    m = make_manager(redirect_uri=uri)
    m.add_server("srv", srv.server_url)
    m.authenticate("srv")
    assert srv.requests_to("/register")[0]["json"]["redirect_uris"] == [uri]
    assert srv.requests_to("/authorize")[0]["query"]["redirect_uri"] == uri
    assert srv.token_requests("authorization_code")[0]["form"]["redirect_uri"] == uri


def test_login_through_the_callback_server(srv, make_manager):
    """The test authorization server approves by redirecting to the real callback server."""
    responses = []

    def browser(url):
        def run():
            with requests.get(url, timeout=30) as resp:  # follows the redirect to the callback server
                responses.append((resp.status_code, resp.text, resp.url))

        t = threading.Thread(target=run)
        t.start()
        browsers.append(t)
        return True

    browsers = []
    m = make_manager(authorize_handler=None, open_browser=browser)
    m.add_server("srv", srv.server_url)
    m.authenticate("srv", timeout=30)
    for t in browsers:
        t.join()
    status, text, final_url = responses[0]
    assert status == 200 and "Authorization successful" in text
    assert final_url.startswith(m.redirect_uri + "?")
    assert m.get_auth_status("srv") == "authenticated"
    assert call(srv.server_url, m.auth("srv"))[0] == 200


def test_denied_login_shows_error_and_fails(srv, make_manager):
    srv.approve = "access_denied"
    pages = []

    def browser(url):
        def run():
            with requests.get(url, timeout=30) as resp:
                pages.append(resp.text)

        t = threading.Thread(target=run)
        t.start()
        threads.append(t)
        return True

    threads = []
    m = make_manager(authorize_handler=None, open_browser=browser)
    m.add_server("srv", srv.server_url)
    with pytest.raises(OAuthError) as info:
        m.authenticate("srv", timeout=30)
    for t in threads:
        t.join()
    assert info.value.error == "access_denied" and info.value.description == "The user said no"
    assert "Authorization failed" in pages[0] and "The user said no" in pages[0]
    assert "oauthState" not in m.store.get("srv")


@pytest.mark.parametrize("method", ["none", "client_secret_basic", "client_secret_post"])
def test_pre_registered_client_each_auth_method(srv, make_manager, method):
    m = make_manager()
    secret = None if method == "none" else "s3cret"
    srv.add_client("pre", redirect_uris=[m.redirect_uri], method=method, secret=secret)
    m.add_server("srv", srv.server_url, {"clientId": "pre", "clientSecret": secret, "tokenEndpointAuthMethod": method})
    m.authenticate("srv")
    assert srv.requests_to("/register") == []
    req = srv.token_requests("authorization_code")[0]
    if method == "client_secret_basic":
        assert req["headers"]["Authorization"].startswith("Basic ") and "client_secret" not in req["form"]
    elif method == "client_secret_post":
        assert req["form"]["client_secret"] == "s3cret" and "Authorization" not in req["headers"]
    else:
        assert req["form"]["client_id"] == "pre" and "client_secret" not in req["form"]


def test_secret_method_chosen_from_server_list(srv, make_manager):
    srv.metadata["token_endpoint_auth_methods_supported"] = ["client_secret_post"]
    m = make_manager()
    srv.add_client("pre", redirect_uris=[m.redirect_uri], method="client_secret_post", secret="s")
    m.add_server("srv", srv.server_url, {"clientId": "pre", "clientSecret": "s"})
    m.authenticate("srv")
    assert m.get_auth_status("srv") == "authenticated"


def test_client_id_metadata_document_when_advertised(srv, make_manager):
    cimd = "https://client.example.com/mcpsync.json"
    srv.metadata["client_id_metadata_document_supported"] = True
    m = make_manager()
    srv.add_client(cimd, redirect_uris=[m.redirect_uri], method="none")
    m.add_server("srv", srv.server_url, {"clientMetadataUrl": cimd})
    m.authenticate("srv")
    assert srv.requests_to("/register") == []
    assert srv.requests_to("/authorize")[0]["query"]["client_id"] == cimd


def test_cimd_not_advertised_falls_back_to_dcr(srv, make_manager):
    m = make_manager()
    m.add_server("srv", srv.server_url, {"clientMetadataUrl": "https://client.example.com/c.json"})
    m.authenticate("srv")
    assert len(srv.requests_to("/register")) == 1


def test_needs_client_registration_names_the_redirect_uri(srv, manager):
    del srv.metadata["registration_endpoint"]
    with pytest.raises(NeedsClientRegistration) as info:
        manager.authenticate("srv")
    assert info.value.redirect_uri == manager.redirect_uri and manager.redirect_uri in str(info.value)
    assert srv.requests_to("/authorize") == []


def test_stale_registration_is_discarded_and_registered_again(srv, manager):
    forgotten = []

    def forgetful(request):
        location = approve_via_http(request)
        if not forgotten:  # the server forgets the client between authorization and token request
            cid = query_of(request.url)["client_id"]
            srv.clients.pop(cid)
            forgotten.append(cid)
        return location

    manager.authorize_handler = forgetful
    manager.authenticate("srv")
    assert len(srv.requests_to("/register")) == 2
    assert manager.store.get("srv")["clientInfo"]["clientId"] != forgotten[0]


@pytest.mark.parametrize("methods", [None, ["plain"]])
def test_pkce_s256_must_be_advertised(srv, manager, methods):
    if methods is None:
        del srv.metadata["code_challenge_methods_supported"]
    else:
        srv.metadata["code_challenge_methods_supported"] = methods
    with pytest.raises(AuthError, match="PKCE S256"):
        manager.authenticate("srv")
    assert srv.requests_to("/authorize") == [] and srv.requests_to("/register") == []


def test_pkce_is_verified_by_the_server(srv, manager):
    """A wrong verifier is refused by the test server: proves it really checks."""

    def tamper(request):
        location = approve_via_http(request)
        manager.store.update_code_verifier("srv", "x" * 64)
        return location

    manager.authorize_handler = tamper
    with pytest.raises(OAuthError, match="invalid_grant"):
        manager.authenticate("srv")


def test_state_mismatch_rejected(srv, manager):
    def wrong_state(request):
        location = approve_via_http(request)
        return location.replace("state=" + request.state, "state=" + "0" * 64)

    manager.authorize_handler = wrong_state
    with pytest.raises(CallbackError, match="state"):
        manager.authenticate("srv")
    assert srv.token_requests() == []


@pytest.mark.parametrize("mode", ["wrong", "omit"])
def test_iss_checked(srv, manager, mode):
    srv.iss_mode = mode
    with pytest.raises(CallbackError, match="iss"):
        manager.authenticate("srv")
    assert srv.token_requests() == []


def test_iss_optional_when_not_advertised(srv, manager):
    srv.iss_mode = "omit"
    srv.metadata["authorization_response_iss_parameter_supported"] = False
    manager.authenticate("srv")
    assert manager.get_auth_status("srv") == "authenticated"


def _scope_sent(srv):
    return srv.requests_to("/authorize")[-1]["query"].get("scope")


def test_scope_from_challenge_first(srv, manager):
    manager.remember_challenge("srv", {"scope": "write"})
    manager.authenticate("srv")
    assert _scope_sent(srv) == "write offline_access"


def test_scope_from_protected_resource_metadata(srv, manager):
    manager.authenticate("srv")
    assert _scope_sent(srv) == "read write offline_access"


def test_scope_omitted_when_nothing_is_known(srv, manager):
    srv.prm.pop("scopes_supported")
    manager.authenticate("srv")
    assert _scope_sent(srv) is None


def test_offline_access_only_when_listed(srv, manager):
    srv.metadata["scopes_supported"] = ["read", "write"]
    manager.authenticate("srv")
    assert _scope_sent(srv) == "read write"


def test_configured_scope_is_added(srv, make_manager):
    m = make_manager()
    m.add_server("srv", srv.server_url, {"scope": "admin"})
    m.remember_challenge("srv", {"scope": "read"})
    m.authenticate("srv")
    assert _scope_sent(srv) == "read admin offline_access"


def test_start_auth_then_finish_auth_with_pasted_url(srv, manager):
    url = manager.start_auth("srv")
    assert url.startswith(srv.issuer + "/authorize?")
    with requests.get(url, allow_redirects=False, timeout=10) as resp:
        location = resp.headers["Location"]
    # a fresh manager (another process) finishes it from the store alone
    other = OAuthManager(store=manager.store, callback_port=manager.callback_port)
    try:
        other.add_server("srv", srv.server_url)
        assert other.finish_auth("srv", location) is True
        assert other.get_auth_status("srv") == "authenticated"
    finally:
        other.close()


def test_finish_auth_with_bare_code(srv, manager):
    srv.metadata["authorization_response_iss_parameter_supported"] = False
    url = manager.start_auth("srv")
    with requests.get(url, allow_redirects=False, timeout=10) as resp:
        code = query_of(resp.headers["Location"])["code"]
    manager.finish_auth("srv", code)
    assert manager.get_auth_status("srv") == "authenticated"


def test_browser_open_failed_event_and_paste_back(srv, make_manager):
    events = []

    def failed(name, url):
        events.append((name, url))

        def paste():
            with requests.get(url, allow_redirects=False, timeout=10) as resp:
                m.finish_auth(name, resp.headers["Location"])

        threading.Thread(target=paste, name="paste").start()

    m = make_manager(authorize_handler=None, open_browser=lambda url: False, on_browser_open_failed=failed)
    m.add_server("srv", srv.server_url)
    m.authenticate("srv", timeout=30)
    assert events and events[0][0] == "srv" and events[0][1].startswith(srv.issuer + "/authorize?")
    for t in threading.enumerate():
        if t.name == "paste":
            t.join()
    assert m.get_auth_status("srv") == "authenticated"


def test_status_api(srv, manager, make_manager):
    assert manager.supports_oauth("srv")
    assert manager.get_auth_status("srv") == "not_authenticated" and not manager.has_stored_tokens("srv")
    manager.authenticate("srv")
    assert manager.get_auth_status("srv") == "authenticated"
    manager.store.update("srv", lambda e: e["tokens"].__setitem__("expiresAt", 1))
    assert manager.get_auth_status("srv") == "expired" and manager.has_stored_tokens("srv")
    manager.remove_auth("srv")
    assert manager.get_auth_status("srv") == "not_authenticated" and manager.store.get("srv") is None
    manager.add_server("off", srv.server_url, False)
    assert not manager.supports_oauth("off") and not manager.supports_oauth("unknown")
    with pytest.raises(ConfigError):
        manager.start_auth("off")


def test_tokens_bound_to_server_url(srv, manager):
    manager.authenticate("srv")
    manager.add_server("srv", srv.server_url + "/other")
    assert manager.get_auth_status("srv") == "not_authenticated"


def test_issuer_change_discards_old_registration(srv, manager):
    manager.authenticate("srv")
    first = manager.store.get("srv")["clientInfo"]["clientId"]
    with AuthTestServer() as other_as:
        srv.prm["authorization_servers"] = [other_as.issuer]
        other_as.prm = srv.prm
        manager.authenticate("srv")
        entry = manager.store.get("srv")
        assert entry["issuer"] == other_as.issuer and entry["clientInfo"]["clientId"] != first
        assert len(other_as.requests_to("/register")) == 1


def test_import_of_the_auth_package_is_light():
    import subprocess
    import sys

    code = (
        "import sys, mcpsync.auth\n"
        "print([m for m in ('requests', 'filelock', 'http.client', 'http.server') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr


def test_callback_port_from_environment(monkeypatch, store):
    monkeypatch.setenv("MCPSYNC_OAUTH_CALLBACK_PORT", "23456")
    m = OAuthManager(store=store)
    try:
        assert m.redirect_uri == "http://127.0.0.1:23456/mcp/oauth/callback"
    finally:
        m.close()
    with pytest.raises(ConfigError):
        OAuthManager(store=store, redirect_uri="https://example.com/cb")


def test_client_metadata_document_helper():
    from mcpsync.auth.registration import client_metadata_document

    doc = client_metadata_document("https://c.example.com/c.json", "http://127.0.0.1:19876/mcp/oauth/callback")
    assert doc["client_id"] == "https://c.example.com/c.json" and doc["client_name"] == "mcpsync"
    assert doc["redirect_uris"] == ["http://127.0.0.1:19876/mcp/oauth/callback"]


def test_callback_thread_runs_only_during_the_login(srv, make_manager):
    seen = []

    def browser(url):
        seen.append(sorted(t.name for t in threading.enumerate() if t.name.startswith("mcpsync-oauth")))
        t = threading.Thread(target=lambda: requests.get(url, timeout=30).close())
        t.start()
        threads.append(t)
        return True

    threads = []
    m = make_manager(authorize_handler=None, open_browser=browser)
    m.add_server("srv", srv.server_url)
    m.authenticate("srv", timeout=30)
    for t in threads:
        t.join()
    assert "mcpsync-oauth-callback" in seen[0]
    assert not [t for t in threading.enumerate() if t.name == "mcpsync-oauth-callback"]
