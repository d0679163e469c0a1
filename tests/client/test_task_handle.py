"""TaskHandle is a mcpsync.handles.Handle: the same result / done / cancel / add_done_callback as a request's
handle, against the bundled example server's tasks (2025-11-25 experimental and the 2026-07-28 extension) over
stdio and Streamable HTTP. One thread polls at a time whatever the number of waiters; a done-callback polls in
the background on a thread close() joins; cancel() racing the end is held open with events.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any, Callable, Dict, List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mcpsync
from mcpsync.client import ClientOptions
from mcpsync.handles import Handle
from mcpsync.middleware import Interceptor, RequestInfo
from mcpsync.tasks import TaskHandle, resume_task, start_task

from tests.conftest import WAIT_BOUND, fuzz_examples, server_cmd, wait_for
from tests.core.handle_plans import Interleaving


class _Polls(Interceptor):
    """Counts the task requests and the most ``tasks/get`` in flight at once; can hold the thread that got the
    first ``tasks/get`` answer reporting the status ``hold`` (``"completed"``, ``"working"``) until ``go`` is set."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.in_flight = self.most = 0
        self.counts: Dict[str, int] = {}
        self.answered: Dict[str, Any] = {}
        self.hold = ""
        self.held, self.go = threading.Event(), threading.Event()

    def on_request(self, info: RequestInfo) -> None:
        with self.lock:
            self.counts[info.method] = self.counts.get(info.method, 0) + 1
            if info.method == "tasks/get":
                self.in_flight += 1
                self.most = max(self.most, self.in_flight)

    def on_result(self, info: RequestInfo, result: Dict[str, Any]) -> Dict[str, Any]:
        self._done(info, result)
        nested = result.get("task")
        task: Dict[str, Any] = nested if isinstance(nested, dict) else result
        if info.method == "tasks/get" and self.hold and task.get("status") == self.hold:
            if not self.held.is_set():
                self.held.set()
                self.go.wait(WAIT_BOUND)
        return result

    def on_error(self, info: RequestInfo, error: BaseException) -> None:
        self._done(info, error)

    def _done(self, info: RequestInfo, outcome: Any) -> None:
        with self.lock:
            self.answered[info.method] = outcome
            if info.method == "tasks/get":
                self.in_flight -= 1


@pytest.fixture
def polls() -> _Polls:
    return _Polls()


@pytest.fixture(params=["stdio", "http"])
def client(request: pytest.FixtureRequest, era: str, example_http: Callable[..., str], polls: _Polls) -> Any:
    """A client of the example server (tasks polled every 50 ms) serving exactly ``era``."""
    flags = ("--era", era, "--task-poll-interval-ms", "50")
    target: Any = server_cmd(*flags) if request.param == "stdio" else example_http(*flags)
    with mcpsync.connect(target, protocol=era, middleware=[polls], options=ClientOptions(cache=False)) as c:
        yield c


def _start(client: Any, seconds: float, **args: Any) -> TaskHandle:
    handle = start_task(client, "task_work", {"seconds": seconds, **args})
    assert isinstance(handle, TaskHandle), handle
    return handle


def test_a_task_handle_is_the_handle(client: Any, era: str) -> None:
    handle = _start(client, 0.2)
    assert isinstance(handle, Handle)
    assert handle.id == handle.task_id and handle.style == ("experimental" if era == "legacy" else "extension")
    assert not handle.done() and handle.running()
    assert "task done" in handle.result(WAIT_BOUND).text
    assert handle.done() and not handle.cancelled() and handle.status == "completed"
    assert handle.exception(0) is None
    assert handle.cancel() is False  # it had ended
    again = resume_task(client, handle.task_id)  # by id, as another process would
    assert again.result(WAIT_BOUND).text == handle.result(0).text


def test_many_waiters_one_poller(client: Any, polls: _Polls) -> None:
    handle = _start(client, 0.4)
    start = threading.Barrier(6)
    got: List[Any] = []

    def wait() -> None:
        start.wait(WAIT_BOUND)
        got.append(handle.result_raw(WAIT_BOUND))

    threads = [threading.Thread(target=wait) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT_BOUND)
    assert len(got) == 6 and all(r is got[0] for r in got)  # one outcome, fetched once
    assert polls.most == 1  # never two tasks/get at once for one handle
    assert polls.counts.get("tasks/result", 0) <= 1


