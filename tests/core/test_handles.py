"""The one handle contract (mcpsync.handles.Handle) on RequestHandle, against the bundled example server over
stdio and Streamable HTTP, in both protocol eras: many waiters get one outcome, cancel() racing the answer
never doubles it (the race is held open with events at the reader and on the dispatch thread), and a
done-callback runs once, on the dispatch thread, also when added after the end.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Dict, List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mcpsync
from mcpsync.handles import Handle, RequestHandle

from tests.conftest import WAIT_BOUND, fuzz_examples, server_cmd, wait_for
from tests.core.handle_plans import Interleaving


@pytest.fixture(params=["stdio", "http"])
def client(request: pytest.FixtureRequest, era: str, example_http: Callable[..., str]) -> Any:
    """A client of the example server serving exactly ``era``, over stdio or Streamable HTTP."""
    target: Any = server_cmd("--era", era) if request.param == "stdio" else example_http("--era", era)
    with mcpsync.connect(target, protocol=era) as c:
        assert c.era == era
        yield c


def _hold_answers(client: Any, matches: Callable[[Dict[str, Any]], bool]) -> Dict[str, threading.Event]:
    """Stop the transport's reader just before it hands a matching frame to the session (``arrived``), until
    ``go`` is set; ``handled`` is set once the session processed it."""
    events = {"arrived": threading.Event(), "go": threading.Event(), "handled": threading.Event()}
    session = client.session
    original = session.on_message

    def held(message: Any) -> None:
        hit = isinstance(message, dict) and matches(message)
        if hit:
            events["arrived"].set()
            events["go"].wait(WAIT_BOUND)
        original(message)
        if hit:
            events["handled"].set()

    session.on_message = held  # the transport calls its sink's on_message for every frame
    return events


def _is_tool_answer(message: Dict[str, Any]) -> bool:
    result = message.get("result")
    return isinstance(result, dict) and "content" in result


def test_a_request_handle_is_the_handle(client: Any) -> None:
    handle = client.call_tool_async("echo", {"message": "hi"})
    assert isinstance(handle, Handle) and isinstance(handle, RequestHandle)
    assert handle.id == handle.request_id is not None
    assert handle.result(WAIT_BOUND).text == "hi"
    assert handle.done() and not handle.running() and not handle.cancelled()
    assert handle.exception(0) is None
    assert "RequestHandle tools/call" in repr(handle)


def test_many_threads_get_one_outcome(client: Any) -> None:
    handle = client.call_tool_async("slow", {"seconds": 0.2, "steps": 2})
    start = threading.Barrier(8)
    got: List[Any] = []

    def wait() -> None:
        start.wait(WAIT_BOUND)
        got.append(handle.result(WAIT_BOUND))

    threads = [threading.Thread(target=wait) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT_BOUND)
    assert len(got) == 8 and all(r is got[0] for r in got)  # the answer became a result once
    assert got[0].text == "done"


@pytest.mark.parametrize("tool", ["no_such_tool", "bad_output"])
def test_an_error_is_raised_to_every_waiter_and_returned_by_exception(client: Any, tool: str) -> None:
    """The server's error (an unknown tool), or the client's verdict on the answer (output that breaks the
    tool's outputSchema, found while the answer becomes a result): the same error for every waiter."""
    client.list_tools()  # the output schemas are known
    handle = client.call_tool_async(tool, {})
    errors = [handle.exception(WAIT_BOUND) for _ in range(2)]
    assert isinstance(errors[0], mcpsync.MCPError) and errors[0] is errors[1]
    with pytest.raises(type(errors[0])):
        handle.result(0)


def test_cancel_before_the_reader_hands_over_the_answer_wins(client: Any) -> None:
    held = _hold_answers(client, _is_tool_answer)
    handle = client.call_tool_async("echo", {"message": "late"})
    calls: List[str] = []
    handle.add_done_callback(lambda h: calls.append(threading.current_thread().name))
    assert held["arrived"].wait(WAIT_BOUND)  # the answer is in the reader's hands, not yet the session's
    assert handle.cancel() is True
    assert handle.cancelled() and handle.done()
    assert handle.cancel() is False  # once
    held["go"].set()
    assert held["handled"].wait(WAIT_BOUND)  # the late answer was dropped, not delivered
    with pytest.raises(mcpsync.RequestCancelled):
        handle.result(0)
    assert wait_for(lambda: len(calls) == 1)
    assert calls[0].startswith("mcpsync-dispatch:")  # never the reader thread
    assert client.call_tool("echo", {"message": "next"}).text == "next"  # nothing crossed
    assert calls == [calls[0]]


def test_an_answer_the_reader_took_beats_cancel(client: Any) -> None:
    """The reader popped the request, its settlement waits behind a progress callback held on the dispatch
    thread: cancel() comes too late and says so, and the answer is delivered once."""
    in_progress, release = threading.Event(), threading.Event()

    def progress(event: Any) -> None:
        if not in_progress.is_set():
            in_progress.set()
            release.wait(WAIT_BOUND)

    held = _hold_answers(client, _is_tool_answer)
    held["go"].set()  # only observe: handled is set once the session popped the answer
    handle = client.call_tool_async("slow", {"seconds": 0.05, "steps": 2}, progress=progress)
    assert held["handled"].wait(WAIT_BOUND) and in_progress.wait(WAIT_BOUND)
    assert not handle.done()  # answered, not yet settled: the racy point
    assert handle.cancel() is False
    release.set()
    assert handle.result(WAIT_BOUND).text == "done"
    assert not handle.cancelled()


def test_a_callback_added_after_the_end_runs_once(client: Any) -> None:
    handle = client.call_tool_async("echo", {"message": "x"})
    handle.result(WAIT_BOUND)
    calls: List[Any] = []
    later = threading.Event()
    handle.add_done_callback(calls.append)
    handle.add_done_callback(lambda h: later.set())  # the dispatch thread runs callbacks in order
    assert later.wait(WAIT_BOUND)
    assert calls == [handle]


def test_callbacks_run_in_the_order_added_even_when_one_is_added_while_the_reader_hands_over(client: Any) -> None:
    """The reader has set the answer and is held (an event) before it hands the callbacks over; the caller,
    already woken by the answer, adds another callback: it runs after the earlier one, once each."""
    handle = client.call_tool_async("slow", {"seconds": 0.5, "steps": 1})  # answered after the hold is in place
    entered, go = threading.Event(), threading.Event()

    def hold(_future: Any) -> None:  # runs on the reader, before the handle's own hook
        entered.set()
        go.wait(WAIT_BOUND)

    handle._pending.future.add_done_callback(hold)  # noqa: SLF001 - the racy point, inside the handle
    order: List[int] = []
    handle.add_done_callback(lambda h: order.append(0))
    handle.result(WAIT_BOUND)
    assert entered.wait(WAIT_BOUND)  # the answer is set, its callbacks not yet handed over
    handle.add_done_callback(lambda h: order.append(1))
    go.set()
    last = threading.Event()
    handle.add_done_callback(lambda h: last.set())
    assert last.wait(WAIT_BOUND)
    assert order == [0, 1]


def test_close_fails_the_waiters_and_runs_no_callback_after(client: Any) -> None:
    handle = client.call_tool_async("slow", {"seconds": 30, "steps": 1})
    client.close()
    assert isinstance(handle.exception(WAIT_BOUND), mcpsync.errors.ConnectionClosed)
    calls: List[Any] = []
    handle.add_done_callback(calls.append)  # the client is closed: no user code runs any more
    assert calls == []


def test_the_namespace_exports_the_contract() -> None:
    assert mcpsync.handles.__all__ == ["DEFAULT", "Handle", "HandleOwner", "RequestHandle", "Timeout"]
    assert mcpsync.handles.Handle.__abstractmethods__ == {
        "id",
        "done",
        "result",
        "cancel",
        "cancelled",
        "add_done_callback",
    }


def test_other_waiters_wait_for_the_one_completing_the_answer_up_to_their_timeout() -> None:
    """2026-07-28: the answer asks for input (input_required); the first waiter answers it through the
    elicitation handler, held here on an event. A second waiter waits for that, up to its own timeout, and
    then gets the very same result; the server is asked once."""
    asked, release = threading.Event(), threading.Event()
    answers: List[str] = []

    def elicit(request: Any) -> Any:
        answers.append(threading.current_thread().name)
        asked.set()
        release.wait(WAIT_BOUND)
        return request.accept({"name": "Ada", "age": 36})

    with mcpsync.connect(server_cmd("--era", "modern", "--mrtr-rounds", "1"), elicitation_handler=elicit) as c:
        handle = c.call_tool_async("elicit", {})
        got: List[Any] = []
        first = threading.Thread(target=lambda: got.append(handle.result(WAIT_BOUND)))
        first.start()
        assert asked.wait(WAIT_BOUND)  # the first waiter is completing the answer
        with pytest.raises(mcpsync.RequestTimeout, match="still being completed"):
            handle.result(0.05)
        assert not handle.cancelled()  # that wait ended, the call did not
        release.set()
        second = handle.result(WAIT_BOUND)
        first.join(WAIT_BOUND)
        assert got == [second] and got[0] is second
        assert len(answers) == 1  # the input was asked (and answered) once


_OPS = st.sampled_from(["result", "exception", "cancel", "callback", "done"])


@settings(max_examples=fuzz_examples(150, 20))
@given(
    plans=st.lists(st.lists(_OPS, min_size=1, max_size=6), min_size=1, max_size=4),
    tool=st.sampled_from(["echo", "slow"]),
)
def test_any_interleaving_gives_one_outcome_and_each_callback_once(
    client: Any, plans: List[List[str]], tool: str
) -> None:
    """Threads calling result / exception / cancel / add_done_callback / done on one handle in any order: one
    outcome (the very same value or error object for everyone), at most one successful cancel, and every
    callback run exactly once, on the dispatch thread."""
    args = {"message": "m"} if tool == "echo" else {"seconds": 0.02, "steps": 2}
    handle = client.call_tool_async(tool, args)

    def on_dispatch_thread() -> None:
        assert threading.current_thread().name.startswith("mcpsync-dispatch:")

    run = Interleaving(handle, on_callback=on_dispatch_thread)
    outcome = run.run(plans)
    assert run.cancels.count(True) <= 1
    if True in run.cancels:
        assert isinstance(outcome, mcpsync.RequestCancelled)
