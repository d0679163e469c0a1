"""MCP Apps: a new View takes over (a reload, a second tab, a desktop window that reloads) and is replayed what a
View needs; a reader that reconnects (a dropped event stream) resumes where the View left off; a replaced View and
an ended session are told so. Against the example server's counter App, the bridge directly and the web host over
real HTTP (the Chromium test of the same is in tests/browser/test_apps_browser.py)."""

from __future__ import annotations

import io
import json
import socket
import threading
from typing import Any, Dict, Iterator, List, Optional, Tuple
from urllib.parse import urlencode, urlsplit

import pytest
import requests
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpsync import Client
from mcpsync.apps import AppBridge, AppWebHost

from tests.conftest import fuzz_examples, server_cmd
from tests.apps.test_apps_bridge import drain, init, note, req
from tests.browser.test_apps_browser import Site
from mcpsync.client import ClientOptions

INPUT, PARTIAL = "ui/notifications/tool-input", "ui/notifications/tool-input-partial"
RESULT, CANCELLED = "ui/notifications/tool-result", "ui/notifications/tool-cancelled"


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    with Client(server_cmd("--apps"), options=ClientOptions(apps=True)) as c:
        c.list_tools()
        yield c


@pytest.fixture
def site() -> Iterator[Site]:
    s = Site()
    yield s
    s.close()


def methods(messages: List[Dict[str, Any]]) -> List[str]:
    return [m.get("method", "") for m in messages]


# ---------------------------------------------------------------------------------------------- the bridge


def test_a_second_initialize_is_a_new_view_replayed_input_result_and_context(client: Client) -> None:
    bridge = AppBridge(client, client.get_tool("show_counter"))
    try:
        bridge.call_tool({"start": 4})
        init(bridge)
        assert methods(drain(bridge)) == [INPUT, RESULT]
        bridge.set_host_context(theme="dark")
        bridge.send_tool_input_partial({"start": 9})  # a newer call begins while the old View goes away
        answer = init(bridge)  # the reloaded page's ui/initialize
        assert bridge.views == 1
        assert answer["hostContext"]["theme"] == "dark"  # the context now, not the first one
        again = drain(bridge)
        assert methods(again) == [PARTIAL]  # the newest call's partial input: no stale result of the old call
        assert again[0]["params"] == {"arguments": {"start": 9}}
        bridge.send_tool_input({"start": 9})
        bridge.send_tool_cancelled("stopped")
        init(bridge)
        again = drain(bridge)
        assert methods(again) == [INPUT, CANCELLED] and again[0]["params"] == {"arguments": {"start": 9}}
        assert bridge.views == 2
    finally:
        bridge.close()


def test_nothing_reaches_a_new_view_before_it_initialized(client: Client) -> None:
    bridge = AppBridge(client, client.get_tool("show_counter"))
    try:
        bridge.call_tool({"start": 1})
        init(bridge)
        drain(bridge)
        bridge.send_tool_result({"structuredContent": {"count": 2}, "content": []})  # not taken by the old View
        bridge.begin_view()  # what a transport that tells Views apart calls as the new one appears
        assert drain(bridge) == []  # the old View's leftovers are gone, the replay waits for initialized
        refused = bridge.handle(req(5, "tools/call", {"name": "counter_increment", "arguments": {"count": 1}}))
        assert refused is not None and refused["error"]["code"] == -32600  # "send ui/initialize first"
        init(bridge)
        again = drain(bridge)
        assert methods(again) == [INPUT, RESULT] and again[1]["params"]["structuredContent"] == {"count": 2}
    finally:
        bridge.close()


def test_a_teardown_waiting_on_the_old_view_gives_up_when_a_new_one_takes_over(client: Client) -> None:
    bridge = AppBridge(client, client.get_tool("show_counter"))
    try:
        init(bridge)
        outcome: List[bool] = []
        waiter = threading.Thread(target=lambda: outcome.append(bridge.teardown(60)))
        waiter.start()
        assert bridge.next_outgoing(30) is not None  # the teardown request is out: the waiter is waiting
        bridge.begin_view()
        waiter.join(30)
        assert not waiter.is_alive() and outcome == [False]
    finally:
        bridge.close()


def test_a_reconnecting_reader_gets_again_what_the_dropped_one_took(client: Client) -> None:
    bridge = AppBridge(client, client.get_tool("show_counter"), max_resend=3)
    try:
        init(bridge)
        first, again = bridge.claim_outgoing()
        assert again == []
        for n in range(5):
            bridge.send_tool_input_partial({"n": n})
        taken = [bridge.take_outgoing(first, 30) for _ in range(4)]
        seqs = [t[0] for t in taken if t is not None]
        assert len(seqs) == 4
        second, again = bridge.claim_outgoing(after=seqs[1])  # the View had acknowledged the second one
        assert [s for s, _ in again] == seqs[2:]
        assert [m["params"]["arguments"]["n"] for _, m in again] == [2, 3]
        assert bridge.take_outgoing(first, 0) is None and not bridge.holds_claim(first)  # the old reader is out
        last = bridge.take_outgoing(second, 30)
        assert last is not None and last[1]["params"]["arguments"] == {"n": 4} and last[0] == seqs[-1] + 1
        _, again = bridge.claim_outgoing(after=0)  # older than what is kept: what is kept, with a warning
        assert [s for s, _ in again] == [seqs[2], seqs[3], last[0]]
    finally:
        bridge.close()


