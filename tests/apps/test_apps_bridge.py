"""MCP Apps, part 3: the AppBridge answering a View against a real server (the example server's counter App),
the ordering rule (nothing before ``initialized``), the threads callbacks run on, and junk from a hostile View."""

from __future__ import annotations

import threading
from typing import Any, Dict, Iterator, List, Optional

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpsync import Client
from mcpsync.apps import AppBridge, HostCallbacks

from tests.conftest import misbehaving_cmd, fuzz_examples, server_cmd
from mcpsync.client import ClientOptions


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    with Client(server_cmd("--apps"), options=ClientOptions(apps=True)) as c:
        c.list_tools()
        yield c


def req(msg_id: Any, method: str, params: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    out: Dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        out["params"] = params
    return out


def note(method: str, params: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params or {}}


def init(bridge: AppBridge) -> Dict[str, Any]:
    answer = bridge.handle(
        req(
            1,
            "ui/initialize",
            {
                "protocolVersion": "2026-01-26",
                "appInfo": {"name": "t", "version": "1"},
                "appCapabilities": {"availableDisplayModes": ["inline", "fullscreen"]},
            },
        )
    )
    assert answer is not None and "result" in answer, answer
    bridge.handle(note("ui/notifications/initialized"))
    return answer["result"]  # type: ignore[no-any-return]


def drain(bridge: AppBridge) -> List[Dict[str, Any]]:
    out = []
    while True:
        msg = bridge.next_outgoing(0)
        if msg is None:
            return out
        out.append(msg)


def test_a_view_session_against_a_real_server(client: Client) -> None:
    seen: Dict[str, Any] = {"links": [], "sizes": [], "messages": [], "logs": [], "downloads": [], "context": []}
    callbacks = HostCallbacks(
        on_open_link=seen["links"].append,
        on_size_change=lambda w, h: seen["sizes"].append((w, h)),
        on_message=seen["messages"].append,
        on_log=seen["logs"].append,
        on_download_file=lambda contents: False,
        on_update_model_context=seen["context"].append,
    )
    tool = client.get_tool("show_counter")
    bridge = AppBridge(
        client,
        tool,
        tool_call_id=7,
        callbacks=callbacks,
        display_modes=("inline", "fullscreen"),
        host_context={"theme": "light"},
    )
    # Host -> View before initialized: held back, in order
    bridge.send_tool_input({"start": 3})
    bridge.send_tool_input_partial({"start": 2})
    assert bridge.next_outgoing(0) is None
    # a request other than ui/initialize and ping before ui/initialize is refused
    early = bridge.handle(req("e", "tools/call", {"name": "counter_increment", "arguments": {"count": 1}}))
    assert early is not None and early["error"]["code"] == -32600
    assert bridge.handle(req("p", "ping")) == {"jsonrpc": "2.0", "id": "p", "result": {}}
    result = init(bridge)
    assert result["protocolVersion"] == "2026-01-26" and result["hostInfo"]["name"] == "mcpsync"
    assert result["hostContext"]["toolInfo"] == {"id": 7, "tool": tool.to_dict()} and result["hostContext"]["theme"]
    caps = result["hostCapabilities"]
    assert {"openLinks", "serverTools", "serverResources", "logging", "message", "downloadFile"} <= set(caps)
    assert [m["method"] for m in drain(bridge)] == [
        "ui/notifications/tool-input",
        "ui/notifications/tool-input-partial",
    ]
    # the host runs the model's call: input and result go to the View
    assert bridge.call_tool({"start": 3}).structured_content == {"count": 3}
    sent = drain(bridge)
    assert [m["method"] for m in sent] == ["ui/notifications/tool-input", "ui/notifications/tool-result"]
    assert sent[1]["params"]["structuredContent"] == {"count": 3}
    # proxied calls: an app tool works, a model-only or unknown tool is refused, bad arguments are refused
    ok = bridge.handle(req(2, "tools/call", {"name": "counter_increment", "arguments": {"count": 3}}))
    assert ok is not None and ok["result"]["structuredContent"] == {"count": 4}
    for params in ({"name": "model_only_fact"}, {"name": "no_such_tool"}, {"name": "echo", "arguments": [1]}, {}):
        refused = bridge.handle(req(3, "tools/call", params))
        assert refused is not None and refused["error"]["code"] == -32602, params
    read = bridge.handle(req(4, "resources/read", {"uri": "example://hello"}))
    assert read is not None and read["result"]["contents"][0]["text"] == "Hello, world!"
    missing = bridge.handle(req(5, "resources/read", {"uri": "example://nope"}))
    assert missing is not None and "error" in missing
    # host callbacks
    assert bridge.handle(req(6, "ui/open-link", {"url": "https://example.com/x"}))["result"] == {}  # type: ignore
    refused_link = bridge.handle(req(7, "ui/open-link", {"url": "javascript:alert(1)"}))
    assert refused_link is not None and refused_link["error"]["code"] == -32602
    assert seen["links"] == ["https://example.com/x"]
    msg = {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    assert bridge.handle(req(8, "ui/message", msg))["result"] == {}  # type: ignore
    assert seen["messages"] == [msg]
    download = bridge.handle(req(9, "ui/download-file", {"contents": [{"type": "resource"}]}))
    assert download is not None and download["result"] == {"isError": True}
    ctx = {"structuredContent": {"count": 4}}
    assert bridge.handle(req(10, "ui/update-model-context", ctx))["result"] == {}  # type: ignore
    assert bridge.model_context == ctx and seen["context"] == [ctx]
    pip = bridge.handle(req(11, "ui/request-display-mode", {"mode": "pip"}))
    assert pip is not None and pip["result"] == {"mode": "inline"}
    assert bridge.handle(req(12, "ui/request-display-mode", {"mode": "fullscreen"}))["result"] == {  # type: ignore
        "mode": "fullscreen"
    }
    assert drain(bridge) == [
        {"jsonrpc": "2.0", "method": "ui/notifications/host-context-changed", "params": {"displayMode": "fullscreen"}}
    ]
    bridge.handle(note("ui/notifications/size-changed", {"width": 320, "height": 200.5}))
    bridge.handle(note("ui/notifications/size-changed", {"width": "wide", "height": None}))
    assert seen["sizes"] == [(320.0, 200.5)]
    bridge.handle(note("notifications/message", {"level": "info", "data": "x"}))
    assert seen["logs"] == [{"level": "info", "data": "x"}]
    assert bridge.handle(req(13, "ui/unknown"))["error"]["code"] == -32601  # type: ignore
    # teardown is a request: the View answers, the host waits
    answered = threading.Event()

    def view() -> None:
        out = bridge.next_outgoing(10)
        assert out is not None and out["method"] == "ui/resource-teardown"
        bridge.handle({"jsonrpc": "2.0", "id": out["id"], "result": {}})
        answered.set()

    t = threading.Thread(target=view)
    t.start()
    assert bridge.teardown(timeout=10)
    t.join(10)
    assert answered.is_set()
    bridge.close()
    closed = bridge.handle(req(14, "ping"))
    assert closed is not None and "error" in closed and bridge.next_outgoing(0) is None


def test_receive_answers_on_the_bridge_worker_thread(client: Client) -> None:
    threads: List[str] = []
    gate = threading.Event()

    def on_open_link(url: str) -> bool:
        threads.append(threading.current_thread().name)
        gate.wait(10)
        return True

    bridge = AppBridge(client, client.get_tool("show_counter"), callbacks=HostCallbacks(on_open_link=on_open_link))
    init(bridge)
    bridge.receive(req(2, "ui/open-link", {"url": "https://example.com"}))  # returns at once
    bridge.receive(req(3, "tools/call", {"name": "counter_increment", "arguments": {"count": 0}}))
    gate.set()
    first, second = bridge.next_outgoing(10), bridge.next_outgoing(10)
    assert first == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert second is not None and second["result"]["structuredContent"] == {"count": 1}
    assert threads == ["mcpsync-apps-bridge:show_counter"]
    bridge.close()
    assert not any(t.name.startswith("mcpsync-apps-bridge") for t in threading.enumerate())


def test_pending_buffer_is_bounded_and_drops_partials_first(client: Client) -> None:
    bridge = AppBridge(client, client.get_tool("show_counter"), max_pending=3)
    bridge.send_tool_input_partial({"n": 1})
    bridge.send_tool_input({"n": 2})
    bridge.send_tool_input_partial({"n": 3})
    bridge.send_tool_result({"content": [], "structuredContent": {"count": 1}})  # drops partial n=1
    bridge.send_tool_cancelled("x")  # drops partial n=3
    init(bridge)
    methods = [m["method"].rsplit("/", 1)[1] for m in drain(bridge)]
    assert methods == ["tool-input", "tool-result", "tool-cancelled"]
    bridge.close()


json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20))
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)),
    max_leaves=12,
)
methods = st.sampled_from(
    [
        "ui/initialize",
        "ui/notifications/initialized",
        "tools/call",
        "resources/read",
        "ui/message",
        "ui/open-link",
        "ui/update-model-context",
        "ui/request-display-mode",
        "ui/download-file",
        "ui/notifications/size-changed",
        "notifications/message",
        "ui/notifications/request-teardown",
        "ping",
        "bogus",
    ]
)
messages = st.one_of(
    json_value,
    st.fixed_dictionaries(
        {"jsonrpc": st.sampled_from(["2.0", "1.0", 2]), "method": st.one_of(methods, json_value)},
        optional={"id": json_value, "params": st.one_of(json_value, st.dictionaries(st.text(max_size=8), json_value))},
    ),
)


