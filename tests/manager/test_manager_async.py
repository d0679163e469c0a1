"""Manager.call_tool_async returns the client's RequestHandle (the one Handle contract), against two example
servers, one over stdio and one over Streamable HTTP, in different protocol eras."""

from __future__ import annotations

import threading
from typing import Any, Callable, List

import pytest

import mcpsync
from mcpsync.handles import Handle, RequestHandle
from mcpsync.manager.manager import Manager, UnknownTool

from tests.conftest import WAIT_BOUND, server_cmd


@pytest.fixture
def manager(example_http: Callable[..., str]) -> Any:
    config = {
        "local": {"command": server_cmd("--era", "legacy")},
        "remote": {"url": example_http("--era", "modern"), "oauth": False},
    }
    with Manager(config) as mgr:
        yield mgr


def test_calls_on_two_servers_at_once(manager: Manager) -> None:
    slow = manager.call_tool_async("local_slow", {"seconds": 0.2, "steps": 2})
    echo = manager.call_tool_async("echo", {"message": "there"}, server="remote")
    assert isinstance(slow, RequestHandle) and isinstance(echo, Handle)
    assert echo.result(WAIT_BOUND).text == "there"
    assert slow.result(WAIT_BOUND).text == "done"
    assert manager.client("local").era == "legacy" and manager.client("remote").era == "modern"


def test_callbacks_run_once_on_each_servers_dispatch_thread(manager: Manager) -> None:
    seen: List[str] = []
    lock = threading.Lock()
    ran = threading.Semaphore(0)

    def record(handle: RequestHandle[Any]) -> None:
        with lock:
            seen.append(threading.current_thread().name)
        ran.release()

    handles = [manager.call_tool_async(name, {"message": "x"}) for name in ("local_echo", "remote_echo")]
    for handle in handles:
        handle.add_done_callback(record)
        handle.result(WAIT_BOUND)
        handle.add_done_callback(record)  # added after the end: runs once, at once
    # no order between the two is promised: a callback added after the end may be dispatched before the one the
    # reader thread is still handing over, so wait for all four rather than for a sentinel
    assert all(ran.acquire(timeout=WAIT_BOUND) for _ in range(4))
    for handle in handles:  # a fifth run would have to come from one of these: one more dispatched call drains them
        flushed = threading.Event()
        handle.add_done_callback(lambda h, e=flushed: e.set())  # type: ignore[misc]
        assert flushed.wait(WAIT_BOUND)
    assert len(seen) == 4
    assert sorted(set(seen)) == ["mcpsync-dispatch:local-0", "mcpsync-dispatch:remote-0"]


def test_cancel_through_the_manager(manager: Manager) -> None:
    handle = manager.call_tool_async("remote_slow", {"seconds": 30, "steps": 1})
    assert handle.cancel() is True
    assert handle.cancelled()
    with pytest.raises(mcpsync.RequestCancelled):
        handle.result(0)
    assert manager.call_tool("remote_echo", {"message": "after"}).text == "after"


def test_routing_errors_are_raised_at_once(manager: Manager) -> None:
    with pytest.raises(UnknownTool):
        manager.call_tool_async("nobody_has_this")
