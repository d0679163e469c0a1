"""A host killed with SIGKILL leaves no stdio server (nor any grandchild) running.

A real host process (tests/peers/orphanhost.py) holds three stdio servers: the example server, one that
spawns a grandchild ignoring SIGTERM, and a wrapper (tests/peers/stdiowrapper.py, like ``npx``) whose
server spawns a grandchild of its own. The test SIGKILLs the host and waits (bounded) until every
process of those three process groups, and the host's one reaper, is gone. It runs the host on the
Linux path and on the path macOS takes (``sys.platform`` set to ``darwin`` before mcpsync is imported):
one reaper per host, no process per server.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional, Set, Tuple

import pytest

from mcpsync.transports import lifeline
from mcpsync.client import StdioOptions

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups and SIGKILL (Windows: jobs)")

HOST = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "peers", "orphanhost.py")


def _procs() -> Dict[int, Tuple[int, int, str, bytes]]:
    """Every process: pid -> (ppid, pgid, state, command line). /proc on Linux, ``ps`` elsewhere (macOS)."""
    out: Dict[int, Tuple[int, int, str, bytes]] = {}
    if os.path.isdir("/proc/self"):
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % entry, "rb") as f:
                    rest = f.read().decode("utf-8", "replace").rsplit(")", 1)[-1].split()
                with open("/proc/%s/cmdline" % entry, "rb") as f:
                    cmdline = f.read()
            except OSError:
                continue
            out[int(entry)] = (int(rest[1]), int(rest[2]), rest[0], cmdline)
        return out
    return _procs_ps()


def _procs_ps() -> Dict[int, Tuple[int, int, str, bytes]]:
    """The listing from ``ps`` (what macOS, which has no /proc, uses)."""
    out: Dict[int, Tuple[int, int, str, bytes]] = {}
    # -ww: whole command lines; a command line holding newlines (the reaper's script) goes on over
    # several output lines, which do not start with the pid columns
    listing = subprocess.run(
        ["ps", "-A", "-ww", "-o", "pid=,ppid=,pgid=,stat=,args="], stdout=subprocess.PIPE, check=True
    )
    last = None
    for line in listing.stdout.splitlines():
        m = re.match(rb"\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s?(.*)\Z", line)
        if m is None:
            if last is not None:
                ppid, pgid, state, args = out[last]
                out[last] = (ppid, pgid, state, args + b"\n" + line)
            continue
        last = int(m.group(1))
        out[last] = (int(m.group(2)), int(m.group(3)), m.group(4).decode()[:1], m.group(5))
    return out


def _stat(pid: int) -> Optional[Tuple[int, int, str, bytes]]:
    return _procs().get(pid)


def _alive(pid: int) -> bool:
    info = _stat(pid)
    return info is not None and info[2] != "Z"  # a zombie has run its last instruction


def _members(pgids: Set[int]) -> Dict[int, int]:
    """Live processes in any of ``pgids``: pid -> pgid."""
    return {pid: info[1] for pid, info in _procs().items() if info[2] != "Z" and info[1] in pgids}


def _children_with(ppid: int, marker: bytes) -> List[int]:
    return sorted(pid for pid, info in _procs().items() if info[0] == ppid and marker in info[3] and info[2] != "Z")


def _cmdline(pid: int) -> bytes:
    info = _stat(pid)
    return info[3] if info else b""


def _until(pred, what: str, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, "timed out waiting for " + what
        time.sleep(0.02)


@pytest.mark.skipif(not lifeline.enabled(), reason="the lifeline is turned off (MCPSYNC_NO_LIFELINE)")
@pytest.mark.parametrize("platform", ["linux", "darwin"], ids=["linux-path", "macos-path"])
@pytest.mark.parametrize("fork", [False, True], ids=["plain", "with-a-forked-child"])
def test_sigkill_of_the_host_leaves_no_server_and_no_grandchild(fork: bool, platform: str) -> None:
    if platform == "linux" and not sys.platform.startswith("linux"):
        pytest.skip("the Linux path is taken on Linux (the macOS path runs everywhere)")
    host = subprocess.Popen(
        [sys.executable, HOST] + (["--fork"] if fork else []) + ["--as-platform", platform],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    forked = None
    try:
        line = host.stdout.readline() if host.stdout else b""
        assert line, "the host failed: %s" % (host.stderr.read().decode() if host.stderr else "")
        report = json.loads(line)
        assert report["platform"] == platform
        forked = report["forked"]
        assert (forked is not None) == fork
        pgids = set(report["pgids"])
        assert len(pgids) == 3
        # the grandchildren are up: 1 + 1 in the second group, wrapper + server + grandchild in the third
        wrapper_group = report["pgids"][2]
        grandchild_group = report["pgids"][1]
        _until(
            lambda: (
                sum(1 for g in _members(pgids).values() if g == grandchild_group) >= 2
                and sum(1 for g in _members(pgids).values() if g == wrapper_group) >= 3
            ),
            "the grandchildren to start",
        )
        victims = _members(pgids)
        assert len(victims) >= 6
        reapers = _children_with(host.pid, b"mcpsync-reaper")
        assert reapers == [report["reaper"]]  # one reaper for the whole host
        for pid in victims:  # no guard process per server: every server is the host's command itself
            assert b"mcpsync-reaper" not in _cmdline(pid) and b"PDEATHSIG" not in _cmdline(pid)
        host.send_signal(signal.SIGKILL)
        host.wait(30)
        _until(lambda: not _members(pgids), "every server process and grandchild to die")
        _until(lambda: not any(_alive(p) for p in list(victims) + reapers), "the reaper to exit")
    finally:
        if host.poll() is None:
            host.kill()
            host.wait(30)
        if forked:
            assert _alive(forked)  # the forked child lived on while the servers died
            os.kill(forked, signal.SIGKILL)
        for pgid in report_pgids(locals()):
            try:
                os.killpg(pgid, signal.SIGKILL)  # never leave anything behind, even when the test fails
            except OSError:
                pass
        for f in (host.stdin, host.stdout, host.stderr):
            if f is not None:
                f.close()


def report_pgids(scope: Dict[str, object]) -> Set[int]:
    pgids = scope.get("pgids")
    return set(pgids) if isinstance(pgids, set) else set()


def test_servers_outlive_the_thread_that_opened_them_and_share_one_reaper() -> None:
    """A server lives on when the thread that opened it ends; three servers, one reaper; close() stops it all."""
    import threading

    import mcpsync

    from tests.conftest import server_cmd

    clients: List[mcpsync.Client] = []
    for _ in range(3):
        t = threading.Thread(target=lambda: clients.append(mcpsync.connect(server_cmd(), protocol="legacy")))
        t.start()
        t.join(60)
    assert len(clients) == 3
    pids = []
    try:
        for c in clients:
            assert c.call_tool("echo", {"message": "still here"}).text == "still here"
            pids.append(c.transport.pid)  # type: ignore[attr-defined]
        for pid in pids:  # the server is our child itself: no wrapper process in between
            assert (_stat(pid) or (0,))[0] == os.getpid()
        if lifeline.enabled():
            assert _children_with(os.getpid(), b"mcpsync-reaper") == [lifeline.LIFELINE.reaper_pid]
        clients.pop().close()
        if lifeline.enabled():
            assert len(_children_with(os.getpid(), b"mcpsync-reaper")) == 1  # still two servers
    finally:
        for c in clients:
            c.close()
    assert not any(_alive(p) for p in pids)
    assert not _children_with(os.getpid(), b"mcpsync-reaper")
    assert lifeline.LIFELINE.reaper_pid is None


def test_no_lifeline_means_no_reaper(monkeypatch: pytest.MonkeyPatch) -> None:
    import mcpsync

    from tests.conftest import server_cmd

    monkeypatch.setenv("MCPSYNC_NO_LIFELINE", "1")
    assert not lifeline.enabled()
    with mcpsync.connect(server_cmd(), protocol="legacy") as c:
        assert c.call_tool("echo", {"message": "x"}).text == "x"
        assert not _children_with(os.getpid(), b"mcpsync-reaper")
        pid = c.transport.pid  # type: ignore[attr-defined]
    assert not _alive(pid)


def test_a_server_that_fails_to_start_leaves_no_reaper_behind(tmp_path: "os.PathLike[str]") -> None:
    import mcpsync

    from tests.conftest import server_cmd

    missing = os.path.join(str(tmp_path), "no-such-dir")
    with pytest.raises(mcpsync.errors.ConnectError):
        mcpsync.connect(server_cmd(), stdio=StdioOptions(cwd=missing), connect_timeout=30)
    assert not _children_with(os.getpid(), b"mcpsync-reaper")
    assert lifeline.LIFELINE.reaper_pid is None


def test_the_reaper_ignores_junk_and_never_signals_group_0() -> None:
    """Lines that are not ``+<n>``/``-<n>`` with n > 1 are ignored: ``+0`` would be the reaper's own group."""
    reaper = subprocess.run(
        [lifeline.REAPER_SHELL, "-c", lifeline.REAPER_SCRIPT, "mcpsync-reaper", "0"],
        input=b"+0\n+abc\n+\nx12\n+-5\n-\n\n+00\n",
        start_new_session=True,  # its own group: had it registered 0, it would have killed itself
        timeout=30,
    )
    assert reaper.returncode == 0


