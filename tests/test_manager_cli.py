"""``mcpsync --config FILE status | tools | call | prompts | resources`` through the real CLI entry point."""

from __future__ import annotations

import io
import json
import sys

import pytest

from mcpsync.cli.app import main

PY = sys.executable


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "opencode.json"
    path.write_text(
        json.dumps(
            {
                "mcp": {
                    "ex": {"type": "local", "command": [PY, "-m", "mcpsync.example_server"]},
                    "off": {"type": "local", "command": ["nothing"], "enabled": False},
                    "bad": {"type": "local", "command": [PY, "-c", "import sys; sys.exit(9)"]},
                }
            }
        )
    )
    return str(path)


def run(*argv: str):
    stdout, stderr = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=stdout, stderr=stderr)
    return code, stdout.getvalue(), stderr.getvalue()


def test_status_text_and_json(config):
    code, text, _ = run("--config", config, "status")
    assert code == 0
    lines = {line.split()[0]: line for line in text.splitlines()}
    assert "connected" in lines["ex"] and "disabled" in lines["off"] and "exited with code 9" in lines["bad"]
    code, text, _ = run("--config", config, "status", "--json")
    doc = json.loads(text)
    assert [s["status"] for s in doc["servers"]] == ["connected", "disabled", "failed"]
    assert doc["servers"][2]["exit_code"] == 9


def test_tools_and_call(config):
    code, text, err = run("--config", config, "tools")
    assert code == 0 and "ex_echo" in text and "server bad: failed" in err
    code, text, _ = run("--config", config, "--json", "tools")
    tools = {t["name"]: t for t in json.loads(text)}
    assert tools["ex_add"]["server"] == "ex" and tools["ex_add"]["tool"] == "add"
    code, text, _ = run("--config", config, "call", "ex_add", "--args", '{"a": 1, "b": 2}')
    assert code == 0 and text.strip().startswith("3")
    code, text, _ = run("--config", config, "call", "ex_fail", "--args", '{"message": "bad"}', "--json")
    assert code == 1 and json.loads(text)["isError"] is True


def test_prompts_and_resources(config):
    code, text, _ = run("--config", config, "prompts", "--json")
    assert code == 0 and {p["server"] for p in json.loads(text)} == {"ex"}
    code, text, _ = run("--config", config, "resources", "--json")
    doc = json.loads(text)
    assert code == 0 and doc["resources"] and doc["resources"][0]["server"] == "ex"
    code, text, _ = run("--config", config, "resources")
    assert code == 0 and text.startswith("ex")