def test_a_reader_held_waiting_is_released_at_once_by_a_new_claim(client: Client) -> None:
    bridge = AppBridge(client, client.get_tool("show_counter"))
    try:
        init(bridge)
        claim, _ = bridge.claim_outgoing()
        result: List[Optional[Tuple[int, Dict[str, Any]]]] = []
        entered = threading.Event()

        def read() -> None:
            entered.set()
            result.append(bridge.take_outgoing(claim, 120))

        reader = threading.Thread(target=read)
        reader.start()
        assert entered.wait(30)
        newer, _ = bridge.claim_outgoing()
        reader.join(30)
        assert not reader.is_alive() and result == [None]
        bridge.send_tool_input({"x": 1})
        item = bridge.take_outgoing(newer, 30)  # the message went to the new reader, not the released one
        assert item is not None and item[1]["method"] == INPUT
    finally:
        bridge.close()


# ---------------------------------------------------------------------------------------------- the web host


def _urls(site: Site, token: str) -> Dict[str, str]:
    base = site.host.host_origin + "/mcp-apps/s/%s/" % token
    return {"page": base, "rpc": base + "rpc", "events": base + "events"}


class Stream:
    """One event stream read on a thread over a plain socket: its (id, message) pairs; ``close()`` drops the
    connection the way a network does (shutdown, no goodbye)."""

    def __init__(self, url: str, headers: Optional[Dict[str, str]] = None) -> None:
        parts = urlsplit(url)
        self.items: List[Tuple[int, Dict[str, Any]]] = []
        self.cond = threading.Condition()
        self.sock = socket.create_connection((parts.hostname, parts.port), timeout=60)
        lines = ["GET %s?%s HTTP/1.0" % (parts.path, parts.query), "Host: %s" % parts.netloc]
        lines += ["%s: %s" % kv for kv in (headers or {}).items()]
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("ascii"))
        self.file = self.sock.makefile("rb")
        status = self.file.readline()
        self.status = int(status.split()[1])
        while self.file.readline() not in (b"\r\n", b""):
            pass
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        seq = 0
        try:
            for line in self.file:
                if line.startswith(b"id: "):
                    seq = int(line[4:])
                elif line.startswith(b"data: "):
                    with self.cond:
                        self.items.append((seq, json.loads(line[6:])))
                        self.cond.notify_all()
        except (OSError, ValueError):  # the test dropped the connection
            pass

    def wait(self, n: int) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: len(self.items) >= n, 30)

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.thread.join(30)
        self.file.close()
        self.sock.close()


def _post(u: Dict[str, str], view: str, message: Dict[str, Any]) -> requests.Response:
    return requests.post(u["rpc"], json=message, headers={"X-MCP-App-View": view}, timeout=30)


def _initialize(u: Dict[str, str], view: str) -> None:
    answer = _post(u, view, req(1, "ui/initialize", {"protocolVersion": "2026-01-26"}))
    assert answer.status_code == 200 and "result" in answer.json(), answer.text
    assert _post(u, view, note("ui/notifications/initialized")).status_code == 204


def test_a_dropped_stream_resumes_from_last_event_id(site: Site, client: Client) -> None:
    session = site.host.open(client, "show_counter")
    u = _urls(site, session.token)
    view = "view-aaaaaaaaaaaa"
    first = Stream(u["events"] + "?view=" + view)
    _initialize(u, view)
    for n in range(3):
        session.bridge.send_tool_input_partial({"n": n})
    assert first.wait(3)
    last_seen = first.items[-1][0]
    first.close()  # the network drops the stream; what is sent now may be taken by the dead stream and lost
    for n in range(3, 5):
        session.bridge.send_tool_input_partial({"n": n})
    second = Stream(u["events"] + "?view=" + view, headers={"Last-Event-ID": str(last_seen)})
    assert second.wait(2)
    assert [m["params"]["arguments"]["n"] for _, m in second.items] == [3, 4]  # each once, in order
    assert session.bridge.views == 0  # the same View: nothing replayed
    second.close()


