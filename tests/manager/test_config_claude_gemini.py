"""Issue 19 item 10 (part): the configurations of Claude Code (``~/.claude.json``: user servers at the top level,
local servers per project under ``projects[<path>].mcpServers``) and Gemini CLI (``~/.gemini/settings.json`` and
``.gemini/settings.json``: ``command``/``url`` (SSE)/``httpUrl`` (Streamable HTTP), ``timeout`` in milliseconds,
``$VAR``...) are read, found by auto-discovery, and really connect: stdio servers are started, remote ones are
reached over both transports with the configured header checked by the server."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Dict

import pytest

from mcpsync import ConfigError, Manager
from mcpsync.manager.config import config_search_paths, find_config, load_config, parse_config

from tests.conftest import server_cmd
from tests.peers.httpserver import MCPTestServer

TOKEN = "gemini-or-claude-token"


def _write(path: Path, doc: Dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def _stdio(**extra: Any) -> Dict[str, Any]:
    cmd = server_cmd()
    return dict({"command": cmd[0], "args": cmd[1:]}, **extra)


# ---------------------------------------------------------------------------- Claude Code ~/.claude.json


def _claude_json(project: Path, other: Path, url: str) -> Dict[str, Any]:
    return {
        "numStartups": 12,
        "theme": "dark",
        "mcpServers": {
            "user_stdio": dict(_stdio(), type="stdio"),
            "shared": {"type": "stdio", "command": "never-started-overridden-by-the-project"},
        },
        "projects": {
            str(project): {
                "allowedTools": [],
                "mcpServers": {
                    "shared": dict(_stdio(), type="stdio"),
                    "remote": {"type": "http", "url": url, "headers": {"Authorization": "Bearer " + TOKEN}},
                },
            },
            str(other): {"mcpServers": {"elsewhere": {"type": "stdio", "command": "other-project-only"}}},
            "/no/mcp/here": {"history": []},
        },
    }


def test_claude_code_user_and_project_servers_connect(tmp_path: Path) -> None:
    project, other = tmp_path / "proj", tmp_path / "other"
    (project / "src" / "deep").mkdir(parents=True)
    other.mkdir()
    with MCPTestServer() as srv:
        srv.faults.require_token = TOKEN
        path = _write(tmp_path / "home" / ".claude.json", _claude_json(project, other, srv.url))
        configs = load_config(path, project=project / "src" / "deep")  # the nearest listed ancestor counts
        assert sorted(configs) == ["remote", "shared", "user_stdio"]
        assert configs["shared"].command == server_cmd()  # the project (local scope) wins over the user scope
        assert "projects[" in (configs["remote"].source or "")
        with Manager(configs) as mgr:
            assert {n: s.status for n, s in mgr.status().items()} == dict.fromkeys(configs, "connected")
            assert mgr.call_tool("echo", {"message": "claude"}, server="remote").text == "claude"
            assert mgr.call_tool("echo", {"message": "shared"}, server="shared").text == "shared"
        assert all(r.headers.get("authorization") == "Bearer " + TOKEN for r in srv.records("POST"))
    outside = load_config(path, project=tmp_path)  # not in any project: the user servers only
    assert sorted(outside) == ["shared", "user_stdio"] and outside["shared"].command[0].startswith("never")


def test_claude_json_without_top_level_servers_is_still_its_format(tmp_path: Path) -> None:
    doc = {"projects": {str(tmp_path): {"mcpServers": {"p": _stdio()}}}}
    assert sorted(parse_config(doc, project=tmp_path)) == ["p"]
    assert parse_config(doc, project=Path("/")) == {}


def test_a_bad_project_entry_names_its_project(tmp_path: Path) -> None:
    doc = {"mcpServers": {}, "projects": {str(tmp_path): {"mcpServers": {"bad": {"command": 7}}}}}
    with pytest.raises(ConfigError) as info:
        parse_config(doc, source="claude.json", project=tmp_path)
    assert "projects[" in str(info.value) and "bad.command" in str(info.value)


def test_discovery_finds_claude_json_only_when_it_names_servers_for_here(tmp_path: Path) -> None:
    home, cwd, elsewhere = tmp_path / "home", tmp_path / "proj", tmp_path / "else"
    cwd.mkdir()
    elsewhere.mkdir()
    projects = {str(elsewhere): {"mcpServers": {"x": _stdio()}}}
    claude = _write(home / ".claude.json", {"mcpServers": {}, "projects": projects})
    assert home / ".claude.json" in config_search_paths(cwd, home, {}, "linux")
    assert find_config(cwd, home, {}, "linux") is None  # Claude Code is used, but with no server for this project
    assert find_config(elsewhere, home, {}, "linux") == claude
    _write(claude, {"mcpServers": {"u": _stdio()}})
    assert find_config(cwd, home, {}, "linux") == claude


# ---------------------------------------------------------------------------- Gemini CLI settings.json


def _gemini(srv: MCPTestServer, workdir: str) -> Dict[str, Any]:
    return {
        "theme": "GitHub",
        "selectedAuthType": "gemini-api-key",
        "mcp": {"excluded": ["experimental"]},
        "mcpServers": {
            "local": _stdio(env={"GREETING": "$GEMINI_TEST_VALUE", "OTHER": "${GEMINI_TEST_VALUE}"}, cwd=workdir,
                            timeout=15000, trust=True, excludeTools=["fail"]),
            "streamable": {"httpUrl": srv.url, "headers": {"Authorization": "Bearer " + TOKEN}, "timeout": 5000},
            "legacy_sse": {"url": srv.sse_url(), "headers": {"Authorization": "Bearer " + TOKEN}},
            "experimental": _stdio(),
            "no_oauth": {"httpUrl": srv.url, "oauth": {"enabled": False}},
            "with_oauth": {"httpUrl": srv.url, "oauth": {"clientId": "cid", "scopes": ["read", "write"]},
                           "description": "d"},
        },
    }


def test_gemini_cli_settings_connect_over_stdio_streamable_http_and_sse(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("GEMINI_TEST_VALUE", "hello")
    project = tmp_path / "proj"
    (project / "work").mkdir(parents=True)
    with MCPTestServer(era="legacy") as srv:
        srv.faults.require_token = TOKEN
        path = _write(project / ".gemini" / "settings.json", _gemini(srv, "work"))
        configs = load_config(path)
        local, streamable, sse = configs["local"], configs["streamable"], configs["legacy_sse"]
        assert local.env == {"GREETING": "hello", "OTHER": "hello"}  # $VAR and ${VAR}
        assert local.cwd == str(project / "work")  # relative to the project, not to .gemini/
        assert local.timeout == 15.0 and streamable.timeout == 5.0 and sse.timeout == 600.0  # milliseconds
        assert local.disabled_tools == ["fail"]
        assert streamable.transport == "http" and sse.transport == "sse"
        assert configs["experimental"].enabled is False  # mcp.excluded
        assert configs["no_oauth"].oauth is False
        assert configs["with_oauth"].oauth == {"client_id": "cid", "scope": "read write"}
        del configs["no_oauth"], configs["with_oauth"]
        with Manager(configs) as mgr:
            status = {n: s.status for n, s in mgr.status().items()}
            assert status == {"local": "connected", "streamable": "connected", "legacy_sse": "connected",
                              "experimental": "disabled"}
            assert mgr.call_tool("echo", {"message": "a"}, server="streamable").text == "a"
            assert mgr.call_tool("echo", {"message": "b"}, server="legacy_sse").text == "b"
            assert "local_fail" not in [t.name for t in mgr.tools()]
            assert mgr.client("local").transport_kind == "stdio"
            assert mgr.client("legacy_sse").transport_kind == "sse"
        assert {r.headers.get("authorization") for r in srv.records() if r.path in ("/mcp", "/sse")} == {
            "Bearer " + TOKEN
        }


def test_gemini_is_recognized_without_its_path(tmp_path: Path) -> None:
    """An ``httpUrl`` or ``trust`` entry, or Gemini's ``mcp`` block, makes it Gemini (timeouts in ms)."""
    for doc in (
        {"mcpServers": {"s": dict(_stdio(), timeout=2000, trust=False)}},
        {"mcp": {"allowed": ["s"]}, "mcpServers": {"s": dict(_stdio(), timeout=2000), "t": _stdio()}},
    ):
        configs = parse_config(doc)
        assert configs["s"].timeout == 2.0
    assert parse_config({"mcp": {"allowed": ["s"]}, "mcpServers": {"s": _stdio(), "t": _stdio()}})["t"].enabled is False
    claude = parse_config({"mcpServers": {"s": dict(_stdio(), timeout=20)}})  # no Gemini sign: seconds
    assert claude["s"].timeout == 20


