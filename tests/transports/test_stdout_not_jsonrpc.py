"""A stdio server that writes to stdout what is not JSON-RPC: the open fails fast, naming the lines.

Every server here is a real subprocess. A server that prints and hangs fails with StdoutNotJSONRPC after
``stdout_grace`` (never the connect timeout); one that prints and exits fails with ServerExited naming the
lines; a server that prints a banner and then answers keeps working (its junk logged and skipped).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mcpsync
from mcpsync.errors import ConnectTimeout, ServerExited, StdoutNotJSONRPC

from tests.conftest import fuzz_examples, misbehaving_cmd, server_cmd, wait_for
from mcpsync.client import StdioOptions

ERAS = ["legacy", "modern", "auto"]


def _hang(tmp_path: Path, *lines: str) -> List[str]:
    """A server that prints ``lines`` to stdout, writes its pid to a file, and sleeps (never answers)."""
    pidfile = tmp_path / "pid"
    code = (
        "import os, sys, time\n"
        "open(%r, 'w').write(str(os.getpid()))\n"
        "for line in %r: print(line)\n"
        "time.sleep(120)\n" % (str(pidfile), list(lines))
    )
    return [sys.executable, "-c", code]


def _gone(tmp_path: Path) -> bool:
    pid = int((tmp_path / "pid").read_text())
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:  # a zombie not yet reaped by anyone still answers kill(0): look at its state
        return Path("/proc/%d/stat" % pid).read_text().split()[2] == "Z"
    except OSError:
        return True


@pytest.mark.parametrize("era", ERAS)
def test_print_and_hang_fails_with_the_line_not_the_connect_timeout(tmp_path: Path, era: str) -> None:
    client = mcpsync.Client(
        _hang(tmp_path, "Server started"), protocol=era, connect_timeout=120, stdio=StdioOptions(stdout_grace=0.3)
    )
    with pytest.raises(StdoutNotJSONRPC) as info:
        client.open()
    exc = info.value
    assert exc.stdout_lines == ["Server started"] and exc.line_count == 1
    assert "Server started" in str(exc) and "not JSON-RPC" in str(exc) and "stdout_grace=0.3s" in str(exc)
    assert not isinstance(exc, ConnectTimeout)
    assert isinstance(exc, mcpsync.errors.ConnectError)
    assert wait_for(lambda: _gone(tmp_path))  # the open's failure stopped the server


@pytest.mark.parametrize("era", ERAS)
def test_print_and_exit_names_the_lines(era: str) -> None:
    cmd = [sys.executable, "-c", "print('Server started'); print('listening on stdio')"]
    with pytest.raises(ServerExited) as info:
        mcpsync.Client(cmd, protocol=era, connect_timeout=120).open()
    exc = info.value
    assert exc.exit_code == 0
    assert exc.stdout_lines == ["Server started", "listening on stdio"]
    assert "Server started" in exc.message and "not JSON-RPC" in exc.message


def test_print_and_exit_with_an_error_names_stdout_and_stderr() -> None:
    cmd = [sys.executable, "-c", "import sys; print('config loaded'); sys.exit('no API key')"]
    with pytest.raises(ServerExited) as info:
        mcpsync.Client(cmd, connect_timeout=120).open()
    assert info.value.exit_code == 1
    assert info.value.stdout_lines == ["config loaded"] and "no API key" in info.value.stderr_tail
    assert "config loaded" in info.value.message and "no API key" in info.value.message


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX shell")
def test_a_wrapper_that_exits_while_its_child_holds_stdout_fails_after_the_grace(tmp_path: Path) -> None:
    """The server process exits but a background child keeps stdout open (no EOF): the grace still ends it."""
    pidfile = tmp_path / "pid"
    cmd = ["sh", "-c", "echo Server started; sleep 120 & echo $! > %s; exit 0" % pidfile]
    with pytest.raises(StdoutNotJSONRPC) as info:
        mcpsync.Client(cmd, connect_timeout=120, stdio=StdioOptions(stdout_grace=0.3)).open()
    assert info.value.stdout_lines == ["Server started"]
    assert wait_for(lambda: _gone(tmp_path))  # the child went with the server's process group


def test_a_json_log_line_is_not_jsonrpc(tmp_path: Path) -> None:
    client = mcpsync.Client(
        _hang(tmp_path, '{"level": "info", "msg": "up"}'), connect_timeout=120, stdio=StdioOptions(stdout_grace=0.3)
    )
    with pytest.raises(StdoutNotJSONRPC) as info:
        client.open()
    assert info.value.stdout_lines == ['{"level": "info", "msg": "up"}']


def test_many_lines_keep_the_first_five_and_count_all(tmp_path: Path) -> None:
    lines = ["log line %d" % i for i in range(12)]
    client = mcpsync.Client(_hang(tmp_path, *lines), connect_timeout=120, stdio=StdioOptions(stdout_grace=0.5))
    with pytest.raises(StdoutNotJSONRPC) as info:
        client.open()
    assert info.value.stdout_lines == lines[:5]
    assert info.value.line_count == 12


def test_stdout_grace_none_waits_for_the_connect_timeout(tmp_path: Path) -> None:
    client = mcpsync.Client(
        _hang(tmp_path, "Server started"), connect_timeout=1.0, stdio=StdioOptions(stdout_grace=None)
    )
    with pytest.raises(ConnectTimeout):
        client.open()


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_banner_before_working_frames_is_skipped(era: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    with mcpsync.connect(misbehaving_cmd("--era", era, "--banner", "--garbage"), protocol=era) as c:
        assert c.era == era
        for i in range(3):
            assert c.call_tool("echo", {"message": str(i)}).text == str(i)
    assert any("non-JSON" in r.getMessage() for r in caplog.records)


def test_a_bad_stdout_grace_is_refused() -> None:
    with pytest.raises(mcpsync.ConfigError):
        mcpsync.Client([sys.executable, "-c", "pass"], stdio=StdioOptions(stdout_grace=-1)).open()


def test_the_cli_names_the_line_without_verbose(tmp_path: Path) -> None:
    cmd = _hang(tmp_path, "Server started")
    proc = subprocess.run(
        [sys.executable, "-m", "mcpsync", "tools", "--connect-timeout", "120", "--"] + cmd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 3, proc.stderr  # a connection failure, not a timeout (5)
    assert "Server started" in proc.stderr and "not JSON-RPC" in proc.stderr
    assert wait_for(lambda: _gone(tmp_path))


def test_the_cli_reports_a_server_that_prints_and_exits() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mcpsync", "tools", "--", sys.executable, "-c", "print('Server started')"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 3
    assert "exit code 0" in proc.stderr and "Server started" in proc.stderr


def test_a_python_server_is_named_after_its_script_or_module(tmp_path: Path) -> None:
    script = tmp_path / "weather_server.py"
    script.write_text("print('hello')\n")
    with pytest.raises(ServerExited) as info:
        mcpsync.Client([sys.executable, str(script)], connect_timeout=120).open()
    assert info.value.server == "weather_server"
    with pytest.raises(ServerExited) as info:
        mcpsync.Client([sys.executable, "-m", "json.tool", "--nosuchflag"], connect_timeout=120).open()
    assert info.value.server == "json.tool"
    with mcpsync.connect(server_cmd("--era", "legacy")) as c:
        assert c.name != "python" and c.name != os.path.basename(sys.executable)


_LINE = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"), min_size=1, max_size=300
).filter(lambda t: t.strip()[:1] not in ("{", "["))


@settings(max_examples=fuzz_examples(15, 30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(_LINE, min_size=1, max_size=8))
def test_any_junk_then_exit_names_the_first_lines(lines: List[str]) -> None:
    """Whatever a server prints before exiting, the error quotes the first five non-blank lines (stripped, cut
    to 200 characters): a real subprocess per example."""
    code = "import sys\nfor line in %r: sys.stdout.buffer.write(line.encode('utf-8') + b'\\n')\n" % (lines,)
    with pytest.raises(ServerExited) as info:
        mcpsync.Client([sys.executable, "-c", code], protocol="legacy", connect_timeout=120).open()
    expected = []
    for line in lines:
        text = line.encode("utf-8").strip().decode("utf-8").strip()
        if text:
            expected.append(text if len(text) <= 200 else text[:200] + "...(%d chars)" % len(text))
    assert info.value.stdout_lines == expected[:5]
    assert info.value.exit_code == 0


def test_a_json_array_that_is_not_a_batch_is_not_an_answer(tmp_path: Path) -> None:
    client = mcpsync.Client(_hang(tmp_path, "[1, 2]", "[]"), connect_timeout=120, stdio=StdioOptions(stdout_grace=0.3))
    with pytest.raises(StdoutNotJSONRPC) as info:
        client.open()
    assert info.value.stdout_lines == ["[1, 2]", "[]"]
