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
    assert code == 3  # a configured server failed
    assert text.splitlines()[0] == "config: %s" % config
    lines = {line.split()[0]: line for line in text.splitlines()[1:]}
    assert "connected" in lines["ex"] and "disabled" in lines["off"] and "exited with code 9" in lines["bad"]
    code, text, _ = run("--config", config, "status", "--json")
    doc = json.loads(text)
    assert [s["status"] for s in doc["servers"]] == ["connected", "disabled", "failed"]
    assert doc["servers"][2]["exit_code"] == 9


def test_tools_and_call(config):
    code, text, err = run("--config", config, "tools")
    assert code == 3 and "ex_echo" in text and "server bad: failed" in err
    code, text, err = run("--config", config, "--server", "ex", "tools")
    assert code == 0 and "ex_echo" in text and not err
    code, text, _ = run("--config", config, "--json", "tools")
    tools = {t["name"]: t for t in json.loads(text)}
    assert tools["ex_add"]["server"] == "ex" and tools["ex_add"]["tool"] == "add"
    code, text, _ = run("--config", config, "call", "ex_add", "--args", '{"a": 1, "b": 2}')
    assert code == 0 and text.strip().startswith("3")
    code, text, _ = run("--config", config, "call", "ex_fail", "--args", '{"message": "bad"}', "--json")
    assert code == 1 and json.loads(text)["isError"] is True


def test_prompts_and_resources(config):
    code, text, _ = run("--config", config, "prompts", "--json")
    assert code == 3 and {p["server"] for p in json.loads(text)} == {"ex"}
    code, text, _ = run("--config", config, "--server", "ex", "resources", "--json")
    doc = json.loads(text)
    assert code == 0 and doc["resources"] and doc["resources"][0]["server"] == "ex"
    code, text, _ = run("--config", config, "--server", "ex", "resources")
    assert code == 0 and text.startswith("ex")


def test_info_read_prompt_with_a_config(config):
    code, text, _ = run("--config", config, "--server", "ex", "info")
    assert code == 0 and text.startswith("[ex]") and "mcpsync example server" in text
    code, text, _ = run("--config", config, "--json", "info")
    assert code == 3 and set(json.loads(text)) == {"ex"}
    code, text, _ = run("--config", config, "prompt", "greet", "-a", "name=Ada")
    assert code == 0 and "Ada" in text  # found on the one server offering it; the failed one does not matter
    code, text, _ = run("--config", config, "--server", "ex", "prompt", "greet", "-a", "name=Ada", "--json")
    assert code == 0 and "Ada" in json.dumps(json.loads(text))
    code, text, _ = run("--config", config, "--server", "ex", "--json", "resources")
    uri = json.loads(text)["resources"][0]["uri"]
    code, text, _ = run("--config", config, "read", uri, "--json")
    assert code == 0 and json.loads(text)["contents"][0]["uri"] == uri
    code, _, err = run("--config", config, "read", "example://nothing-like-this")
    assert code == 4 and "not found" in err.lower()  # asked of the only connected server


def test_unknown_names_get_suggestions(config):
    code, _, err = run("--config", config, "call", "ex_ecoh", "--args", "{}")
    assert code == 4 and "did you mean 'ex_echo'" in err
    code, _, err = run("--config", config, "--server", "exx", "tools")
    assert code == 2 and "did you mean 'ex'" in err
    code, _, err = run("call", "ecoh", "--", PY, "-m", "mcpsync.example_server")
    assert code == 4 and err.splitlines()[0].startswith("mcpsync: server error")
    assert "no tool 'ecoh' (did you mean 'echo'?)" in err.splitlines()[1]


def test_a_file_without_servers_says_so(tmp_path):
    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers": {}}')
    code, _, err = run("--config", str(path), "status")
    assert code == 2 and "defines no servers" in err and "Traceback" not in err


def test_server_option_needs_a_config():
    code, _, err = run("--server", "x", "tools", "--", PY, "-m", "mcpsync.example_server")
    assert code == 2 and "--server NAME" in err


@pytest.fixture
def three(tmp_path):
    """Three servers that all offer echo; only "solo" is given an extra tool name nobody else has."""
    path = tmp_path / "mcp.json"
    servers = {name: {"command": PY, "args": ["-m", "mcpsync.example_server"]} for name in ("a", "b", "c")}
    path.write_text(json.dumps({"mcpServers": servers}))
    solo = tmp_path / "solo.json"
    solo.write_text(
        json.dumps({"mcpServers": {"a": servers["a"], "off": {"command": "nothing", "disabled": True}}})
    )
    return str(path), str(solo)


def test_a_bare_tool_name_with_several_servers(three):
    config, solo = three
    # ambiguous: the candidates are listed, nothing is called
    code, _, err = run("--config", config, "call", "echo", "--args", '{"message": "hi"}')
    assert code == 2 and "3 servers offer a tool named 'echo' (a, b, c)" in err
    assert "a_echo, b_echo, c_echo" in err and "--server NAME" in err
    # --server picks one: the bare name works, and so does the exposed name
    code, text, err = run("--config", config, "--server", "b", "call", "echo", "--args", '{"message": "hi"}')
    assert (code, text.strip()) == (0, "hi"), err
    code, text, err = run("--config", config, "--server", "b", "call", "b_echo", "--args", '{"message": "hi"}')
    assert (code, text.strip()) == (0, "hi"), err
    code, _, err = run("--config", config, "--server", "b", "call", "ecoh")
    assert code == 4 and "server b has no tool named 'ecoh' (did you mean 'echo'?)" in err
    # the exposed name still works without --server
    code, text, err = run("--config", config, "call", "c_echo", "--args", '{"message": "hi"}')
    assert (code, text.strip()) == (0, "hi"), err
    # unambiguous: one server offers it
    code, text, err = run("--config", solo, "call", "echo", "--args", '{"message": "hi"}')
    assert (code, text.strip()) == (0, "hi"), err
    code, _, err = run("--config", config, "call", "ecoh")
    assert code == 4 and "no server offers a tool named 'ecoh'" in err and "'echo'" in err
