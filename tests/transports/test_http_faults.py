"""The HTTP fault matrix: Streamable HTTP (both eras) and legacy HTTP+SSE against a server that misbehaves.

Every cell uses :class:`tests.peers.faultserver.FaultServer` (a real local server, scripted per request).
The invariant in each: a clear MCPError subclass or a correct recovery, no hang (the bounds are the
tests' own timeouts, never timing assertions), the client stays usable afterwards, and nothing is left
behind after close() (the autouse leak check for threads, :func:`client_sockets` for connections).
docs/internals/reliability.md lists these cells.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable, Iterator, List, Optional

import pytest

import mcpsync
from mcpsync.client.flat import grouped
from mcpsync.transports.http import remote as _remote
from mcpsync.transports.http.transport import StreamableHTTPTransport
from mcpsync.transports.http.legacy_sse import endpoint_url

from tests.conftest import wait_for
from tests.peers.faultserver import FaultServer, RecordingServer
from mcpsync.client import HTTPOptions

pytestmark = pytest.mark.timeout(120)

BOUND = 30.0  # the most any cell may take before it counts as a hang



@pytest.fixture
def srv(era: str) -> Iterator[FaultServer]:
    with FaultServer(era=era) as s:
        yield s


@pytest.fixture
def json_srv(era: str) -> Iterator[FaultServer]:
    with FaultServer(era=era, response_mode="json") as s:
        yield s


@pytest.fixture
def sse_srv() -> Iterator[FaultServer]:
    with FaultServer(era="legacy") as s:
        yield s


@pytest.fixture(params=["legacy", "modern"])
def sse_proto(request: pytest.FixtureRequest) -> str:
    """The protocol spoken over the legacy HTTP+SSE transport: the 2024-11-05 handshake, or 2026-07-28."""
    return str(request.param)


@pytest.fixture
def sse_any() -> Iterator[FaultServer]:
    """A server speaking both eras on its legacy HTTP+SSE endpoint."""
    with FaultServer(era="auto") as s:
        yield s


def client_sockets(port: int) -> int:
    """Established TCP connections from this process to 127.0.0.1:``port`` (the client side)."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            link = os.readlink("/proc/self/fd/%s" % fd)
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    n = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                lines = f.readlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            remote_port = int(parts[2].rsplit(":", 1)[1], 16)
            if remote_port == port and parts[3] == "01" and parts[9] in inodes:
                n += 1
    return n


def connect(s: FaultServer, **options: Any) -> mcpsync.Client:
    options.setdefault("timeout", 20)
    options.setdefault("transport", "http")
    return mcpsync.connect(s.url, **grouped(options, remote=True))


def usable(c: mcpsync.Client) -> None:
    assert c.call_tool("echo", {"message": "still fine"}).text == "still fine"


def closed_cleanly(c: mcpsync.Client, s: FaultServer) -> None:
    c.close()
    assert wait_for(lambda: client_sockets(s.port) == 0, 10), "connections left open after close()"


def bounded(fn: Callable[[], Any]) -> Any:
    """Run ``fn`` in a helper thread; fail (instead of hanging) when it takes longer than BOUND."""
    out: List[Any] = []

    def run() -> None:
        try:
            out.append(("ok", fn()))
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out.append(("err", exc))

    t = threading.Thread(target=run, name="test-bounded", daemon=True)
    t.start()
    t.join(BOUND)
    assert not t.is_alive(), "the call hung"
    kind, value = out[0]
    if kind == "err":
        raise value
    return value


def call(c: mcpsync.Client, how: str, *args: Any, **kw: Any) -> Any:
    """A tool call through the blocking path (its stream read in this thread) or the async one."""
    if how == "blocking":
        return bounded(lambda: c.call_tool(*args, **kw))
    timeout = kw.pop("timeout", None)
    return bounded(lambda: c.call_tool_async(*args, timeout=timeout, **kw).result())


