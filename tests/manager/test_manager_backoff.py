"""Issue 9 defect 8: a server that connects fine and dies on every tools/call is not respawned in a loop.

A real subprocess server (the example server with ``--crash-on-tool-call``) records every request it receives
with its pid, so the test counts spawns; the manager's backoff clock is injected, so nothing sleeps.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import List

import pytest

from mcpsync.errors import ConnectError, ConnectionClosed
from mcpsync.manager.manager import Manager
from tests.conftest import misbehaving_cmd, server_cmd


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def spawns(record: Path) -> int:
    if not record.exists():
        return 0
    return len({json.loads(line)["pid"] for line in record.read_text().splitlines() if line.strip()})


def tool_calls(record: Path) -> List[str]:
    lines = [json.loads(line) for line in record.read_text().splitlines() if line.strip()]
    return [x["tool"] for x in lines if x["method"] == "tools/call"]


def test_a_server_that_crashes_on_every_call_backs_off_instead_of_looping(tmp_path: Path) -> None:
    record = tmp_path / "requests.jsonl"
    clock = FakeClock()
    cmd = misbehaving_cmd("--crash-on-tool-call", "--record", str(record))
    with Manager({"c": {"command": cmd}}, clock=clock, restart_backoff=(1.0, 8.0), stable_after=60.0) as mgr:
        assert mgr.status("c").status == "connected" and spawns(record) == 1
        with pytest.raises(ConnectionClosed):
            mgr.call_tool("c_echo", {"message": "x"})
        # The connection died before proving itself: it counts as a failure. Hammering the manager without the
        # clock moving spawns nothing (before the fix each call respawned the server at once).
        for _ in range(30):
            with pytest.raises(ConnectError, match="next restart attempt in"):
                mgr.call_tool("c_echo", {"message": "x"})
        assert spawns(record) == 1
        expected = 1
        for step in (1.0, 2.0, 4.0, 8.0, 8.0):  # doubling, capped at 8
            clock.now += step - 0.01
            with pytest.raises(ConnectError):
                mgr.call_tool("c_echo", {"message": "x"})
            assert spawns(record) == expected, "restarted before the backoff step of %ss ended" % step
            clock.now += 0.01
            with pytest.raises(ConnectionClosed):  # restarted, connects fine, dies on the call
                mgr.call_tool("c_echo", {"message": "x"})
            expected += 1
            assert spawns(record) == expected
        assert mgr._servers["c"].failures == 6
        assert tool_calls(record) == ["echo"] * 6


def test_a_connection_that_stayed_up_long_enough_resets_the_backoff(tmp_path: Path) -> None:
    record = tmp_path / "requests.jsonl"
    clock = FakeClock()
    cmd = misbehaving_cmd("--crash-on-tool-call", "--record", str(record))
    with Manager({"c": {"command": cmd}}, clock=clock, restart_backoff=(1.0, 8.0), stable_after=60.0) as mgr:
        with pytest.raises(ConnectionClosed):
            mgr.call_tool("c_echo", {"message": "x"})
        clock.now += 1.0
        with pytest.raises(ConnectionClosed):
            mgr.call_tool("c_echo", {"message": "x"})
        assert mgr._servers["c"].failures == 2 and spawns(record) == 2
        clock.now += 2.0
        mgr.connect("c")  # an explicit connect; this connection now stays up a long time
        assert spawns(record) == 3
        clock.now += 61.0
        with pytest.raises(ConnectionClosed):
            mgr.call_tool("c_echo", {"message": "x"})
        # It had proved itself (up >= stable_after): the count resets and the next use restarts at once.
        assert mgr._servers["c"].failures == 0
        with pytest.raises(ConnectionClosed):
            mgr.call_tool("c_echo", {"message": "x"})
        assert spawns(record) == 4


def test_a_connection_that_served_a_call_restarts_at_once_after_a_crash(tmp_path: Path) -> None:
    clock = FakeClock()
    with Manager({"s": {"command": server_cmd()}}, clock=clock, stable_after=60.0) as mgr:
        pid = int(mgr.call_tool("s_pid").text)  # served a call successfully: the connection proved itself
        with pytest.raises(ConnectionClosed):
            mgr.call_tool("s_crash", {"code": 4})
        assert mgr._servers["s"].failures == 0
        assert int(mgr.call_tool("s_pid").text) != pid  # restarted on next use, no wait


def test_concurrent_callers_through_one_crash_count_one_failure(tmp_path: Path) -> None:
    import threading

    record = tmp_path / "requests.jsonl"
    clock = FakeClock()
    cmd = misbehaving_cmd("--crash-on-tool-call", "--record", str(record))
    with Manager({"c": {"command": cmd}}, clock=clock, restart_backoff=(1.0, 8.0)) as mgr:
        barrier = threading.Barrier(8)
        errors: List[BaseException] = []

        def call() -> None:
            barrier.wait(10)  # all eight call at once into the same doomed connection
            try:
                mgr.call_tool("c_echo", {"message": "x"})
            except BaseException as exc:  # noqa: BLE001 - collected
                errors.append(exc)

        threads = [threading.Thread(target=call) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert len(errors) == 8 and all(isinstance(e, (ConnectionClosed, ConnectError)) for e in errors)
        assert mgr._servers["c"].failures == 1 and spawns(record) == 1  # one death, one failure, no respawn