def test_a_timeout_leaves_the_task_running(client: Any) -> None:
    handle = _start(client, 1.0)
    with pytest.raises(mcpsync.RequestTimeout):
        handle.result(0.01)
    with pytest.raises(mcpsync.RequestTimeout):  # the wait ended, the task did not: raised, not returned
        handle.exception(0.01)
    assert not handle.done()
    assert "task done" in handle.result(WAIT_BOUND).text


def test_a_done_callback_polls_in_the_background_and_runs_once(client: Any) -> None:
    handle = _start(client, 0.2)
    calls: List[str] = []
    handle.add_done_callback(lambda h: calls.append(threading.current_thread().name))
    handle.add_done_callback(lambda h: calls.append(threading.current_thread().name))
    assert wait_for(lambda: len(calls) == 2)  # nobody called result(): the handle polled on its own
    assert all(name.startswith("mcpsync-dispatch:") for name in calls)
    assert handle.done() and "task done" in handle.result(0).text
    later = threading.Event()
    handle.add_done_callback(lambda h: calls.append("after"))  # added after the end: dispatched at once
    handle.add_done_callback(lambda h: later.set())
    assert later.wait(WAIT_BOUND)
    assert calls[2:] == ["after"]


def test_cancel_ends_the_task_with_task_failed(client: Any) -> None:
    handle = _start(client, 30)
    ended = threading.Event()
    handle.add_done_callback(lambda h: ended.set())
    assert handle.cancel() is True
    with pytest.raises(mcpsync.TaskFailed):
        handle.result(WAIT_BOUND)
    assert handle.cancelled() and handle.done()
    assert isinstance(handle.exception(0), mcpsync.TaskFailed)
    assert ended.wait(WAIT_BOUND)
    assert handle.cancel() is False


def test_a_late_poll_answer_does_not_bring_a_cancelled_task_back(client: Any, polls: _Polls, era: str) -> None:
    """A poll got "working" and is held before the handle sees it; meanwhile another thread's cancel() is
    accepted and the handle ends cancelled. The held answer then arrives: a task never leaves a terminal status,
    so the handle stays cancelled and a second cancel() says False (it used to raise the server's refusal)."""
    if era == "modern":
        pytest.skip("the 2026-07-28 server acknowledges a cancellation and ends the task later (cooperative)")
    polls.hold = "working"
    handle = _start(client, 30)
    poller = threading.Thread(target=handle.poll)
    poller.start()
    assert polls.held.wait(WAIT_BOUND)  # the racy point: the stale "working" answer is in, not yet applied
    assert handle.cancel() is True and handle.cancelled()
    polls.go.set()
    poller.join(WAIT_BOUND)
    assert handle.status == "cancelled" and handle.cancelled()
    assert handle.cancel() is False
    with pytest.raises(mcpsync.TaskFailed):
        handle.result(0)


def test_cancel_racing_the_end_keeps_the_result(client: Any, polls: _Polls, era: str) -> None:
    """The background poller got the answer saying the task completed and is held there, before the handle
    saw it; cancel() reaches a server that already finished the task. The result stands, the callback runs
    once. The 2025-11-25 server refuses the cancellation (cancel() then says False); the 2026-07-28 one
    acknowledges any cancellation (cooperative), so cancel() says True there and the result still wins."""
    polls.hold = "completed"
    handle = _start(client, 0.1)
    calls: List[TaskHandle] = []
    handle.add_done_callback(calls.append)  # the background poller does the waiting
    assert polls.held.wait(WAIT_BOUND)
    assert not handle.done()  # the racy point: the server is done, the handle does not know yet
    outcome: List[bool] = []
    canceller = threading.Thread(target=lambda: outcome.append(handle.cancel()))
    canceller.start()
    assert wait_for(lambda: "tasks/cancel" in polls.answered)
    polls.go.set()
    canceller.join(WAIT_BOUND)
    assert outcome == [era == "modern"]
    if era == "legacy":
        assert isinstance(polls.answered["tasks/cancel"], mcpsync.RemoteError)
    assert "task done" in handle.result(WAIT_BOUND).text and not handle.cancelled()
    assert wait_for(lambda: len(calls) == 1) and calls == [handle]