def test_the_reaper_forgets_an_unregistered_group(tmp_path: "os.PathLike[str]") -> None:
    """A group registered then unregistered is never signalled; one still registered is, at end-of-file."""
    kept = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
    spared = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
    try:
        lines = b"+%d\n+%d\n-%d\n" % (kept.pid, spared.pid, spared.pid)
        reaper = subprocess.run(
            [lifeline.REAPER_SHELL, "-c", lifeline.REAPER_SCRIPT, "mcpsync-reaper", "0"],
            input=lines,
            start_new_session=True,
            timeout=30,
        )
        assert reaper.returncode == 0
        assert kept.wait(30) == -signal.SIGTERM
        assert spared.poll() is None
    finally:
        for p in (kept, spared):
            p.kill()
            p.wait(30)


def test_without_bin_sh_servers_run_unguarded_with_a_warning(
    monkeypatch: pytest.MonkeyPatch, tmp_path: "os.PathLike[str]", caplog: pytest.LogCaptureFixture
) -> None:
    """No shell for the reaper (a minimal container, a sandbox): the server still starts, answers and is
    stopped by close(); the host is told once per reaper start that a SIGKILL could leave it running."""
    import mcpsync

    from tests.conftest import server_cmd

    if not lifeline.enabled():
        pytest.skip("the lifeline is turned off (MCPSYNC_NO_LIFELINE)")
    monkeypatch.setattr(lifeline, "REAPER_SHELL", os.path.join(str(tmp_path), "no-sh"))
    with caplog.at_level("WARNING", logger="mcpsync.transports.lifeline"):
        with mcpsync.connect(server_cmd(), protocol="legacy") as c:
            assert c.call_tool("echo", {"message": "x"}).text == "x"
            assert lifeline.LIFELINE.reaper_pid is None
            assert not _children_with(os.getpid(), b"mcpsync-reaper")
            pid = c.transport.pid  # type: ignore[attr-defined]
    assert not _alive(pid)
    warnings = [r.getMessage() for r in caplog.records if "cannot start the mcpsync reaper" in r.getMessage()]
    assert len(warnings) == 1 and "no-sh" in warnings[0]
    monkeypatch.undo()  # the shell is back: the next server gets a reaper again
    with mcpsync.connect(server_cmd(), protocol="legacy") as c:
        assert lifeline.LIFELINE.reaper_pid is not None
    assert lifeline.LIFELINE.reaper_pid is None


