"""The manager with remote servers: needs_auth, needs_client_registration, OAuth per server name, HTTP failures,
and a configuration matrix showing every per-server field reaches its transport."""

from __future__ import annotations

import os
import sys
import threading
from typing import Any, Dict, List

import pytest
import requests

from mcpsync.manager.config import ServerConfig, parse_config
from mcpsync.errors import AuthRequired, NeedsClientRegistration, RequestTimeout
from mcpsync.manager.manager import Manager
from tests.peers.authserver import AuthTestServer, approve_via_http, free_port
from tests.conftest import misbehaving_cmd, server_cmd, wait_for
from tests.peers.httpserver import MCPTestServer
from tests.manager.test_manager import wrapper

PY = sys.executable


@pytest.fixture
def mcp():
    with MCPTestServer() as server:
        yield server


@pytest.fixture
def oauth_options(tmp_path):
    return {"store": str(tmp_path / "mcp-auth.json"), "callback_port": free_port()}


def test_401_gives_needs_auth_with_the_challenge(mcp):
    mcp.faults.require_token = "right-token"
    with Manager({"remote": {"url": mcp.url, "oauth": False}}) as mgr:
        st = mgr.status("remote")
        assert st.status == "needs_auth" and st.http_status == 401
        assert isinstance(st.error, AuthRequired) and st.error.resource_metadata
        with pytest.raises(AuthRequired):
            mgr.call_tool("echo", {"message": "x"}, server="remote")
        assert mgr.tools() == []


def test_401_with_oauth_enabled_gives_needs_auth(mcp, oauth_options):
    mcp.faults.require_token = "right-token"
    with Manager({"remote": {"url": mcp.url}}, oauth_options=oauth_options) as mgr:
        assert mgr.status("remote").status == "needs_auth"


def test_http_failure_carries_the_status(mcp):
    mcp.faults.post_statuses = [500] * 10
    mcp.faults.status_body = b"database is down"
    with Manager({"remote": {"url": mcp.url, "transport": "http", "oauth": False}}) as mgr:
        st = mgr.status("remote")
        assert st.status == "failed" and st.http_status == 500
        assert "HTTP 500" in st.reason and "database is down" in st.reason


def test_secrets_are_masked_in_reasons(mcp):
    mcp.faults.post_statuses = [500] * 10
    mcp.faults.status_body = b"bad key sk-verysecret-123"
    cfg = {"remote": {"url": mcp.url, "transport": "http", "headers": {"X-Api-Key": "sk-verysecret-123"}}}
    with Manager(cfg) as mgr:
        assert "sk-verysecret-123" not in mgr.status("remote").reason
        assert "***" in mgr.status("remote").reason


def _registration_refused(server: AuthTestServer) -> None:
    server.dcr_enabled = False
    server.metadata.pop("registration_endpoint", None)


def test_registration_needed_gives_needs_client_registration(oauth_options):
    with AuthTestServer() as auth:
        _registration_refused(auth)
        mgr = Manager({"reg": {"url": auth.server_url}}, oauth_options=oauth_options)
        try:
            mgr.open()
            assert mgr.status("reg").status == "needs_client_registration"
            assert mgr.supports_oauth("reg") and not mgr.has_stored_tokens("reg")
            assert mgr.get_auth_status("reg") == "not_authenticated"
            with pytest.raises(NeedsClientRegistration) as info:
                mgr.start_auth("reg")
            st = mgr.status("reg")
            assert st.status == "needs_client_registration"
            assert info.value.redirect_uri and info.value.redirect_uri in st.reason
        finally:
            mgr.close()


def _mcp_behind(auth: AuthTestServer, mcp: MCPTestServer, monkeypatch: Any) -> None:
    """Make ``mcp`` a resource server of ``auth``: tokens ``auth`` issued are accepted, others get its challenge."""
    from tests.peers import httpserver

    auth.prm["resource"] = mcp.url
    challenge = 'Bearer resource_metadata="%s%s"' % (auth.base, auth.prm_header_path)
    original = httpserver._Handler._auth_ok

    def auth_ok(handler: Any, msg: Any) -> bool:
        token = handler.headers.get("Authorization", "")[7:]
        with auth.lock:
            known = token in auth.access_tokens
        if not known:
            handler.reply(401, b'{"error":"unauthorized"}', headers={"WWW-Authenticate": challenge})
            return False
        return original(handler, msg)

    monkeypatch.setattr(httpserver._Handler, "_auth_ok", auth_ok)


