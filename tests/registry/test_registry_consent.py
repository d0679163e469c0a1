"""``mcpsync install`` shows the whole consent before it asks for anything, shows what the program receives,
flags code-loading variables, stores a secret once and ``uninstall`` leaves nothing behind.

Driven through ``mcpsync.cli.main`` as a user runs it, against a local registry (tests/peers/registryserver.py); the
terminal is a line-buffered fake whose ``isatty()`` is true, and ``getpass`` is replaced by one that records
what the terminal showed when the secret was asked.
"""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from mcpsync.cli import main
from mcpsync.registry import install
from mcpsync.registry.installer import loads_code, shown_value

from tests.peers.httpserver import MCPTestServer
from tests.peers.registryserver import RegistryServer, entry, fixture

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPSYNC_AUTH_FILE", str(tmp_path / "store" / "mcp-auth.json"))
    monkeypatch.setenv("MCPSYNC_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("MCPSYNC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MCPSYNC_AUTH_STORE", raising=False)
    monkeypatch.delenv("MCPSYNC_REGISTRY_URL", raising=False)
    monkeypatch.delenv("MCPSYNC_CONFIG", raising=False)
    monkeypatch.delenv("WEATHER_API_KEY", raising=False)


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Screen(io.StringIO):
    """stderr as the user sees it, with the position of every prompt that asked for something."""


def secret_prompt(monkeypatch: pytest.MonkeyPatch, screen: Screen, answers: Dict[str, str]) -> List[Tuple[str, str]]:
    """Replace getpass: answer by the input named in the prompt, and remember what the screen showed then."""
    asked: List[Tuple[str, str]] = []

    def fake_getpass(prompt: str = "", stream: Any = None) -> str:
        assert stream is screen
        asked.append((prompt, screen.getvalue()))
        return next(v for k, v in answers.items() if k in prompt)

    monkeypatch.setattr("getpass.getpass", fake_getpass)
    return asked


def cli(argv: List[str], stdin: io.StringIO, screen: Screen) -> Tuple[int, str]:
    out = io.StringIO()
    code = main(argv, stdout=out, stderr=screen, stdin=stdin)
    return code, out.getvalue()


def weather_doc() -> Dict[str, Any]:
    """An npm server with a secret asked on the terminal, a plain input, a registry-fixed NODE_OPTIONS, and an
    argument holding a literal $HOME."""
    doc = fixture("npm-everything.json")
    doc["packages"][0]["environmentVariables"] = [
        {"name": "WEATHER_API_KEY", "description": "your API key", "isSecret": True, "isRequired": True},
        {"name": "UNITS", "description": "metric or imperial", "default": "metric"},
        {"name": "NODE_OPTIONS", "value": "--require=/tmp/telemetry.js"},
        {"name": "DYLD_INSERT_LIBRARIES", "value": "/tmp/hook.dylib"},
        {"name": "LOG_DIR", "value": "$HOME/logs"},
    ]
    doc["packages"][0]["packageArguments"].append({"type": "named", "name": "--home", "value": "$HOME"})
    return doc


def test_the_consent_comes_first_and_the_inputs_after(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "mcp.json"
    screen = Screen()
    asked = secret_prompt(monkeypatch, screen, {"WEATHER_API_KEY": "k3y-secret"})
    with RegistryServer([entry(weather_doc())]) as registry:
        code, out = cli(["install", "io.github.modelcontextprotocol/server-everything", "--registry", registry.url,
                         "--config", str(cfg)], Terminal("y\nimperial\n"), screen)
    text = screen.getvalue()
    assert code == 0, text
    consent_end = text.index("Install and allow this to run? [y/N]")
    # everything of the consent is above the question
    for part in ("DANGER: this runs a program", "argv[0] = 'npx'", "argv[4] = '--home=$HOME'",
                 "environment variables: DYLD_INSERT_LIBRARIES, LOG_DIR, NODE_OPTIONS, UNITS, WEATHER_API_KEY",
                 "NODE_OPTIONS=--require=/tmp/telemetry.js", "LOG_DIR=$HOME/logs",
                 "WEATHER_API_KEY=<secret WEATHER_API_KEY>", "UNITS=<UNITS>",
                 "DANGER: NODE_OPTIONS makes the program load other code",
                 "DANGER: DYLD_INSERT_LIBRARIES makes the program load other code",
                 "asked after you approve (where <NAME> stands): WEATHER_API_KEY (secret), UNITS"):
        assert 0 <= text.index(part) < consent_end, part
    assert "$$HOME" not in text
    # the inputs were asked after the approval: the secret with getpass, the plain one on the terminal
    assert len(asked) == 1 and "environment variable WEATHER_API_KEY (your API key)" in asked[0][0]
    assert "Install and allow this to run? [y/N]" in asked[0][1]
    assert text.index("environment variable UNITS") > consent_end
    assert "k3y-secret" not in text and "k3y-secret" not in cfg.read_text()
    written = json.loads(cfg.read_text())["mcpServers"]["server-everything"]
    assert written["env"]["UNITS"] == "imperial"
    assert written["env"]["WEATHER_API_KEY"] == "${secret:server-everything/WEATHER_API_KEY}"
    assert written["env"]["LOG_DIR"] == "$$HOME/logs"  # the program receives $HOME/logs, never expanded
    assert "installed io.github.modelcontextprotocol/server-everything" in out


def test_a_refused_consent_asks_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "mcp.json"
    screen = Screen()
    asked = secret_prompt(monkeypatch, screen, {"WEATHER_API_KEY": "k"})
    with RegistryServer([entry(weather_doc())]) as registry:
        code, _out = cli(["install", "io.github.modelcontextprotocol/server-everything", "--registry", registry.url,
                          "--config", str(cfg)], Terminal("n\n"), screen)
    assert code == 1 and asked == [] and not cfg.exists()
    assert "environment variable UNITS" not in screen.getvalue() and "not approved" in screen.getvalue()
    assert not (tmp_path / "store").exists()


def test_known_answers_show_their_values_and_secrets_stay_hidden(tmp_path: Path) -> None:
    cfg = tmp_path / "mcp.json"
    screen = Screen()
    with RegistryServer([entry(weather_doc())]) as registry:
        code, _out = cli(["install", "io.github.modelcontextprotocol/server-everything", "--registry", registry.url,
                          "--config", str(cfg), "--yes", "--input", "WEATHER_API_KEY=k3y", "--input", "UNITS=metric"],
                         io.StringIO(""), screen)
    text = screen.getvalue()
    assert code == 0, text
    assert "UNITS=metric" in text and "WEATHER_API_KEY=<secret WEATHER_API_KEY>" in text
    assert "k3y" not in text and "asked after" not in text and "<UNITS>" not in text


def test_a_remote_consent_then_its_inputs_and_its_secret_is_stored_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = MCPTestServer().start()
    server.faults.require_token = "tok-once-1"
    try:
        cfg = tmp_path / "mcp.json"
        screen = Screen()
        asked = secret_prompt(monkeypatch, screen, {"token": "tok-once-1"})
        with RegistryServer([entry(fixture("remote-tenant.json"))]) as registry:
            # host, port, path (default), then the token (getpass), then X-Team (default)
            code, out = cli(["install", "io.github.acme/tenant-remote", "--registry", registry.url, "--config",
                             str(cfg), "--as", "tenant"], Terminal("y\n127.0.0.1\n%d\n\n\n" % server.port), screen)
        text = screen.getvalue()
        assert code == 0, text
        consent_end = text.index("Install and allow this to run? [y/N]")
        assert text.index("remote server: http://<host>:<port>/<path>") < consent_end
        assert text.index("Authorization: Bearer <secret token>") < consent_end
        assert text.index("URL variable host") > consent_end and len(asked) == 1
        store = json.loads((tmp_path / "store" / "mcp-auth.json").read_text())
        assert store["servers"]["tenant"]["secrets"] == {"token": "tok-once-1"}  # once, not also "Authorization"
        written = json.loads(cfg.read_text())["mcpServers"]["tenant"]
        assert written["headers"]["Authorization"] == "Bearer ${secret:tenant/token}"
        code, out = cli(["--config", str(cfg), "call", "tenant_echo", "-a", "message=once"], io.StringIO(), Screen())
        assert code == 0 and "once" in out
        code, out = cli(["uninstall", "tenant", "--config", str(cfg)], io.StringIO(), Screen())
        assert code == 0
        store = json.loads((tmp_path / "store" / "mcp-auth.json").read_text())
        assert "tenant" not in store["servers"]
    finally:
        server.stop()


def test_uninstall_of_a_server_without_secrets_leaves_no_empty_entry(tmp_path: Path) -> None:
    cfg = tmp_path / "mcp.json"
    with RegistryServer([entry(fixture("npm-everything.json"))]) as registry:
        code, _out = cli(["install", "io.github.modelcontextprotocol/server-everything", "--registry", registry.url,
                          "--config", str(cfg), "--yes", "--as", "everything"], io.StringIO(), Screen())
        assert code == 0
    store_file = tmp_path / "store" / "mcp-auth.json"
    code, _out = cli(["uninstall", "everything", "--config", str(cfg)], io.StringIO(), Screen())
    assert code == 0
    assert json.loads(cfg.read_text())["mcpServers"] == {}
    assert not store_file.exists() or "everything" not in json.loads(store_file.read_text())["servers"]


def test_uninstall_keeps_the_servers_oauth_login_but_drops_the_emptied_entry(tmp_path: Path) -> None:
    from mcpsync.auth import open_store
    from mcpsync.auth.secrets import delete_secrets, store_secrets

    store = open_store(str(tmp_path / "own-store.json"))
    store_secrets({"a/token": "t", "b/token": "u"}, store)
    store.update("b", lambda e: e.update(serverUrl="https://b.example.com/mcp"))
    delete_secrets("a", store)
    delete_secrets("b", store)
    delete_secrets("never-installed", store)
    assert store.get("a") is None and store.get("never-installed") is None
    assert store.get("b") == {"serverUrl": "https://b.example.com/mcp"}


def test_library_hook_sees_asked_after_for_a_callable_that_may_ask(tmp_path: Path) -> None:
    seen = []
    asked_at: List[int] = []

    def prompt(request: Any) -> str:
        asked_at.append(len(seen))
        return {"WEATHER_API_KEY": "k", "UNITS": "metric"}.get(request.name, "")

    install(weather_doc(), config=tmp_path / "mcp.json", inputs=prompt, approve=lambda r: seen.append(r) or True,
            which=lambda p: "/usr/bin/" + p)
    assert asked_at and all(n == 1 for n in asked_at)  # asked only once the hook had approved
    assert [r.name for r in seen[0].asked_after] == ["WEATHER_API_KEY", "UNITS"]
    assert seen[0].code_loading_env == ("DYLD_INSERT_LIBRARIES", "NODE_OPTIONS")


@pytest.mark.parametrize("name", ["NODE_OPTIONS", "PYTHONPATH", "PYTHONSTARTUP", "LD_PRELOAD", "DYLD_LIBRARY_PATH",
                                  "dyld_insert_libraries"])
def test_code_loading_names(name: str) -> None:
    assert loads_code(name)


def test_shown_value_is_what_the_program_receives() -> None:
    assert shown_value("$$HOME/x") == "$HOME/x"
    assert shown_value("Bearer ${secret:srv/token}") == "Bearer <secret token>"
    assert shown_value("$${secret:srv/token}") == "${secret:srv/token}"  # a literal from the registry
    assert not loads_code("HOME") and not loads_code("NODE_ENV")


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal (POSIX)")
def test_on_a_real_terminal_the_consent_precedes_every_prompt(tmp_path: Path) -> None:
    """``mcpsync install`` in a real pseudo-terminal (its controlling terminal, so getpass reads /dev/tty): the
    question comes after the whole consent, the secret prompt after the approval, and the secret is not echoed."""
    import fcntl
    import pty
    import select
    import subprocess
    import termios

    cfg = tmp_path / "mcp.json"
    master, slave = pty.openpty()

    def controlling_terminal() -> None:
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    with RegistryServer([entry(weather_doc())]) as registry:
        proc = subprocess.Popen(  # noqa: S603
            [sys.executable, "-m", "mcpsync", "install", "io.github.modelcontextprotocol/server-everything",
             "--registry", registry.url, "--config", str(cfg)],
            stdin=slave, stdout=slave, stderr=slave, env=env, preexec_fn=controlling_terminal, close_fds=True,
        )
        os.close(slave)
        screen = b""

        def until(marker: bytes) -> bytes:
            nonlocal screen
            while marker not in screen:
                ready, _w, _x = select.select([master], [], [], 60)
                assert ready, "no %r on the terminal; it shows:\n%s" % (marker, screen.decode("utf-8", "replace"))
                try:
                    data = os.read(master, 65536)
                except OSError:
                    data = b""
                assert data, "the terminal closed before %r:\n%s" % (marker, screen.decode("utf-8", "replace"))
                screen += data
            return screen

        try:
            shown = until(b"Install and allow this to run? [y/N]")
            assert b"WEATHER_API_KEY (your API key)" not in shown  # nothing asked yet
            for part in (b"DANGER: this runs a program", b"argv[4] = '--home=$HOME'",
                         b"NODE_OPTIONS=--require=/tmp/telemetry.js",
                         b"DANGER: NODE_OPTIONS makes the program load other code",
                         b"asked after you approve (where <NAME> stands): WEATHER_API_KEY (secret), UNITS"):
                assert part in shown, part
            os.write(master, b"y\n")
            until(b"environment variable WEATHER_API_KEY (your API key)")
            os.write(master, b"pty-s3cret\n")
            until(b"environment variable UNITS")
            os.write(master, b"imperial\n")
            until(b"installed io.github.modelcontextprotocol/server-everything")
            assert proc.wait(60) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
            os.close(master)
    assert b"pty-s3cret" not in screen  # read without echo
    written = json.loads(cfg.read_text())["mcpServers"]["server-everything"]
    assert written["env"]["UNITS"] == "imperial"
    assert "pty-s3cret" not in cfg.read_text()
