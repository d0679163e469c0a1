"""Issue 18 defect 4: the callback and server-request backlogs are bounded, and close() discards them.

A real stdio server (tests/peers/floodserver.py) floods the client; the user's callbacks are held
by Events, never by sleeps. Memory is measured as queued items, not RSS.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from typing import Any, Dict, List

import pytest

import mcpsync
from mcpsync.session import BUSY_ERROR, CALLBACK_BACKLOG, HANDLER_BACKLOG

FLOOD = [sys.executable, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "peers",
                                      "floodserver.py")]
WAIT = 30.0


def _eventually(predicate: Any, what: str) -> None:
    end = time.monotonic() + WAIT
    while not predicate():
        assert time.monotonic() < end, "timed out waiting for " + what
        time.sleep(0.005)


class HeldCallback:
    """An on_notification whose first call blocks until released; counts every call and when it ran."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.calls = 0
        self.after_close = 0
        self.closed = threading.Event()

    def __call__(self, note: Any) -> None:
        if self.closed.is_set():
            self.after_close += 1
        self.calls += 1
        if not self.entered.is_set():
            self.entered.set()
            assert self.release.wait(WAIT)


def _dispatch_threads() -> List[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(("mcpsync-dispatch:", "mcpsync-handler:"))]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_notification_flood_behind_a_slow_callback_is_bounded_and_counted(era: str) -> None:
    held = HeldCallback()
    flood = 5 * CALLBACK_BACKLOG
    with mcpsync.Client(FLOOD, name="flood", protocol=era, on_notification=held) as c:
        c.call_tool("flood", {"count": 1})
        assert held.entered.wait(WAIT)  # the worker is inside the first callback: the backlog is empty
        c.call_tool("flood", {"count": flood})  # answered after every notification was read
        backlog = c.session._callbacks.backlog
        assert backlog == CALLBACK_BACKLOG  # bounded: queued items, not RSS
        assert c.dropped_callbacks == flood - CALLBACK_BACKLOG  # exactly the overflow, counted
        assert len(c.notifications) == flood + 1  # the polling queue is bounded on its own (10000)
        # log messages nobody listens to (no on_log, logger below their level) are never queued
        logging.getLogger("mcpsync.server.flood").setLevel(logging.WARNING)
        try:
            c.call_tool("flood", {"count": 500, "method": "notifications/message", "level": "debug"})
        finally:
            logging.getLogger("mcpsync.server.flood").setLevel(logging.NOTSET)
        assert c.session._callbacks.backlog == CALLBACK_BACKLOG
        assert c.dropped_callbacks == flood - CALLBACK_BACKLOG + 500  # on_notification for each, dropped
        held.release.set()
        _eventually(lambda: c.session._callbacks.backlog == 0, "the backlog to drain")
        _eventually(lambda: held.calls == 1 + CALLBACK_BACKLOG, "the queued callbacks to run")
        # after draining, callbacks flow again and nothing more is dropped
        before = c.dropped_callbacks
        c.call_tool("flood", {"count": 10})
        _eventually(lambda: held.calls == 1 + CALLBACK_BACKLOG + 10, "new callbacks")
        assert c.dropped_callbacks == before


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_close_discards_the_backlog_and_no_callback_runs_after_it_returns(era: str) -> None:
    held = HeldCallback()
    c = mcpsync.Client(FLOOD, name="flood", protocol=era, on_notification=held)
    c.open()
    c.call_tool("flood", {"count": 1})
    assert held.entered.wait(WAIT)
    c.call_tool("flood", {"count": 300})
    session = c.session
    assert session._callbacks.backlog == 300
    closer = threading.Thread(target=c.close, name="test-closer")
    closer.start()
    # close() is under way while the callback is held mid-run: it discards the backlog first
    _eventually(lambda: session._callbacks.backlog == 0, "close() to discard the backlog")
    assert held.calls == 1
    held.release.set()  # the running callback finishes; close() waits for it (bounded)
    closer.join(WAIT)
    assert not closer.is_alive()
    held.closed.set()
    assert held.calls == 1 and held.after_close == 0  # none of the 300 ran
    assert not [t for t in _dispatch_threads() if t.name.endswith(":flood-0")]  # the worker is gone


def test_server_requests_beyond_the_handler_backlog_get_an_error_answer() -> None:
    """Four handler threads busy, HANDLER_BACKLOG queued: every further request is answered -32603 at once.

    Handshake era only: 2026-07-28 has no server-to-client requests (a server asks through an
    ``input_required`` result that the client answers when it retries the call), so it has no handler backlog."""
    entered = threading.Semaphore(0)
    release = threading.Event()
    ran: List[str] = []

    def sampling(request: Any) -> Dict[str, Any]:
        entered.release()
        assert release.wait(WAIT)
        ran.append("x")
        return {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"}

    extra = 50
    with mcpsync.Client(FLOOD, name="flood", protocol="legacy", sampling_handler=sampling) as c:
        c.call_tool("ask", {"count": 4})
        for _ in range(4):  # the four handler threads are inside the handler
            assert entered.acquire(timeout=WAIT)
        c.call_tool("ask", {"count": HANDLER_BACKLOG + extra})
        assert c.session._handlers.backlog == HANDLER_BACKLOG
        got = c.call_tool("answers", {"errors": extra, "timeout": WAIT}).structured_content
        assert isinstance(got, dict)
        assert len(got["errors"]) == extra  # never silence: each refused request got an error answer
        assert all(e == BUSY_ERROR for e in got["errors"].values())
        assert c.refused_server_requests == extra
        release.set()
        total = 4 + HANDLER_BACKLOG
        got = c.call_tool("answers", {"errors": extra, "results": total, "timeout": WAIT}).structured_content
        assert isinstance(got, dict)
        assert len(got["results"]) == total and len(ran) == total
        assert c.refused_server_requests == extra


def test_the_drop_log_is_rate_limited(caplog: pytest.LogCaptureFixture) -> None:
    """The first drop is logged at once, then one summary per interval however many drop (clock injected)."""
    from mcpsync._dispatch import Dispatcher

    now = [1000.0]
    d = Dispatcher("test-disp", 1, max_backlog=2, what="callback", log_interval=60.0, clock=lambda: now[0])
    entered, release = threading.Event(), threading.Event()
    d.submit(lambda: (entered.set(), release.wait(WAIT)))
    assert entered.wait(WAIT)
    try:
        with caplog.at_level(logging.WARNING, logger="mcpsync._dispatch"):
            assert d.offer(lambda: None) and d.offer(lambda: None)  # the backlog is full now
            for _ in range(500):
                assert not d.offer(lambda: None)
            assert d.dropped == 500
            assert len(caplog.records) == 1  # the first drop only
            now[0] += 61
            assert not d.offer(lambda: None)
            assert len(caplog.records) == 2  # one summary after the interval
            assert "501" in caplog.records[1].getMessage() and "500 new" in caplog.records[1].getMessage()
    finally:
        release.set()
        d.stop(WAIT, discard=True)