HOW = pytest.mark.parametrize("how", ["blocking", "async"])


# ---------------------------------------------------------------------------- status answers


@pytest.mark.parametrize("status", [500, 502])
def test_5xx_fails_that_call_only(srv: FaultServer, status: int) -> None:
    with connect(srv) as c:
        srv.inject("status", rpc="tools/call", status=status)
        with pytest.raises(mcpsync.errors.HTTPStatusError) as info:
            call(c, "blocking", "echo", {"message": "x"})
        assert info.value.status_code == status and info.value.method == "tools/call"
        usable(c)
        closed_cleanly(c, srv)


def test_404_expires_the_session_and_the_call_is_replayed(srv: FaultServer, era: str) -> None:
    with connect(srv) as c:
        if era == "legacy":
            srv.expire()  # a real expiry: re-initialize once, replay once, succeed
            assert c.call_tool("echo", {"message": "again"}).text == "again"
            assert len(srv.records("POST", "initialize")) == 2
        else:  # 2026-07-28 has no session: a bare 404 is that call's error
            srv.inject("status", rpc="tools/call", status=404, body=b"not here")
            with pytest.raises(mcpsync.errors.HTTPStatusError) as info:
                call(c, "blocking", "echo", {"message": "x"})
            assert info.value.status_code == 404
        usable(c)
        closed_cleanly(c, srv)


def test_404_twice_is_session_expired(srv: FaultServer, era: str) -> None:
    if era != "legacy":
        pytest.skip("sessions exist in the handshake era only")
    with connect(srv) as c:
        srv.inject("status", rpc="tools/call", status=404, times=2)
        with pytest.raises(mcpsync.errors.SessionExpired):
            call(c, "blocking", "echo", {"message": "x"})
        usable(c)


# ---------------------------------------------------------------------------- broken connections


@pytest.mark.parametrize("kind", ["reset", "reset_headers", "close_before_body", "close_during_body"])
@HOW
def test_broken_answer_fails_that_call(srv: FaultServer, kind: str, how: str) -> None:
    with connect(srv) as c:
        srv.inject(kind, rpc="tools/call")
        with pytest.raises(mcpsync.TransportError):
            call(c, how, "echo", {"message": "x"})
        usable(c)
        closed_cleanly(c, srv)


@HOW
def test_event_stream_cut_mid_event(srv: FaultServer, era: str, how: str) -> None:
    """Handshake era: no event id to resume from, the call fails; 2026-07-28: the call is re-issued."""
    with connect(srv) as c:
        srv.inject("close_during_body", rpc="tools/call", stream=True)
        if era == "legacy":
            with pytest.raises(mcpsync.errors.ConnectionClosed):
                call(c, how, "echo", {"message": "x"})
        else:
            assert call(c, how, "echo", {"message": "x"}).text == "x"
            assert len(srv.records("POST", "tools/call")) == 2
        usable(c)
        closed_cleanly(c, srv)


@HOW
def test_event_stream_cut_after_n_events_recovers(srv: FaultServer, era: str, how: str) -> None:
    """Handshake era: resumed with GET + Last-Event-ID; 2026-07-28: re-issued with a new id."""
    with connect(srv) as c:
        srv.inject("cut", rpc="tools/call", after=2)
        result = call(c, how, "slow", {"seconds": 0.3, "steps": 4}, timeout=20)
        assert not result.is_error
        if era == "legacy":
            assert any(r.headers.get("last-event-id") for r in srv.records("GET"))
        else:
            ids = [r.body["id"] for r in srv.records("POST", "tools/call")]
            assert len(ids) == 2 and ids[0] != ids[1]
        usable(c)
        closed_cleanly(c, srv)


# ---------------------------------------------------------------------------- timeouts (defects 2 and 3)


