"""The hosted Windows/macOS workflow (.github/workflows/platforms.yml) is valid YAML with the promised matrix."""

from __future__ import annotations

import os
import shlex
from typing import Any, Dict, List

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORKFLOW = os.path.join(ROOT, ".github", "workflows", "platforms.yml")
SUITES = {
    "stdio": [
        "tests/transports/test_stdio_transport.py",
        "tests/client/test_client_stdio.py",
        "tests/platform/test_platform_commands.py",
    ],
    "store": [
        "tests/auth/test_auth_store.py",
        "tests/auth/test_store_killed_writer.py",
        "tests/platform/test_platform_files.py",
    ],
    "callback": ["tests/auth/test_auth_callback.py", "tests/client/test_listen_callbacks.py"],
    "oauth": ["tests/auth/test_http_auth_flow.py", "tests/auth/test_oauth_proxy.py"],
    "http-fault": ["tests/transports/test_http_faults.py"],
    "orphan": ["tests/transports/test_orphans.py", "tests/platform/test_platform_stop.py"],
}


def _load() -> Dict[Any, Any]:
    with open(WORKFLOW, encoding="utf-8") as f:
        data = yaml.safe_load(f)
    assert isinstance(data, dict)
    return data


def test_the_workflow_parses_and_runs_on_windows_and_macos_with_python_39_and_313() -> None:
    data = _load()
    triggers = data.get("on", data.get(True))  # YAML 1.1 reads a bare `on` key as true
    assert {"push", "pull_request", "workflow_dispatch"} <= set(triggers)
    (job,) = data["jobs"].values()
    matrix = job["strategy"]["matrix"]
    assert sorted(matrix["os"]) == ["macos-latest", "windows-latest"]
    assert matrix["python"] == ["3.9", "3.13"]  # strings: a bare 3.10 would read as 3.1
    assert job["strategy"]["fail-fast"] is False
    assert job["runs-on"] == "${{ matrix.os }}"
    setup = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/setup-python")]
    assert setup and setup[0]["with"]["python-version"] == "${{ matrix.python }}"


def test_the_workflow_runs_every_promised_suite_and_each_file_exists() -> None:
    (job,) = _load()["jobs"].values()
    commands: List[str] = [s["run"] for s in job["steps"] if "run" in s]
    pytest_runs = [shlex.split(c) for c in commands if "pytest" in c]
    assert len(pytest_runs) == 1
    files = [a for a in pytest_runs[0] if a.startswith("tests/")]
    for suite, paths in SUITES.items():
        for path in paths:
            assert path in files, "%s suite: %s not run" % (suite, path)
    for path in files:
        assert os.path.isfile(os.path.join(ROOT, path)), path
    assert any('pip install -e ".[test]"' in c for c in commands)
