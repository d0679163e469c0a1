"""The session's pending entry (mcpsync.handles._Pending): settled once, its Future made only when a thread asks.

An HTTP answer read by the calling thread itself settles the entry with no ``concurrent.futures.Future`` at all
(checked against the bundled example server over Streamable HTTP, in both eras); a Future made while the answer
lands carries it (the settle is held at its racy point with the entry's own lock, never by sleeping); any order of
settles and Future requests gives exactly one end, the first settle's (hypothesis).
"""

from __future__ import annotations

import concurrent.futures
import threading
from typing import Any, Callable, List, Optional, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mcpsync
from mcpsync.client import HTTPOptions
from mcpsync.handles import _Pending

from tests.conftest import WAIT_BOUND, fuzz_examples


def test_settled_before_anyone_asks_needs_no_future_and_a_late_future_carries_the_end() -> None:
    p = _Pending(1, "tools/call", None)
    assert not p.done()
    p.set_result({"ok": True})
    assert p.done() and p.outcome == ({"ok": True}, None)
    assert p._future is None  # noqa: SLF001 - nothing was made for an answer nobody waited on
    assert p.future.result(0) == {"ok": True}
    with pytest.raises(concurrent.futures.InvalidStateError):
        p.set_exception(RuntimeError("late"))
    assert p.future.result(0) == {"ok": True}


def test_a_waiter_future_made_first_is_settled_by_the_answer() -> None:
    p = _Pending(2, "ping", None)
    fut = p.future
    err = mcpsync.errors.ConnectionClosed("gone")
    p.set_exception(err)
    assert p.outcome is None  # the end went to the Future the waiter holds
    assert fut.exception(0) is err and p.done()
    with pytest.raises(concurrent.futures.InvalidStateError):
        p.set_result(1)


def test_a_future_asked_for_while_the_answer_lands_carries_it() -> None:
    """The racy point: a settle holds the entry's lock (it has read "no future yet") while another thread asks
    for the future. That thread waits for the settle and gets a finished future, never an empty one."""
    p = _Pending(3, "tools/call", None)
    got: List[Any] = []
    asking = threading.Event()

    p._lock.acquire()  # noqa: SLF001 - stand where a settle stands: inside its lock, before it writes
    try:

        def ask() -> None:
            asking.set()
            got.append(p.future)

        t = threading.Thread(target=ask, name="mcpsync-test-ask", daemon=True)
        t.start()
        assert asking.wait(WAIT_BOUND)
        assert not got  # blocked behind the settle
        p.outcome = ("answer", None)  # what the held settle writes
    finally:
        p._lock.release()  # noqa: SLF001
    t.join(WAIT_BOUND)
    assert got and got[0].done() and got[0].result(0) == "answer"


Op = Tuple[str, Optional[int]]


@settings(max_examples=fuzz_examples(200, 300), deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("result"), st.integers(0, 9)),
            st.tuples(st.just("error"), st.integers(0, 9)),
            st.tuples(st.just("future"), st.none()),
            st.tuples(st.just("done"), st.none()),
        ),
        max_size=12,
    )
)
def test_any_order_of_settles_and_future_requests_has_one_end(ops: List[Op]) -> None:
    p = _Pending(4, "tools/call", None)
    first: Optional[Tuple[str, Optional[int]]] = None
    futures: List["concurrent.futures.Future[Any]"] = []
    for kind, value in ops:
        if kind in ("result", "error"):
            settle: Callable[[Any], None] = p.set_result if kind == "result" else p.set_exception
            arg: Any = value if kind == "result" else ValueError(value)
            if first is None:
                settle(arg)
                first = (kind, value)
            else:
                with pytest.raises(concurrent.futures.InvalidStateError):
                    settle(arg)
        elif kind == "future":
            futures.append(p.future)
        else:
            assert p.done() == (first is not None)
    assert all(f is futures[0] for f in futures)  # one Future per entry, however often it is asked for
    if first is None:
        assert not p.done() and all(not f.done() for f in futures)
        return
    f = p.future
    if first[0] == "result":
        assert f.result(0) == first[1]
    else:
        exc = f.exception(0)
        assert isinstance(exc, ValueError) and exc.args == (first[1],)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_an_http_answer_read_by_the_caller_makes_no_future(
    era: str, example_http: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """call_tool over Streamable HTTP: the calling thread reads the answer (its event stream) and settles its own
    entry, so no Future (no Condition, no lock traffic) is made for it; an async call still gets one."""
    made: List[int] = []
    original = concurrent.futures.Future.__init__

    def counting(self: Any) -> None:
        made.append(1)
        original(self)

    with mcpsync.connect(example_http("--era", era), protocol=era, http=HTTPOptions(transport="http")) as c:
        assert c.call_tool("echo", {"message": "warm"}).text == "warm"
        monkeypatch.setattr(concurrent.futures.Future, "__init__", counting)
        for i in range(5):
            assert c.call_tool("echo", {"message": str(i)}).text == str(i)
        assert made == []
        handle = c.call_tool_async("echo", {"message": "async"})
        assert handle.result().text == "async"
        assert made  # a caller on another thread waits on a real Future
