"""Issue 9 defect 1: one junk frame never kills a connection.

A real example server (``--junk-ids``) writes, before every response, frames whose ids, progress tokens,
requestIds and subscription ids have every JSON type (objects, arrays, bools, floats, huge ints, null),
plus nested and empty batches. Every one is dropped in isolation; the connection stays up and every real
call gets its own correct answer, in both eras.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Dict, List, Optional

import pytest

import mcpsync
from mcpsync.session import Session
from mcpsync.transports.base import Transport, TransportSink
from mcpsync.wire.drops import DropLog

from tests.conftest import misbehaving_cmd, server_cmd
from mcpsync.client import HTTPOptions


def test_junk_ids_never_kill_a_stdio_connection(era: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="mcpsync")
    with mcpsync.connect(misbehaving_cmd("--era", era, "--junk-ids")) as c:
        for i in range(5):
            assert c.call_tool("echo", {"message": "m%d" % i}).text == "m%d" % i
        events: List[Any] = []
        r = c.call_tool("slow", {"seconds": 0.05, "steps": 3}, progress=events.append)
        assert not r.is_error
        assert [e.progress for e in events] == [1, 2, 3]  # the float/junk-token progress never reached it
        assert c.call_tool("add", {"a": 2, "b": 3}).structured_content == {"sum": 5}
        c.ping()
        assert c.connected
        counts = c.session.drops.counts()
        assert any("progress token of type dict" in k for k in counts), counts
        assert any("response with a" in k or "invalid frame" in k for k in counts), counts
    # logged once per kind at WARNING, the rest at DEBUG
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "dropped a frame" in r.getMessage()]
    kinds = [r.getMessage().split("(", 1)[1].split(")", 1)[0] for r in warnings]
    assert len(kinds) == len(set(kinds))


def test_junk_ids_with_concurrent_calls(era: str) -> None:
    with mcpsync.connect(misbehaving_cmd("--era", era, "--junk-ids")) as c:
        results: Dict[int, str] = {}
        errors: List[BaseException] = []
        start = threading.Barrier(6)

        def worker(n: int) -> None:
            start.wait()
            try:
                for j in range(4):
                    results[n * 10 + j] = c.call_tool("echo", {"message": "w%d-%d" % (n, j)}).text
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors
        assert results == {n * 10 + j: "w%d-%d" % (n, j) for n in range(6) for j in range(4)}


class _Loopback(Transport):
    """A transport whose 'server' is the test: frames are pushed into the session by hand."""

    kind = "memory"

    def __init__(self) -> None:
        self.sent: List[Any] = []
        self.sink: Optional[TransportSink] = None

    def start(self, sink: TransportSink) -> None:
        self.sink = sink

    def send(self, message: Dict[str, Any]) -> None:
        self.sent.append(message)

    def close(self, timeout: Optional[float] = None) -> None:
        pass


@pytest.mark.parametrize(
    "junk",
    [{"a": 1}, [1], [], {}, True, False, 1.0, 2.5, 10**40, None],
)
def test_every_id_type_is_checked_before_lookup(junk: Any) -> None:
    """The exact frames of defect 1, one by one, against a pending request: dropped, the request unaffected."""
    t = _Loopback()
    s = Session(t, name="t")
    s.start()
    try:
        handle = s.request_async("tools/call", {"name": "x"}, progress=lambda e: None)
        rid = handle.request_id
        assert t.sink is not None
        for frame in (
            {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": junk, "progress": 1}},
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": junk}},
            {"jsonrpc": "2.0", "id": junk, "result": {}},
            {"jsonrpc": "2.0", "id": junk, "error": {"code": 1, "message": "x"}},
            [{"jsonrpc": "2.0", "id": junk, "result": {}}, [junk]],
        ):
            t.sink.on_message(frame)
        assert not handle.done()
        t.sink.on_message({"jsonrpc": "2.0", "id": float(rid), "result": {"wrong": True}})  # 1.0 is not 1
        assert not handle.done()
        t.sink.on_message({"jsonrpc": "2.0", "id": rid, "result": {"ok": True}})
        assert handle.result(timeout=5) == {"ok": True}
        assert not s.closed
    finally:
        s.close()


def test_a_handler_that_raises_drops_only_its_frame() -> None:
    """Whatever raises while handling a frame (here the client's notification handler) is contained."""
    calls: List[str] = []

    def bad_handler(method: str, params: Dict[str, Any]) -> None:
        calls.append(method)
        raise TypeError("unhashable type: 'dict'")

    t = _Loopback()
    s = Session(t, name="t", notification_handler=bad_handler)
    s.start()
    try:
        handle = s.request_async("ping")
        assert t.sink is not None
        t.sink.on_message({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info"}})
        t.sink.on_message({"jsonrpc": "2.0", "id": handle.request_id, "result": {}})
        assert handle.result(timeout=5) == {}
        assert calls == ["notifications/message"]
    finally:
        s.close()


def test_drop_log_is_once_per_kind_then_rate_limited(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    log = logging.getLogger("mcpsync.test.drops")
    drops = DropLog(log, "srv", interval=60.0, clock=lambda: now[0])
    caplog.set_level(logging.WARNING, logger="mcpsync.test.drops")
    for _ in range(500):
        drops.drop("kind-a", "x")
    drops.drop("kind-b", "y")
    assert sum("kind-a" in r.getMessage() for r in caplog.records) == 1
    assert sum("kind-b" in r.getMessage() for r in caplog.records) == 1
    now[0] = 61.0
    drops.drop("kind-a", "x")
    summaries = [r.getMessage() for r in caplog.records if "more frame" in r.getMessage()]
    assert summaries == ["[srv] dropped 500 more frame(s) (kind-a, 501 in all)"]
    assert drops.counts() == {"kind-a": 501, "kind-b": 1}


# ---------------------------------------------------------------------------- over HTTP


@pytest.mark.parametrize("transport", ["http", "sse"])
def test_junk_ids_over_http(era: str, transport: str) -> None:
    """The same junk frames on the event streams of a real local HTTP server (Streamable HTTP and legacy
    HTTP+SSE), both eras."""
    from tests.peers.httpserver import MCPTestServer

    with MCPTestServer(era=era, response_mode="sse") as srv:
        srv.faults.junk_ids = True
        url = srv.url if transport == "http" else srv.sse_url()
        with mcpsync.connect(url, http=HTTPOptions(transport=transport), protocol=era, timeout=20) as c:
            for i in range(3):
                assert c.call_tool("echo", {"message": "h%d" % i}).text == "h%d" % i
            events: List[Any] = []
            r = c.call_tool("slow", {"seconds": 0.05, "steps": 3}, progress=events.append)
            assert not r.is_error and [e.progress for e in events] == [1, 2, 3]
            assert c.call_tool("add", {"a": 1, "b": 2}).structured_content == {"sum": 3}
            assert c.connected
            assert c.session.drops.total > 0


@pytest.mark.parametrize("rid", ["²", "١٢", "9" * 5000, ""])
def test_string_ids_that_are_not_ascii_decimals_are_dropped_quietly(rid: str) -> None:
    """A server may echo an integer id as a string; other digit-like strings never reach int()."""
    t = _Loopback()
    s = Session(t, name="t")
    s.start()
    try:
        handle = s.request_async("ping", progress=lambda e: None)
        assert t.sink is not None
        t.sink.on_message({"jsonrpc": "2.0", "id": rid, "result": {}})
        t.sink.on_message(
            {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": rid, "progress": 1}}
        )
        assert not any("error handling a frame" in k for k in s.drops.counts())
        t.sink.on_message({"jsonrpc": "2.0", "id": str(handle.request_id), "result": {"as": "string"}})
        assert handle.result(timeout=5) == {"as": "string"}
    finally:
        s.close()


def test_the_stdio_reader_survives_a_sink_that_raises() -> None:
    """Transport-level isolation: even a sink that raises on a frame never ends the reader."""
    from mcpsync.transports.stdio import StdioTransport

    got: List[Any] = []
    closed: List[Any] = []
    second = threading.Event()

    class Sink(TransportSink):
        def on_message(self, message: Any) -> None:
            got.append(message)
            if len(got) == 1:
                raise TypeError("unhashable type: 'dict'")
            second.set()

        def on_request_error(self, request_id: Any, exc: BaseException) -> None:
            pass

        def on_close(self, exc: Optional[BaseException]) -> None:
            closed.append(exc)

    t = StdioTransport(server_cmd("--era", "legacy"))
    t.start(Sink())
    try:
        init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
        t.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        t.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        assert second.wait(30)
        assert [m.get("id") for m in got[:2]] == [1, 2] and not closed
    finally:
        t.close()