def _cancelled_upstream(s: FaultServer, era: str, rule: Any = None) -> None:
    """Handshake era: notifications/cancelled reached the server; 2026-07-28: the stream was closed."""
    if era == "legacy":
        assert wait_for(lambda: len(s.cancellations()) >= 1, 10), "no notifications/cancelled"
    else:
        assert not s.cancellations()  # 2026-07-28 cancels by closing the stream
        if rule is not None:
            assert wait_for(rule.client_gone.is_set, 10), "the request's stream was not closed"


@HOW
def test_server_never_answers_the_post(srv: FaultServer, era: str, how: str) -> None:
    with connect(srv) as c:
        rule = srv.inject("stall", rpc="tools/call")
        with pytest.raises(mcpsync.RequestTimeout) as info:
            call(c, how, "echo", {"message": "x"}, timeout=0.5)
        assert info.value.method == "tools/call"
        _cancelled_upstream(srv, era)
        if era == "legacy":
            assert srv.cancellations() == [rule.messages[0]["id"]]
        rule.release.set()
        usable(c)
        closed_cleanly(c, srv)


@HOW
def test_json_body_stalls_after_the_headers(srv: FaultServer, era: str, how: str) -> None:
    """urllib3's read timeout during the body read is a RequestTimeout, not ConnectionClosed."""
    with connect(srv) as c:
        rule = srv.inject("stall_body", rpc="tools/call")
        with pytest.raises(mcpsync.RequestTimeout):
            call(c, how, "echo", {"message": "x"}, timeout=0.5)
        _cancelled_upstream(srv, era)
        rule.release.set()
        usable(c)
        closed_cleanly(c, srv)


@pytest.mark.parametrize("noise", [False, True], ids=["comments", "comments+priming+unrelated"])
@HOW
def test_keepalive_comments_do_not_extend_the_idle_timeout(srv: FaultServer, era: str, how: str, noise: bool) -> None:
    """One progress event, then only comments (and priming events, unrelated messages): the call times out."""
    with connect(srv) as c:
        rule = srv.inject("comments", rpc="tools/call", progress=1, noise=noise, interval=0.02)
        seen: List[Any] = []
        with pytest.raises(mcpsync.RequestTimeout):
            call(c, how, "slow", {"seconds": 60}, timeout=0.6, progress=seen.append)
        _cancelled_upstream(srv, era, rule)
        assert wait_for(rule.client_gone.is_set, 10)  # the stream is not read forever
        usable(c)
        closed_cleanly(c, srv)


@HOW
def test_progress_restarts_the_idle_timeout(srv: FaultServer, how: str) -> None:
    """The positive side: a call that reports progress outlives its idle timeout many times over."""
    with connect(srv) as c:
        seen: List[Any] = []
        result = call(c, how, "slow", {"seconds": 3.0, "steps": 30}, timeout=2.0, progress=seen.append)
        assert not result.is_error and seen
        closed_cleanly(c, srv)


def test_read_timeout_on_the_post_is_a_request_timeout(json_srv: FaultServer, era: str) -> None:
    with connect(json_srv, http=HTTPOptions(read_timeout=0.3)) as c:
        with pytest.raises(mcpsync.RequestTimeout):
            call(c, "blocking", "slow", {"seconds": 1.5, "steps": 0})
        _cancelled_upstream(json_srv, era)
        usable(c)


# ---------------------------------------------------------------------------- malformed traffic


@HOW
def test_malformed_events_are_dropped_and_the_call_answered(srv: FaultServer, how: str) -> None:
    with connect(srv) as c:
        srv.inject("junk_events", rpc="tools/call", times=None)
        assert call(c, how, "echo", {"message": "x"}).text == "x"
        assert call(c, how, "add", {"a": 1, "b": 2}).structured_content == {"sum": 3}
        srv.clear()
        usable(c)
        closed_cleanly(c, srv)