class _Sink:
    def __init__(self) -> None:
        import threading

        self.closed = threading.Event()

    def on_message(self, message: object) -> None:
        pass

    def on_request_error(self, request_id: object, exc: BaseException) -> None:
        pass

    def on_close(self, exc: Optional[BaseException]) -> None:
        self.closed.set()


class _Told:
    """A fresh Lifeline for one test, recording every line told to its reaper."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.lifeline = lifeline.Lifeline()
        self.lines: List[bytes] = []
        real = self.lifeline._tell

        def tell(line: bytes, *args: Any) -> None:
            self.lines.append(line)
            real(line, *args)

        monkeypatch.setattr(self.lifeline, "_tell", tell)
        monkeypatch.setattr(lifeline, "LIFELINE", self.lifeline)


@pytest.mark.skipif(not lifeline.enabled(), reason="the lifeline is turned off (MCPSYNC_NO_LIFELINE)")
def test_a_server_that_exited_with_its_whole_group_is_untied_at_once_and_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that exits by itself (a crash) while its client stays open: once its group is empty its number
    may be given to another process group, which the reaper must never signal. So the group is unregistered
    when the exit is seen (the reaper, guarding nothing more, exits), and close() does not unregister it again
    (by then the number may be another server's)."""
    from mcpsync.transports.stdio import StdioTransport

    told = _Told(monkeypatch)
    t = StdioTransport([sys.executable, "-c", "pass"], name="crasher")
    sink = _Sink()
    t.start(sink)  # type: ignore[arg-type]
    pgid = t.pid
    try:
        assert sink.closed.wait(30)
        _until(lambda: told.lifeline.reaper_pid is None, "the reaper to exit, the last group gone", timeout=10)
        assert told.lines == [b"+%d\n" % pgid, b"-%d\n" % pgid]
    finally:
        t.close()
    assert told.lines == [b"+%d\n" % pgid, b"-%d\n" % pgid]  # not again
    assert told.lifeline._users == 0


