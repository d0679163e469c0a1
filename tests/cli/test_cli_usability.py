"""Small things a user of the command line meets: ``mcpsync list``, short subcommand help, ``auth logout`` of an
unknown name, one meaning of ``$MCPSYNC_CACHE_DIR``, a Python server named after its module, ``[project.urls]``.

Every command runs the real ``python -m mcpsync`` against the real example server (a subprocess).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional
from urllib.parse import urlsplit

import pytest

import mcpsync
from mcpsync.integrations.core import McpToolkit

from tests.conftest import server_cmd
from tests.peers.registryserver import RegistryServer, entry, fixture

ROOT = Path(__file__).resolve().parents[2]


def run(
    *argv: str, env: Optional[Dict[str, str]] = None, cwd: Optional[Path] = None
) -> "subprocess.CompletedProcess[str]":
    full = dict(os.environ, **(env or {}))
    full["PYTHONPATH"] = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "mcpsync", *argv], capture_output=True, text=True, timeout=120, env=full, cwd=cwd
    )


def test_list_is_tools() -> None:
    listed = run("list", "--json", "--", *server_cmd())
    tools = run("tools", "--json", "--", *server_cmd())
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == json.loads(tools.stdout)
    assert "echo" in run("list", "--", *server_cmd()).stdout
    assert "tools (list)" in run("--help").stdout


def test_subcommand_help_lists_its_own_options_and_names_the_global_ones_once() -> None:
    top = run("--help").stdout
    assert "--connect-timeout SECONDS" in top and "--inherit-env" in top
    for command in ("tools", "call", "read", "list"):
        text = run(command, "--help").stdout
        assert "--connect-timeout SECONDS" not in text and "idle timeout per request" not in text, command
        assert "global options (see `mcpsync --help`)" in text
        assert text.count("--inherit-env") == 1  # in the one-line note only
    assert "--method METHOD" in run("call", "--help").stdout  # its own options stay
    # the global options are still accepted after the command
    proc = run("tools", "--json", "--connect-timeout", "60", "--", *server_cmd())
    assert proc.returncode == 0 and json.loads(proc.stdout)["tools"]


def test_server_help_names_call() -> None:
    top = " ".join(run("--help").stdout.split())
    assert "the configured server to use (info, tools, call," in top


def test_auth_logout_of_an_unknown_name_fails_with_a_message(tmp_path: Path) -> None:
    store = str(tmp_path / "auth.json")
    proc = run("auth", "logout", "nosuch", "--auth-file", store, cwd=tmp_path)
    assert proc.returncode == 2
    assert "no stored credentials for nosuch" in proc.stderr and proc.stdout == ""
    proc = run("auth", "logout", "nosuch", "--auth-file", store, "--json", cwd=tmp_path)
    assert proc.returncode == 2 and json.loads(proc.stdout) == {"server": "nosuch", "removed": False}


def test_cache_dir_is_the_parent_of_the_warm_and_the_registry_cache(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = {"MCPSYNC_CACHE_DIR": str(cache)}
    proc = run("tools", "--", *server_cmd("--era", "modern", "--ttl-ms", "60000"), env=env)
    assert proc.returncode == 0, proc.stderr
    with RegistryServer([entry(fixture("npm-everything.json"))]) as reg:
        proc = run("search", "everything", "--registry", reg.url, env=env)
        assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in cache.iterdir()) == ["registry", "warm"]
    assert list((cache / "warm").iterdir()) and list((cache / "registry").iterdir())


def test_a_python_server_is_named_after_its_module_in_tool_metadata() -> None:
    with mcpsync.connect(server_cmd("--era", "legacy")) as client:
        assert client.name == "mcpsync.example_server"
        tools = McpToolkit(client, prefix=True).tools()
        assert {t.server for t in tools} == {"mcpsync.example_server"}
        assert all(not t.name.startswith("python") for t in tools)


def test_project_urls_are_urls() -> None:
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for label, url in project.get("urls", {}).items():
        parts = urlsplit(url)
        assert parts.scheme == "https" and parts.netloc, (label, url)


def test_the_note_names_every_global_option() -> None:
    from mcpsync.cli.app import build_parser

    names = [
        a.option_strings[0]
        for a in build_parser()._actions
        if a.option_strings and a.dest not in ("help", "version")
    ]
    assert "--connect-timeout" in names and "--json" in names
    text = " ".join(run("tools", "--help").stdout.split("global options", 1)[1].split())
    assert [n for n in names if n not in text.replace(",", " ").split()] == []
