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

from .authserver import AuthTestServer, approve_via_http, free_port, make_manager, store  # noqa: F401
from .httpserver import MCPTestServer


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
