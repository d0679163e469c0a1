"""``python -m mcpsync.example_server --http PORT`` as a real subprocess, driven by ``mcpsync.connect(url)``.

Port 0 picks a free port; the URL is announced on stderr (stdout stays empty). Both eras are served
(``--era auto``) or only the one asked for; SIGTERM (and SIGINT, Ctrl-C) stop it cleanly, and no
process is left. Also: a test-only flag given to the package names the test helper in its error.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
from typing import Iterator, List, Tuple

import pytest

import mcpsync

from tests.conftest import EXAMPLE, WAIT_BOUND
from mcpsync.client import StdioOptions

_URL = re.compile(rb"serving Streamable HTTP at (http://\S+)")


def _start(*flags: str) -> Tuple["subprocess.Popen[bytes]", str]:
    cmd = EXAMPLE + ["--http", "0"] + list(flags)
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    line = proc.stderr.readline()  # blocks until the server announces itself (or dies: b"")
    found = _URL.search(line)
    if found is None:
        proc.kill()
        proc.wait(WAIT_BOUND)
        raise AssertionError("no URL announced: %r" % line)
    return proc, found.group(1).decode()


def _stop(proc: "subprocess.Popen[bytes]", sig: int = signal.SIGTERM) -> Tuple[int, bytes, bytes]:
    proc.send_signal(sig)
    try:
        out, err = proc.communicate(timeout=WAIT_BOUND)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    return proc.returncode, out, err


@pytest.fixture
def served() -> Iterator[List["subprocess.Popen[bytes]"]]:
    procs: List["subprocess.Popen[bytes]"] = []
    yield procs
    for proc in procs:  # a failed test still leaves no process behind
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def test_auto_serves_both_eras_and_stops_on_sigterm(served: List["subprocess.Popen[bytes]"]) -> None:
    proc, url = _start()
    served.append(proc)
    assert re.match(r"http://127\.0\.0\.1:\d+/mcp$", url) and not url.endswith(":0/mcp")
    for protocol, era, version in (("legacy", "legacy", "2025-11-25"), ("modern", "modern", "2026-07-28")):
        with mcpsync.connect(url, protocol=protocol) as c:
            assert c.era == era and c.protocol_version == version
            names = {t.name for t in c.list_tools()}
            assert {"echo", "add", "slow"} <= names
            assert c.call_tool("add", {"a": 2, "b": 3}).structured_content == {"sum": 5}
            assert c.call_tool("echo", {"message": "over http"}).text == "over http"
            assert {p.name for p in c.list_prompts()} >= {"greet"}
            assert any(str(r.uri).startswith("example://") for r in c.list_resources())
    with mcpsync.connect(url) as c:  # protocol="auto": the newest era the server speaks
        assert c.era == "modern"
    code, out, err = _stop(proc)
    assert code == 0
    assert out == b""  # the announcement and any log go to stderr, never stdout
    assert proc.poll() is not None


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_era_flag_is_honoured(served: List["subprocess.Popen[bytes]"], era: str) -> None:
    proc, url = _start("--era", era, "--page-size", "2")
    served.append(proc)
    with mcpsync.connect(url) as c:  # auto: settles on the one era served
        assert c.era == era
        assert len(c.list_tools()) > 2  # pages of 2, all fetched
        assert c.call_tool("echo", {"message": era}).text == era
    assert _stop(proc)[0] == 0


@pytest.mark.skipif(os.name != "posix", reason="SIGINT to a child is POSIX")
def test_ctrl_c_stops_it_cleanly(served: List["subprocess.Popen[bytes]"]) -> None:
    proc, url = _start("--era", "legacy")
    served.append(proc)
    c = mcpsync.connect(url)
    try:
        assert c.call_tool("echo", {"message": "x"}).text == "x"
        code, out, err = _stop(proc, signal.SIGINT)
    finally:
        c.close()
    assert code == 0 and out == b""
    assert b"Traceback" not in err


def test_test_only_flag_names_the_test_helper() -> None:
    run = subprocess.run(EXAMPLE + ["--garbage"], stdin=subprocess.DEVNULL, capture_output=True, timeout=WAIT_BOUND)
    assert run.returncode == 2
    assert b"--garbage is a test-only misbehaviour" in run.stderr
    assert b"tests/peers/misbehaving_server.py" in run.stderr


def test_stdio_only_options_are_refused_with_http() -> None:
    for flags in (["--ping"], ["--framing", "content-length"]):
        run = subprocess.run(EXAMPLE + ["--http", "0"] + flags, capture_output=True, timeout=WAIT_BOUND)
        assert run.returncode == 2 and b"apply to stdio only" in run.stderr and run.stdout == b""


def test_misbehaving_helper_runs_from_any_directory(tmp_path: "os.PathLike[str]") -> None:
    from tests.conftest import misbehaving_cmd

    with mcpsync.connect(misbehaving_cmd("--junk-ids"), stdio=StdioOptions(cwd=str(tmp_path))) as c:
        assert c.call_tool("echo", {"message": "junk around me"}).text == "junk around me"


def test_the_helper_takes_every_flag_of_the_package_too() -> None:
    from tests.conftest import misbehaving_cmd

    run = subprocess.run(
        misbehaving_cmd("--era", "modern", "--page-size", "2", "--apps", "--ttl-ms", "5", "--help"),
        capture_output=True,
        timeout=WAIT_BOUND,
    )
    assert run.returncode == 0 and b"--garbage" in run.stdout and b"--page-size" in run.stdout


def test_sigterm_with_streams_open_and_a_call_in_flight(served: List["subprocess.Popen[bytes]"]) -> None:
    """A legacy client's GET stream and a modern call's response stream are open: SIGTERM still ends it at once."""
    import threading

    proc, url = _start()
    served.append(proc)
    legacy = mcpsync.connect(url, protocol="legacy")
    modern = mcpsync.connect(url, protocol="modern")
    started = threading.Event()
    outcome: List[BaseException] = []

    def call() -> None:
        try:
            modern.call_tool("slow", {"seconds": 600, "steps": 600}, progress=lambda event: started.set())
        except BaseException as exc:  # noqa: BLE001 - the call must end with an error, kept for the assertion
            outcome.append(exc)

    caller = threading.Thread(target=call, name="test-slow-call", daemon=True)
    caller.start()
    try:
        assert started.wait(WAIT_BOUND)  # the server is streaming progress for the call
        code, out, _ = _stop(proc)
        assert code == 0 and out == b""
        caller.join(WAIT_BOUND)
        assert not caller.is_alive()
        assert outcome and isinstance(outcome[0], mcpsync.MCPError)
    finally:
        modern.close()
        legacy.close()
