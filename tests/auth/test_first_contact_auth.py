"""Issue 19 items 1 and 2: credentials in the deployments users already have.

1. A static ``Authorization`` header written in a Claude/Cursor (``mcpServers``), VS Code (``servers``) or
   OpenCode (``mcp``) configuration is always sent, against a real local server that checks it; OAuth starts only
   when the server asks (a 401 challenge) and no static credential was given; ``"oauth": false`` turns it off in
   every format.
2. ``OAuthManager.authenticate()`` finds a server whose metadata is named only in its 401 ``WWW-Authenticate``
   challenge (the spec allows it), exactly as ``mcpsync auth login`` does: one code path.
"""

from __future__ import annotations

import json
from typing import Any, Dict

import pytest

import mcpsync
from mcpsync import Manager

from tests.peers.authserver import AuthTestServer, approve_via_http, free_port, make_manager, store  # noqa: F401
from tests.peers.httpserver import MCPTestServer


# ---------------------------------------------------------------------------- item 2


def _challenge_only_server() -> AuthTestServer:
    srv = AuthTestServer(issuer_path="/tenant1")
    srv.prm_locations = {"header"}  # no well-known document: only the 401 challenge names the metadata
    return srv


def test_authenticate_finds_metadata_named_only_in_the_challenge(make_manager: Any) -> None:  # noqa: F811
    with _challenge_only_server() as srv:
        manager = make_manager()
        manager.add_server("srv", srv.server_url)
        manager.authenticate("srv", timeout=60)
        assert manager.get_auth_status("srv") == "authenticated"
        assert srv.requests_to(srv.prm_header_path), "the metadata named in the challenge was read"
        token = manager.get_access_token("srv")
        import requests

        with requests.post(srv.server_url, headers={"Authorization": "Bearer %s" % token}, timeout=30) as resp:
            assert resp.status_code == 200  # the resource accepts the token: it was issued for it


def test_the_cli_login_takes_the_same_path(tmp_path: Any, monkeypatch: Any, capsys: Any) -> None:
    """``mcpsync auth login`` against the same server, through ``OAuthManager.authenticate`` (one code path)."""
    import threading
    import webbrowser

    import requests

    from mcpsync.auth import OAuthManager
    from mcpsync.cli.app import main as cli_main

    browsers = []

    def fake_open(url: str, *args: Any, **kwargs: Any) -> bool:
        def run() -> None:
            with requests.get(url, timeout=30) as resp:
                assert resp.status_code == 200

        t = threading.Thread(target=run)
        t.start()
        browsers.append(t)
        return True

    calls = []
    original = OAuthManager.authenticate

    def spy(self: Any, name: str, *args: Any, **kwargs: Any) -> None:
        calls.append(name)
        original(self, name, *args, **kwargs)

    monkeypatch.setattr(webbrowser, "open", fake_open)
    monkeypatch.setattr(OAuthManager, "authenticate", spy)
    try:
        with _challenge_only_server() as srv:
            auth_file = str(tmp_path / "a.json")
            argv = ["auth", "login", "srv", "--url", srv.server_url, "--auth-file", auth_file]
            assert cli_main(argv + ["--callback-port", str(free_port()), "--json"]) == 0, capsys.readouterr().err
            assert json.loads(capsys.readouterr().out)["status"] == "authenticated"
            assert calls == ["srv"]
    finally:
        for t in browsers:
            t.join(60)


# ---------------------------------------------------------------------------- item 1

TOKEN = "s3cret-static-token"


def _remote_entry(fmt: str, url: str, **extra: Any) -> Dict[str, Any]:
    """A configuration document of format ``fmt`` with one remote server ``remote`` (``extra``: entry keys)."""
    entry: Dict[str, Any] = {"url": url}
    entry.update(extra)
    if fmt == "claude":  # Claude Code .mcp.json / ~/.claude.json
        return {"mcpServers": {"remote": dict(entry, type="http")}}
    if fmt == "cursor":  # Cursor / Claude Desktop (no type)
        return {"mcpServers": {"remote": entry}}
    if fmt == "vscode":
        return {"servers": {"remote": dict(entry, type="http")}}
    if fmt == "vscode-settings":
        return {"mcp": {"servers": {"remote": dict(entry, type="http")}}}
    if fmt == "opencode":
        return {"mcp": {"remote": dict(entry, type="remote")}}
    raise AssertionError(fmt)


FORMATS = ["claude", "cursor", "vscode", "vscode-settings", "opencode"]


@pytest.fixture
def oauth_options(tmp_path: Any) -> Dict[str, Any]:
    return {"store": str(tmp_path / "mcp-auth.json"), "callback_port": free_port()}