@settings(max_examples=fuzz_examples(600, 150))
@given(st.lists(messages, max_size=6))
def test_no_message_breaks_the_host(client: Client, batch: List[Any]) -> None:
    bridge = AppBridge(
        client,
        client.get_tool("show_counter"),
        callbacks=HostCallbacks(
            on_open_link=lambda u: True,
            on_message=lambda p: None,
            on_log=lambda p: None,
            on_size_change=lambda w, h: None,
            on_download_file=lambda c: True,
        ),
    )
    try:
        for message in batch:
            answer = bridge.handle(message)
            if answer is not None:
                assert answer["jsonrpc"] == "2.0" and ("result" in answer) != ("error" in answer)
                if "error" in answer:
                    assert isinstance(answer["error"]["code"], int) and isinstance(answer["error"]["message"], str)
        # the channel still serves valid traffic correctly
        assert bridge.handle(req("ping", "ping")) == {"jsonrpc": "2.0", "id": "ping", "result": {}}
        init(bridge)
        ok = bridge.handle(req("call", "tools/call", {"name": "counter_increment", "arguments": {"count": 41}}))
        assert ok is not None and ok["result"]["structuredContent"] == {"count": 42}
    finally:
        bridge.close()


def test_unknown_tool_names_do_not_flood_the_server_with_listings(tmp_path: Any) -> None:
    import json as _json

    record = tmp_path / "requests.jsonl"
    with Client(misbehaving_cmd("--apps", "--record", str(record)), options=ClientOptions(apps=True)) as c:
        c.list_tools()
        bridge = AppBridge(c, c.get_tool("show_counter"))
        init(bridge)
        for n in range(20):
            answer = bridge.handle(req(n + 10, "tools/call", {"name": "no_such_tool_%d" % n}))
            assert answer is not None and answer["error"]["code"] == -32602
        ok = bridge.handle(req(99, "tools/call", {"name": "counter_increment", "arguments": {"count": 0}}))
        assert ok is not None and ok["result"]["structuredContent"] == {"count": 1}
        bridge.close()
    methods = [_json.loads(line)["method"] for line in record.read_text().splitlines()]
    assert methods.count("tools/list") == 2  # the client's own listing, and one re-listing for the bridge
