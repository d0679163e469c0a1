"""Issue 18: one HTTP path that never loses, crosses or doubles a call (defects 1, 2, 3 and 7).

Every test runs against a real local server that misbehaves on purpose (:mod:`tests.peers.faultserver`), through
the HTTP stack (urllib3), in both protocol eras and through the blocking and the async call
paths where the fault concerns them. docs/internals/reliability.md names these tests.
"""

from __future__ import annotations

import threading
from typing import Any, List

import pytest

import mcpsync

from tests.conftest import wait_for
from tests.peers.faultserver import FaultServer, FullBacklogServer, StalledTLSServer, TaskRouter
from mcpsync.client import HTTPOptions

pytestmark = pytest.mark.timeout(180)

BOUND = 30.0



@pytest.fixture
def engine() -> str:
    """The engine under test (this ran each test under the removed requests and standard-library engines too)."""
    return "urllib3"


HOW = pytest.mark.parametrize("how", ["blocking", "async"])


# ---------------------------------------------------------------------------- defect 7: Mcp-Name on task requests


@HOW
def test_task_requests_carry_the_task_id_in_mcp_name(engine: str, how: str) -> None:
    """A load balancer that routes tasks/get, tasks/update and tasks/cancel on ``Mcp-Name`` alone reaches the
    backend holding each task: tasks created on both backends complete, take input and are cancelled."""
    with TaskRouter(task_poll_interval_ms=20) as router:
        with mcpsync.connect(
            router.url,
            http=HTTPOptions(transport="http"),
            protocol="modern",
            timeout=BOUND,
            elicitation_handler=lambda r: r.accept(),
        ) as c:
            done = mcpsync.tasks.start_task(c, "task_work", {"seconds": 0.2})
            slow = mcpsync.tasks.start_task(c, "task_work", {"seconds": 60})
            assert isinstance(done, mcpsync.tasks.TaskHandle) and isinstance(slow, mcpsync.tasks.TaskHandle)
            assert "task done" in done.result(timeout=BOUND).text
            slow.cancel()
            if how == "blocking":
                asked = c.call_tool("task_work", {"seconds": 0.1, "ask": True})
            else:
                asked = c.call_tool_async("task_work", {"seconds": 0.1, "ask": True}).result(BOUND)
            assert "accept" in asked.text
        assert not router.refused, router.refused
        assert {m for m, _, _ in router.routed} == set(TaskRouter.TASK_METHODS)
        assert {index for _, _, index in router.routed} == {0, 1}  # tasks lived on both backends
        for _method, header, index in router.routed:
            assert router.owner_of[header] == index


# ---------------------------------------------------------------------------- defect 2: crossed answers


@pytest.mark.parametrize("mode", ["sse", "json"])
@HOW
def test_a_posts_answer_never_settles_another_call(engine: str, era: str, how: str, mode: str) -> None:
    """Call B is held inside the server; call A's answer carries a response with B's id, then A's own. A gets
    its own answer, B is not settled by A's POST (it gets its own later), the stray response is logged."""
    with FaultServer(era=era, response_mode=mode) as srv:
        with mcpsync.connect(srv.url, http=HTTPOptions(transport="http"), protocol=era, timeout=BOUND) as c:
            held = srv.inject("hold", rpc="tools/call", until_released=True)
            b = c.call_tool_async("echo", {"message": "b's own"})
            assert held.entered.wait(BOUND)
            crossed = srv.inject("crossed_answer", rpc="tools/call", foreign_id=held.messages[0]["id"], text="a's own")
            if how == "blocking":
                a = c.call_tool("echo", {"message": "a"})
            else:
                a = c.call_tool_async("echo", {"message": "a"}).result(BOUND)
            assert a.text == "a's own" and crossed.hits == 1
            assert not b.done()  # A's POST did not settle B
            held.release.set()
            assert b.result(BOUND).text == "b's own"
            drops = c.transport._drops.counts()  # type: ignore[attr-defined]
            assert any("response to another request" in k for k in drops), drops
            assert c.call_tool("echo", {"message": "after"}).text == "after"


def test_legacy_sse_post_bodies_never_settle_a_call(engine: str) -> None:
    """Legacy HTTP+SSE: answers come on the SSE stream only. Call B waits inside the server (on an elicitation
    its handler holds); call A's POST is acknowledged with a body holding a response with B's id: it is never
    delivered, B gets its own answer once released. (The POST body is drained unread in either protocol era;
    the handshake era is the one where B's id stays pending while the server holds it.)"""
    asked = threading.Event()
    gate = threading.Event()

    def hold(request: Any) -> Any:
        asked.set()
        assert gate.wait(BOUND)
        return request.accept({"name": "b", "age": 7})

    with FaultServer(era="auto") as srv:
        with mcpsync.connect(
            srv.sse_url(), http=HTTPOptions(transport="sse"), protocol="legacy", timeout=BOUND, elicitation_handler=hold
        ) as c:
            b = c.call_tool_async("elicit", {})
            assert asked.wait(BOUND)
            bid = srv.records("POST", "tools/call")[-1].body["id"]
            crossed = srv.inject("crossed_answer", rpc="tools/call", path="/messages", foreign_id=bid)
            assert c.call_tool("echo", {"message": "a"}).text == "a"
            assert crossed.hits == 1 and not b.done()
            gate.set()
            assert "accept" in b.result(BOUND).text