@pytest.mark.parametrize("body", [b"{not json", b"\xff\xfe", b"[1,2", b'{"jsonrpc":"2.0","id":{"a":1},"result":{}}'])
def test_junk_json_body_fails_that_call_only(json_srv: FaultServer, body: bytes) -> None:
    with connect(json_srv) as c:
        slow = c.call_tool_async("slow", {"seconds": 0.5, "steps": 0})
        assert wait_for(lambda: len(json_srv.records("POST", "tools/call")) == 1, BOUND)
        json_srv.inject("junk_body", rpc="tools/call", body=body)
        with pytest.raises(mcpsync.ProtocolError) as info:
            call(c, "blocking", "echo", {"message": "x"})
        assert info.value.method == "tools/call"
        assert not bounded(slow.result).is_error  # the other call is untouched
        usable(c)


# ---------------------------------------------------------------------------- the GET stream (handshake era)


@pytest.mark.parametrize("attempt", range(5))
def test_get_stream_is_open_before_open_returns(attempt: int) -> None:
    """Defect 13: a server message sent right after the first call is never lost."""
    changed = threading.Event()

    def on_note(n: Any) -> None:
        if n.method == "notifications/tools/list_changed":
            changed.set()

    with FaultServer(era="legacy") as s:
        with connect(s, on_notification=on_note) as c:
            assert len(s.get_streams) == 1  # attached on the server before connect() returned
            c.call_tool("add_tool", {"name": "t%d" % attempt})
            assert changed.wait(BOUND), "the list_changed notification on the GET stream was lost"
            closed_cleanly(c, s)


@pytest.mark.parametrize("status", [405, 404, 406])
def test_get_stream_refused_is_learned_during_open(sse_srv: FaultServer, status: int) -> None:
    sse_srv.inject("status", verb="GET", path="/mcp", status=status, body=b"")
    with connect(sse_srv) as c:
        t = c.transport
        assert isinstance(t, StreamableHTTPTransport)
        assert t._session.get_stopped  # noqa: SLF001 - learned before open() returned
        usable(c)
        closed_cleanly(c, sse_srv)


def test_get_stream_5xx_is_retried(sse_srv: FaultServer) -> None:
    rule = sse_srv.inject("status", verb="GET", path="/mcp", status=503, body=b"")
    with connect(sse_srv) as c:
        assert rule.entered.is_set()
        assert wait_for(lambda: len(sse_srv.get_streams) == 1, BOUND)
        usable(c)


def test_get_stream_stalling_before_headers_delays_open_boundedly(sse_srv: FaultServer) -> None:
    rule = sse_srv.inject("stall", verb="GET", path="/mcp")
    c = bounded(lambda: connect(sse_srv, connect_timeout=1))
    try:
        usable(c)
    finally:
        rule.release.set()
        c.close()


def test_get_stream_with_comments_and_junk_keeps_delivering(sse_srv: FaultServer) -> None:
    changed = threading.Event()
    sse_srv.inject("junk_events", verb="GET", path="/mcp", comments=5)

    def on_note(n: Any) -> None:
        if n.method == "notifications/tools/list_changed":
            changed.set()

    with connect(sse_srv, on_notification=on_note) as c:
        c.call_tool("add_tool", {"name": "after_junk"})
        assert changed.wait(BOUND)
        usable(c)
        closed_cleanly(c, sse_srv)


# ---------------------------------------------------------------------------- close races


@pytest.mark.parametrize("kind", ["stall", "comments"])
@HOW
def test_close_during_a_call(srv: FaultServer, kind: str, how: str) -> None:
    """close() from another thread while a call waits on a stalled POST or a comment-only stream: the
    call ends at once with a ConnectionClosed-family error, close() is bounded, nothing is left open."""
    c = connect(srv, timeout=None)
    rule = srv.inject(kind, rpc="tools/call")
    errors: List[BaseException] = []

    def run() -> None:
        try:
            if how == "blocking":
                c.call_tool("echo", {"message": "x"})
            else:
                c.call_tool_async("echo", {"message": "x"}).result()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    t = threading.Thread(target=run, name="test-caller", daemon=True)
    t.start()
    assert rule.entered.wait(BOUND)  # the call is at the racy point: inside the server
    bounded(c.close)
    t.join(BOUND)
    assert not t.is_alive(), "the call outlived close()"
    assert len(errors) == 1 and isinstance(errors[0], (mcpsync.errors.ConnectionClosed, mcpsync.ClientClosed)), errors
    rule.release.set()
    assert wait_for(lambda: client_sockets(srv.port) == 0, 10)


