"""``mcpsync search|install|outdated|update`` against a local registry (tests/peers/registryserver.py), through
``mcpsync.cli.main`` as a user runs it; an installed remote server is then called with ``mcpsync --config``."""

from __future__ import annotations

import io
import json

import pytest

from mcpsync.cli import main

from tests.peers.httpserver import MCPTestServer
from tests.peers.registryserver import RegistryServer, entry, fixture


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("MCPSYNC_AUTH_FILE", str(tmp_path / "store" / "mcp-auth.json"))
    monkeypatch.setenv("MCPSYNC_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("MCPSYNC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MCPSYNC_AUTH_STORE", raising=False)
    monkeypatch.delenv("MCPSYNC_REGISTRY_URL", raising=False)
    monkeypatch.delenv("MCPSYNC_CONFIG", raising=False)


def run(*argv, stdin=""):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err, stdin=io.StringIO(stdin))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def registry():
    servers = [
        entry(fixture("npm-everything.json")),
        entry(fixture("remote-tenant.json")),
        entry(fixture("deprecated-old.json"), "deprecated", message="use io.github.acme/weather"),
    ]
    with RegistryServer(servers) as server:
        yield server


def test_search_lists_active_servers_and_deprecated_on_request(registry, monkeypatch):
    monkeypatch.setenv("MCPSYNC_REGISTRY_URL", registry.url)
    code, out, _err = run("search", "acme")
    assert code == 0 and "io.github.acme/tenant-remote" in out and "old-weather" not in out
    code, out, _err = run("search", "acme", "--all")
    assert "io.github.acme/old-weather" in out and "[deprecated: use io.github.acme/weather]" in out
    code, out, _err = run("search", "--registry", registry.url, "--json")
    assert [s["name"] for s in json.loads(out)] == ["io.github.modelcontextprotocol/server-everything",
                                                    "io.github.acme/tenant-remote"]


def test_install_without_yes_and_without_a_terminal_installs_nothing(registry, tmp_path):
    cfg = tmp_path / "mcp.json"
    code, _out, err = run("install", "io.github.modelcontextprotocol/server-everything@2026.8.31",
                          "--registry", registry.url, "--config", str(cfg))
    assert code == 1 and not cfg.exists()
    assert "@modelcontextprotocol/server-everything@2026.8.31" in err and "approve with --yes" in err


def test_install_then_call_the_installed_server(registry, tmp_path):
    server = MCPTestServer().start()
    server.faults.require_token = "cli-token-123"
    try:
        cfg = tmp_path / "opencode.json"
        cfg.write_text(json.dumps({"$schema": "https://opencode.ai/config.json", "mcp": {}}))
        code, out, err = run("install", "io.github.acme/tenant-remote", "--registry", registry.url,
                             "--config", str(cfg), "--yes", "--input", "host=127.0.0.1",
                             "--input", "port=%d" % server.port,
                             "--input", "token=cli-token-123", "--as", "tenant")
        assert code == 0, err
        assert "installed io.github.acme/tenant-remote 2.0.0 as 'tenant'" in out
        assert "remote server: http://127.0.0.1" in err and "Authorization" in err
        assert "cli-token-123" not in cfg.read_text() and "cli-token-123" not in err
        code, out, err = run("--config", str(cfg), "call", "tenant_echo", "-a", "message=via the registry")
        assert code == 0, err
        assert "via the registry" in out
    finally:
        server.stop()


def test_outdated_and_update(tmp_path):
    v1 = fixture("npm-everything.json")
    v1["packages"][0]["version"] = v1["version"] = "2026.1.1"
    cfg = tmp_path / ".mcp.json"
    with RegistryServer([entry(v1, latest=False), entry(fixture("npm-everything.json"))]) as registry:
        code, _out, err = run("install", "io.github.modelcontextprotocol/server-everything@2026.1.1",
                              "--registry", registry.url, "--config", str(cfg), "--yes")
        assert code == 0, err
        code, out, _err = run("outdated", "--config", str(cfg))
        assert code == 0 and "server-everything  io.github.modelcontextprotocol/server-everything  2026.1.1 -> " \
                             "2026.8.31" in out
        code, out, err = run("update", "--config", str(cfg))
        assert code == 1 and "approve with --yes" in err
        code, out, err = run("update", "--config", str(cfg), "--yes")
        assert code == 0, err
        assert "updated 'server-everything'" in out
        entry_doc = json.loads(cfg.read_text())["mcpServers"]["server-everything"]
        assert entry_doc["args"] == ["-y", "@modelcontextprotocol/server-everything@2026.8.31", "stdio"]
        assert entry_doc["registry"]["version"] == "2026.8.31"
        code, _out, err = run("outdated", "--config", str(cfg))
        assert code == 0 and "up to date" in err


