"""Configuration: formats, interpolation, validation messages, discovery."""

from __future__ import annotations

import json
import sys

import pytest

from mcpsync.manager.config import (
    ServerConfig,
    config_search_paths,
    find_config,
    interpolate,
    load_config,
    parse_config,
    server_config,
)
from mcpsync.errors import ConfigError

ENV = {"TOKEN": "s3cret", "HOST": "mcp.example.com", "EMPTY": ""}


def test_claude_desktop_format(tmp_path):
    data = {
        "mcpServers": {
            "files": {"command": "npx", "args": ["-y", "server-fs", "${HOME_DIR:-/tmp}"], "env": {"K": "${TOKEN}"}},
            "remote": {"url": "https://${HOST}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
            "windsurf": {"serverUrl": "https://h/sse", "type": "sse"},
            "off": {"command": "x", "disabled": True, "timeout": 12},
        }
    }
    cfg = parse_config(data, env=ENV)
    files, remote = cfg["files"], cfg["remote"]
    assert files.command == ["npx", "-y", "server-fs", "/tmp"] and files.env == {"K": "s3cret"}
    assert files.kind == "stdio" and remote.kind == "remote"
    assert remote.url == "https://mcp.example.com/mcp"
    assert remote.headers == {"Authorization": "Bearer s3cret"}
    # a static Authorization header is the credential: always sent, OAuth never starts (issue 19 item 1)
    assert remote.transport == "auto" and remote.static_credential and not remote.oauth_enabled
    assert cfg["windsurf"].url == "https://h/sse" and cfg["windsurf"].transport == "sse"
    assert cfg["off"].enabled is False and cfg["off"].timeout == 12


def test_opencode_format_uses_milliseconds_and_its_own_keys():
    data = {
        "$schema": "https://opencode.ai/config.json",
        "experimental": {"mcp_timeout": 45000},
        "mcp": {
            "local": {
                "type": "local",
                "command": ["python", "-m", "srv"],
                "environment": {"A": "{env:TOKEN}"},
                "timeout": 5000,
            },
            "remote": {
                "type": "remote",
                "url": "https://h/mcp",
                "oauth": {"clientId": "cid", "scope": "read"},
                "enabled": False,
            },
            "noauth": {"type": "remote", "url": "https://h/mcp", "oauth": False},
        },
    }
    cfg = parse_config(data, env=ENV)
    local = cfg["local"]
    assert local.command == ["python", "-m", "srv"] and local.env == {"A": "s3cret"}
    assert local.connect_timeout == 5.0 and local.timeout == 45.0 and local.inherit_env is True
    assert cfg["remote"].enabled is False
    assert cfg["remote"].oauth_settings == {"client_id": "cid", "scope": "read"}
    assert cfg["noauth"].oauth is False and not cfg["noauth"].oauth_enabled


def test_vscode_formats_and_variables(tmp_path):
    (tmp_path / ".vscode").mkdir()
    (tmp_path / ".vscode" / "server.env").write_text("# comment\nexport A=1\nB='two'\n")
    path = tmp_path / ".vscode" / "mcp.json"
    path.write_text("""{
      // VS Code allows comments
      "inputs": [],
      "servers": {
        "py": {"type": "stdio", "command": "python", "args": ["${workspaceFolder}/srv.py"],
               "envFile": "server.env", "env": {"B": "override"},},
        "web": {"type": "http", "url": "https://h/mcp", "headers": {"X": "${env:TOKEN}"}},
      },
    }""")
    cfg = load_config(path, env=ENV)
    assert cfg["py"].command == ["python", "%s/srv.py" % tmp_path]
    assert cfg["py"].env == {"A": "1", "B": "override"}
    assert cfg["web"].transport == "http" and cfg["web"].headers == {"X": "s3cret"}
    settings = parse_config({"mcp": {"servers": {"a": {"command": "x"}}}})
    assert settings["a"].command == ["x"]


def test_native_dicts_and_server_config_objects():
    cfg = parse_config(
        {
            "a": {
                "command": ["python", "srv.py"],
                "cwd": "/tmp",
                "timeout": 5,
                "connect_timeout": 3,
                "lazy": True,
                "options": {"stderr": "discard"},
            },
            "b": ServerConfig("ignored", url="https://h/mcp", bearer_token="t", transport="sse"),
            "c": {"type": "local", "command": "x", "environment": {"K": "v"}},
        }
    )
    assert cfg["a"].timeout == 5 and cfg["a"].connect_timeout == 3 and cfg["a"].lazy is True
    target, kwargs = cfg["a"].client_arguments()
    assert target == ["python", "srv.py"]
    assert kwargs == {"name": "a", "timeout": 5, "connect_timeout": 3, "cwd": "/tmp", "stderr": "discard"}
    assert cfg["b"].name == "b"
    target, kwargs = cfg["b"].client_arguments()
    assert target == "https://h/mcp" and kwargs["bearer_token"] == "t" and kwargs["transport"] == "sse"
    assert not cfg["b"].oauth_enabled  # a static token wins
    assert cfg["c"].env == {"K": "v"}
    assert server_config("x", {"command": "y"}).command == ["y"]
    assert list(parse_config([ServerConfig("z", command=["z"])])) == ["z"]


def test_repr_never_shows_secrets():
    cfg = ServerConfig("a", url="https://h", headers={"Authorization": "Bearer s3cret"}, bearer_token="tok")
    assert "s3cret" not in repr(cfg) and "tok'" not in repr(cfg) and "Authorization" in repr(cfg)
    cfg = ServerConfig("b", command=["x", "--password", "hunter2"], env={"API_KEY": "s3cret"})
    assert "s3cret" not in repr(cfg) and "hunter2" not in repr(cfg)


@pytest.mark.parametrize(
    "data, expected",
    [
        (
            {"mcpServers": {"gh": {"command": "npx", "args": ["-y", 5]}}},
            "mcpServers.gh.args[1]: expected string, got integer 5",
        ),
        ({"mcpServers": {"gh": {"args": ["x"]}}}, "mcpServers.gh: missing required key 'command'"),
        ({"mcpServers": {"gh": {"command": "x", "env": {"A": 1}}}}, "mcpServers.gh.env.A: expected string"),
        ({"mcp": {"a": {"type": "local", "command": "x"}}}, "mcp.a.command: expected array, got string"),
        ({"mcp": {"a": {"type": "locall", "command": ["x"]}}}, 'mcp.a.type: expected one of "local", "remote"'),
        ({"mcp": {"a": {"type": "local", "command": ["x"], "comand": 1}}}, "mcp.a.comand: unknown key 'comand'"),
        ({"mcp": {"a": {"type": "remote", "url": "ftp://x"}}}, "mcp.a.url: expected a value matching"),
        ({"mcp": {"a": {"command": ["x"]}}}, "mcp.a: missing required key 'type'"),
        ({"gh": {"comand": "x"}}, "gh.comand: unknown key 'comand'; expected one of: allowed_tools, args,"),
        ({"gh": {"command": "x", "url": "http://a"}}, "gh: give either 'command' or 'url', not both"),
        ({"gh": {"command": "x", "timeout": -1}}, "gh.timeout: expected a number > 0, got -1"),
        ({"gh": {"type": "local", "url": "http://a"}}, "gh.type: 'local' servers take a command, not a url"),
        ({"gh": {"type": "http", "command": "x"}}, "gh.url: 'http' servers need a url"),
        ({"gh": {"command": "x", "transport": "ws"}}, 'gh.transport: expected one of "auto", "http", "sse"'),
    ],
)
def test_validation_errors_point_at_the_bad_key(data, expected):
    with pytest.raises(ConfigError) as info:
        parse_config(data)
    assert expected in str(info.value)
    assert isinstance(info.value, ValueError)


def test_file_errors_name_the_file(tmp_path):
    bad = tmp_path / "claude_desktop_config.json"
    bad.write_text('{"mcpServers": {"gh": {"command": 1}}}')
    with pytest.raises(ConfigError, match=r"claude_desktop_config\.json: mcpServers\.gh\.command: expected string"):
        load_config(bad)
    broken = tmp_path / "broken.json"
    broken.write_text('{"mcpServers": {')
    with pytest.raises(ConfigError, match=r"broken\.json: not valid JSON: .*line 1"):
        load_config(broken)
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.json")


def test_an_unset_variable_fails_only_that_server():
    cfg = parse_config(
        {
            "mcpServers": {
                "good": {"command": "x"},
                "bad": {"command": "x", "env": {"K": "${NOT_SET_ANYWHERE}"}},
                "badurl": {"url": "https://${NOPE}/mcp"},
            }
        },
        env=ENV,
    )
    assert cfg["good"].error is None
    assert "mcpServers.bad.env.K: environment variable NOT_SET_ANYWHERE is not set" in str(cfg["bad"].error)
    assert cfg["badurl"].kind == "remote" and "NOPE" in str(cfg["badurl"].error)


def test_interpolation_rules():
    assert interpolate("a${TOKEN}b", ENV) == "as3cretb"
    assert interpolate("${env:HOST}", ENV) == "mcp.example.com"
    assert interpolate("${MISSING:-dflt}", ENV) == "dflt"
    assert interpolate("${EMPTY:-dflt}", ENV) == "dflt"
    assert interpolate("${EMPTY}", ENV) == ""
    assert interpolate("$${TOKEN} costs $5", ENV) == "${TOKEN} costs $5"
    assert interpolate("{env:TOKEN}", ENV) == "{env:TOKEN}"
    assert interpolate("{env:TOKEN}", ENV, opencode=True) == "s3cret"
    assert interpolate("${workspaceFolder}/x", ENV, variables={"workspaceFolder": "/w"}) == "/w/x"
    with pytest.raises(ConfigError, match="MISSING is not set"):
        interpolate("${MISSING}", ENV)
    with pytest.raises(ConfigError, match="unsupported"):
        interpolate("${input:token}", ENV)


def test_search_paths_and_discovery(tmp_path):
    home, cwd = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    cwd.mkdir()
    env = {}
    paths = config_search_paths(cwd, home, env, "linux")
    assert paths[0] == cwd / "mcpsync.json" and paths[-1] == home / ".config" / "Claude" / "claude_desktop_config.json"
    assert config_search_paths(cwd, home, env, "darwin")[-1].parts[-3:] == (
        "Application Support",
        "Claude",
        "claude_desktop_config.json",
    )
    assert find_config(cwd, home, env, "linux") is None
    claude = home / ".config" / "Claude" / "claude_desktop_config.json"
    claude.parent.mkdir(parents=True)
    claude.write_text(json.dumps({"mcpServers": {"a": {"command": "x"}}}))
    assert find_config(cwd, home, env, "linux") == claude
    (cwd / "opencode.json").write_text(json.dumps({"theme": "dark"}))  # no MCP servers: skipped
    assert find_config(cwd, home, env, "linux") == claude
    (cwd / ".mcp.json").write_text(json.dumps({"mcpServers": {}}))
    assert find_config(cwd, home, env, "linux") == cwd / ".mcp.json"
    explicit = tmp_path / "explicit.json"
    explicit.write_text("{}")
    assert find_config(cwd, home, {"MCPSYNC_CONFIG": str(explicit)}, "linux") == explicit


def test_importing_config_does_not_import_jsonschema():
    import subprocess

    code = "import mcpsync.manager.config, sys; assert 'jsonschema' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_env_file_follows_python_dotenv_rules(tmp_path) -> None:
    """envFile values are read the way python-dotenv reads them (quotes, escapes, multi-line, export, comments)."""
    (tmp_path / "server.env").write_text(
        "# a comment\n"
        "export PLAIN=value\n"
        "SPACED = padded   \n"
        "INLINE=kept # dropped comment\n"
        'DOUBLE="line1\\nline2"\n'
        "SINGLE='no \\n escape'\n"
        'MULTI="first\nsecond"\n'
        "REF=${WHERE}/x\n"
        "NOVALUE\n"
        "EMPTY=\n",
        encoding="utf-8",
    )
    cfg = {"servers": {"s": {"type": "stdio", "command": "x", "envFile": "server.env", "env": {"PLAIN": "override"}}}}
    env = parse_config(cfg, base_dir=tmp_path, env={"WHERE": "/srv"})["s"].env
    assert env["PLAIN"] == "override"  # env wins over the file
    assert env["SPACED"] == "padded" and env["INLINE"] == "kept"
    assert env["DOUBLE"] == "line1\nline2" and env["SINGLE"] == "no \\n escape"
    assert env["MULTI"] == "first\nsecond"
    assert env["REF"] == "/srv/x"  # then interpolated like the configuration's own env values
    assert "NOVALUE" not in env and env["EMPTY"] == ""


def test_env_file_that_is_not_utf8_is_a_config_error(tmp_path) -> None:
    (tmp_path / "bad.env").write_bytes(b"A=\xff\xfe\n")
    cfg = {"servers": {"s": {"type": "stdio", "command": "x", "envFile": "bad.env"}}}
    server = parse_config(cfg, base_dir=tmp_path, env={})["s"]
    assert server.error is not None and "envFile" in server.error.message


def test_user_data_dir_follows_platformdirs(monkeypatch, tmp_path) -> None:
    """The credential store's directory is where platformdirs puts user data, on Linux, macOS and Windows."""
    platformdirs = pytest.importorskip("platformdirs")
    from platformdirs.macos import MacOS
    from platformdirs.unix import Unix

    from mcpsync.auth import store

    monkeypatch.delenv("MCPSYNC_DATA_DIR", raising=False)
    monkeypatch.delenv("MCPSYNC_AUTH_FILE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    for xdg in ("", str(tmp_path / "xdg")):
        monkeypatch.setenv("XDG_DATA_HOME", xdg)
        monkeypatch.setattr(store.sys, "platform", "linux")
        assert store.user_data_dir() == Unix(appname="mcpsync", appauthor=False).user_data_dir
    monkeypatch.setattr(store.sys, "platform", "darwin")
    monkeypatch.delenv("XDG_DATA_HOME")  # recent platformdirs honour it on macOS too; mcpsync keeps Apple's place
    assert store.user_data_dir() == MacOS(appname="mcpsync", appauthor=False).user_data_dir
    # Windows: platformdirs asks the shell for CSIDL_LOCAL_APPDATA, which %LOCALAPPDATA% names
    monkeypatch.setattr(store.sys, "platform", "win32")
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "Local"))
    monkeypatch.setenv("APPDATA", str(tmp_path / "Roaming"))
    assert store.user_data_dir() == str(tmp_path / "Local" / "mcpsync")
    assert store.default_store_path() == str(tmp_path / "Local" / "mcpsync" / store.FILE_NAME)
    old = tmp_path / "Roaming" / "mcpsync" / store.FILE_NAME  # an earlier release's file keeps being used
    old.parent.mkdir(parents=True)
    old.write_text("{}")
    assert store.default_store_path() == str(old)
    assert platformdirs is not None
