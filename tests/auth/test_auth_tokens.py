"""Tokens: refresh and rotation, single flight across threads and processes, OAuthAuth 401/403, secrecy."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
import threading

import pytest
import requests

from mcpsync.errors import AuthRequired, InsufficientScope
from tests.peers.authserver import make_manager, manager, no_auth_leaks, srv, store  # noqa: F401

pytestmark = pytest.mark.usefixtures("no_auth_leaks")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def call(url, auth):
    with requests.Session() as session:
        with session.get(url, auth=auth, timeout=60) as resp:
            return resp.status_code, resp.json()


def expire(manager, name="srv"):
    manager.store.update(name, lambda e: e["tokens"].__setitem__("expiresAt", 1))


def test_expired_token_refreshes_silently_from_the_store(srv, manager, make_manager):
    manager.authenticate("srv")
    old = manager.store.get("srv")["tokens"]
    expire(manager)
    # a new process: nothing in memory, only the store
    fresh = make_manager(authorize_handler=None, open_browser=lambda url: pytest.fail("no browser"))
    fresh.add_server("srv", srv.server_url)
    srv.log.clear()
    assert call(srv.server_url, fresh.auth("srv"))[0] == 200
    assert [e["path"] for e in srv.log] == ["/token", "/mcp"]  # no discovery, no 401 round trip
    form = srv.log[0]["form"]
    assert form["grant_type"] == "refresh_token" and form["resource"] == srv.server_url
    new = fresh.store.get("srv")["tokens"]
    assert new["accessToken"] != old["accessToken"] and new["refreshToken"] != old["refreshToken"]  # rotated


def test_401_refreshes_once_before_any_interactive_flow(srv, manager):
    manager.authenticate("srv")
    token = manager.store.get("srv")["tokens"]["accessToken"]
    srv.access_tokens.pop(token)  # revoked server-side, still "valid" locally
    logins = len(srv.requests_to("/authorize"))
    assert call(srv.server_url, manager.auth("srv", interactive=True))[0] == 200
    assert len(srv.token_requests("refresh_token")) == 1
    assert len(srv.requests_to("/authorize")) == logins


def test_invalid_grant_marks_needs_auth_and_raises_auth_required(srv, manager):
    manager.authenticate("srv")
    tokens = manager.store.get("srv")["tokens"]
    srv.refresh_tokens.clear()
    expire(manager)
    with pytest.raises(AuthRequired) as info:
        call(srv.server_url, manager.auth("srv"))
    assert info.value.server == "srv" and info.value.resource_metadata == srv.base + srv.prm_header_path
    entry = manager.store.get("srv")
    assert entry["needsAuth"] is True and entry["tokens"]["refreshToken"] == tokens["refreshToken"]  # kept
    assert manager.get_auth_status("srv") == "expired"
    manager.authenticate("srv")
    assert manager.get_auth_status("srv") == "authenticated" and "needsAuth" not in manager.store.get("srv")


def test_invalid_grant_never_erases_newer_credentials(srv, manager):
    manager.authenticate("srv")
    manager._refresher._refresh_refused("srv", "an-older-refresh-token", "invalid_grant", drop_client=True)
    entry = manager.store.get("srv")
    assert "needsAuth" not in entry and entry["clientInfo"]


def test_refresh_skipped_when_another_process_already_rotated(srv, manager):
    manager.authenticate("srv")
    used = manager.store.get("srv")["tokens"]["accessToken"]
    newer = srv.issue_access_token(["read"])
    manager.store.update("srv", lambda e: e["tokens"].update(accessToken=newer))
    assert manager.refresh("srv", used) == newer
    assert srv.token_requests("refresh_token") == []


def test_ten_threads_one_refresh(srv, manager):
    manager.authenticate("srv")
    expire(manager)
    srv.token_delay = 0.3  # widen the window in which the threads overlap
    auth = manager.auth("srv")
    results, errors = [], []
    barrier = threading.Barrier(10)

    def worker():
        try:
            barrier.wait(10)
            results.append(call(srv.server_url, auth)[0])
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and results == [200] * 10
    assert len(srv.token_requests("refresh_token")) == 1


_REFRESHER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[3])
    from mcpsync.auth import OAuthManager
    m = OAuthManager(store=sys.argv[1], callback_port=1)
    m.add_server("srv", sys.argv[2])
    sys.stdin.readline()  # start together
    print(m.get_access_token("srv"), flush=True)
    m.close()
    """
)