@pytest.mark.parametrize("rpc", ["initialize", "server/discover"])
def test_close_during_open(srv: FaultServer, era: str, rpc: str) -> None:
    """close() while open() waits on a stalled handshake: open() fails promptly with an MCPError."""
    if (era == "legacy") != (rpc == "initialize"):
        pytest.skip("the era negotiates with the other request")
    rule = srv.inject("stall", rpc=rpc)
    c = mcpsync.Client(srv.url, http=HTTPOptions(transport="http"), timeout=20, connect_timeout=60)
    errors: List[BaseException] = []

    def run() -> None:
        try:
            c.open()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    t = threading.Thread(target=run, name="test-opener", daemon=True)
    t.start()
    assert rule.entered.wait(BOUND)
    bounded(c.close)
    t.join(BOUND)
    assert not t.is_alive(), "open() outlived close()"
    assert len(errors) == 1 and isinstance(errors[0], mcpsync.MCPError), errors
    rule.release.set()
    assert wait_for(lambda: client_sockets(srv.port) == 0, 10)


# ---------------------------------------------------------------------------- session renewal races (defect 4)


def test_concurrent_callers_share_one_renewal(sse_srv: FaultServer) -> None:
    """8 calls get 404 at once (held at a barrier), 8 more start while the re-initialize is held:
    exactly one re-initialize per round, every request carries a session id, no call fails."""
    rounds, n = 5, 8
    with connect(sse_srv) as c:
        t = c.transport
        assert isinstance(t, StreamableHTTPTransport)
        for r in range(rounds):
            start = len(sse_srv.log)
            sse_srv.expire()
            sse_srv.inject("hold", rpc="tools/call", times=n, barrier=threading.Barrier(n))
            init = sse_srv.inject("hold", rpc="initialize", until_released=True)
            results: List[Any] = []
            errors: List[BaseException] = []

            def one(tag: str, results: List[Any] = results, errors: List[BaseException] = errors) -> None:
                try:
                    results.append(c.call_tool("echo", {"message": tag}).text)
                except BaseException as exc:  # noqa: BLE001
                    errors.append(exc)

            first = [threading.Thread(target=one, args=("%d-%d" % (r, i),)) for i in range(n)]
            for th in first:
                th.start()
            assert init.entered.wait(BOUND), "no re-initialize"
            late = [threading.Thread(target=one, args=("%d-%d" % (r, n + i),)) for i in range(n)]
            for th in late:
                th.start()
            # every other caller is now parked on the renewal: 7 that got 404 plus the 8 late ones (the GET
            # stream, when the expiry ended it, may be parked there too)
            session = t._session  # noqa: SLF001
            assert wait_for(lambda s=session: s.renew_waiters >= 2 * n - 1, BOUND), session.renew_waiters
            init.release.set()
            for th in first + late:
                th.join(BOUND)
            assert not errors, errors
            assert sorted(results) == sorted("%d-%d" % (r, i) for i in range(2 * n))
            window = sse_srv.log[start:]
            inits = [x for x in window if isinstance(x.body, dict) and x.body.get("method") == "initialize"]
            assert len(inits) == 1
            for x in window:
                if x.method == "POST" and x.body is not inits[0].body:
                    assert x.headers.get("mcp-session-id"), x
        usable(c)
        closed_cleanly(c, sse_srv)


