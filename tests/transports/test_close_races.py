"""Issue 9: close() racing open() and a call, with the threads held at the racy point (Events and
Barriers, never sleeps). Each ends promptly with a ClientClosed-family or ConnectionClosed error,
nothing hangs, and the leak check (tests/conftest.py) proves no thread, process or pipe is left.
"""

from __future__ import annotations

import threading
from typing import Any, Dict, List, Optional

import pytest

import mcpsync
from mcpsync.transports.base import TransportSink
from mcpsync.transports.stdio import StdioTransport

from tests.conftest import misbehaving_cmd, server_cmd

BOUND = 60.0  # hang guard for joins, never a measurement


class HeldTransport(StdioTransport):
    """A real stdio transport that lets the test hold the opening thread at chosen points."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.at_start = threading.Barrier(2)
        self.hold_start = False
        self.sent: List[str] = []
        self.sent_event: Dict[str, threading.Event] = {"initialize": threading.Event(), "tools/call": threading.Event()}

    def start(self, sink: TransportSink) -> None:
        if self.hold_start:
            self.at_start.wait(BOUND)  # 1: the opener is here, before the process exists
            self.at_start.wait(BOUND)  # 2: the test has called close()
        super().start(sink)

    def send(self, message: Any) -> None:
        super().send(message)
        method = message.get("method") if isinstance(message, dict) else None
        if isinstance(method, str):
            self.sent.append(method)
            if method in self.sent_event:
                self.sent_event[method].set()


def _open_in_thread(c: mcpsync.Client) -> Any:
    outcome: Dict[str, Optional[BaseException]] = {"error": None}

    def run() -> None:
        try:
            c.open()
        except BaseException as exc:  # noqa: BLE001 - inspected by the test
            outcome["error"] = exc

    t = threading.Thread(target=run)
    t.start()
    return t, outcome


def test_close_while_the_handshake_is_waiting() -> None:
    """The server never answers initialize; close() from another thread ends open() at once."""
    transport = HeldTransport(misbehaving_cmd("--slow-start", "3600"))
    c = mcpsync.Client(transport, protocol="legacy", connect_timeout=None)  # only close() can end it
    t, outcome = _open_in_thread(c)
    assert transport.sent_event["initialize"].wait(BOUND)  # held: initialize sent, no answer will come
    c.close()
    t.join(BOUND)
    assert not t.is_alive()
    assert isinstance(outcome["error"], mcpsync.ClientClosed)
    assert "closed while opening" in str(outcome["error"])
    assert c.closed and not c.connected
    c.close()  # idempotent


def test_close_before_the_transport_starts() -> None:
    """close() lands between the session's creation and the transport's start: nothing is negotiated."""
    transport = HeldTransport(server_cmd())
    transport.hold_start = True
    c = mcpsync.Client(transport, protocol="legacy")
    t, outcome = _open_in_thread(c)
    transport.at_start.wait(BOUND)  # the opener is inside start()
    c.close()
    transport.at_start.wait(BOUND)  # let it go on
    t.join(BOUND)
    assert not t.is_alive()
    assert isinstance(outcome["error"], mcpsync.ClientClosed)
    assert "initialize" not in transport.sent  # it stopped before negotiating
    assert c.closed


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_close_during_a_call(era: str) -> None:
    c = mcpsync.connect(server_cmd("--era", era))
    in_call = threading.Event()
    outcome: Dict[str, Optional[BaseException]] = {"error": None}

    def call() -> None:
        try:
            c.call_tool("slow", {"seconds": 3600, "steps": 3600}, progress=lambda e: in_call.set())
        except BaseException as exc:  # noqa: BLE001
            outcome["error"] = exc

    t = threading.Thread(target=call)
    t.start()
    assert in_call.wait(BOUND)  # the server is inside the call, reporting progress
    c.close()
    t.join(BOUND)
    assert not t.is_alive()
    assert isinstance(outcome["error"], mcpsync.errors.ConnectionClosed)
    with pytest.raises(mcpsync.ClientClosed):
        c.call_tool("echo", {"message": "x"})


def test_close_from_inside_a_progress_callback() -> None:
    c = mcpsync.connect(server_cmd())
    with pytest.raises(mcpsync.errors.ConnectionClosed):
        c.call_tool("slow", {"seconds": 3600, "steps": 3600}, progress=lambda e: c.close())
    assert c.closed


def test_many_callers_while_closing() -> None:
    """Eight threads start calls together with close(): each call either succeeds or fails cleanly."""
    c = mcpsync.connect(server_cmd())
    start = threading.Barrier(9)
    errors: List[BaseException] = []
    ok: List[str] = []

    def worker(n: int) -> None:
        start.wait(BOUND)
        try:
            ok.append(c.call_tool("echo", {"message": str(n)}).text)
        except mcpsync.MCPError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for th in threads:
        th.start()
    start.wait(BOUND)
    c.close()
    for th in threads:
        th.join(BOUND)
    assert not any(th.is_alive() for th in threads)
    assert len(ok) + len(errors) == 8
    assert all(isinstance(e, (mcpsync.ClientClosed, mcpsync.errors.ConnectionClosed)) for e in errors)
    assert set(ok) <= {str(n) for n in range(8)}