def test_processes_share_one_refresh_through_the_store(srv, manager):
    manager.authenticate("srv")
    expire(manager)
    srv.token_delay = 0.3
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _REFRESHER, manager.store.path, srv.server_url, ROOT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    outputs = []
    try:
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.flush()
        for p in procs:
            out, _ = p.communicate(timeout=60)
            assert p.returncode == 0
            outputs.append(out.strip())
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert len(srv.token_requests("refresh_token")) == 1
    assert len(set(outputs)) == 1 and outputs[0] == manager.store.get("srv")["tokens"]["accessToken"]


def test_no_token_non_interactive_raises_auth_required_with_challenge(srv, manager):
    srv.challenge_scope = "read"
    with pytest.raises(AuthRequired) as info:
        call(srv.server_url, manager.auth("srv"))
    assert info.value.scope == "read" and "mcpsync auth login srv" in str(info.value)


def test_interactive_auth_logs_in_from_inside_the_request(srv, manager):
    srv.challenge_scope = "read"
    status, body = call(srv.server_url, manager.auth("srv", interactive=True))
    assert status == 200 and srv.requests_to("/authorize")[0]["query"]["scope"] == "read offline_access"


def test_step_up_with_union_of_scopes(srv, manager):
    manager.remember_challenge("srv", {"scope": "read"})
    manager.authenticate("srv")
    srv.required_scopes = ["read", "admin"]
    status, body = call(srv.server_url, manager.auth("srv", interactive=True))
    assert status == 200 and "admin" in body["scope"]
    scope = srv.requests_to("/authorize")[-1]["query"]["scope"].split()
    assert {"read", "admin"} <= set(scope)


def test_step_up_not_interactive_raises_insufficient_scope(srv, manager):
    manager.authenticate("srv")
    srv.required_scopes = ["admin"]
    with pytest.raises(InsufficientScope) as info:
        call(srv.server_url, manager.auth("srv"))
    assert info.value.scope == "admin" and info.value.status_code == 403


def test_step_up_gives_up_after_three_attempts(srv, manager):
    manager.authenticate("srv")
    srv.required_scopes = ["admin"]
    srv.metadata["scopes_supported"] = ["read"]

    def stingy(request):  # the user never grants "admin"
        from tests.peers.authserver import approve_via_http

        location = approve_via_http(request)
        for info in srv.codes.values():
            info["scope"] = [s for s in info["scope"] if s != "admin"]
        return location

    manager.authorize_handler = stingy
    before = len(srv.requests_to("/authorize"))
    with pytest.raises(InsufficientScope, match="3 authorization attempt"):
        call(srv.server_url, manager.auth("srv", interactive=True))
    assert len(srv.requests_to("/authorize")) - before == 3


def test_secrets_never_in_logs_reprs_or_messages(srv, make_manager, caplog):
    caplog.set_level(logging.DEBUG, logger="mcpsync")
    m = make_manager()
    srv.add_client("pre", redirect_uris=[m.redirect_uri], method="client_secret_basic", secret="TOPSECRET")
    m.add_server("srv", srv.server_url, {"clientId": "pre", "clientSecret": "TOPSECRET"})
    m.authenticate("srv")
    expire(m)
    auth = m.auth("srv")
    assert call(srv.server_url, auth)[0] == 200
    srv.refresh_tokens.clear()
    expire(m)
    auth = m.auth("srv")  # a new one: an OAuthAuth reuses the token it read for TOKEN_REUSE_SECONDS (0.5 s)
    with pytest.raises(AuthRequired) as info:
        call(srv.server_url, auth)
    secrets_seen = {"TOPSECRET"}
    for entry in srv.log:
        for key in ("code", "code_verifier", "refresh_token", "client_secret"):
            if entry["form"].get(key):
                secrets_seen.add(entry["form"][key])
    secrets_seen |= set(srv.access_tokens) | {v for e in srv.log for k, v in e["query"].items() if k == "code"}
    texts = [
        caplog.text,
        repr(m),
        repr(auth),
        repr(m.store),
        str(info.value),
        repr(info.value),
        repr(m._servers["srv"].oauth),
    ]
    for secret in secrets_seen:
        for text in texts:
            assert secret not in text
    assert json.dumps(m.store.get("srv"))  # the store itself of course holds them