# ---------------------------------------------------------------------------- 2026-07-28 specifics


def test_modern_era_has_no_session(era: str) -> None:
    if era != "modern":
        pytest.skip("2026-07-28 only")
    with FaultServer(era="modern") as s:
        with connect(s) as c:
            usable(c)
        assert not any("mcp-session-id" in r.headers for r in s.log)
        assert not s.records("DELETE") and not s.records("GET")
        posts = [r for r in s.records("POST") if isinstance(r.body, dict)]
        assert posts and all(r.headers.get("mcp-method") == r.body.get("method") for r in posts)
        assert all(r.headers.get("mcp-protocol-version") == "2026-07-28" for r in posts)


def test_listen_stream_survives_comments_and_junk() -> None:
    """A 2026-07-28 listen stream has no idle timeout: comments and malformed events neither end it nor
    stop the notifications that follow them."""
    with FaultServer(era="modern") as s:
        rule = s.inject("junk_events", rpc="subscriptions/listen", comments=5)
        changed = threading.Event()

        def on_event(n: Any) -> None:
            if n.method == "notifications/tools/list_changed":
                changed.set()

        with connect(s) as c:
            sub = c.listen(tools=True, on_event=on_event)
            assert wait_for(rule.entered.is_set, BOUND)
            c.call_tool("add_tool", {"name": "after_junk"})
            assert changed.wait(BOUND), "the notification after the junk was lost"
            usable(c)
            sub.close()
            closed_cleanly(c, s)


def test_modern_header_mismatch_is_a_remote_error(era: str) -> None:
    if era != "modern":
        pytest.skip("2026-07-28 only")
    body = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32020,"message":"Header mismatch: Mcp-Name"}}'
    with FaultServer(era="modern") as s:
        with connect(s) as c:
            s.inject("status", rpc="tools/call", status=400, body=body, times=2)
            with pytest.raises(mcpsync.RemoteError) as info:
                call(c, "blocking", "echo", {"message": "x"})
            assert info.value.code == -32020
            usable(c)


# ---------------------------------------------------------------------------- legacy HTTP+SSE (2024-11-05)


def sse_connect(s: FaultServer, **options: Any) -> mcpsync.Client:
    options.setdefault("timeout", 20)
    options.setdefault("transport", "sse")
    return mcpsync.connect(s.sse_url(), **grouped(options, remote=True))


def test_sse_transport_speaks_the_era_asked_for(sse_any: FaultServer, sse_proto: str) -> None:
    with sse_connect(sse_any, protocol=sse_proto) as c:
        assert c.era == sse_proto
        usable(c)


def test_sse_endpoint_backslash_bypass_is_refused(sse_srv: FaultServer) -> None:
    """Defect 5: urllib reads host A, requests would connect to B; the endpoint is refused."""
    with RecordingServer() as evil:
        sse_srv.faults.endpoint_style = "raw"
        sse_srv.faults.endpoint_raw = "http://127.0.0.1:%d\\@127.0.0.1:{port}{base}/messages?sid={sid}" % evil.port
        with pytest.raises(mcpsync.errors.ConnectError):
            sse_connect(sse_srv, connect_timeout=5)
        assert not evil.hits
        assert not sse_srv.records("POST")


@pytest.mark.parametrize(
    "endpoint",
    [
        "http://127.0.0.1:1\\@127.0.0.1:2/m",
        "http://user:pw@127.0.0.1:2/m",
        "http://127.0.0.1:2@evil.example/m",
        "/m\x00x",
        "/m\nx",
        "/m x",
        "//evil.example/m",
        "https://127.0.0.1:2/m",
        "http://127.0.0.1:3/m",
    ],
)
def test_sse_endpoint_origin_check(endpoint: str) -> None:
    assert endpoint_url("http://127.0.0.1:2/sse", endpoint)[0] is None