def test_gemini_errors_name_the_key_and_unknown_keys_are_logged(tmp_path: Path, caplog: Any) -> None:
    bad = _write(tmp_path / ".gemini" / "settings.json", {"mcpServers": {"s": dict(_stdio(), timeout="5s")}})
    with pytest.raises(ConfigError, match=r"mcpServers\.s\.timeout"):
        load_config(bad)
    with caplog.at_level(logging.WARNING, logger="mcpsync.manager.config"):
        odd = _write(tmp_path / "g" / ".gemini" / "settings.json", {"mcpServers": {"s": dict(_stdio(), colour="red")}})
        assert sorted(load_config(odd)) == ["s"]
    assert "colour" in caplog.text


def test_discovery_finds_gemini_settings(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    cwd.mkdir()
    _write(home / ".gemini" / "settings.json", {"theme": "x"})  # Gemini CLI used, without MCP servers
    assert find_config(cwd, home, {}, "linux") is None
    user = _write(home / ".gemini" / "settings.json", {"mcpServers": {"u": _stdio()}})
    assert find_config(cwd, home, {}, "linux") == user
    project = _write(cwd / ".gemini" / "settings.json", {"mcpServers": {"p": _stdio()}})
    assert find_config(cwd, home, {}, "linux") == project  # the project's own file comes first
