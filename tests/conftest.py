"""Shared fixtures: the example server command, and a leak check after every test.

After each test no ``mcpsync-`` thread, no child process and no extra pipe may
remain (the check waits a little for things that are already on their way out).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from typing import Callable, Iterator, List, Set

import pytest

#: The hypothesis profile in use: MCPSYNC_HYPOTHESIS_PROFILE, else "ci" under CI=true, else "dev".
HYPOTHESIS_PROFILE = os.environ.get("MCPSYNC_HYPOTHESIS_PROFILE") or (
    "ci" if os.environ.get("CI", "").lower() in ("true", "1") else "dev"
)

try:  # hypothesis profiles: "dev" by default, "ci" when CI=true (see docs/internals/reliability.md)
    from hypothesis import HealthCheck
    from hypothesis import settings as _hyp_settings
except ImportError:  # the test extra is not installed: the fuzz suites skip themselves
    _hyp_settings = None  # type: ignore[assignment,misc]
else:
    _SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture]
    # dev: quick, random, remembers failing examples in .hypothesis/ (git-ignored)
    _hyp_settings.register_profile("dev", max_examples=100, deadline=None, suppress_health_check=_SLOW_OK)
    # ci: many examples, fixed seed (reproducible on a fresh machine), no example database
    _hyp_settings.register_profile(
        "ci",
        max_examples=1000,
        deadline=None,
        derandomize=True,
        database=None,
        print_blob=True,
        suppress_health_check=_SLOW_OK,
    )
    _hyp_settings.load_profile(HYPOTHESIS_PROFILE)


def fuzz_examples(ci: int, dev: int = 100) -> int:
    """``max_examples`` for one property: ``ci`` under the ci profile, ``dev`` otherwise.

    Use it as ``@settings(max_examples=fuzz_examples(3000))`` for cheap properties that deserve
    thousands of examples in CI, and a smaller ``ci`` for properties that drive real servers.
    """
    return ci if HYPOTHESIS_PROFILE == "ci" else dev


EXAMPLE = [sys.executable, "-m", "mcpsync.example_server"]
#: The example server with the test-only misbehaviours (tests/peers/misbehaving_server.py), runnable from any cwd.
MISBEHAVING = [
    sys.executable,
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers", "misbehaving_server.py"),
]


def server_cmd(*flags: str) -> List[str]:
    """The bundled example server's command line with ``flags``."""
    return EXAMPLE + list(flags)


def misbehaving_cmd(*flags: str) -> List[str]:
    """The misbehaving example server's command line with ``flags`` (any flag of the bundled one works too)."""
    return MISBEHAVING + list(flags)


def _mcpsync_threads() -> Set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("mcpsync-") and t.is_alive()}


def _children() -> Set[int]:
    """Live (non-zombie) child processes of this process, and their descendants' process groups."""
    me = os.getpid()
    found: Set[int] = set()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry, "rb") as f:
                stat = f.read().decode("utf-8", "replace")
        except OSError:
            continue
        rest = stat.rsplit(")", 1)[-1].split()
        state, ppid = rest[0], int(rest[1])
        if ppid == me and state != "Z":
            found.add(int(entry))
    return found


def _pipes() -> int:
    n = 0
    try:
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return 0
    for fd in fds:
        try:
            if os.readlink("/proc/self/fd/%s" % fd).startswith("pipe:"):
                n += 1
        except OSError:
            pass
    return n


def write_atomic(path: "os.PathLike[str] | str", text: str) -> None:
    """Replace the file at ``path`` with ``text`` in one step (a temporary file beside it, then ``os.replace``).

    For files a live peer re-reads while the test rewrites them: a plain ``open(path, "w")`` truncates first,
    and a peer reading between the truncation and the write sees an empty or half-written file.
    """
    target = os.fspath(path)
    tmp = "%s.%d.%d.tmp" % (target, os.getpid(), threading.get_ident())
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, target)


#: The default bound for ``wait_for`` and the after-test leak check. It is only ever reached when something
#: is wrong (a true predicate returns at once), so it is sized for CI's loaded 2-core machine, where a
#: server's start-up, a thread's join or a process's exit can take seconds, not for a quiet laptop.
WAIT_BOUND = 30.0


def wait_for(pred: Callable[[], bool], timeout: float = WAIT_BOUND) -> bool:
    """Poll ``pred`` until true or ``timeout`` seconds passed (a bound, never a measurement)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.02)
    return pred()


@pytest.fixture(autouse=True)
def fresh_warm_cache_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets an empty warm cache directory (the CLI keeps one by default), never the user's: a
    server a test starts may get the port of an earlier test's server of another era, whose kept era would
    then be used. (What clients learn while connecting lives in each client's own ServerMemory.)"""
    monkeypatch.setenv("MCPSYNC_CACHE_DIR", str(tmp_path_factory.mktemp("warm-cache")))


@pytest.fixture(autouse=True)
def no_leaks(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """Fail a test that leaves an mcpsync thread, a child process or a pipe behind."""
    threads_before = _mcpsync_threads()
    children_before = _children()
    pipes_before = _pipes()
    yield
    if request.node.get_closest_marker("allow_leaks"):
        return
    ok = wait_for(
        lambda: (
            not (_mcpsync_threads() - threads_before)
            and not (_children() - children_before)
            and _pipes() <= pipes_before
        ),
        timeout=WAIT_BOUND,
    )
    if not ok:
        threads = sorted(t.name for t in _mcpsync_threads() - threads_before)
        children = sorted(_children() - children_before)
        pipes = _pipes() - pipes_before
        pytest.fail("leak after test: threads=%s children=%s extra pipes=%d" % (threads, children, pipes))


@pytest.fixture(params=["legacy", "modern"])
def era(request: pytest.FixtureRequest) -> str:
    """Run the test once per protocol era (the example server serves exactly that era)."""
    return str(request.param)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "allow_leaks: skip the after-test leak check")


_SERVING = re.compile(rb"serving Streamable HTTP at (http://\S+)")


@pytest.fixture
def example_http() -> Iterator[Callable[..., str]]:
    """Start the bundled example server over Streamable HTTP (``--http 0``) with the given flags; returns
    its URL. Every server started is stopped (and reaped) after the test."""
    procs: List["subprocess.Popen[bytes]"] = []

    def start(*flags: str) -> str:
        cmd = EXAMPLE + ["--http", "0"] + list(flags)
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        procs.append(proc)
        assert proc.stderr is not None
        found = _SERVING.search(proc.stderr.readline())  # blocks until the server announces itself (or dies)
        assert found is not None, "the example server announced no URL"
        return found.group(1).decode()

    yield start
    for proc in procs:
        proc.terminate()
        try:
            proc.communicate(timeout=WAIT_BOUND)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