def test_sse_endpoint_post_url_is_built_from_the_base_origin() -> None:
    def post_url(base: str, data: str) -> Optional[str]:
        return endpoint_url(base, data)[0]

    assert post_url("http://127.0.0.1:2/p/sse", "messages?sid=1#frag") == "http://127.0.0.1:2/p/messages?sid=1"
    assert post_url("http://127.0.0.1:2/sse", "HTTP://127.0.0.1:2/m?a=b") == "http://127.0.0.1:2/m?a=b"
    assert post_url("http://[::1]:2/sse", "/m") == "http://[::1]:2/m"


@pytest.mark.parametrize("status", [500, 502, 404])
def test_sse_post_status_fails_that_call(sse_any: FaultServer, sse_proto: str, status: int) -> None:
    with sse_connect(sse_any, protocol=sse_proto) as c:
        sse_any.inject("status", rpc="tools/call", path="/messages", status=status, body=b"nope")
        with pytest.raises(mcpsync.errors.HTTPStatusError):
            bounded(lambda: c.call_tool("echo", {"message": "x"}))
        usable(c)
        closed_cleanly(c, sse_any)


def test_sse_post_reset_fails_that_call(sse_any: FaultServer, sse_proto: str) -> None:
    with sse_connect(sse_any, protocol=sse_proto) as c:
        sse_any.inject("reset", rpc="tools/call", path="/messages")
        with pytest.raises(mcpsync.TransportError):
            bounded(lambda: c.call_tool("echo", {"message": "x"}))
        usable(c)
        closed_cleanly(c, sse_any)


def test_sse_post_acknowledged_then_cut_waits_for_the_answer_on_the_stream(sse_srv: FaultServer) -> None:
    """A 2xx acknowledgement whose body breaks still means 'accepted': the call ends by its timeout."""
    with sse_connect(sse_srv) as c:
        sse_srv.inject("close_before_body", rpc="tools/call", path="/messages")
        with pytest.raises(mcpsync.RequestTimeout):
            bounded(lambda: c.call_tool("echo", {"message": "x"}, timeout=0.5))
        assert wait_for(lambda: len(sse_srv.cancellations()) == 1, 10)
        usable(c)


def test_sse_post_never_acknowledged_times_out_and_cancels(sse_srv: FaultServer) -> None:
    """The POST's acknowledgement is bounded by read_timeout (default: connect_timeout)."""
    with sse_connect(sse_srv, read_timeout=0.5) as c:
        rule = sse_srv.inject("stall", rpc="tools/call", path="/messages")
        with pytest.raises(mcpsync.RequestTimeout):
            bounded(lambda: c.call_tool("echo", {"message": "x"}, timeout=20))
        assert wait_for(lambda: sse_srv.cancellations() == [rule.messages[0]["id"]], 10)
        rule.release.set()
        usable(c)


def test_sse_answer_never_comes_times_out_and_cancels(sse_any: FaultServer, sse_proto: str) -> None:
    """The stream carries nothing for the call (no progress): the idle timeout ends it, cancelled upstream."""
    with sse_connect(sse_any, protocol=sse_proto) as c:
        with pytest.raises(mcpsync.RequestTimeout):
            bounded(lambda: c.call_tool("slow", {"seconds": 30, "steps": 0}, timeout=0.5))
        assert wait_for(lambda: len(sse_any.cancellations()) == 1, 10)
        usable(c)
        closed_cleanly(c, sse_any)


def test_sse_stream_junk_before_the_endpoint(sse_any: FaultServer, sse_proto: str) -> None:
    sse_any.inject("junk_events", verb="GET", path="/sse", comments=3)
    with sse_connect(sse_any, protocol=sse_proto) as c:
        usable(c)
        closed_cleanly(c, sse_any)


def test_sse_stream_refused(sse_srv: FaultServer) -> None:
    sse_srv.inject("status", verb="GET", path="/sse", status=502, body=b"bad gateway")
    with pytest.raises(mcpsync.errors.HTTPStatusError):
        sse_connect(sse_srv)
    with sse_connect(sse_srv) as c:  # the next connect works
        usable(c)


