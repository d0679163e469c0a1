"""Interop with @modelcontextprotocol/server-everything (npm, pinned in .ci/run) over stdio.

Skipped when node or the package is missing; mandatory under CI=true (see tests/peers/interop_peers.py).
Version 2026.8.31 speaks the handshake era only (it answers ``server/discover`` with -32601), so ``auto``
must fall back to ``initialize`` and end up working. It registers its sampling / elicitation / roots
tools only for a client that declared those capabilities, right after ``notifications/initialized``.
"""

from __future__ import annotations

import base64
import threading
import time
from typing import Any, Dict, Iterator, List

import pytest

import mcpsync
from tests.peers.interop_peers import require_peer
from mcpsync.client import Callbacks

pytestmark = pytest.mark.interop

_counter = [0]
_procs: Dict[str, Any] = {}  # client name -> its server's Popen, captured while open


class Recorder:
    """Handlers that remember what the server asked."""

    def __init__(self) -> None:
        self.sampling: List[Any] = []
        self.elicitation: List[Any] = []
        self.elicit_answer: Dict[str, Any] = {"name": "Ann Example", "email": "ann@example.com"}
        self.decline = False

    def sample(self, req: Any) -> Any:
        self.sampling.append(req)
        return req.reply("pong from the test", model="test-model")

    def elicit(self, req: Any) -> Any:
        self.elicitation.append(req)
        if self.decline:
            return req.decline()
        answer = dict(self.elicit_answer)
        for name in req.required:  # fill what this particular form requires
            if name not in answer and name not in req.defaults():
                prop = req.fields.get(name, {})
                enum = prop.get("enum") or [o.get("const") for o in prop.get("oneOf", []) if isinstance(o, dict)]
                answer[name] = (
                    enum[0]
                    if enum
                    else {"boolean": True, "integer": 1, "number": 1}.get(prop.get("type"), "test answer")
                )
        return req.accept({k: v for k, v in answer.items() if k in req.fields or not req.fields})


def _connect(command: List[str], **options: Any) -> Any:
    _counter[0] += 1
    options.setdefault("name", "everything-%d" % _counter[0])
    options.setdefault("timeout", 30)
    options.setdefault("connect_timeout", 30)
    client = mcpsync.connect(command, **options)
    _procs[client.name] = getattr(client.transport, "process", None)
    return client


def _assert_clean(client: Any) -> None:
    """After close(): the server process is gone and none of this client's threads survive."""
    proc = _procs.pop(client.name, None)
    if proc is not None:
        assert proc.poll() is not None, "server-everything (pid %s) still running after close()" % proc.pid
    deadline = time.monotonic() + 30  # a bound for a loaded CI machine, never a measurement
    while True:
        left = [t.name for t in threading.enumerate() if t.name.startswith("mcpsync-") and client.name in t.name]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert not left, "threads left behind: %s" % left


def _wait_for_tools(client: Any, names: List[str], timeout: float = 60.0) -> Dict[str, Any]:
    """server-everything adds capability-gated tools just after initialization: list until they show up."""
    deadline = time.monotonic() + timeout
    while True:
        tools = {t.name: t for t in client.list_tools()}
        if all(n in tools for n in names) or time.monotonic() > deadline:
            missing = [n for n in names if n not in tools]
            assert not missing, "tools never listed: %s (have %s)" % (missing, sorted(tools))
            return tools
        time.sleep(0.1)


@pytest.fixture
def everything() -> List[str]:
    return require_peer("everything")


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def client(everything: List[str], recorder: Recorder, tmp_path: Any) -> Iterator[Any]:
    c = _connect(
        everything, sampling_handler=recorder.sample, elicitation_handler=recorder.elicit, roots=[str(tmp_path)]
    )
    try:
        yield c
    finally:
        c.close()
    _assert_clean(c)


@pytest.fixture
def bare_client(everything: List[str]) -> Iterator[Any]:
    c = _connect(everything)
    try:
        yield c
    finally:
        c.close()
    _assert_clean(c)


def test_auto_negotiation_ends_up_working(bare_client: Any) -> None:
    c = bare_client
    assert c.era in ("legacy", "modern")
    assert c.protocol_version
    assert c.server_info.name
    assert "tools" in c.server_capabilities
    assert c.call_tool("echo", {"message": "hi"}).text == "Echo: hi"