def test_bad_input_syntax_is_a_usage_error(registry, tmp_path):
    code, _out, err = run("install", "io.github.acme/tenant-remote", "--registry", registry.url,
                          "--config", str(tmp_path / "x.json"), "--yes", "--input", "novalue")
    assert code == 2 and "NAME=VALUE" in err


class _Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("answer, installed", [("n\n", False), ("\n", False), ("y\n", True)])
def test_install_asks_on_a_terminal(registry, tmp_path, answer, installed):
    cfg = tmp_path / "mcp.json"
    out, err = io.StringIO(), io.StringIO()
    # the terminal answers the open input (the positional argument has a fixed value, so only consent is asked)
    code = main(["install", "io.github.modelcontextprotocol/server-everything", "--registry", registry.url,
                 "--config", str(cfg)], stdout=out, stderr=err, stdin=_Terminal(answer))
    text = err.getvalue()
    assert "Install and allow this to run? [y/N]" in text and "argv[3] = 'stdio'" in text
    assert (code, cfg.exists()) == ((0, True) if installed else (1, False))


def test_post_install_instructions_are_printed_not_run(tmp_path):
    marker = tmp_path / "ran"
    doc = fixture("npm-everything.json")
    doc["packages"][0]["postInstallInstructions"] = [
        {"description": "Sign in once", "command": "touch %s" % marker, "documentation": "https://example.com/login"},
        {"description": "Optionally warm the cache", "optional": True},
    ]
    with RegistryServer([entry(doc)]) as registry:
        code, _out, err = run("install", "io.github.modelcontextprotocol/server-everything", "--registry",
                              registry.url, "--config", str(tmp_path / "mcp.json"), "--yes")
    assert code == 0, err
    assert "after installing: Sign in once" in err and "(not run by mcpsync) touch %s" % marker in err
    assert "see https://example.com/login" in err and "after installing (optional): Optionally warm the cache" in err
    assert not marker.exists()


def test_uninstall_removes_the_entry_and_its_secrets(registry, tmp_path):
    from mcpsync.auth.secrets import read_secret

    cfg = tmp_path / "mcp.json"
    code, _out, err = run("install", "io.github.acme/tenant-remote", "--registry", registry.url, "--config", str(cfg),
                          "--yes", "--input", "host=h.example.com", "--input", "token=t0k")
    assert code == 0, err
    assert read_secret("tenant-remote/token") == "t0k"
    assert read_secret("tenant-remote/Authorization") is None  # stored once, not also as the whole header
    code, out, _err = run("uninstall", "tenant-remote", "--config", str(cfg))
    assert code == 0 and "removed 'tenant-remote'" in out
    assert json.loads(cfg.read_text())["mcpServers"] == {}
    assert read_secret("tenant-remote/token") is None
    code, _out, err = run("uninstall", "tenant-remote", "--config", str(cfg))
    assert code == 2 and "no server named" in err


def test_search_output_escapes_terminal_control_characters(tmp_path):
    doc = dict(fixture("npm-everything.json"), description="fine\x1b]0;pwned\x07\x1b[2K")
    with RegistryServer([entry(doc)]) as registry:
        code, out, _err = run("search", "--registry", registry.url)
    assert code == 0 and "\x1b" not in out and "\x07" not in out and "fine\\x1b]0;pwned\\x07" in out


def test_without_config_the_found_file_or_mcpsyncs_own_is_used(registry, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    code, out, err = run("install", "io.github.modelcontextprotocol/server-everything", "--registry", registry.url,
                         "--yes")
    own = tmp_path / "xdg" / "mcpsync" / "config.json"
    assert code == 0, err
    assert str(own) in out and "server-everything" in json.loads(own.read_text())  # native format
    project = tmp_path / ".mcp.json"
    project.write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}}))
    code, out, err = run("install", "io.github.acme/tenant-remote", "--registry", registry.url, "--yes",
                         "--input", "host=h.example.com", "--input", "token=t")
    assert code == 0, err
    assert set(json.loads(project.read_text())["mcpServers"]) == {"other", "tenant-remote"}