@pytest.mark.skipif(not lifeline.enabled(), reason="the lifeline is turned off (MCPSYNC_NO_LIFELINE)")
def test_a_server_that_exited_leaving_a_child_in_its_group_stays_tied_until_close(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The server exited but a child of it runs on in its group: the group stays registered (a SIGKILLed host
    still takes that child with it) until close() ends the group and unregisters it, once."""
    from mcpsync.transports.stdio import StdioTransport

    told = _Told(monkeypatch)
    t = StdioTransport(["/bin/sh", "-c", "sleep 60 >/dev/null 2>&1 </dev/null & exit 0"], name="leaver")
    sink = _Sink()
    t.start(sink)  # type: ignore[arg-type]
    pgid = t.pid
    try:
        assert sink.closed.wait(30)
        assert _members({pgid})  # the sleep is still there
        assert told.lines == [b"+%d\n" % pgid]
        assert told.lifeline.reaper_pid is not None
    finally:
        t.close()
    assert not _members({pgid})
    assert told.lines == [b"+%d\n" % pgid, b"-%d\n" % pgid]
    assert told.lifeline.reaper_pid is None


@pytest.mark.skipif(not lifeline.enabled(), reason="the lifeline is turned off (MCPSYNC_NO_LIFELINE)")
@pytest.mark.parametrize("platform", ["linux", "darwin"], ids=["linux-path", "macos-path"])
def test_a_forked_child_that_opens_servers_is_a_host_of_its_own(platform: str) -> None:
    """A forked child (a prefork worker) that opens its own server gets its own reaper: SIGKILLing the child
    takes its server with it and leaves the parent's servers and reaper alone; SIGKILLing the parent then
    takes the parent's."""
    if platform == "linux" and not sys.platform.startswith("linux"):
        pytest.skip("the Linux path is taken on Linux (the macOS path runs everywhere)")
    host = subprocess.Popen(
        [sys.executable, HOST, "--fork-opens", "--as-platform", platform],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    pgids: Set[int] = set()
    child: Dict[str, int] = {}
    try:
        reports = []
        for _ in range(2):
            line = host.stdout.readline() if host.stdout else b""
            assert line, "the host failed: %s" % (host.stderr.read().decode() if host.stderr else "")
            reports.append(json.loads(line))
        (child,) = [r for r in reports if "child" in r]
        (parent,) = [r for r in reports if "host" in r]
        pgids = set(parent["pgids"]) | {child["pgid"]}
        assert child["reaper"] not in (None, parent["reaper"])
        assert _children_with(child["child"], b"mcpsync-reaper") == [child["reaper"]]
        assert _children_with(host.pid, b"mcpsync-reaper") == [parent["reaper"]]
        os.kill(child["child"], signal.SIGKILL)
        _until(lambda: not _members({child["pgid"]}), "the child's server to die with the child")
        _until(lambda: not _alive(child["reaper"]), "the child's reaper to exit")
        assert all(_members({g}) for g in parent["pgids"])  # the parent's servers are untouched
        assert _alive(parent["reaper"])
        host.send_signal(signal.SIGKILL)
        host.wait(30)
        _until(lambda: not _members(set(parent["pgids"])), "the parent's servers to die with the parent")
        _until(lambda: not _alive(parent["reaper"]), "the parent's reaper to exit")
    finally:
        if host.poll() is None:
            host.kill()
            host.wait(30)
        if child:
            try:
                os.kill(child["child"], signal.SIGKILL)
            except OSError:
                pass
        for pgid in pgids:
            try:
                os.killpg(pgid, signal.SIGKILL)  # never leave anything behind, even when the test fails
            except OSError:
                pass
        for f in (host.stdin, host.stdout, host.stderr):
            if f is not None:
                f.close()


def test_the_reapers_state_holds_only_the_groups_still_registered() -> None:
    """A host that opens and closes hundreds of servers: the reaper's list ends up holding only what is still
    registered (read from the shell's own trace of its variable), whatever the order of the removals."""
    # numbers above any pid_max stand for the groups: signalling those still registered at the end fails harmlessly
    numbers = list(range(999991000, 999991400))
    lines = b"".join(b"+%d\n" % n for n in numbers[:200])
    for a, b in zip(numbers[:200], numbers[200:]):  # removals interleaved with new registrations
        lines += b"-%d\n+%d\n" % (a, b)
    kept = numbers[200:][::7]
    lines += b"".join(b"-%d\n" % n for n in numbers[200:] if n not in kept)
    lines += b"-%d\n" % numbers[0]  # no longer registered: nothing happens
    reaper = subprocess.run(
        [lifeline.REAPER_SHELL, "-x", "-c", lifeline.REAPER_SCRIPT, "mcpsync-reaper", "0"],
        input=lines,
        stderr=subprocess.PIPE,
        start_new_session=True,
        timeout=120,
    )
    assert reaper.returncode == 0
    states = [line for line in reaper.stderr.decode().splitlines() if re.match(r"\+* ?groups=", line)]
    final = states[-1].split("groups=", 1)[1].strip("'\" ")
    assert sorted(int(n) for n in final.split()) == kept


@pytest.mark.skipif(not lifeline.enabled(), reason="the lifeline is turned off (MCPSYNC_NO_LIFELINE)")
def test_hundreds_of_servers_opened_and_closed_are_each_registered_and_unregistered_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every server's group is unregistered once it is closed: one reaper lives through them all (a server kept
    open the whole time) and the host tells it exactly one + and one - per server."""
    from mcpsync.transports.stdio import StdioTransport

    told = _Told(monkeypatch)
    keeper = StdioTransport(["cat"], name="keeper")
    keeper.start(_Sink())  # type: ignore[arg-type]
    reaper = told.lifeline.reaper_pid
    pgids = []
    try:
        for _ in range(150):
            t = StdioTransport(["cat"], name="brief")
            t.start(_Sink())  # type: ignore[arg-type]
            pgids.append(t.pid)
            t.close()
        assert told.lifeline.reaper_pid == reaper and _alive(reaper)  # the same reaper all along
        assert told.lifeline._users == 1
    finally:
        keeper.close()
    expected = [b"+%d\n" % keeper.pid]
    for p in pgids:
        expected += [b"+%d\n" % p, b"-%d\n" % p]
    assert told.lines == expected + [b"-%d\n" % keeper.pid]
    assert told.lifeline.reaper_pid is None


@pytest.mark.parametrize("shell", [["dash"], ["bash", "--posix"]], ids=["dash", "bash-posix-as-on-macos"])
def test_the_reaper_script_runs_in_the_shells_hosts_have_as_bin_sh(shell: List[str]) -> None:
    """/bin/sh is dash on Debian and Ubuntu and bash in POSIX mode on macOS: in each, a registered group that
    ignores SIGTERM is killed at end-of-file and an unregistered one is spared."""
    import shutil

    found = shutil.which(shell[0])
    if found is None:
        pytest.skip("%s is not installed" % shell[0])
    stubborn = [sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                "print(flush=True); time.sleep(600)"]
    kept = subprocess.Popen(stubborn, stdout=subprocess.PIPE, start_new_session=True)
    spared = subprocess.Popen(stubborn, stdout=subprocess.PIPE, start_new_session=True)
    try:
        for p in (kept, spared):
            assert p.stdout is not None and p.stdout.readline()  # SIGTERM is ignored from here on
        reaper = subprocess.run(
            [found] + shell[1:] + ["-c", lifeline.REAPER_SCRIPT, "mcpsync-reaper", "0"],
            input=b"+%d\n+%d\n-%d\njunk\n+0\n" % (kept.pid, spared.pid, spared.pid),
            start_new_session=True,
            timeout=30,
        )
        assert reaper.returncode == 0
        assert kept.wait(30) == -signal.SIGKILL  # SIGTERM first, then SIGKILL after the grace
        assert spared.poll() is None
    finally:
        for p in (kept, spared):
            p.kill()
            p.wait(30)
            if p.stdout is not None:
                p.stdout.close()


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="compares ps with /proc")
def test_the_ps_listing_used_on_macos_agrees_with_proc_here() -> None:
    """The orphan tests read processes from ``ps`` where there is no /proc (macOS): here both exist, and for this
    process and a reaper (whose command line spans several lines) they agree."""
    import shutil

    if shutil.which("ps") is None:
        pytest.skip("no ps")
    reaper = subprocess.Popen(
        [lifeline.REAPER_SHELL, "-c", lifeline.REAPER_SCRIPT, "mcpsync-reaper", "0"],
        stdin=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        by_proc, by_ps = _procs(), _procs_ps()
        for pid in (os.getpid(), reaper.pid):
            assert by_ps[pid][:2] == by_proc[pid][:2]  # ppid, pgid (the state may change in between)
        assert b"mcpsync-reaper" in by_ps[reaper.pid][3] and b"trap" in by_ps[reaper.pid][3]
        assert reaper.pid in [p for p, info in by_ps.items() if info[0] == os.getpid() and b"mcpsync-reaper" in info[3]]
    finally:
        assert reaper.stdin is not None
        reaper.stdin.close()
        reaper.wait(30)


@pytest.mark.skipif(not lifeline.enabled(), reason="the lifeline is turned off (MCPSYNC_NO_LIFELINE)")
def test_a_reaper_killed_while_the_host_lives_is_replaced_and_told_every_group(monkeypatch: pytest.MonkeyPatch) -> None:
    """Someone kills the reaper (an OOM kill, a too-broad pkill) while servers run: the next server started
    brings a new reaper that is told every group still registered, so a host dying after that still takes
    all of its servers with it (here the host's death is played by closing the new reaper's pipe)."""
    from mcpsync.transports.stdio import StdioTransport

    told = _Told(monkeypatch)
    first = StdioTransport(["cat"], name="first")
    first.start(_Sink())  # type: ignore[arg-type]
    second = None
    try:
        old = told.lifeline.reaper_pid
        assert old is not None
        os.kill(old, signal.SIGKILL)
        _until(lambda: not _alive(old), "the reaper to die", timeout=10)
        second = StdioTransport(["cat"], name="second")
        second.start(_Sink())  # type: ignore[arg-type]
        new = told.lifeline.reaper_pid
        assert new is not None and new != old and _alive(new)
        reaper = told.lifeline._reaper
        assert reaper is not None and reaper.stdin is not None
        reaper.stdin.close()  # what the host's death does to the pipe
        groups = {first.pid or 0, second.pid or 0}
        _until(lambda: not _members(groups), "both servers to be reaped", timeout=20)
    finally:
        first.close()
        if second is not None:
            second.close()
    assert told.lifeline.reaper_pid is None and told.lifeline._users == 0