def test_forced_legacy(everything: List[str]) -> None:
    with _connect(everything, protocol="legacy") as c:
        assert c.era == "legacy"
        assert c.protocol_version in ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
        c.ping()
        assert c.call_tool("get-sum", {"a": 20, "b": 22}).text.endswith("is 42.")
    _assert_clean(c)


def test_list_tools_and_call_the_basic_ones(bare_client: Any) -> None:
    c = bare_client
    tools = {t.name: t for t in c.list_tools()}
    for name in ("echo", "get-sum", "get-tiny-image", "get-structured-content", "trigger-long-running-operation"):
        assert name in tools, sorted(tools)
    assert tools["echo"].input_schema["properties"]["message"]["type"] == "string"
    # capability-gated tools stay hidden from a client without handlers or roots
    for gated in ("trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"):
        assert gated not in tools

    assert c.call_tool("echo", {"message": "héllo ✓"}).text == "Echo: héllo ✓"
    r = c.call_tool("get-sum", {"a": 2, "b": 3.5})
    assert not r.is_error
    assert "5.5" in r.text

    img = c.call_tool("get-tiny-image", {})
    images = [b for b in img.content if isinstance(b, mcpsync.ImageContent)]
    assert len(images) == 1
    assert images[0].mime_type == "image/png"
    assert base64.b64decode(images[0].data)[:8] == b"\x89PNG\r\n\x1a\n"


def test_structured_content_validated_against_output_schema(bare_client: Any) -> None:
    c = bare_client
    tool = {t.name: t for t in c.list_tools()}["get-structured-content"]
    assert tool.output_schema is not None
    r = c.call_tool("get-structured-content", {"location": "Chicago"}, validate_output=True)
    assert set(r.structured_content) >= {"temperature", "conditions", "humidity"}


def test_embedded_resources_and_links(bare_client: Any) -> None:
    c = bare_client
    ref = c.call_tool("get-resource-reference", {"resourceType": "Text", "resourceId": 3})
    embedded = [b for b in ref.content if isinstance(b, mcpsync.EmbeddedResource)]
    assert len(embedded) == 1
    links = c.call_tool("get-resource-links", {"count": 2})
    assert len([b for b in links.content if isinstance(b, mcpsync.ResourceLink)]) == 2


def test_tool_input_error_is_a_result_not_an_exception(bare_client: Any) -> None:
    r = bare_client.call_tool("get-sum", {"a": "not a number"})
    assert r.is_error
    with pytest.raises(mcpsync.ToolError):
        r.raise_for_error()


def test_progress_notifications(bare_client: Any) -> None:
    events: List[Any] = []
    r = bare_client.call_tool("trigger-long-running-operation", {"duration": 0.6, "steps": 3}, progress=events.append)
    assert "completed" in r.text.lower()
    assert [e.progress for e in events] == [1, 2, 3]
    assert all(e.total == 3 for e in events)


def test_concurrent_calls_from_threads(bare_client: Any) -> None:
    c = bare_client
    results: Dict[int, str] = {}
    errors: List[BaseException] = []

    def work(i: int) -> None:
        try:
            for j in range(10):
                results[i * 100 + j] = c.call_tool("get-sum", {"a": i, "b": j}).text
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert len(results) == 80
    for key, text in results.items():
        i, j = divmod(key, 100)
        assert text == "The sum of %d and %d is %d." % (i, j, i + j)


def test_prompts(bare_client: Any) -> None:
    c = bare_client
    prompts = {p.name: p for p in c.list_prompts()}
    assert {"simple-prompt", "args-prompt", "completable-prompt"} <= set(prompts)
    assert [a.name for a in prompts["args-prompt"].arguments if a.required] == ["city"]
    simple = c.get_prompt("simple-prompt")
    assert simple.messages and simple.messages[0].role == "user"
    args = c.get_prompt("args-prompt", {"city": "Paris", "state": "Texas"})
    assert "Paris" in args.text
    with pytest.raises(mcpsync.RemoteError):
        c.get_prompt("no-such-prompt")