def test_sse_stream_stalls_before_the_endpoint(sse_srv: FaultServer) -> None:
    rule = sse_srv.inject("comments", verb="GET", path="/sse")
    with pytest.raises(mcpsync.errors.ConnectError):
        bounded(lambda: sse_connect(sse_srv, connect_timeout=1))
    rule.release.set()


def test_sse_close_during_a_call(sse_any: FaultServer, sse_proto: str) -> None:
    """close() while a call's POST waits for an acknowledgement that never comes: the call ends at once."""
    c = sse_connect(sse_any, protocol=sse_proto, timeout=None)
    rule = sse_any.inject("stall", rpc="tools/call", path="/messages")
    errors: List[BaseException] = []

    def run() -> None:
        try:
            c.call_tool("echo", {"message": "x"})
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    t = threading.Thread(target=run, name="test-caller", daemon=True)
    t.start()
    assert rule.entered.wait(BOUND)
    bounded(c.close)
    t.join(BOUND)
    assert not t.is_alive(), "the call outlived close()"
    assert len(errors) == 1 and isinstance(errors[0], (mcpsync.errors.ConnectionClosed, mcpsync.ClientClosed)), errors
    rule.release.set()
    assert wait_for(lambda: client_sockets(sse_any.port) == 0, 10)


def test_read_timeouts_are_recognised_however_wrapped() -> None:
    """urllib3's ReadTimeoutError and a bare socket.timeout are read timeouts, as requests' ReadTimeout is."""
    import socket

    import requests
    from urllib3.exceptions import ProtocolError, ReadTimeoutError

    from mcpsync.transports.http.calls import _is_read_timeout

    u3 = ReadTimeoutError(None, "/mcp", "Read timed out.")  # type: ignore[arg-type]
    for exc in (u3, socket.timeout("timed out"), requests.exceptions.ReadTimeout(u3), ProtocolError("x", u3)):
        assert _is_read_timeout(exc)
        err = _remote.convert_request_exception(exc, "http://127.0.0.1:1/mcp")
        assert isinstance(err, mcpsync.errors.ConnectionClosed) and "read timeout" in str(err)
    assert not _is_read_timeout(requests.exceptions.ConnectTimeout("x"))
    assert not _is_read_timeout(ConnectionResetError())


def test_a_failed_renewal_fails_its_waiters_once(sse_srv: FaultServer) -> None:
    """8 calls get 404 at once; the one re-initialize fails while the other 7 wait for it: all 8 raise
    SessionExpired (no storm of re-initializes), and the next call renews the session and succeeds."""
    n = 8
    with connect(sse_srv) as c:
        t = c.transport
        assert isinstance(t, StreamableHTTPTransport)
        sse_srv.expire()
        sse_srv.inject("hold", rpc="tools/call", times=n, barrier=threading.Barrier(n))
        init = sse_srv.inject("stall", rpc="initialize")  # released below, then cut: the renewal fails
        errors: List[BaseException] = []

        def one() -> None:
            try:
                c.call_tool("echo", {"message": "x"})
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)

        threads = [threading.Thread(target=one) for _ in range(n)]
        for th in threads:
            th.start()
        assert init.entered.wait(BOUND)
        assert wait_for(lambda: t._session.renew_waiters >= n - 1, BOUND), t._session.renew_waiters  # noqa: SLF001
        init.release.set()
        for th in threads:
            th.join(BOUND)
        assert len(errors) == n and all(isinstance(e, mcpsync.errors.SessionExpired) for e in errors), errors
        assert len(sse_srv.records("POST", "initialize")) == 2  # the first open, and the one failed renewal
        usable(c)  # renews now
        assert len(sse_srv.records("POST", "initialize")) == 3
        closed_cleanly(c, sse_srv)
