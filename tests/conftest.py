"""Shared fixtures: the example server command, and a leak check after every test.

After each test no ``mcpsync-`` thread, no child process and no extra pipe may
remain (the check waits a little for things that are already on their way out).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Callable, List, Set

import pytest

EXAMPLE = [sys.executable, "-m", "mcpsync.example_server"]


def server_cmd(*flags: str) -> List[str]:
    """The bundled example server's command line with ``flags``."""
    return EXAMPLE + list(flags)


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


def wait_for(pred: Callable[[], bool], timeout: float = 5.0) -> bool:
    """Poll ``pred`` until true or ``timeout`` seconds passed (a bound, never a measurement)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.02)
    return pred()


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
        timeout=6.0,
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
