"""``mcpsync auth login|logout|status``."""

from __future__ import annotations

import argparse
import io
import json
import re
import threading
import webbrowser

import pytest
import requests

from mcpsync import MCPError
from mcpsync.cli.auth import add_auth_parser, run_auth
from tests.peers.authserver import free_port, no_auth_leaks, srv  # noqa: F401

pytestmark = pytest.mark.usefixtures("no_auth_leaks")


def main(argv):
    from mcpsync.cli.app import main as cli_main

    return cli_main(argv)


@pytest.fixture
def browser(monkeypatch):
    threads = []

    def fake_open(url, *a, **k):
        def run():
            with requests.get(url, timeout=30) as resp:
                assert resp.status_code == 200

        t = threading.Thread(target=run)
        t.start()
        threads.append(t)
        return True

    monkeypatch.setattr(webbrowser, "open", fake_open)
    yield threads
    for t in threads:
        t.join()


def test_login_status_logout(srv, tmp_path, browser, capsys):
    auth_file = str(tmp_path / "a.json")
    port = str(free_port())
    assert (
        main(["auth", "login", "srv", "--url", srv.server_url, "--auth-file", auth_file, "--callback-port", port]) == 0
    )
    captured = capsys.readouterr()
    assert "logged in to srv (authenticated)" in captured.out
    assert "http://127.0.0.1:%s/mcp/oauth/callback" % port in captured.err  # redirect URI printed first
    assert srv.issuer + "/authorize?" in captured.err  # and the authorization URL
    assert main(["auth", "status", "srv", "--auth-file", auth_file, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "authenticated"
    assert main(["auth", "status", "--auth-file", auth_file]) == 0
    assert re.search(r"srv\s+authenticated", capsys.readouterr().out)
    assert main(["auth", "logout", "srv", "--auth-file", auth_file]) == 0
    assert "logged out of srv" in capsys.readouterr().out
    assert main(["auth", "status", "srv", "--url", srv.server_url, "--auth-file", auth_file, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "not_authenticated"


def test_login_without_browser_by_pasting_the_redirect(srv, tmp_path):
    err = io.StringIO()

    class Stdin:
        """Acts as the user: reads the printed URL, approves, pastes the redirect URL."""

        def readline(self):
            url = re.search(r"(http://\S+/authorize\?\S+)", err.getvalue()).group(1)
            with requests.get(url, allow_redirects=False, timeout=10) as resp:
                return resp.headers["Location"] + "\n"

    parser = argparse.ArgumentParser()
    add_auth_parser(parser.add_subparsers(dest="command"))  # the two-line wiring
    args = parser.parse_args(
        [
            "auth",
            "login",
            "srv",
            "--url",
            srv.server_url,
            "--auth-file",
            str(tmp_path / "a.json"),
            "--callback-port",
            str(free_port()),
            "--no-browser",
            "--json",
        ]
    )
    out = io.StringIO()
    assert args.func is run_auth
    assert run_auth(args, stdout=out, stdin=Stdin(), stderr=err) == 0
    assert json.loads(out.getvalue())["status"] == "authenticated"
    assert "paste the URL" in err.getvalue()


def test_login_needs_a_url(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MCPSYNC_CONFIG", str(tmp_path / "none.json"))
    code = main(["auth", "login", "nowhere", "--auth-file", str(tmp_path / "a.json")])
    assert code != 0 and "--url" in capsys.readouterr().err


def test_a_url_used_directly_finds_the_stored_login(srv, tmp_path, browser, capsys, monkeypatch):
    """`mcpsync auth login NAME --url U` then `mcpsync tools --url U`: the stored tokens are used, no new login."""
    from tests.peers.httpserver import MCPTestServer
    from tests.manager.test_manager_http import _mcp_behind

    with MCPTestServer() as mcp:
        _mcp_behind(srv, mcp, monkeypatch)
        auth_file = str(tmp_path / "a.json")
        port = str(free_port())
        login = ["auth", "login", "box", "--url", mcp.url, "--auth-file", auth_file, "--callback-port", port]
        assert main(login) == 0
        capsys.readouterr()
        codes = len(srv.codes)
        assert main(["tools", "--url", mcp.url, "--auth-file", auth_file]) == 0
        assert "echo" in capsys.readouterr().out
        monkeypatch.setenv("MCPSYNC_AUTH_FILE", auth_file)  # the default store, as `mcpsync auth` uses it
        assert main(["call", "echo", "-a", "message=hi", "--url", mcp.url]) == 0
        assert capsys.readouterr().out.strip() == "hi"
        assert len(srv.codes) == codes  # no new authorization
        # another file with nothing stored: the server's 401 asks for a login, as before
        assert main(["tools", "--url", mcp.url, "--auth-file", str(tmp_path / "empty.json")]) == 6
        assert "mcpsync auth login" in capsys.readouterr().err


def test_status_registers_no_oauth_client(srv, tmp_path, capsys, monkeypatch):
    """`mcpsync --config F status` reports a server that needs a login without registering a client there."""
    auth_file = tmp_path / "a.json"
    monkeypatch.setenv("MCPSYNC_AUTH_FILE", str(auth_file))
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"srv": {"type": "http", "url": srv.server_url}}}))
    clients_before = set(srv.clients)
    assert main(["--config", str(config), "status"]) == 3
    out = capsys.readouterr().out
    assert re.search(r"srv\s+AUTH\s+needs_auth", out), out
    assert set(srv.clients) == clients_before  # nothing registered
    assert not auth_file.exists() or "clientInfo" not in auth_file.read_text()
    srv.dcr_enabled = False
    srv.metadata.pop("registration_endpoint", None)
    assert main(["--config", str(config), "status"]) == 3
    assert re.search(r"srv\s+REGISTER\s+needs_client_registration", capsys.readouterr().out)


def test_a_failed_login_leaves_nothing_in_status_and_no_browser_is_not_a_failure(srv, tmp_path, caplog):
    """`--no-browser` asks for the paste without claiming a browser failed (not even in the log, shown with -v); a
    login nobody approved (it times out) leaves no entry behind, so `auth status` does not list the server."""
    caplog.set_level("DEBUG", logger="mcpsync")
    parser = argparse.ArgumentParser()
    add_auth_parser(parser.add_subparsers(dest="command"))
    auth_file = str(tmp_path / "a.json")
    login = ["auth", "login", "srv", "--url", srv.server_url, "--auth-file", auth_file]
    args = parser.parse_args(login + ["--callback-port", str(free_port()), "--no-browser", "--wait", "1"])
    err = io.StringIO()
    with pytest.raises(MCPError, match="timed out"):
        run_auth(args, stdout=io.StringIO(), stdin=io.StringIO(""), stderr=err)
    assert "Could not open a browser" not in err.getvalue()
    assert not [r for r in caplog.records if "could not open a browser" in r.getMessage()]
    assert "Open that URL in a browser. After approving, paste" in err.getvalue()
    out = io.StringIO()
    assert run_auth(parser.parse_args(["auth", "status", "--auth-file", auth_file]), stdout=out) == 0
    assert out.getvalue() == "no stored credentials\n"
