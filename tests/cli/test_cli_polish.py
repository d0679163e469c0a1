"""The command line's rough edges (issue 19, item 10): help and usage, tool signatures, --auth, raw requests,
shell completion, CLI words for a bad --url, and a rejected static token."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

import pytest

from mcpsync.cli.app import main
from tests.conftest import EXAMPLE
from tests.peers.httpserver import MCPTestServer

SERVER = ["--"] + EXAMPLE


def run(*argv: str) -> Tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err, stdin=io.StringIO(""))
    return code, out.getvalue(), err.getvalue()


def test_help_shows_the_server_command_in_the_usage_and_examples(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("--help")[0] == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: mcpsync [OPTIONS] COMMAND [COMMAND OPTIONS] [-- SERVER_COMMAND [ARG ...]]")
    assert "examples:\n  mcpsync demo\n" in text and "mcpsync call echo -a message=hi --" in text
    assert "exit codes:\n  0   success" in text
    assert run("call", "--help")[0] == 0
    text = capsys.readouterr().out
    assert "(-- SERVER_COMMAND [ARG ...] | --url URL | --config FILE)" in text.splitlines()[0]
    assert "--method METHOD" in text and "examples:" in text


def test_tools_show_types_defaults_and_optional_arguments() -> None:
    code, text, err = run("tools", *SERVER)
    assert code == 0, err
    rows = {line.split()[0]: line for line in text.splitlines()}
    assert "a: number, b: number" in rows["add"]
    assert "[seconds: number = 1], [steps: integer = 5]" in rows["slow"]
    assert '[message: string = "it failed"]' in rows["fail"]


def test_signature_rendering_of_odd_schemas() -> None:
    from mcpsync.cli.output import _schema_signature

    schema = {
        "type": "object",
        "properties": {
            "mode": {"enum": ["fast", "slow"], "default": "fast"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "n": {"type": ["integer", "null"]},
            "x": {"anyOf": [{"type": "string"}, {"type": "number"}]},
            "free": {},
            "junk": "not a schema",
        },
        "required": ["tags", "junk"],
    }
    assert _schema_signature(schema) == (
        '[mode: "fast"|"slow" = "fast"], tags: array[string], [n: integer|null], [x: string|number], [free], junk'
    )
    assert _schema_signature({"properties": []}) == "" and _schema_signature(None) == ""


def test_auth_token_and_a_rejected_token_is_not_sent_to_auth_login(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("sekrit\n")
    with MCPTestServer() as srv:
        srv.faults.require_token = "sekrit"
        code, text, err = run("tools", "--url", srv.url, "--auth", "sekrit")
        assert code == 0 and "echo" in text, err
        code, text, err = run("call", "echo", "-a", "message=hi", "--url", srv.url, "--auth", "@%s" % token_file)
        assert (code, text.strip()) == (0, "hi"), err
        code, _, err = run("tools", "--url", srv.url, "--auth", "wrong")
        assert code == 6 and "rejected the token given with --auth" in err and "pass a valid token" in err
        assert "auth login" not in err
        code, _, err = run("tools", "--url", srv.url, "--header", "Authorization: Bearer wrong")
        assert code == 6 and "rejected the token given with --header Authorization" in err
        assert "auth login" not in err
        code, _, err = run("tools", "--url", srv.url)  # no credential at all: a login is the answer
        assert code == 6 and "mcpsync auth login" in err
    code, _, err = run("tools", "--auth", "x", *SERVER)
    assert code == 2 and "--auth" in err
    code, _, err = run("tools", "--url", "http://127.0.0.1:9/mcp", "--auth", "two words")
    assert code == 2 and "--auth expects a bearer token" in err
    code, _, err = run("tools", "--url", "http://127.0.0.1:9/mcp", "--auth", "@%s" % (tmp_path / "none"))
    assert code == 2 and "cannot read" in err


@pytest.mark.parametrize("url", ["not-a-url", "ftp://example.com/mcp", "http://", "http://host:port/mcp"])
def test_a_bad_url_is_told_in_cli_words(url: str) -> None:
    code, _, err = run("tools", "--url", url)
    assert code == 2, err
    assert "--url expects the server's http:// or https:// address" in err and repr(url) in err
    assert "list of strings" not in err


def test_raw_requests_with_method_and_params() -> None:
    code, text, err = run("call", "--method", "prompts/list", *SERVER)
    assert code == 0 and "greet" in [p["name"] for p in json.loads(text)["prompts"]], err
    code, text, err = run("call", "--method", "tools/list", "--params", "{}", *SERVER)
    assert code == 0 and "echo" in [t["name"] for t in json.loads(text)["tools"]], err
    params = '{"uri": "example://hello"}'
    code, text, err = run("--json", "call", "--method", "resources/read", "--params", params, *SERVER)
    assert code == 0 and json.loads(text)["contents"][0]["uri"] == "example://hello", err
    code, _, err = run("call", "--method", "no/such", *SERVER)
    assert code == 4 and "server error (no/such)" in err
    for argv, words in (
        (["call", "echo", "--method", "ping"], "not both"),
        (["call", "echo", "--params", "{}"], "--params goes with --method"),
        (["call"], "call needs the name of a tool"),
        (["call", "--method", "ping", "--params", "[1]"], "must be a JSON object"),
    ):
        code, _, err = run(*argv, *SERVER)
        assert code == 2 and words in err, (argv, err)


def test_raw_request_to_a_configured_server(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    servers = {name: {"command": EXAMPLE[0], "args": EXAMPLE[1:]} for name in ("a", "b")}
    path.write_text(json.dumps({"mcpServers": servers}))
    code, _, err = run("--config", str(path), "call", "--method", "tools/list")
    assert code == 2 and "--server NAME (a, b)" in err
    code, text, err = run("--config", str(path), "--server", "b", "call", "--method", "tools/list")
    assert code == 0 and "echo" in [t["name"] for t in json.loads(text)["tools"]], err


# ---------------------------------------------------------------------------- shell completion


def complete(script: str, line: List[str], shell: str = "bash") -> List[str]:
    """What the generated script offers for the last word of ``line``, through a real bash."""
    words = " ".join("'%s'" % w for w in line)
    program = script + '\nCOMP_WORDS=(%s); COMP_CWORD=%d; _mcpsync; printf "%%s\\n" "${COMPREPLY[@]}"\n' % (
        words,
        len(line) - 1,
    )
    proc = subprocess.run([shell, "-c", program], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return [w for w in proc.stdout.splitlines() if w]


def script(shell: str) -> str:
    code, text, err = run("completion", shell)
    assert code == 0, err
    return text


def test_bash_completion_of_commands_options_and_values(tmp_path: Path) -> None:
    bash = script("bash")
    assert "complete -o default -F _mcpsync mcpsync" in bash
    assert set(complete(bash, ["mcpsync", "c"])) == {"call", "completion"}
    assert "--server" in complete(bash, ["mcpsync", "--config", "x.json", "--s"])
    assert complete(bash, ["mcpsync", "--config", "tools", "c"]) == ["call", "completion"]  # tools is a value here
    assert set(complete(bash, ["mcpsync", "call", "--m"])) == {"--method"}
    assert complete(bash, ["mcpsync", "tools", "--transport", "s"]) == ["sse"]
    assert set(complete(bash, ["mcpsync", "auth", "lo"])) == {"login", "logout"}
    assert complete(bash, ["mcpsync", "completion", "z"]) == ["zsh"]
    (tmp_path / "servers.json").write_text("{}")
    assert complete(bash, ["mcpsync", "--config", str(tmp_path / "serv")]) == [str(tmp_path / "servers.json")]
    assert "python3" in complete(bash, ["mcpsync", "tools", "--", "python3"])  # the server's command


def test_zsh_completion_script() -> None:
    zsh_script = script("zsh")
    assert "bashcompinit" in zsh_script and "complete -o default -F _mcpsync mcpsync" in zsh_script
    if shutil.which("zsh") is None:  # the function itself is the bash one, exercised above
        proc = subprocess.run(["bash", "-n", "-c", zsh_script.split("\n", 3)[3]], capture_output=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        return
    got = complete(zsh_script, ["mcpsync", "pro"], shell="zsh")
    assert set(got) == {"prompt", "prompts"}


def test_completion_is_a_subcommand_of_the_installed_script() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mcpsync", "completion", "fish"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2 and "invalid choice" in proc.stderr
