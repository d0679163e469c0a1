"""The stop stages and the Windows Job Object path, run here with Windows semantics imposed.

``stop_tree`` is the one stop sequence of every platform (wait, interrupt the tree, wait, kill the tree);
its Windows callbacks are the server's Job Object (``CTRL_BREAK_EVENT``, ``TerminateJobObject``). The Win32
calls themselves cannot run here: they are replaced by recorders that act on the real server process, so
the order (created suspended, assigned, resumed; interrupted, job ended, handle closed) is checked against a
real subprocess.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from typing import Any, List, Optional

import pytest

import mcpsync
from mcpsync.transports import lifeline, stdio
from mcpsync.transports.stdio import stop_tree, windows_creationflags

from tests.conftest import misbehaving_cmd, server_cmd
from mcpsync.client import StdioOptions


class FakeProc:
    """A Popen stand-in whose exit is decided by the test."""

    pid = 4242

    def __init__(self, exits_after: Optional[str]) -> None:
        self.exits_after = exits_after  # "eof", "interrupt", "kill" or None (never)
        self.events: List[str] = []
        self.returncode: Optional[int] = None

    def exit_on(self, event: str) -> None:
        self.events.append(event)
        if event == self.exits_after or (event == "kill" and self.exits_after is not None):
            self.returncode = 0

    def wait(self, timeout: Optional[float] = None) -> int:
        if self.returncode is None and self.exits_after == "eof":
            self.returncode = 0
        if self.returncode is None:
            raise subprocess.TimeoutExpired("server", timeout or 0)
        return self.returncode

    def poll(self) -> Optional[int]:
        return self.returncode


def _stop(proc: FakeProc, tree_alive: List[bool], interrupt_ok: bool = True, grace: float = 0.05) -> List[str]:
    calls: List[str] = []

    def alive() -> bool:
        calls.append("alive")
        return tree_alive[0]

    def interrupt() -> bool:
        calls.append("interrupt")
        proc.exit_on("interrupt")
        if proc.returncode is not None:
            tree_alive[0] = False
        return interrupt_ok

    def kill() -> None:
        calls.append("kill")
        proc.exit_on("kill")
        tree_alive[0] = False

    stop_tree(proc, grace, alive=alive, interrupt=interrupt, kill=kill)  # type: ignore[arg-type]
    return calls


def test_a_server_that_exits_on_eof_with_nothing_left_is_never_signalled() -> None:
    assert _stop(FakeProc("eof"), [False]) == ["alive"]


def test_a_grandchild_left_after_the_direct_child_exited_is_interrupted_then_its_tree_ended() -> None:
    # the direct child exited on EOF, its tree (the job, the group) still has a process
    calls = _stop(FakeProc("eof"), [True])
    assert calls[:2] == ["alive", "interrupt"] and calls[-1] == "kill"


def test_a_server_that_honours_the_interrupt_is_not_waited_for_any_longer() -> None:
    calls = _stop(FakeProc("interrupt"), [True], grace=30)
    assert calls == ["interrupt", "alive", "kill"]  # kill() ends stragglers: nothing is left by then


def test_an_interrupt_that_cannot_be_sent_goes_straight_to_the_kill() -> None:
    calls = _stop(FakeProc("kill"), [True], interrupt_ok=False, grace=30)
    assert calls == ["interrupt", "kill"]  # no wait for a signal nobody received


def test_a_server_that_ignores_the_interrupt_is_killed_after_the_grace() -> None:
    proc = FakeProc("kill")
    calls = _stop(proc, [True])
    assert calls[0] == "interrupt" and calls[-1] == "kill" and proc.returncode == 0


def test_windows_creation_flags() -> None:
    new_group, no_window = 0x200, 0x08000000
    assert windows_creationflags(host_console=True) == new_group  # shares the console: CTRL_BREAK reaches it
    assert windows_creationflags(host_console=False) == new_group | no_window  # a GUI host: no window pops up


class FakeWin32:
    """Recorders for the Win32 calls, acting on the real (POSIX) server process."""

    def __init__(
        self, monkeypatch: Any, *, console: bool, resume_fails: bool = False, assign_fails: bool = False
    ) -> None:
        self.log: List[str] = []
        self.console = console
        self.resume_fails = resume_fails
        self.assign_fails = assign_fails  # the system refuses the assignment: the job holds no process
        self.procs: List[Any] = []
        self.job_closed = False
        real_popen = subprocess.Popen

        def popen(argv: Any, **kwargs: Any) -> Any:
            flags = kwargs.pop("creationflags", 0)
            self.log.append("created flags=%#x" % flags)
            kwargs["start_new_session"] = True
            proc = real_popen(argv, **kwargs)
            self.procs.append(proc)
            return proc

        monkeypatch.setattr(stdio, "WINDOWS", True)
        monkeypatch.setattr(lifeline, "WINDOWS", True)
        monkeypatch.setattr(lifeline, "POSIX", False)
        monkeypatch.setattr(lifeline, "enabled", lambda: True)
        monkeypatch.setattr(lifeline, "host_has_console", lambda: self.console)
        monkeypatch.setattr(lifeline, "new_job", lambda: "JOB")
        monkeypatch.setattr(lifeline, "assign_and_resume", self.assign_and_resume)
        monkeypatch.setattr(lifeline, "job_alive", self.job_alive)
        monkeypatch.setattr(lifeline, "terminate_job", self.terminate_job)
        monkeypatch.setattr(lifeline, "close_job", self.close_job)
        monkeypatch.setattr(stdio, "_ctrl_break", self.ctrl_break)
        monkeypatch.setattr(stdio, "_kill_tree_windows", self.taskkill)
        monkeypatch.setattr(stdio.subprocess, "Popen", popen)
        monkeypatch.setattr(stdio, "resolve_command", lambda command, env: command)  # tested on its own

    def assign_and_resume(self, job: Any, proc: Any) -> bool:
        if self.assign_fails:
            self.log.append("refused+resumed %s" % job)
            return False
        self.log.append("assigned+resumed %s" % job)
        if self.resume_fails:
            raise OSError("ResumeThread failed")
        return True

    def job_alive(self, job: Any) -> bool:  # the job holds the server's whole group (its grandchildren too)
        return not self.assign_fails and any(_group_alive(p.pid) for p in self.procs)

    def terminate_job(self, job: Any) -> None:
        self.log.append("terminated %s" % job)
        if self.assign_fails:
            return  # TerminateJobObject on a job that holds nothing ends nothing
        for p in self.procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass

    def close_job(self, job: Any) -> None:
        self.log.append("closed %s" % job)
        self.job_closed = True

    def taskkill(self, proc: Any) -> None:
        self.log.append("taskkill /T")
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)

    def ctrl_break(self, pid: int) -> bool:
        self.log.append("ctrl-break")
        os.killpg(pid, signal.SIGTERM)
        return True


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except OSError:
        return False


posix_only = pytest.mark.skipif(sys.platform == "win32", reason="imposes Windows semantics on a POSIX machine")


@posix_only
@pytest.mark.parametrize("console", [True, False], ids=["console-host", "gui-host"])
def test_a_windows_server_is_created_suspended_assigned_resumed_and_its_job_ended(
    monkeypatch: Any, console: bool
) -> None:
    win = FakeWin32(monkeypatch, console=console)
    c = mcpsync.connect(
        misbehaving_cmd("--no-exit-on-eof"), protocol="legacy", stdio=StdioOptions(shutdown_timeout=0.2)
    )
    try:
        assert c.call_tool("echo", {"message": "hi"}).text == "hi"
    finally:
        c.close()
    flags = 0x200 | 0x4 | (0 if console else 0x08000000)  # NEW_PROCESS_GROUP | SUSPENDED (| NO_WINDOW)
    assert win.log[:2] == ["created flags=%#x" % flags, "assigned+resumed JOB"]
    if console:
        assert win.log[2:] == ["ctrl-break", "terminated JOB", "closed JOB"]
    else:
        assert win.log[2:] == ["terminated JOB", "closed JOB"]  # no console to share: no graceful stage
    assert all(p.poll() is not None for p in win.procs)


@posix_only
def test_no_ctrl_break_goes_to_the_group_of_a_server_that_already_exited(monkeypatch: Any) -> None:
    """The server exited on EOF but its grandchild runs on in the job: its process group id is the exited
    server's pid, which names no live group leader (Windows may then deliver the event to every process of the
    console, the host included). So no CTRL_BREAK_EVENT: the job is ended."""
    win = FakeWin32(monkeypatch, console=True)
    c = mcpsync.connect(
        misbehaving_cmd("--spawn-grandchild"), protocol="legacy", stdio=StdioOptions(shutdown_timeout=0.5)
    )
    try:
        assert c.call_tool("echo", {"message": "hi"}).text == "hi"
        deadline = time.monotonic() + 30
        while not any("grandchild pid" in line for line in c.transport.stderr_tail):  # type: ignore[attr-defined]
            assert time.monotonic() < deadline, "no grandchild"
            time.sleep(0.02)
    finally:
        c.close()
    assert win.log[2:] == ["terminated JOB", "closed JOB"]
    deadline = time.monotonic() + 30  # the killed grandchild is reaped by init, not by us
    while any(_group_alive(p.pid) for p in win.procs):
        assert time.monotonic() < deadline, "the grandchild outlived the job"
        time.sleep(0.02)


@posix_only
def test_a_windows_server_that_cannot_be_resumed_is_killed_and_its_job_closed(monkeypatch: Any) -> None:
    win = FakeWin32(monkeypatch, console=True, resume_fails=True)
    with pytest.raises(mcpsync.errors.ConnectError, match="ResumeThread"):
        mcpsync.connect(server_cmd(), protocol="legacy", connect_timeout=30)
    assert win.log[-1] == "closed JOB" and win.job_closed
    assert all(p.poll() is not None for p in win.procs)
    assert all(f is None or f.closed for p in win.procs for f in (p.stdin, p.stdout, p.stderr))


@posix_only
def test_a_windows_server_whose_job_assignment_is_refused_is_still_stopped_by_close(monkeypatch: Any) -> None:
    """The system refuses the assignment (an old Windows, a host job that forbids nesting): the server runs
    unprotected, and close() must not count on a job that holds nothing; it ends the tree with taskkill."""
    win = FakeWin32(monkeypatch, console=False, assign_fails=True)
    c = mcpsync.connect(
        misbehaving_cmd("--no-exit-on-eof"), protocol="legacy", stdio=StdioOptions(shutdown_timeout=0.2)
    )
    try:
        assert c.call_tool("echo", {"message": "hi"}).text == "hi"
        assert win.log[1:] == ["refused+resumed JOB", "closed JOB"]  # the useless job is let go at once
    finally:
        c.close()
    assert win.log[-1] == "taskkill /T"
    assert "terminated JOB" not in win.log
    assert all(p.poll() is not None for p in win.procs)


def _win_alive(pid: int) -> bool:
    """True while process ``pid`` runs (Windows: OpenProcess + GetExitCodeProcess, never os.kill)."""
    import ctypes
    from ctypes import wintypes

    k = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    k.OpenProcess.restype = wintypes.HANDLE
    handle = k.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
    if not handle:
        return False
    try:
        code = wintypes.DWORD()
        return bool(k.GetExitCodeProcess(handle, ctypes.byref(code))) and code.value == 259  # STILL_ACTIVE
    finally:
        k.CloseHandle(handle)


@pytest.mark.skipif(sys.platform != "win32", reason="a real Job Object (runs in .github/workflows/platforms.yml)")
def test_on_windows_a_grandchild_is_in_the_servers_job_and_close_ends_it() -> None:
    c = mcpsync.connect(
        misbehaving_cmd("--spawn-grandchild"), protocol="legacy", stdio=StdioOptions(shutdown_timeout=1.0)
    )
    try:
        assert c.call_tool("echo", {"message": "hi"}).text == "hi"
        transport = c.transport
        assert transport._job is not None  # type: ignore[attr-defined]
        deadline = time.monotonic() + 30
        grandchild = None
        while grandchild is None and time.monotonic() < deadline:
            for line in transport.stderr_tail:  # type: ignore[attr-defined]
                m = re.search(r"grandchild pid (\d+)", line)
                if m:
                    grandchild = int(m.group(1))
            time.sleep(0.05)
        assert grandchild is not None and _win_alive(grandchild)
        server = transport.pid  # type: ignore[attr-defined]
    finally:
        c.close()
    assert not _win_alive(server)
    assert not _win_alive(grandchild)  # the server exited on EOF first: the job still ended its child
