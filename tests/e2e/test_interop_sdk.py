"""Interop with the official Python SDK's server (``mcp`` 2.3.0, test-only) over stdio.

The peer is tests/peers/sdk_server.py (``MCPServer``). In its default mode it speaks both eras: ``auto``
must end up in the 2026-07-28 era; ``protocol="legacy"`` forces the initialize handshake. Every feature is
exercised in both. Skipped when ``mcp`` is missing (always on Python 3.9, which it does not support);
mandatory under CI=true otherwise.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Iterator, List

import pytest

import mcpsync
from tests.peers.interop_peers import require_peer

pytestmark = pytest.mark.interop

ERAS = ["auto", "legacy"]
_counter = [0]


class Handlers:
    def __init__(self) -> None:
        self.sampling: List[Any] = []
        self.elicitation: List[Any] = []
        self.action = "accept"

    def sample(self, req: Any) -> Any:
        self.sampling.append(req)
        return req.reply("pong", model="test-model")

    def elicit(self, req: Any) -> Any:
        self.elicitation.append(req)
        if self.action == "decline":
            return req.decline()
        return req.accept({"name": "Ann"})


@pytest.fixture
def handlers() -> Handlers:
    return Handlers()


@pytest.fixture(params=ERAS)
def client(request: Any, handlers: Handlers, tmp_path: Any) -> Iterator[Any]:
    command = require_peer("sdk")
    _counter[0] += 1
    c = mcpsync.connect(
        command,
        name="sdk-%d" % _counter[0],
        protocol=request.param,
        timeout=30,
        connect_timeout=60,
        sampling_handler=handlers.sample,
        elicitation_handler=handlers.elicit,
        roots=[str(tmp_path)],
    )
    proc = getattr(c.transport, "process", None)
    try:
        yield c
    finally:
        c.close()
    if proc is not None:
        assert proc.poll() is not None, "SDK server (pid %s) still running after close()" % proc.pid
    deadline = time.monotonic() + 30  # a bound for a loaded CI machine, never a measurement
    while any(t.name.startswith("mcpsync-") and c.name in t.name for t in threading.enumerate()):
        assert time.monotonic() < deadline, "mcpsync threads left behind for %s" % c.name
        time.sleep(0.05)


def test_era_and_server_info(client: Any) -> None:
    forced_legacy = client.protocol_version != "2026-07-28"
    if forced_legacy:
        assert client.era == "legacy"
        assert client.protocol_version in ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
    else:
        assert client.era == "modern"
    assert client.server_info.name == "mcpsync-interop-sdk"
    assert client.server_info.version == "1.2.3"
    assert client.instructions == "Interop peer for mcpsync's tests."
    assert {"tools", "prompts", "resources"} <= set(client.server_capabilities)


@pytest.mark.parametrize("protocol,era", [("auto", "modern"), ("legacy", "legacy"), ("modern", "modern")])
def test_negotiated_era(protocol: str, era: str) -> None:
    command = require_peer("sdk")
    with mcpsync.connect(command, protocol=protocol, timeout=30, connect_timeout=60) as c:
        assert c.era == era
        if era == "modern":
            assert c.protocol_version == "2026-07-28"
        assert c.call_tool("add", {"a": 1, "b": 2}).structured_content == {"result": 3}


def test_tools(client: Any) -> None:
    tools = {t.name: t for t in client.list_tools()}
    assert {"add", "shout", "fail", "count_up", "greet", "think", "where"} <= set(tools)
    assert tools["add"].input_schema["required"] == ["a", "b"]
    assert tools["add"].description == "Add two integers."

    r = client.call_tool("add", {"a": 2, "b": 40})
    assert not r.is_error
    assert r.text == "42"
    assert r.structured_content == {"result": 42}  # validated against the tool's outputSchema
    assert client.call_tool("shout", {"text": "héllo"}).text == "HÉLLO"

    r = client.call_tool("fail", {"reason": "testing"})
    assert r.is_error
    with pytest.raises(mcpsync.ToolError):
        r.raise_for_error()

    try:
        r = client.call_tool("no-such-tool", {})
    except mcpsync.RemoteError:
        pass  # a JSON-RPC error is a valid answer too
    else:
        assert r.is_error

    # progress notifications reach the call's callback
    events: List[Any] = []
    r = client.call_tool("count_up", {"steps": 4}, progress=events.append)
    assert r.text == "counted to 4"
    assert [e.progress for e in events] == [1, 2, 3, 4]
    assert all(e.total == 4 for e in events)
    assert events[-1].message == "step 4"

    # non-blocking calls, many in flight
    handles = [client.call_tool_async("add", {"a": i, "b": i}) for i in range(20)]
    assert [h.result(timeout=30).structured_content["result"] for h in handles] == [2 * i for i in range(20)]


def test_prompts_and_resources(client: Any) -> None:
    prompts = {p.name: p for p in client.list_prompts()}
    assert "review" in prompts
    assert [(a.name, a.required) for a in prompts["review"].arguments] == [("code", True), ("language", False)]
    got = client.get_prompt("review", {"code": "x = 1", "language": "python"})
    assert got.messages[0].role == "user"
    assert "x = 1" in got.text
    assert "python" in got.text

    resources = {r.uri: r for r in client.list_resources()}
    assert "config://app" in resources
    assert client.read_resource("config://app").text == '{"debug": false}'
    templates = [t.uri_template for t in client.list_resource_templates()]
    assert "users://{user_id}/profile" in templates
    assert client.read_resource("users://7/profile").text == "profile of 7"
    with pytest.raises(mcpsync.errors.ResourceNotFound):
        client.read_resource("nope://missing")


def test_server_asks_the_client(client: Any, handlers: Handlers, tmp_path: Any) -> None:
    """Elicitation, sampling and roots through the handlers.

    Legacy: server requests in the middle of the call; modern: input_required round trips (MRTR).
    """
    r = client.call_tool("greet", {})
    assert r.text == "hello Ann (30)"  # the schema's default age was filled in by accept()
    assert len(handlers.elicitation) == 1
    req = handlers.elicitation[0]
    assert req.message == "Who are you?"
    assert req.required == ["name"]

    handlers.action = "decline"
    r = client.call_tool("greet", {})
    assert r.is_error

    r = client.call_tool("think", {})
    assert r.text == "model said: pong"
    assert handlers.sampling[0].text == "say pong"
    assert handlers.sampling[0].max_tokens == 20

    assert client.call_tool("where", {}).text == tmp_path.as_uri()
    other = tmp_path / "b"
    other.mkdir()
    client.set_roots([str(other)])
    deadline = time.monotonic() + 60
    text = client.call_tool("where", {}).text
    while text != other.as_uri() and time.monotonic() < deadline:
        time.sleep(0.05)
        text = client.call_tool("where", {}).text
    assert text == other.as_uri()


def test_without_handlers_the_server_is_told_no(tmp_path: Any) -> None:
    command = require_peer("sdk")
    for protocol in ERAS:
        with mcpsync.connect(command, protocol=protocol, timeout=30, connect_timeout=60) as c:
            try:
                r = c.call_tool("greet", {})
            except mcpsync.MCPError as exc:  # modern: a clear local error naming what the server needed
                assert "elicitation" in str(exc).lower()
            else:
                assert r.is_error