def test_authenticate_logs_in_and_connects_even_a_disabled_server(mcp, oauth_options, monkeypatch):
    with AuthTestServer() as auth:
        _mcp_behind(auth, mcp, monkeypatch)
        oauth_options["authorize_handler"] = approve_via_http
        cfg = {"on": {"url": mcp.url}, "off": {"url": mcp.url, "enabled": False}}
        with Manager(cfg, oauth_options=oauth_options) as mgr:
            assert mgr.status("off").status == "disabled"
            assert mgr.authenticate("off").status == "disabled"  # works, and stays disabled
            assert mgr.has_stored_tokens("off") and mgr.get_auth_status("off") == "authenticated"
            assert mgr.status("on").status == "needs_auth"
            st = mgr.authenticate("on")
            assert st.status == "connected"
            assert mgr.call_tool("on_echo", {"message": "authorized"}).text == "authorized"
            mgr.remove_auth("on")
            assert not mgr.has_stored_tokens("on")


def test_browser_open_failure_is_an_event_and_finish_auth_completes(mcp, oauth_options, monkeypatch):
    with AuthTestServer() as auth:
        _mcp_behind(auth, mcp, monkeypatch)
        oauth_options["open_browser"] = lambda url: False
        failures: List[Any] = []

        def on_failed(server: str, url: str) -> None:
            failures.append((server, url))
            redirect = approve_via_http(type("R", (), {"url": url})())  # the user pastes the redirect URL
            mgr.finish_auth(server, redirect)

        with Manager({"web": {"url": mcp.url}}, oauth_options=oauth_options, on_browser_open_failed=on_failed) as mgr:
            assert mgr.authenticate("web", timeout=30).status == "connected"
            assert failures and failures[0][0] == "web" and failures[0][1].startswith(auth.issuer + "/authorize")


def test_status_changes_are_events(mcp):
    seen: List[Any] = []
    lock = threading.Lock()

    def record(server: str, status: Any) -> None:
        with lock:
            seen.append((server, status.status))

    mcp.faults.require_token = "t"
    with Manager({"r": {"url": mcp.url, "oauth": False}}, on_status_changed=record):
        assert wait_for(lambda: ("r", "needs_auth") in seen)
    assert seen[0] == ("r", "connecting")


# ---------------------------------------------------------------------------------------------- config matrix


class Capture:
    """A client factory that records what the manager passes, then builds the real client."""

    def __init__(self) -> None:
        self.calls: Dict[str, Any] = {}

    def __call__(self, target: Any, **kwargs: Any) -> Any:
        from mcpsync.client.client import Client

        self.calls[kwargs["name"]] = (target, dict(kwargs))
        return Client(target, **kwargs)


def test_every_field_reaches_the_client_options():
    configs = parse_config(
        {
            "s": {
                "command": ["prog", "a1"],
                "args": ["a2"],
                "env": {"K": "v"},
                "cwd": "/tmp",
                "inherit_env": True,
                "timeout": 7,
                "connect_timeout": 8,
                "allowed_tools": ["a*"],
                "disabled_tools": ["ab"],
                "options": {"stderr": "discard", "protocol": "legacy"},
            },
            "r": {
                "url": "https://h/mcp",
                "headers": {"X": "1"},
                "transport": "sse",
                "bearer_token": "tok",
                "timeout": 9,
                "connect_timeout": 4,
                "options": {"verify": False},
            },
        }
    )
    target, kwargs = configs["s"].client_arguments()
    assert target == ["prog", "a1", "a2"]
    assert kwargs == {
        "name": "s",
        "env": {"K": "v"},
        "cwd": "/tmp",
        "inherit_env": True,
        "timeout": 7,
        "connect_timeout": 8,
        "allowed_tools": ["a*"],
        "disabled_tools": ["ab"],
        "stderr": "discard",
        "protocol": "legacy",
    }
    target, kwargs = configs["r"].client_arguments()
    assert target == "https://h/mcp"
    assert kwargs == {
        "name": "r",
        "headers": {"X": "1"},
        "transport": "sse",
        "bearer_token": "tok",
        "timeout": 9,
        "connect_timeout": 4,
        "verify": False,
    }
    assert set(ServerConfig.__dataclass_fields__) == {
        "name",
        "command",
        "env",
        "cwd",
        "inherit_env",
        "url",
        "headers",
        "transport",
        "oauth",
        "bearer_token",
        "enabled",
        "timeout",
        "connect_timeout",
        "lazy",
        "allowed_tools",
        "disabled_tools",
        "options",
        "source",
        "error",
        "tool_transforms",  # not a client option: the framework integrations apply it (mcpsync/integrations)
        "card",  # resolved into url/headers/protocol when the server connects (tests/cards/test_cards.py)
        "card_options",
    }