def test_completion(bare_client: Any) -> None:
    c = bare_client
    dep = c.complete(mcpsync.client.prompt_ref("completable-prompt"), "department", "Eng")
    assert "Engineering" in dep.values
    ref = mcpsync.client.prompt_ref("completable-prompt")
    names = c.complete(ref, "name", "", context={"department": "Engineering"})
    assert names.values


def test_resources(bare_client: Any) -> None:
    c = bare_client
    resources = c.list_resources()
    assert resources
    doc = next(r for r in resources if r.uri.endswith(".md"))
    text = c.read_resource(doc.uri)
    assert text.contents[0].uri == doc.uri
    assert text.text.strip()

    templates = [t.uri_template for t in c.list_resource_templates()]
    assert "demo://resource/dynamic/text/{resourceId}" in templates
    dyn = c.read_resource("demo://resource/dynamic/text/2")
    assert "Resource 2" in dyn.text
    blob = c.read_resource("demo://resource/dynamic/blob/1")
    assert blob.contents[0].blob is not None
    assert b"Resource 1" in blob.contents[0].data

    c.subscribe_resource("demo://resource/dynamic/text/1")
    c.unsubscribe_resource("demo://resource/dynamic/text/1")


def test_logging_level_and_log_messages(everything: List[str]) -> None:
    logs: List[Dict[str, Any]] = []
    got = threading.Event()

    def on_log(params: Dict[str, Any]) -> None:
        logs.append(params)
        got.set()

    with _connect(everything, callbacks=Callbacks(on_log=on_log)) as c:
        c.set_logging_level("debug")
        c.call_tool("toggle-simulated-logging", {})
        assert got.wait(20), "no notifications/message within 20 s"
        c.call_tool("toggle-simulated-logging", {})
    _assert_clean(c)
    assert logs[0].get("level") in ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def test_sampling_through_handler(client: Any, recorder: Recorder) -> None:
    _wait_for_tools(client, ["trigger-sampling-request"])
    r = client.call_tool("trigger-sampling-request", {"prompt": "ping?", "maxTokens": 50})
    assert not r.is_error, r.text
    assert len(recorder.sampling) == 1
    req = recorder.sampling[0]
    assert "ping?" in req.text
    assert req.max_tokens == 50
    assert req.server == client.name
    assert "pong from the test" in r.text


def test_elicitation_accept_and_decline(client: Any, recorder: Recorder) -> None:
    _wait_for_tools(client, ["trigger-elicitation-request"])
    r = client.call_tool("trigger-elicitation-request", {})
    assert not r.is_error, r.text
    req = recorder.elicitation[0]
    assert req.mode == "form"
    assert "name" in req.required
    assert req.defaults()["integer"] == 42
    assert "Ann Example" in r.text
    assert "ann@example.com" in r.text

    recorder.decline = True
    r = client.call_tool("trigger-elicitation-request", {})
    assert "declined" in r.text.lower()
    assert len(recorder.elicitation) == 2


def test_roots_through_configuration(client: Any, tmp_path: Any) -> None:
    _wait_for_tools(client, ["get-roots-list"])
    r = client.call_tool("get-roots-list", {})
    assert tmp_path.as_uri() in r.text

    other = tmp_path / "other"
    other.mkdir()
    client.set_roots([str(other)])  # notifications/roots/list_changed: the server asks again
    deadline = time.monotonic() + 60
    while other.as_uri() not in r.text and time.monotonic() < deadline:
        time.sleep(0.1)
        r = client.call_tool("get-roots-list", {})
    assert other.as_uri() in r.text


def test_task_required_tool_runs_as_a_task(bare_client: Any) -> None:
    """simulate-research-query has taskSupport 'required' (2025-11-25 experimental tasks)."""
    c = bare_client
    statuses: List[str] = []
    handle = mcpsync.tasks.start_task(
        c, "simulate-research-query", {"topic": "interop"}, on_status=lambda h: statuses.append(h.status)
    )
    assert isinstance(handle, mcpsync.tasks.TaskHandle)
    assert handle.task_id
    result = handle.result(timeout=60)
    assert "interop" in result.text
    assert handle.status == "completed"


def test_task_input_required_elicitation(client: Any, recorder: Recorder) -> None:
    handle = mcpsync.tasks.start_task(client, "simulate-research-query", {"topic": "python", "ambiguous": True})
    result = handle.result(timeout=15)
    assert recorder.elicitation
    assert "python" in result.text