def _load(tmp_path: Any, doc: Dict[str, Any]) -> str:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(doc))
    return str(path)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_static_authorization_header_in_a_configuration_file_is_sent(
    fmt: str, tmp_path: Any, oauth_options: Dict[str, Any]
) -> None:
    with MCPTestServer() as srv:
        srv.faults.require_token = TOKEN  # 401 without exactly this header
        doc = _remote_entry(fmt, srv.url, headers={"Authorization": "Bearer " + TOKEN})
        with Manager(_load(tmp_path, doc), oauth_options=oauth_options) as mgr:
            status = mgr.status("remote")
            assert status.status == "connected", status
            assert mgr.call_tool("echo", {"message": "with my header"}, server="remote").text == "with my header"
            assert mgr.config("remote").oauth_enabled is False  # a static credential: OAuth never starts
        posts = srv.records("POST")
        assert posts and all(r.headers.get("authorization") == "Bearer " + TOKEN for r in posts)


@pytest.mark.parametrize("key", ["bearer_token", "bearerToken"])
@pytest.mark.parametrize("fmt", ["claude", "vscode"])
def test_a_bearer_token_key_in_a_foreign_format_is_honoured(
    fmt: str, key: str, tmp_path: Any, oauth_options: Dict[str, Any]
) -> None:
    with MCPTestServer() as srv:
        srv.faults.require_token = TOKEN
        with Manager(_load(tmp_path, _remote_entry(fmt, srv.url, **{key: TOKEN})), oauth_options=oauth_options) as mgr:
            assert mgr.status("remote").status == "connected", mgr.status("remote")
            assert mgr.call_tool("echo", {"message": "ok"}, server="remote").text == "ok"


@pytest.mark.parametrize("fmt", FORMATS)
def test_oauth_false_turns_oauth_off_in_every_format(fmt: str, tmp_path: Any, oauth_options: Dict[str, Any]) -> None:
    """No static credential, ``"oauth": false``: the 401 is reported as is and no OAuth discovery starts."""
    with AuthTestServer() as auth:
        config = _load(tmp_path, _remote_entry(fmt, auth.server_url, oauth=False))
        with Manager(config, oauth_options=oauth_options) as mgr:
            assert mgr.config("remote").oauth is False and not mgr.config("remote").oauth_enabled
            assert mgr.status("remote").status == "needs_auth"
        assert not [p for p in auth.paths() if "well-known" in p or p == "/register"], auth.paths()


@pytest.mark.parametrize("fmt", FORMATS)
def test_without_a_static_credential_oauth_starts_when_the_server_asks(
    fmt: str, tmp_path: Any, oauth_options: Dict[str, Any]
) -> None:
    """The default stays: no header, no token, a 401 challenge: OAuth discovery runs (registration here)."""
    with AuthTestServer() as auth:
        with Manager(_load(tmp_path, _remote_entry(fmt, auth.server_url)), oauth_options=oauth_options) as mgr:
            assert mgr.config("remote").oauth_enabled
            assert mgr.status("remote").status in ("needs_auth", "needs_client_registration")
        assert any("well-known" in p for p in auth.paths()), auth.paths()


def test_a_client_with_a_header_and_an_oauth_hook_sends_the_header(tmp_path: Any) -> None:
    """The rule at the lowest level: the OAuth request hook never removes an Authorization header the user wrote."""
    from mcpsync.auth import OAuthManager

    with MCPTestServer() as srv, OAuthManager(store=str(tmp_path / "s.json"), callback_port=free_port()) as oauth:
        srv.faults.require_token = TOKEN
        oauth.add_server("remote", srv.url)
        headers = {"Authorization": "Bearer " + TOKEN}
        with mcpsync.connect(srv.url, headers=headers, auth=oauth.auth("remote"), timeout=30) as c:
            assert c.call_tool("echo", {"message": "kept"}).text == "kept"


def test_oauth_on_by_default_sends_nothing_oauth_to_a_server_that_never_asks(
    tmp_path: Any, oauth_options: Dict[str, Any]
) -> None:
    """OAuth starts only when the server asks: an open server sees no discovery and no Authorization."""
    with MCPTestServer() as srv:
        with Manager(_load(tmp_path, _remote_entry("claude", srv.url)), oauth_options=oauth_options) as mgr:
            assert mgr.config("remote").oauth_enabled
            assert mgr.call_tool("echo", {"message": "open"}, server="remote").text == "open"
        assert not [r for r in srv.records() if "well-known" in r.path]
        assert all("authorization" not in r.headers for r in srv.records())


def test_a_rejected_static_credential_in_a_configuration_is_not_told_to_log_in(tmp_path: Any, capsys: Any) -> None:
    """The CLI with a configuration whose server rejects the header the configuration sends: the message points at
    that credential, never at `mcpsync auth login` (which would not help: OAuth is off for such a server)."""
    from mcpsync.cli.app import main as cli_main

    with MCPTestServer() as srv:
        srv.faults.require_token = TOKEN
        config = _load(tmp_path, _remote_entry("cursor", srv.url, headers={"Authorization": "Bearer wrong-token"}))
        code = cli_main(["--config", config, "tools"])
        err = capsys.readouterr().err
    assert code != 0
    assert "needs_auth" in err and "rejected the credential its configuration sends" in err
    assert "auth login" not in err and "wrong-token" not in err