def test_stdio_fields_are_observable_at_the_server(tmp_path):
    workdir = tmp_path / "work"
    workdir.mkdir()
    (workdir / "here.txt").write_text("x")
    check_env = wrapper(tmp_path, "env", "import os, sys\nassert os.environ.get('MATRIX') == 'yes', 'env missing'")
    check_cwd = wrapper(tmp_path, "cwd", "import os, sys\nassert os.path.exists('here.txt'), 'wrong cwd'")
    check_args = wrapper(tmp_path, "args", "import sys\nassert sys.argv[1:] == ['--flag', 'v'], sys.argv")
    check_inherit = wrapper(tmp_path, "inh", "import os, sys\nassert os.environ.get('MATRIX_PARENT') == 'p'")
    os.environ["MATRIX_PARENT"] = "p"
    try:
        capture = Capture()
        cfg = {
            "env": {"command": check_env, "env": {"MATRIX": "yes"}},
            "env_missing": {"command": check_env},
            "cwd": {"command": check_cwd, "cwd": str(workdir)},
            "cwd_missing": {"command": check_cwd},
            "args": {"command": check_args[0], "args": check_args[1:] + ["--flag", "v"]},
            "inherit": {"command": check_inherit, "inherit_env": True},
            "no_inherit": {"command": check_inherit},
            "legacy": {"command": server_cmd(), "options": {"protocol": "legacy"}},
            "timeout": {"command": server_cmd(), "timeout": 0.3},
            "connect": {"command": misbehaving_cmd("--slow-start", "600"), "connect_timeout": 0.5},
            "off": {"command": server_cmd(), "enabled": False},
            "lazy": {"command": server_cmd(), "lazy": True},
        }
        with Manager(cfg, client_factory=capture) as mgr:
            st = mgr.status()
            for name in ("env", "cwd", "args", "inherit", "legacy", "timeout"):
                assert st[name].status == "connected", st[name]
            for name, text in (
                ("env_missing", "env missing"),
                ("cwd_missing", "wrong cwd"),
                ("no_inherit", "AssertionError"),
            ):
                assert st[name].status == "failed" and text in st[name].reason, st[name]
            assert mgr.clients()["legacy"].era == "legacy"
            with pytest.raises(RequestTimeout):
                mgr.call_tool("timeout_slow", {"seconds": 30, "steps": 1})
            assert st["connect"].status == "failed" and isinstance(st["connect"].error, RequestTimeout)
            assert st["off"].status == "disabled" and "off" not in capture.calls
            assert st["lazy"].status == "not_connected" and "lazy" not in capture.calls
            assert capture.calls["timeout"][1]["timeout"] == 0.3
    finally:
        del os.environ["MATRIX_PARENT"]


def test_remote_fields_are_observable_at_the_server(mcp):
    mcp.faults.require_token = "tok"
    cfg = {
        "bearer": {"url": mcp.url, "bearer_token": "tok", "headers": {"X-Matrix": "bearer"}, "oauth": False},
        "header": {"url": mcp.url, "headers": {"Authorization": "Bearer tok", "X-Matrix": "header"}, "oauth": False},
        "sse": {"url": mcp.sse_url(), "transport": "sse", "bearer_token": "tok", "oauth": False},
        "http": {"url": mcp.url, "transport": "http", "bearer_token": "tok", "oauth": False},
        "noauth": {"url": mcp.url, "oauth": False},
        "off": {"url": mcp.url, "enabled": False},
    }
    with Manager(cfg) as mgr:
        st = mgr.status()
        assert {n: s.status for n, s in st.items()} == {
            "bearer": "connected",
            "header": "connected",
            "sse": "connected",
            "http": "connected",
            "noauth": "needs_auth",
            "off": "disabled",
        }
        assert st["sse"].transport == "sse" and st["http"].transport == "http"
        sent = {r.headers.get("x-matrix") for r in mcp.records()}
        assert {"bearer", "header"} <= sent
        assert mgr.call_tool("bearer_echo", {"message": "m"}).text == "m"


def test_requests_is_not_needed_for_stdio_only_managers():
    assert requests  # imported by this test module; the check below runs in a fresh interpreter
    import subprocess

    code = (
        "import sys, mcpsync.manager as m\n"
        "mgr = m.Manager({'a': {'command': %r}})\n"
        "mgr.open(); assert mgr.status('a').status == 'connected'; mgr.close()\n"
        "assert 'requests' not in sys.modules and 'filelock' not in sys.modules, sorted(sys.modules)\n"
        % (server_cmd(),)
    )
    subprocess.run([PY, "-c", code], check=True, timeout=60)
