"""The ``mcpsync`` command line, run as a real subprocess against the bundled example server."""

from __future__ import annotations

import io
import json
import os
import pty
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from mcpsync.cli import app as cli
from mcpsync.cli import context
from tests.conftest import EXAMPLE, wait_for

SERVER = ["--"] + EXAMPLE

#: A stdio proxy in front of a server: logs every line the client sends, then forwards it.
SPY = textwrap.dedent(
    """
    import subprocess, sys, threading
    log_path, cmd = sys.argv[1], sys.argv[2:]
    child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    with open(log_path + ".pid", "w") as f:
        f.write(str(child.pid))
    def pump():
        for line in child.stdout:
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()
    t = threading.Thread(target=pump, daemon=True)
    t.start()
    with open(log_path, "a") as log:
        for line in sys.stdin.buffer:
            log.write(line.decode("utf-8", "replace"))
            log.flush()
            child.stdin.write(line)
            child.stdin.flush()
    child.stdin.close()
    t.join(5)
    sys.exit(child.wait())
    """
)


def _env(tmp: Optional[Path] = None) -> Dict[str, str]:
    env = dict(os.environ)
    env.pop("MCPSYNC_CONFIG", None)
    env["PYTHONUNBUFFERED"] = "1"
    if tmp is not None:  # no configuration file can be found from here
        env["HOME"] = str(tmp)
        env["XDG_CONFIG_HOME"] = str(tmp / ".config")
    return env


def run(
    *args: str, cwd: Optional[Path] = None, stdin: Optional[str] = None, timeout: float = 30
) -> subprocess.CompletedProcess:
    """Run ``python -m mcpsync ARGS`` and capture its output."""
    return subprocess.run(
        [sys.executable, "-m", "mcpsync"] + list(args),
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=str(cwd) if cwd else None,
        env=_env(cwd),
    )