def test_close_joins_the_background_poller(client: Any) -> None:
    handle = _start(client, 30)
    calls: List[Any] = []
    handle.add_done_callback(calls.append)
    assert wait_for(lambda: any(t.name == "mcpsync-task:%s" % handle.task_id for t in threading.enumerate()))
    client.close()
    assert not [t for t in threading.enumerate() if t.name.startswith("mcpsync-task:")]  # joined by close()
    assert calls == [] and not handle.done()


def test_the_old_name_wait_says_where_it_went(client: Any) -> None:
    handle = _start(client, 0.05)
    with pytest.raises(AttributeError, match=r"renamed: use result\(timeout\)"):
        handle.wait(1)  # type: ignore[attr-defined]
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        handle.nope  # type: ignore[attr-defined]  # noqa: B018
    handle.result(WAIT_BOUND)


def test_a_task_the_server_does_not_know_ends_the_handle_with_its_error(client: Any, era: str) -> None:
    handle = TaskHandle(client, "no-such-task", style="experimental" if era == "legacy" else "extension")
    ended = threading.Event()
    handle.add_done_callback(lambda h: ended.set())
    assert ended.wait(WAIT_BOUND)  # the background poll learned that the task is gone
    error = handle.exception(0)
    assert isinstance(error, mcpsync.RemoteError)
    with pytest.raises(mcpsync.RemoteError):
        handle.result(0)


_OPS = st.sampled_from(["result", "exception", "cancel", "callback", "done", "poll"])


@settings(max_examples=fuzz_examples(60, 10))
@given(plans=st.lists(st.lists(_OPS, min_size=1, max_size=5), min_size=1, max_size=4))
def test_any_interleaving_gives_one_outcome_and_each_callback_once(
    client: Any, polls: _Polls, plans: List[List[str]]
) -> None:
    """Threads calling result / exception / cancel / poll / add_done_callback / done on one task handle in any
    order: one outcome object for everyone, never two tasks/get at once, every callback exactly once."""
    handle = _start(client, 0.1)
    Interleaving(handle, extra={"poll": handle.poll}).run(plans)
    assert polls.most <= 1  # never two tasks/get at once (a plan that only cancels polls not at all)


# ---------------------------------------------------------------------------- a hostile task server

_HOSTILE = [sys.executable, os.path.join(os.path.dirname(os.path.dirname(__file__)), "peers", "hostile_task_server.py")]


def _hostile(*flags: str, **options: Any) -> Any:
    return mcpsync.connect(_HOSTILE + list(flags), protocol="legacy", **options)


def test_unreadable_polls_are_skipped(caplog: pytest.LogCaptureFixture) -> None:
    with _hostile("--garbage", "3") as c:
        handle = _start_job(c)
        ended = threading.Event()
        handle.add_done_callback(lambda h: ended.set())
        assert handle.result(WAIT_BOUND).text == "job done"  # three garbage answers later
        assert ended.wait(WAIT_BOUND)
    assert "unreadable tasks/get answer" in caplog.text


def test_a_server_that_never_tells_ends_the_handle_with_protocol_error() -> None:
    with _hostile("--garbage", "-1") as c:
        handle = _start_job(c)
        ended = threading.Event()
        handle.add_done_callback(lambda h: ended.set())
        assert ended.wait(WAIT_BOUND)
        assert isinstance(handle.exception(0), mcpsync.ProtocolError)


def test_a_hanging_poll_times_out_and_the_background_poll_goes_on() -> None:
    with _hostile("--hang", "2", timeout=0.3) as c:
        handle = _start_job(c)
        ended = threading.Event()
        handle.add_done_callback(lambda h: ended.set())  # two polls time out (0.3 s each), the next ones answer
        assert ended.wait(WAIT_BOUND)
        assert handle.result(0).text == "job done"


def _start_job(c: Any) -> TaskHandle:
    handle = start_task(c, "job", {})
    assert isinstance(handle, TaskHandle)
    return handle