# ---------------------------------------------------------------------------- defect 1: never sent twice


@HOW
def test_an_early_413_is_reported_and_the_call_sent_once(engine: str, era: str, how: str) -> None:
    """The server answers 413 after reading 4 KiB of a 16 MiB tools/call and closes with the rest unread (the
    client's send fails mid-body on a reused keep-alive connection). The server sees the call exactly once and
    the caller gets HTTPStatusError(413); the client stays usable."""
    with FaultServer(era=era, response_mode="json") as srv:
        with mcpsync.connect(srv.url, http=HTTPOptions(transport="http"), protocol=era, timeout=BOUND) as c:
            assert c.call_tool("echo", {"message": "warm"}).text == "warm"  # a pooled connection to reuse
            rule = srv.inject("early_status", status=413, min_body=1 << 20)
            big = "x" * (16 << 20)
            with pytest.raises(mcpsync.errors.HTTPStatusError) as info:
                if how == "blocking":
                    c.call_tool("echo", {"message": big})
                else:
                    c.call_tool_async("echo", {"message": big}).result(BOUND)
            assert info.value.status_code == 413 and info.value.method == "tools/call"
            assert rule.hits == 1
            calls = [r for r in srv.records("POST", "tools/call") if r.body.get("id") == rule.messages[0].get("id")]
            assert len(calls) == 1, calls  # sent once: never re-sent on another connection
            assert c.call_tool("echo", {"message": "after"}).text == "after"


# ---------------------------------------------------------------------------- defect 3: close() during connect / TLS


def _stall(kind: str) -> Any:
    return FullBacklogServer() if kind == "tcp-connect" else StalledTLSServer()


def _inside(srv: Any) -> bool:
    """The client is inside the stalled step: its SYN is unanswered, or its ClientHello arrived."""
    if isinstance(srv, FullBacklogServer):
        return wait_for(lambda: srv.connecting() >= 1, BOUND)
    return bool(srv.hello.wait(BOUND))


def _in_thread(fn: Any) -> Any:
    errors: List[BaseException] = []

    def run() -> None:
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            errors.append(exc)

    t = threading.Thread(target=run, name="test-stalled-caller", daemon=True)
    t.start()
    return t, errors


STALLS = pytest.mark.parametrize("stall", ["tcp-connect", "tls-handshake"])


@STALLS
def test_close_ends_an_open_stuck_in_connect_or_tls(engine: str, era: str, stall: str) -> None:
    """open() waits on a TCP connect that never completes (full accept queue) or a TLS handshake the server
    never answers, with connect_timeout=300: close() from another thread ends it at once with an MCPError."""
    with _stall(stall) as srv:
        c = mcpsync.Client(
            srv.url, http=HTTPOptions(transport="http"), protocol=era, timeout=BOUND, connect_timeout=300
        )
        t, errors = _in_thread(c.open)
        assert _inside(srv)
        done = threading.Event()
        closer, _ = _in_thread(lambda: (c.close(), done.set()))
        assert done.wait(BOUND), "close() blocked"
        t.join(BOUND)
        assert not t.is_alive(), "open() outlived close() (it would have waited for connect_timeout)"
        assert len(errors) == 1 and isinstance(errors[0], mcpsync.MCPError), errors
        assert wait_for(lambda: srv.client_sockets() == 0, BOUND)  # nothing left open


@STALLS
@HOW
def test_close_ends_a_call_stuck_in_connect_or_tls(engine: str, stall: str, how: str) -> None:
    """A tools/call POST (inline: read in the caller's thread, as a blocking call; else handed to a stream
    thread, as an async one) waits on a new connection that never completes: close() ends it at once."""
    from mcpsync.transports.http.transport import StreamableHTTPTransport

    class Sink:
        def __init__(self) -> None:
            self.after_close: List[Any] = []
            self.closed = False

        def on_message(self, frame: Any) -> None:
            self.after_close.append(frame)

        def on_request_error(self, request_id: Any, exc: BaseException) -> None:
            if self.closed:
                self.after_close.append(exc)

        def on_close(self, exc: Any) -> None:
            self.closed = True

    with _stall(stall) as srv:
        transport = StreamableHTTPTransport(srv.url, connect_timeout=300, get_stream=False)
        sink = Sink()
        transport.start(sink)  # type: ignore[arg-type]
        message = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "echo", "arguments": {}}}
        t, errors = _in_thread(lambda: transport.send(message, timeout=BOUND, inline=how == "blocking"))
        assert _inside(srv)
        done = threading.Event()
        _in_thread(lambda: (transport.close(), done.set()))
        assert done.wait(BOUND), "close() blocked"
        t.join(BOUND)
        assert not t.is_alive(), "the call outlived close() (it would have waited for connect_timeout)"
        assert not errors and not sink.after_close, (errors, sink.after_close)
        assert wait_for(lambda: srv.client_sockets() == 0, BOUND)