def test_a_new_view_takes_over_and_the_replaced_one_is_told(site: Site, client: Client) -> None:
    session = site.host.open(client, "show_counter")
    u = _urls(site, session.token)
    session.bridge.call_tool({"start": 3})
    old, new = "view-old-000000", "view-new-111111"
    first = Stream(u["events"] + "?view=" + old)
    _initialize(u, old)
    assert first.wait(2) and methods([m for _, m in first.items]) == [INPUT, RESULT]
    # the reloaded page's first POST arrives before its stream: it takes over at once, the old stream ends
    answer = _post(u, new, req(1, "ui/initialize", {"protocolVersion": "2026-01-26"}))
    assert "result" in answer.json()
    first.thread.join(30)
    assert not first.thread.is_alive()  # the server ended it
    first.close()
    second = Stream(u["events"] + "?view=" + new)
    assert _post(u, new, note("ui/notifications/initialized")).status_code == 204
    assert second.wait(2)
    replayed = [m for _, m in second.items]
    assert methods(replayed) == [INPUT, RESULT] and replayed[1]["params"]["structuredContent"] == {"count": 3}
    # the replaced View: its requests, its stream and the relay's probe answer 409 with a message
    refused = _post(u, old, req(2, "ping"))
    assert refused.status_code == 409 and "another tab or window" in refused.text
    assert requests.get(u["events"] + "?view=" + old, timeout=30).status_code == 409
    assert requests.get(u["events"] + "?probe=1&view=" + old, timeout=30).status_code == 409
    assert requests.get(u["events"] + "?probe=1&view=" + new, timeout=30).status_code == 200
    assert _post(u, new, req(3, "ping")).json()["result"] == {}
    second.close()


def test_an_ended_session_says_to_open_the_app_again(client: Client) -> None:
    s = Site()
    try:
        s.host.ended_url = "/apps?x=<1>"
        session = s.host.open(client, "show_counter")
        u = _urls(s, session.token)
        session.close(teardown_timeout=0)
        page = requests.get(u["page"], timeout=30)
        assert page.status_code == 404 and "Open the App again" in page.text
        assert '<a href="/apps?x=&lt;1>">' in page.text
        rpc = _post(u, "view-x-00000000", req(1, "ping"))
        assert rpc.status_code == 404 and "Open the App again" in rpc.text
    finally:
        s.close()


junk_header = st.one_of(st.text(max_size=80), st.sampled_from(["", "0", "-1", "9" * 30, "view-ok-12345678", "a" * 65]))


@settings(max_examples=fuzz_examples(150, 40), deadline=None)
@given(views=st.lists(st.tuples(junk_header, junk_header, st.booleans()), min_size=1, max_size=6))
def test_junk_view_ids_and_event_ids_never_break_a_session(client: Client, views: List[Tuple[str, str, bool]]) -> None:
    """Whatever view ids and Last-Event-IDs a page (or anyone on the host origin) sends, the host answers with a
    status, never an exception, and the View showing the App afterwards still works."""
    host = AppWebHost("http://127.0.0.1:1", "http://localhost:1")
    try:
        session = host.open(client, "show_counter")
        session.bridge.call_tool({"start": 2})
        base = "/mcp-apps/s/%s/" % session.token

        def call(method: str, action: str, query: str = "", body: bytes = b"", **headers: str) -> Tuple[str, bytes]:
            environ: Dict[str, Any] = {
                "REQUEST_METHOD": method,
                "PATH_INFO": base + action,
                "QUERY_STRING": query,
                "HTTP_HOST": "127.0.0.1:1",
                "wsgi.url_scheme": "http",
                "CONTENT_TYPE": "application/json",
                "CONTENT_LENGTH": str(len(body)),
                "wsgi.input": io.BytesIO(body),
            }
            environ.update(headers)
            status: List[str] = []
            chunks = host(environ, lambda s, h: status.append(s))
            first = b""
            for chunk in chunks:  # an event stream: its first chunk is enough
                first = chunk
                break
            close = getattr(chunks, "close", None)
            if close is not None:
                close()
            return status[0], first

        for view, last, stream in views:
            if stream:
                status, _ = call("GET", "events", urlencode({"view": view}), HTTP_LAST_EVENT_ID=last)
            else:
                status, _ = call("POST", "rpc", body=json.dumps(req(1, "ping")).encode(), HTTP_X_MCP_APP_VIEW=view)
            assert status.split()[0] in ("200", "204", "409"), status
        fresh = "view-fresh-" + "0" * 16
        init_body = json.dumps(req(1, "ui/initialize", {"protocolVersion": "2026-01-26"})).encode()
        status, out = call("POST", "rpc", body=init_body, HTTP_X_MCP_APP_VIEW=fresh)
        assert status.startswith("200") and "result" in json.loads(out)
        status, _ = call(
            "POST", "rpc", body=json.dumps(note("ui/notifications/initialized")).encode(), HTTP_X_MCP_APP_VIEW=fresh
        )
        assert status.startswith("204")
        claim, _ = session.bridge.claim_outgoing()
        replayed = [session.bridge.take_outgoing(claim, 0) for _ in range(2)]
        assert [item[1]["method"] if item else None for item in replayed] == [INPUT, RESULT]
    finally:
        host.close()
