"""End to end: real packages installed from a (local) registry and started by mcpsync.

- npm: ``@modelcontextprotocol/server-everything`` at the version .ci/run pins, run by ``npx -y`` (fetched from
  the npm registry on first use);
- PyPI: ``mcp-server-time`` (a small official server that works offline), installed into its own virtualenv
  (``python -m venv`` + ``pip install``, the path mcpsync takes when ``uvx`` is not installed).

Each is installed through :func:`mcpsync.registry.install` into a configuration file, then the Manager reads
that file, starts the server and calls a tool. These need the network (npm, PyPI), so they run when
``MCPSYNC_REGISTRY_E2E=1`` (``.ci/registry`` sets it); under ``CI=true`` a missing ``npx`` fails.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

from mcpsync import Manager
from mcpsync.manager.config import load_config
from mcpsync.registry import install

from tests.peers.registryserver import RegistryServer, entry, fixture

pytestmark = pytest.mark.skipif(os.environ.get("MCPSYNC_REGISTRY_E2E") != "1",
                                reason="needs the network; set MCPSYNC_REGISTRY_E2E=1 (.ci/registry does)")


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("MCPSYNC_AUTH_FILE", str(tmp_path / "store" / "mcp-auth.json"))
    monkeypatch.setenv("MCPSYNC_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("MCPSYNC_CACHE_DIR", str(tmp_path / "cache"))


def _start_and_call(cfg_path, name, tool, arguments):
    configs = load_config(cfg_path)
    configs[name].connect_timeout = 600.0  # the first run downloads the package
    configs[name].timeout = 120.0
    with Manager(configs) as mgr:
        status = mgr.status(name)
        assert status.status == "connected", status
        return mgr.call_tool(tool, arguments, server=name)


def test_npm_package_installed_and_started(tmp_path):
    if not shutil.which("npx"):
        if os.environ.get("CI") == "true":
            pytest.fail("npx is needed for the npm end-to-end test")
        pytest.skip("npx not installed")
    cfg = tmp_path / ".cursor" / "mcp.json"
    seen = []
    with RegistryServer([entry(fixture("npm-everything.json"))]) as registry:
        result = install("io.github.modelcontextprotocol/server-everything@2026.8.31", registry=registry.url,
                         config=cfg, approve=lambda request: seen.append(request) or True)
    assert seen[0].command == ("npx", "-y", "@modelcontextprotocol/server-everything@2026.8.31", "stdio")
    written = json.loads(cfg.read_text())["mcpServers"][result.config_name]
    assert written["command"] == "npx" and written["registry"]["version"] == "2026.8.31"
    answer = _start_and_call(cfg, result.config_name, "echo", {"message": "installed from the registry"})
    assert "installed from the registry" in answer.text


def test_pypi_package_installed_into_a_virtualenv_and_started(tmp_path):
    cfg = tmp_path / "mcpsync.json"
    seen = []
    without_uvx = lambda program: None if program in ("uvx", "uv") else shutil.which(program)  # noqa: E731
    with RegistryServer([entry(fixture("pypi-time.json"))]) as registry:
        result = install("io.github.modelcontextprotocol/time", registry=registry.url, config=cfg,
                         approve=lambda request: seen.append(request) or True, which=without_uvx,
                         inputs={"--local-timezone": "Europe/Paris"})
    (request,) = seen
    assert [step[1:3] for step in request.install_steps] == [("-m", "venv"), ("-m", "pip")]
    assert request.install_steps[1][-1] == "mcp-server-time==2026.10.19"
    assert request.command[0].endswith(os.path.join("bin", "mcp-server-time"))
    assert request.command[1:] == ("--local-timezone=Europe/Paris",)
    assert os.path.isfile(request.command[0])
    answer = _start_and_call(cfg, result.config_name, "get_current_time", {"timezone": "UTC"})
    assert not answer.is_error and "UTC" in answer.text