def run_json(*args: str) -> Any:
    proc = run("--json", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _live_pid(pid: int) -> bool:
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


# ---------------------------------------------------------------------------- the batch

#: Invocations without special needs, all run concurrently once (keeps the module fast).
BATCH: Dict[str, List[str]] = {
    "demo": ["demo"],
    "demo_json_legacy": ["--json", "--protocol", "legacy", "demo"],
    "demo_with_server": ["demo"] + SERVER,
    "tools": ["tools"] + SERVER,
    "tools_json": ["--json", "tools"] + SERVER,
    "info_json_legacy": ["info", "--json", "--protocol", "legacy"] + SERVER,
    "info": ["info"] + SERVER,
    "echo": ["call", "echo", "--args", '{"message": "hi there"}'] + SERVER,
    "add": ["call", "add", "-a", "a=2", "-a", "b=3"] + SERVER,
    "add_json": ["--json", "call", "add", "--args", '{"a": 1, "b": 2}'] + SERVER,
    "prompts": ["prompts"] + SERVER,
    "prompts_json": ["--json", "prompts"] + SERVER,
    "prompt": ["prompt", "greet", "--args", '{"name": "Bob", "style": "formal"}'] + SERVER,
    "prompt_json": ["--json", "prompt", "greet", "-a", "name=Eve"] + SERVER,
    "resources": ["resources"] + SERVER,
    "resources_json": ["--json", "resources"] + SERVER,
    "read": ["read", "example://hello"] + SERVER,
    "read_json": ["--json", "read", "example://hello"] + SERVER,
    "read_blob": ["read", "example://blob.bin"] + SERVER,
    "fail": ["call", "fail", "--args", '{"message": "nope"}'] + SERVER,
    "fail_json": ["--json", "call", "fail"] + SERVER,
    "unknown_tool": ["call", "no_such_tool"] + SERVER,
    "unknown_tool_json": ["--json", "call", "no_such_tool"] + SERVER,
    "unknown_prompt": ["prompt", "no_such_prompt"] + SERVER,
    "unknown_resource": ["read", "example://missing"] + SERVER,
    "bad_json": ["call", "echo", "--args", "{bad"] + SERVER,
    "json_not_object": ["call", "echo", "--args", "[1, 2]"] + SERVER,
    "bad_pair": ["call", "echo", "--arg", "novalue"] + SERVER,
    "no_tool_name": ["call"] + SERVER,
    "url_and_command": ["tools", "--url", "http://127.0.0.1:9/mcp"] + SERVER,
    "missing_executable": ["tools", "--", "/nonexistent/mcp-server"],
    "crash": ["call", "crash", "--args", '{"code": 7}'] + SERVER,
    "exits_at_once": ["tools", "--", sys.executable, "-c", "import sys; sys.exit(5)"],
    "timeout": ["call", "slow", "--args", '{"seconds": 30, "steps": 1}', "--timeout", "0.5"] + SERVER,
    "log_verbose": ["-v", "call", "log", "--args", '{"level": "warning", "message": "look at me"}'] + SERVER,
    "log_quiet": ["call", "log", "--args", '{"level": "warning", "message": "look at me"}'] + SERVER,
    "slow_verbose": ["-v", "call", "slow", "--args", '{"seconds": 0.2, "steps": 3}'] + SERVER,
    "slow_quiet": ["call", "slow", "--args", '{"seconds": 0.1, "steps": 2}'] + SERVER,
}


@pytest.fixture(scope="module")
def batch() -> Dict[str, subprocess.CompletedProcess]:
    """Every BATCH invocation's completed process, run 8 at a time."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(8) as pool:
        futures = {name: pool.submit(run, *args) for name, args in BATCH.items()}
        return {name: f.result() for name, f in futures.items()}


def ok(batch: Dict[str, subprocess.CompletedProcess], name: str) -> subprocess.CompletedProcess:
    proc = batch[name]
    assert proc.returncode == 0, (name, proc.stderr)
    return proc


# ---------------------------------------------------------------------------- demo


def test_demo_shows_a_readable_session(batch: Any) -> None:
    proc = ok(batch, "demo")
    text = proc.stdout
    assert "mcpsync example server" in text
    assert "over stdio" in text and "era)" in text
    for expected in (
        "tools/list",
        "echo",
        "Hello from mcpsync!",
        "42",
        "server log [info]",
        "prompts/get greet",
        "Please greet Ada",
        "resources/read example://hello",
        "Hello, world!",
        "progress: 5/5",
        "done",
    ):
        assert expected in text, expected
    assert "Traceback" not in proc.stderr


def test_demo_json_and_legacy_protocol(batch: Any) -> None:
    report = json.loads(ok(batch, "demo_json_legacy").stdout)
    assert report["server"]["era"] == "legacy"
    assert "echo" in report["tools"]
    slow = [s for s in report["steps"] if s.get("call") == "slow"][0]
    assert len(slow["progress"]) == 5 and slow["result"]["content"][0]["text"] == "done"


def test_demo_refuses_a_server(batch: Any) -> None:
    proc = batch["demo_with_server"]
    assert proc.returncode == 2 and "demo runs the bundled example server" in proc.stderr


# ---------------------------------------------------------------------------- listing and calling


def test_tools_readable_and_json(batch: Any) -> None:
    lines = ok(batch, "tools").stdout.splitlines()
    echo = [ln for ln in lines if ln.startswith("echo ")][0]
    add = [ln for ln in lines if ln.startswith("add ")][0]
    assert "Returns the message unchanged." in echo
    assert echo.index("Returns") == add.index("Adds")  # aligned descriptions
    data = json.loads(ok(batch, "tools_json").stdout)
    names = [t["name"] for t in data["tools"]]
    assert "slow" in names and data["tools"][0]["inputSchema"]["type"] == "object"


def test_options_after_the_command_and_info(batch: Any) -> None:
    data = json.loads(ok(batch, "info_json_legacy").stdout)
    assert data["era"] == "legacy" and data["serverInfo"]["name"] == "mcpsync-example"
    proc = ok(batch, "info")
    assert "Protocol" in proc.stdout and "over stdio" in proc.stdout


def test_call_readable_and_json(batch: Any) -> None:
    assert ok(batch, "echo").stdout.strip() == "hi there"
    proc = ok(batch, "add")
    assert proc.stdout.splitlines()[0] == "5" and '"sum": 5' in proc.stdout
    assert json.loads(ok(batch, "add_json").stdout)["structuredContent"] == {"sum": 3}


def test_call_args_from_stdin_and_file(tmp_path: Path) -> None:
    proc = run("call", "echo", "--args", "-", *SERVER, stdin='{"message": "from stdin"}')
    assert proc.stdout.strip() == "from stdin", proc.stderr
    f = tmp_path / "args.json"
    f.write_text('{"message": "from a file"}')
    proc = run("call", "echo", "--args", "@%s" % f, *SERVER)
    assert proc.stdout.strip() == "from a file", proc.stderr


def test_prompts_and_prompt(batch: Any) -> None:
    lines = ok(batch, "prompts").stdout.splitlines()
    assert any(ln.startswith("greet") and "name, [style]" in ln for ln in lines)
    proc = ok(batch, "prompt")
    assert "[user]" in proc.stdout and "Bob" in proc.stdout
    data = json.loads(ok(batch, "prompt_json").stdout)
    assert data["messages"][0]["role"] == "user" and "Eve" in data["messages"][0]["content"]["text"]
    assert [p["name"] for p in json.loads(ok(batch, "prompts_json").stdout)["prompts"]] == ["greet", "summarize"]


def test_resources_and_read(batch: Any, tmp_path: Path) -> None:
    text = ok(batch, "resources").stdout
    assert "example://hello" in text and "Templates:" in text and "example://items/{id}" in text
    data = json.loads(ok(batch, "resources_json").stdout)
    assert "example://blob.bin" in [r["uri"] for r in data["resources"]]
    assert data["resourceTemplates"][0]["uriTemplate"] == "example://items/{id}"
    assert ok(batch, "read").stdout.strip() == "Hello, world!"
    assert json.loads(ok(batch, "read_json").stdout)["contents"][0]["text"] == "Hello, world!"
    assert "[binary application/octet-stream, 256 bytes]" in ok(batch, "read_blob").stdout
    target = tmp_path / "blob.bin"
    proc = run("read", "example://blob.bin", "-o", str(target), *SERVER)
    assert proc.returncode == 0 and target.read_bytes() == bytes(range(256))


# ---------------------------------------------------------------------------- failures and exit codes


def test_tool_error_exits_1(batch: Any) -> None:
    proc = batch["fail"]
    assert proc.returncode == 1
    assert proc.stdout.strip() == "nope" and "reported an error" in proc.stderr
    proc = batch["fail_json"]
    assert proc.returncode == 1 and json.loads(proc.stdout)["isError"] is True


def test_unknown_tool_prompt_resource_exit_4(batch: Any) -> None:
    for name in ("unknown_tool", "unknown_prompt", "unknown_resource"):
        proc = batch[name]
        assert proc.returncode == 4, (name, proc.stderr)
        assert proc.stderr.startswith("mcpsync: server error") and "Traceback" not in proc.stderr
    assert "Unknown tool: no_such_tool" in batch["unknown_tool"].stderr
    proc = batch["unknown_tool_json"]
    error = json.loads(proc.stdout)["error"]
    assert proc.returncode == 4 and error["exitCode"] == 4 and "Unknown tool" in error["message"]


@pytest.mark.parametrize("name", ["bad_json", "json_not_object", "bad_pair", "no_tool_name", "url_and_command"])
def test_bad_arguments_exit_2(batch: Any, name: str) -> None:
    proc = batch[name]
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(("mcpsync: ", "usage: mcpsync")) and "Traceback" not in proc.stderr


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    proc = run("tools", cwd=tmp_path)
    assert proc.returncode == 2 and "no server given" in proc.stderr
    assert run(cwd=tmp_path).returncode == 2
    assert run("frobnicate", cwd=tmp_path).returncode == 2
    proc = run("tools", "--config", str(tmp_path / "missing.json"))
    assert proc.returncode == 2 and "not found" in proc.stderr


def test_missing_command_and_crash_exit_3(batch: Any) -> None:
    proc = batch["missing_executable"]
    assert proc.returncode == 3 and "/nonexistent/mcp-server" in proc.stderr
    proc = batch["crash"]
    assert proc.returncode == 3
    assert "exit code 7" in proc.stderr and "crashing on request" in proc.stderr and "Traceback" not in proc.stderr
    proc = batch["exits_at_once"]
    assert proc.returncode == 3 and "Traceback" not in proc.stderr


def test_timeout_exits_5(batch: Any) -> None:
    proc = batch["timeout"]
    assert proc.returncode == 5 and "timed out" in proc.stderr


def test_env_and_cwd_reach_the_server(tmp_path: Path) -> None:
    script = tmp_path / "srv.py"
    script.write_text(
        "import os, runpy, sys\n"
        "sys.stderr.write('MARK=%s CWD=%s\\n' % (os.environ.get('MARK'), os.getcwd()))\n"
        "sys.stderr.flush()\n"
        "sys.argv = ['x']\n"
        "runpy.run_module('mcpsync.example_server', run_name='__main__')\n"
    )
    proc = run(
        "-v",
        "tools",
        "--env",
        "MARK=42",
        "--env",
        "PYTHONPATH=%s" % os.getcwd(),
        "--cwd",
        str(tmp_path),
        "--",
        sys.executable,
        "srv.py",
    )
    assert proc.returncode == 0, proc.stderr
    assert "server stderr: MARK=42 CWD=%s" % tmp_path in proc.stderr


# ---------------------------------------------------------------------------- -v, progress, Ctrl-C


def test_verbose_shows_server_logs(batch: Any) -> None:
    proc = ok(batch, "log_verbose")
    assert "server log [warning]" in proc.stderr and "look at me" in proc.stderr
    assert "look at me" not in ok(batch, "log_quiet").stderr


def test_verbose_progress_lines_when_stderr_is_not_a_terminal(batch: Any) -> None:
    proc = ok(batch, "slow_verbose")
    assert proc.stdout.strip() == "done" and "progress: 3/3" in proc.stderr
    assert "progress" not in ok(batch, "slow_quiet").stderr


def test_progress_bar_on_a_terminal() -> None:
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "mcpsync", "call", "slow", "--args", '{"seconds": 0.3, "steps": 3}'] + SERVER,
            stdout=subprocess.PIPE,
            stderr=slave,
            stdin=subprocess.DEVNULL,
            env=_env(),
        )
    finally:
        os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO: the terminal's other end is closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    stdout = proc.stdout.read() if proc.stdout else b""
    if proc.stdout:
        proc.stdout.close()
    assert proc.wait(10) == 0
    assert stdout.strip() == b"done"
    screen = b"".join(chunks).decode("utf-8", "replace")
    assert "3/3" in screen and "#" in screen and "\r" in screen and "step 3 of 3" in screen


def test_ctrl_c_cancels_the_call_and_exits_130(tmp_path: Path) -> None:
    spy, log = tmp_path / "spy.py", tmp_path / "sent.jsonl"
    spy.write_text(SPY)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mcpsync",
            "call",
            "slow",
            "--args",
            '{"seconds": 60, "steps": 60}',
            "--",
            sys.executable,
            str(spy),
            str(log),
        ]
        + EXAMPLE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=_env(),
    )
    try:
        assert wait_for(lambda: log.exists() and '"tools/call"' in log.read_text(), 20), "the call never started"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    sent = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    call = [m for m in sent if m.get("method") == "tools/call"][0]
    cancels = [m for m in sent if m.get("method") == "notifications/cancelled"]
    assert cancels and cancels[0]["params"]["requestId"] == call["id"]
    server_pid = int((tmp_path / "sent.jsonl.pid").read_text())
    assert wait_for(lambda: not _live_pid(server_pid), 10), "the server outlived the CLI"


# ---------------------------------------------------------------------------- in-process helpers


def test_main_in_process_help_and_version() -> None:
    out, err = io.StringIO(), io.StringIO()
    assert cli.main([], stdout=out, stderr=err) == 2 and "usage: mcpsync" in err.getvalue()
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["--version"])


def test_main_in_process_call() -> None:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["call", "echo", "-a", "message=in-process"] + SERVER, stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    assert out.getvalue().strip() == "in-process"


def test_split_and_parse_helpers() -> None:
    assert cli.split_argv(["tools", "--", "a", "--", "b"]) == (["tools"], ["a", "--", "b"])
    assert cli.split_argv(["tools"]) == (["tools"], None)
    assert cli.parse_json_args('{"a": 1}', ["b=2", "c=x", "a=[1]"], io.StringIO()) == {"a": [1], "b": 2, "c": "x"}
    assert context.server_name(["npx", "-y", "@modelcontextprotocol/server-everything"]) == "server-everything"
    assert context.server_name(["/usr/bin/my-server", "--flag"]) == "my-server"
    assert context.server_name(["uvx", "mcp-server-fetch"]) == "mcp-server-fetch"
    assert set(cli.EXIT_CODES) == {0, 1, 2, 3, 4, 5, 6, 70, 130}


# ---------------------------------------------------------------------------- remote servers (--url)


def test_url_with_headers_transport_and_auth_failure() -> None:
    from tests.peers.httpserver import MCPTestServer

    with MCPTestServer() as srv:
        srv.faults.require_token = "sekrit"
        auth = ["--header", "Authorization: Bearer sekrit"]
        proc = run("tools", "--url", srv.url, *auth)
        assert proc.returncode == 0, proc.stderr
        assert any(line.startswith("echo ") for line in proc.stdout.splitlines())
        proc = run("call", "echo", "-a", "message=over sse", "--url", srv.sse_url(), "--transport", "sse", *auth)
        assert proc.returncode == 0 and proc.stdout.strip() == "over sse", proc.stderr
        proc = run("tools", "--url", srv.url)
        assert proc.returncode == 6
        assert "authentication required" in proc.stderr
        assert "mcpsync auth login 127.0.0.1 --url %s" % srv.url in proc.stderr
        proc = run("tools", "--url", srv.url, "--header", "no-colon-here")
        assert proc.returncode == 2 and "--header" in proc.stderr


# ---------------------------------------------------------------------------- extension subcommands


def test_auth_subcommand_is_wired(tmp_path: Path) -> None:
    store = str(tmp_path / "auth.json")
    proc = run("--json", "auth", "status", "srv", "--url", "http://127.0.0.1:9/mcp", "--auth-file", store, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "not_authenticated"
    proc = run("auth", "logout", "srv", "--auth-file", store, cwd=tmp_path)
    assert proc.returncode == 2 and "no stored credentials for srv" in proc.stderr  # a typo is not a logout
    assert run("auth", "login", cwd=tmp_path).returncode == 2  # NAME missing
