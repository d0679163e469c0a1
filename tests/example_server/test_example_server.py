"""Drive the example server as a raw subprocess with hand-written JSON lines (no mcpsync client)."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Optional

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
#: The example server with the test-only misbehaviour flags (run with ``cwd=ROOT``).
MISBEHAVING = "tests.peers.misbehaving_server"
MODERN = "2026-07-28"
TASKS_EXT = "io.modelcontextprotocol/tasks"
WAIT = 30.0  # generous upper bound for any single expected message (never a performance assertion): CI runs on a
# loaded 2-core machine, where the first answer includes the server's start-up


def modern_meta(caps: Optional[Dict[str, Any]] = None, **extra: Any) -> Dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": caps if caps is not None else {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "0"},
    }
    meta.update(extra)
    return meta


class Server:
    """A server subprocess with a stdout reader thread and a stderr drain."""

    def __init__(self, *args: str, module: str = "mcpsync.example_server", new_session: bool = False) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", module] + list(args),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=ROOT,
            start_new_session=new_session,
        )
        self.lines: "queue.Queue[Optional[bytes]]" = queue.Queue()
        self.stderr = bytearray()
        self.raw = bytearray()
        self.backlog: List[Any] = []
        self._next_id = 1000
        self._readers = [
            threading.Thread(target=self._read_out, daemon=True),
            threading.Thread(target=self._read_err, daemon=True),
        ]
        for t in self._readers:
            t.start()

    def _read_out(self) -> None:
        assert self.proc.stdout is not None
        pending = b""
        while True:
            chunk = self.proc.stdout.read1(65536)  # type: ignore[attr-defined]
            if not chunk:
                break
            self.raw.extend(chunk)
            pending += chunk
            *complete, pending = pending.split(b"\n")
            for line in complete:
                self.lines.put(line + b"\n")
        if pending:
            self.lines.put(pending)
        self.lines.put(None)

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        while True:
            chunk = self.proc.stderr.read1(65536)  # type: ignore[attr-defined]
            if not chunk:
                return
            self.stderr.extend(chunk)

    # -- writing
    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: Any) -> None:
        self.send_raw(json.dumps(message).encode("utf-8") + b"\n")

    def notify(self, method: str, params: Optional[Dict[str, Any]] = None) -> None:
        msg: Dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def start(self, method: str, params: Optional[Dict[str, Any]] = None) -> int:
        self._next_id += 1
        msg: Dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self._next_id

    # -- reading
    def next_message(self, timeout: float = WAIT) -> Any:
        """The next stdout line that parses as JSON (non-JSON lines are skipped)."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError("no message within %ss; stderr=%r" % (timeout, bytes(self.stderr[-2000:])))
            try:
                line = self.lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                raise AssertionError("server stdout closed; stderr=%r" % bytes(self.stderr[-2000:]))
            if not line.strip():
                continue
            try:
                return json.loads(line.decode("utf-8"))
            except (ValueError, UnicodeDecodeError):
                continue

    def wait_for(self, pred: Callable[[Any], bool], timeout: float = WAIT, keep: Optional[List[Any]] = None) -> Any:
        """The first message (earlier unmatched ones first) satisfying ``pred``; others stay in the backlog."""
        for i, msg in enumerate(self.backlog):
            if pred(msg):
                return self.backlog.pop(i)
        while True:
            msg = self.next_message(timeout)
            if pred(msg):
                return msg
            self.backlog.append(msg)
            if keep is not None:
                keep.append(msg)

    def response(self, rid: Any, keep: Optional[List[Any]] = None) -> Dict[str, Any]:
        return self.wait_for(lambda m: isinstance(m, dict) and m.get("id") == rid and "method" not in m, keep=keep)

    def call(self, method: str, params: Optional[Dict[str, Any]] = None, keep: Optional[List[Any]] = None) -> Any:
        """Send a request and return its whole response message."""
        return self.response(self.start(method, params), keep=keep)

    def result(self, method: str, params: Optional[Dict[str, Any]] = None, keep: Optional[List[Any]] = None) -> Any:
        msg = self.call(method, params, keep)
        assert "result" in msg, msg
        return msg["result"]

    def initialize(self, version: str = "2025-11-25", capabilities: Optional[Dict[str, Any]] = None) -> Any:
        result = self.result(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": capabilities or {},
                "clientInfo": {"name": "raw-test", "version": "0"},
            },
        )
        self.notify("notifications/initialized")
        return result

    def tool(self, name: str, arguments: Optional[Dict[str, Any]] = None, **kw: Any) -> Any:
        return self.result("tools/call", {"name": name, "arguments": arguments or {}}, **kw)

    def mcall(
        self, method: str, params: Optional[Dict[str, Any]] = None, caps: Optional[Dict[str, Any]] = None, **meta: Any
    ) -> Any:
        params = dict(params or {})
        params["_meta"] = modern_meta(caps, **meta)
        return self.call(method, params)

    def close(self) -> int:
        proc = self.proc
        try:
            if proc.stdin and not proc.stdin.closed:
                try:
                    proc.stdin.close()
                except OSError:
                    pass
            try:
                return proc.wait(timeout=WAIT)
            except subprocess.TimeoutExpired:
                proc.kill()
                return proc.wait(timeout=WAIT)
        finally:
            for t in self._readers:
                t.join(timeout=WAIT)
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.close()


@pytest.fixture
def spawn():
    servers: List[Server] = []

    def make(*args: str, **kw: Any) -> Server:
        srv = Server(*args, **kw)
        servers.append(srv)
        return srv

    yield make
    for srv in servers:
        srv.kill()


FULL_CAPS = {"sampling": {}, "elicitation": {"form": {}, "url": {}}, "roots": {"listChanged": True}}


@pytest.fixture
def legacy(spawn):
    """A fresh, initialized (2025-11-25) server for tests that change server or session state."""
    srv = spawn()
    srv.initialize("2025-11-25", FULL_CAPS)
    return srv


@pytest.fixture(scope="module")
def shared():
    """One initialized (2025-11-25) server shared by tests that leave no state behind (saves start-ups)."""
    srv = Server()
    try:
        srv.initialize("2025-11-25", FULL_CAPS)
        yield srv
    finally:
        srv.kill()


def text_of(result: Dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result["content"])


# ----------------------------------------------------------------------------- legacy lifecycle


def test_initialize_negotiation(spawn):
    srv = spawn()
    res = srv.initialize("2025-06-18")
    assert res["protocolVersion"] == "2025-06-18"
    assert res["serverInfo"]["name"] == "mcpsync-example" and res["serverInfo"]["title"]
    caps = res["capabilities"]
    assert caps["tools"] == {"listChanged": True} and caps["resources"] == {"subscribe": True, "listChanged": True}
    assert "logging" in caps and "completions" in caps and "tasks" not in caps
    assert isinstance(res["instructions"], str)
    res = srv.initialize("1999-01-01")  # unsupported -> latest legacy
    assert res["protocolVersion"] == "2025-11-25"
    assert "tasks" in res["capabilities"]


def test_requests_before_initialize(spawn):
    srv = spawn()
    assert srv.result("ping") == {}
    err = srv.call("tools/list")["error"]
    assert err["code"] in (-32600, -32602)
    srv.initialize()
    assert srv.result("tools/list")["tools"]


def test_strict_init_requires_initialized_notification(spawn):
    srv = spawn("--strict-init")
    srv.result(
        "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}}
    )
    assert srv.call("tools/list")["error"]["code"] == -32600
    srv.notify("notifications/initialized")
    assert srv.result("tools/list")["tools"]


def test_version_override(spawn):
    srv = spawn("--version", "1999-01-01", module=MISBEHAVING)
    assert srv.initialize()["protocolVersion"] == "1999-01-01"


# ----------------------------------------------------------------------------- tools


def test_basic_tools(shared):
    assert text_of(shared.tool("echo", {"message": "héllo"})) == "héllo"
    res = shared.tool("add", {"a": 2, "b": 3.5})
    assert res["structuredContent"] == {"sum": 5.5} and text_of(res) == "5.5"
    res = shared.tool("fail", {"message": "boom"})
    assert res["isError"] is True and text_of(res) == "boom"
    res = shared.tool("bad_output")
    tools = {t["name"]: t for t in shared.result("tools/list")["tools"]}
    assert not isinstance(res["structuredContent"]["count"], int)
    assert tools["bad_output"]["outputSchema"]["properties"]["count"]["type"] == "integer"
    assert tools["add"]["outputSchema"]["required"] == ["sum"]
    assert all(t["inputSchema"]["type"] == "object" for t in tools.values())
    assert tools["task_work"]["execution"] == {"taskSupport": "optional"}
    assert text_of(shared.tool("pid")) == str(shared.proc.pid)
    assert len(text_of(shared.tool("payload", {"size": 1_000_003}))) == 1_000_003
    assert shared.tool("echo", {})["isError"] is True  # missing argument -> tool error
    assert shared.call("tools/call", {"name": "nope"})["error"]["code"] == -32602


def test_slow_progress(shared):
    seen: List[Any] = []
    rid = shared.start(
        "tools/call", {"name": "slow", "arguments": {"seconds": 0.2, "steps": 4}, "_meta": {"progressToken": "tok"}}
    )
    res = shared.response(rid, keep=seen)
    assert text_of(res["result"]) == "done"
    prog = [m["params"] for m in seen if m.get("method") == "notifications/progress"]
    assert [p["progress"] for p in prog] == [1, 2, 3, 4]
    assert all(p["progressToken"] == "tok" and p["total"] == 4 and p["message"] for p in prog)


def test_cancellation_stops_request(shared):
    rid = shared.start(
        "tools/call", {"name": "slow", "arguments": {"seconds": 30, "steps": 300}, "_meta": {"progressToken": 7}}
    )
    shared.wait_for(lambda m: m.get("method") == "notifications/progress")
    shared.notify("notifications/cancelled", {"requestId": rid, "reason": "test"})
    seen: List[Any] = []
    assert shared.result("ping", keep=seen) == {}
    time.sleep(0.3)
    while not shared.lines.empty():
        line = shared.lines.get()
        if line:
            seen.append(json.loads(line))
    assert not [m for m in seen if m.get("id") == rid]


def test_sampling_round_trip(shared):
    rid = shared.start("tools/call", {"name": "sample", "arguments": {"prompt": "2+2?"}})
    req = shared.wait_for(lambda m: m.get("method") == "sampling/createMessage")
    assert req["params"]["messages"][0]["content"]["text"] == "2+2?" and req["params"]["maxTokens"] > 0
    shared.send(
        {
            "jsonrpc": "2.0",
            "id": req["id"],
            "result": {"role": "assistant", "model": "m", "content": {"type": "text", "text": "4"}},
        }
    )
    assert text_of(shared.response(rid)["result"]) == "4"
    # A client error becomes a tool error.
    rid = shared.start("tools/call", {"name": "sample", "arguments": {"prompt": "x"}})
    req = shared.wait_for(lambda m: m.get("method") == "sampling/createMessage")
    shared.send({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32601, "message": "no"}})
    assert shared.response(rid)["result"]["isError"] is True


def test_sampling_without_capability(spawn):
    srv = spawn()
    srv.initialize()
    assert srv.tool("sample", {"prompt": "x"})["isError"] is True
    srv2 = spawn("--ignore-client-capabilities", module=MISBEHAVING)
    srv2.initialize()
    rid = srv2.start("tools/call", {"name": "sample", "arguments": {"prompt": "x"}})
    req = srv2.wait_for(lambda m: m.get("method") == "sampling/createMessage")
    srv2.send({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32601, "message": "Method not found"}})
    assert "-32601" in text_of(srv2.response(rid)["result"])


def test_elicitation_form_and_url(shared):
    rid = shared.start("tools/call", {"name": "elicit", "arguments": {"message": "Who?"}})
    req = shared.wait_for(lambda m: m.get("method") == "elicitation/create")
    schema = req["params"]["requestedSchema"]
    types = {p["type"] for p in schema["properties"].values()}
    assert types == {"string", "integer", "number", "boolean"}
    assert any("enum" in p for p in schema["properties"].values())
    assert schema["properties"]["name"]["default"] == "Ada" and req["params"]["mode"] == "form"
    shared.send(
        {"jsonrpc": "2.0", "id": req["id"], "result": {"action": "accept", "content": {"name": "Bo", "age": 3}}}
    )
    res = shared.response(rid)["result"]
    assert res["structuredContent"] == {"action": "accept", "content": {"name": "Bo", "age": 3}}
    rid = shared.start("tools/call", {"name": "elicit_url"})
    req = shared.wait_for(lambda m: m.get("method") == "elicitation/create")
    p = req["params"]
    assert p["mode"] == "url" and p["url"].startswith("https://example.com/approve?") and p["elicitationId"]
    shared.send({"jsonrpc": "2.0", "id": req["id"], "result": {"action": "accept"}})
    done = shared.wait_for(lambda m: m.get("method") == "notifications/elicitation/complete")
    assert done["params"]["elicitationId"] == p["elicitationId"]
    assert shared.response(rid)["result"]["structuredContent"] == {"action": "accept"}


def test_roots(shared):
    rid = shared.start("tools/call", {"name": "roots"})
    req = shared.wait_for(lambda m: m.get("method") == "roots/list")
    shared.send({"jsonrpc": "2.0", "id": req["id"], "result": {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]}})
    assert text_of(shared.response(rid)["result"]) == "file:///a\nfile:///b"


def test_send_batch_roots(spawn):
    srv = spawn("--send-batch", module=MISBEHAVING)
    srv.initialize(capabilities={"roots": {}})
    rid = srv.start("tools/call", {"name": "roots"})
    batch = srv.wait_for(lambda m: isinstance(m, list))
    assert [m.get("method") for m in batch] == ["roots/list", "notifications/message"]
    srv.send({"jsonrpc": "2.0", "id": batch[0]["id"], "result": {"roots": []}})
    assert text_of(srv.response(rid)["result"]) == "(no roots)"


def test_logging_levels(legacy):
    assert legacy.tool("log", {"level": "info", "message": "hi"})["content"][0]["text"] == "logged"
    assert legacy.result("logging/setLevel", {"level": "warning"}) == {}
    assert text_of(legacy.tool("log", {"level": "info", "message": "quiet"})) == "suppressed by log level"
    seen: List[Any] = []
    legacy.tool("log", {"level": "error", "message": "loud"}, keep=seen)
    logs = [m["params"] for m in seen if m.get("method") == "notifications/message"]
    assert logs == [{"level": "error", "logger": "mcpsync-example", "data": "loud"}]
    assert legacy.call("logging/setLevel", {"level": "bogus"})["error"]["code"] == -32602


def test_list_changed_and_subscriptions(legacy):
    seen: List[Any] = []
    legacy.tool("add_tool", {"name": "extra"}, keep=seen)  # the notification precedes the tool's response
    assert [m["method"] for m in seen] == ["notifications/tools/list_changed"]
    assert "extra" in [t["name"] for t in legacy.result("tools/list")["tools"]]
    assert text_of(legacy.tool("extra", {"message": "m"})) == "extra: m"
    assert legacy.result("resources/subscribe", {"uri": "example://hello"}) == {}
    seen = []
    legacy.tool("touch", {"uri": "example://hello"}, keep=seen)
    assert seen == [
        {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "example://hello"}}
    ]
    assert legacy.result("resources/unsubscribe", {"uri": "example://hello"}) == {}
    assert "0 subscriber" in text_of(legacy.tool("touch", {"uri": "example://hello"}))


def test_crash_and_stderr_flood(spawn):
    srv = spawn()
    srv.initialize()
    assert "1048576" in text_of(srv.tool("stderr_flood", {"bytes": 1048576}))
    srv.start("tools/call", {"name": "crash", "arguments": {"code": 7}})
    assert srv.proc.wait(timeout=WAIT) == 7
    srv.close()
    assert len(srv.stderr) >= 1048576 and b"crashing" in bytes(srv.stderr)


# ----------------------------------------------------------------------------- prompts, resources, completion


def test_prompts(shared):
    names = [p["name"] for p in shared.result("prompts/list")["prompts"]]
    assert names == ["greet", "summarize"]
    res = shared.result("prompts/get", {"name": "greet", "arguments": {"name": "Ann", "style": "formal"}})
    assert "Ann" in res["messages"][0]["content"]["text"]
    assert shared.call("prompts/get", {"name": "greet", "arguments": {}})["error"]["code"] == -32602
    assert shared.call("prompts/get", {"name": "nope"})["error"]["code"] == -32602


def test_resources(shared):
    uris = [r["uri"] for r in shared.result("resources/list")["resources"]]
    assert "example://hello" in uris and "example://data.json" in uris
    res = shared.result("resources/read", {"uri": "example://data.json"})["contents"][0]
    assert res["mimeType"] == "application/json" and json.loads(res["text"])["answer"] == 42
    blob = shared.result("resources/read", {"uri": "example://blob.bin"})["contents"][0]
    assert "blob" in blob
    tpl = shared.result("resources/templates/list")["resourceTemplates"]
    assert tpl[0]["uriTemplate"] == "example://items/{id}"
    assert "7" in shared.result("resources/read", {"uri": "example://items/7"})["contents"][0]["text"]
    err = shared.call("resources/read", {"uri": "example://missing"})["error"]
    assert err["code"] == -32002 and err["data"] == {"uri": "example://missing"}


def test_completion(shared):
    def complete(ref: Dict[str, Any], name: str, value: str, context: Optional[Dict[str, Any]] = None) -> Any:
        params: Dict[str, Any] = {"ref": ref, "argument": {"name": name, "value": value}}
        if context:
            params["context"] = context
        return shared.result("completion/complete", params)["completion"]

    comp = complete({"type": "ref/prompt", "name": "greet"}, "name", "a")
    assert comp["values"] == ["Ada", "Alan", "Alice"] and comp["total"] == 3
    comp = complete({"type": "ref/prompt", "name": "greet"}, "name", "", {"arguments": {"style": "pirate"}})
    assert "Blackbeard" in comp["values"]
    comp = complete({"type": "ref/resource", "uri": "example://items/{id}"}, "id", "1")
    assert comp["values"][:2] == ["1", "10"] and comp["total"] == 62 and comp["hasMore"] is False
    assert (
        shared.call(
            "completion/complete", {"ref": {"type": "ref/prompt", "name": "zz"}, "argument": {"name": "a", "value": ""}}
        )["error"]["code"]
        == -32602
    )


def test_pagination(spawn):
    srv = spawn("--page-size", "3")
    srv.initialize()
    first = srv.result("tools/list")
    assert len(first["tools"]) == 3 and first["nextCursor"] == ""
    names = [t["name"] for t in first["tools"]]
    cursor: Optional[str] = first["nextCursor"]
    cursors = [cursor]
    while cursor is not None:
        page = srv.result("tools/list", {"cursor": cursor})
        names += [t["name"] for t in page["tools"]]
        cursor = page.get("nextCursor")
        cursors.append(cursor)
    assert len(names) == len(set(names)) and "task_work" in names and "echo" in names
    assert cursors[1] not in ("", None)
    assert srv.call("tools/list", {"cursor": "bogus"})["error"]["code"] == -32602
    loop = spawn("--cursor-loop", "--page-size", "2", module=MISBEHAVING)
    loop.initialize()
    assert loop.result("prompts/list")["nextCursor"] == loop.result("prompts/list", {"cursor": "loop"})["nextCursor"]


def test_batches(shared):
    shared.send(
        [
            {"jsonrpc": "2.0", "id": "a", "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
            {
                "jsonrpc": "2.0",
                "id": "b",
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"message": "x"}},
            },
        ]
    )
    batch = shared.wait_for(lambda m: isinstance(m, list))
    assert sorted(m["id"] for m in batch) == ["a", "b"]
    shared.send([])
    assert shared.wait_for(lambda m: isinstance(m, dict) and "error" in m)["error"]["code"] == -32600
    shared.send_raw(b"{not json\n")
    assert shared.wait_for(lambda m: isinstance(m, dict) and "error" in m)["error"]["code"] == -32700


# ----------------------------------------------------------------------------- legacy tasks (2025-11-25)


def test_legacy_tasks(legacy):
    created = legacy.result("tools/call", {"name": "task_work", "arguments": {"seconds": 0.2}, "task": {"ttl": 60000}})
    task = created["task"]
    assert task["status"] == "working" and task["ttl"] == 60000 and task["createdAt"] and "pollInterval" in task
    got = legacy.result("tasks/get", {"taskId": task["taskId"]})
    assert got["taskId"] == task["taskId"] and got["status"] in ("working", "completed")
    res = legacy.result("tasks/result", {"taskId": task["taskId"]})
    assert "task done" in text_of(res)
    assert res["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task["taskId"]}
    listed = legacy.result("tasks/list")["tasks"]
    assert [t["taskId"] for t in listed] == [task["taskId"]] and listed[0]["status"] == "completed"
    assert legacy.call("tasks/cancel", {"taskId": task["taskId"]})["error"]["code"] == -32602
    # cancel a running one; status notifications arrive
    task2 = legacy.result("tools/call", {"name": "task_work", "arguments": {"seconds": 30}, "task": {}})["task"]
    cancelled = legacy.result("tasks/cancel", {"taskId": task2["taskId"]})
    assert cancelled["status"] == "cancelled"
    note = legacy.wait_for(
        lambda m: (
            m.get("method") == "notifications/tasks/status"
            and m["params"]["taskId"] == task2["taskId"]
            and m["params"]["status"] == "cancelled"
        )
    )
    assert note["params"]["lastUpdatedAt"]
    assert legacy.call("tasks/get", {"taskId": "nope"})["error"]["code"] == -32602
    assert (
        legacy.call("tools/call", {"name": "echo", "arguments": {"message": "x"}, "task": {}})["error"]["code"]
        == -32601
    )


def test_tasks_disabled_or_older_version(spawn):
    srv = spawn("--no-tasks")
    assert "tasks" not in srv.initialize()["capabilities"]
    assert srv.call("tasks/get", {"taskId": "x"})["error"]["code"] == -32601
    res = srv.result("tools/call", {"name": "task_work", "arguments": {"seconds": 0}, "task": {}})
    assert "task done" in text_of(res)  # the task request is ignored: a plain result
    assert "extensions" not in srv.mcall("server/discover")["result"]["capabilities"]
    old = spawn()
    old.initialize("2025-06-18")
    assert old.call("tasks/list")["error"]["code"] == -32601
    assert "execution" not in [t for t in old.result("tools/list")["tools"] if t["name"] == "task_work"][0]


def test_legacy_task_input_required(legacy):
    task = legacy.result("tools/call", {"name": "task_work", "arguments": {"seconds": 0.1, "ask": True}, "task": {}})[
        "task"
    ]
    req = legacy.wait_for(lambda m: m.get("method") == "elicitation/create")
    assert req["params"]["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task["taskId"]}
    assert legacy.result("tasks/get", {"taskId": task["taskId"]})["status"] == "input_required"
    legacy.send({"jsonrpc": "2.0", "id": req["id"], "result": {"action": "accept", "content": {"confirm": True}}})
    assert "answer: accept" in text_of(legacy.result("tasks/result", {"taskId": task["taskId"]}))


# ----------------------------------------------------------------------------- modern era


def test_modern_discover_and_calls(spawn):
    srv = spawn("--ttl-ms", "5000")
    res = srv.mcall("server/discover")["result"]
    assert res["resultType"] == "complete" and MODERN in res["supportedVersions"]
    assert "2025-11-25" in res["supportedVersions"]
    assert res["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mcpsync-example"
    assert res["capabilities"]["extensions"] == {TASKS_EXT: {}}
    assert res["ttlMs"] == 5000 and res["cacheScope"] == "public"
    listed = srv.mcall("tools/list")["result"]
    assert listed["resultType"] == "complete" and listed["ttlMs"] == 5000 and listed["tools"]
    call = srv.mcall("tools/call", {"name": "echo", "arguments": {"message": "m"}})["result"]
    assert call["resultType"] == "complete" and text_of(call) == "m" and "ttlMs" not in call
    err = srv.mcall("resources/read", {"uri": "example://missing"})["error"]
    assert err["code"] == -32602 and err["data"] == {"uri": "example://missing"}
    assert srv.mcall("resources/read", {"uri": "example://hello"})["result"]["ttlMs"] == 5000
    assert srv.mcall("ping")["error"]["code"] == -32601
    assert srv.mcall("logging/setLevel", {"level": "info"})["error"]["code"] == -32601


def test_modern_envelope_errors(spawn):
    srv = spawn()
    assert srv.call("tools/list", {})["error"]["code"] == -32602
    err = srv.call(
        "tools/list",
        {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2030-01-01",
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        },
    )["error"]
    assert err["code"] == -32022 and MODERN in err["data"]["supported"] and err["data"]["requested"] == "2030-01-01"
    err = srv.call("tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}})["error"]
    assert err["code"] == -32602  # clientCapabilities missing


def test_modern_progress_and_logs(spawn):
    srv = spawn()
    seen: List[Any] = []
    rid = srv.start(
        "tools/call",
        {"name": "slow", "arguments": {"seconds": 0.05, "steps": 2}, "_meta": modern_meta(progressToken="t")},
    )
    srv.response(rid, keep=seen)
    assert len([m for m in seen if m.get("method") == "notifications/progress"]) == 2
    res = srv.mcall("tools/call", {"name": "log", "arguments": {"level": "error", "message": "x"}})["result"]
    assert text_of(res) == "suppressed by log level"  # no logLevel in _meta: no logs
    seen = []
    rid = srv.start(
        "tools/call",
        {
            "name": "log",
            "arguments": {"level": "error", "message": "x"},
            "_meta": modern_meta(**{"io.modelcontextprotocol/logLevel": "warning"}),
        },
    )
    assert text_of(srv.response(rid, keep=seen)["result"]) == "logged"
    assert [m["params"]["level"] for m in seen if m.get("method") == "notifications/message"] == ["error"]


def test_era_selection(spawn):
    modern = spawn("--era", "modern")
    err = modern.call(
        "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}}
    )["error"]
    assert err["code"] == -32022 and err["data"]["supported"] == [MODERN]
    assert modern.mcall("server/discover")["result"]["supportedVersions"] == [MODERN]
    legacy = spawn("--era", "legacy")
    assert legacy.mcall("server/discover")["error"]["code"] == -32601
    legacy.initialize()
    assert legacy.result("ping") == {}
    dual = spawn()
    assert dual.mcall("server/discover")["result"]["supportedVersions"][0] == MODERN
    assert dual.initialize()["protocolVersion"] == "2025-11-25"
    assert dual.result("tools/list")["tools"] and "resultType" not in dual.result("tools/list")


@pytest.mark.parametrize("mode,code", [("method-not-found", -32601), ("error", -32603)])
def test_discover_error_modes(spawn, mode, code):
    srv = spawn("--discover", mode, module=MISBEHAVING)
    assert srv.mcall("server/discover")["error"]["code"] == code
    assert srv.initialize()["protocolVersion"] == "2025-11-25"


def test_discover_never_and_garbage(spawn):
    srv = spawn("--discover", "never", module=MISBEHAVING)
    srv.start("server/discover", {"_meta": modern_meta()})
    assert srv.initialize()["protocolVersion"] == "2025-11-25"  # the discover never got an answer
    srv2 = spawn("--discover", "garbage", module=MISBEHAVING)
    rid = srv2.start("server/discover", {"_meta": modern_meta()})
    assert srv2.response(rid)["result"] == "garbage"
    assert b"this is not JSON" in bytes(srv2.raw)


def test_reject_version_once(spawn):
    srv = spawn("--reject-version-once", module=MISBEHAVING)
    err = srv.mcall("server/discover")["error"]
    assert err["code"] == -32022 and MODERN in err["data"]["supported"]
    assert srv.mcall("server/discover")["result"]["resultType"] == "complete"


@pytest.mark.parametrize("rounds", [1, 3])
def test_mrtr(spawn, rounds):
    srv = spawn("--mrtr-rounds", str(rounds))
    caps = {"sampling": {}}
    params: Dict[str, Any] = {"name": "sample", "arguments": {"prompt": "hi"}}
    for i in range(rounds):
        res = srv.mcall("tools/call", params, caps)["result"]
        assert res["resultType"] == "input_required", res
        ((key, req),) = res["inputRequests"].items()
        assert req["method"] == "sampling/createMessage"
        params = {
            "name": "sample",
            "arguments": {"prompt": "hi"},
            "requestState": res["requestState"],
            "inputResponses": {
                key: {"role": "assistant", "model": "m", "content": {"type": "text", "text": "answer %d" % i}}
            },
        }
    res = srv.mcall("tools/call", params, caps)["result"]
    assert res["resultType"] == "complete" and text_of(res) == "answer %d" % (rounds - 1)


def test_mrtr_elicit_roots_and_missing_capability(spawn):
    srv = spawn()
    err = srv.mcall("tools/call", {"name": "sample", "arguments": {"prompt": "x"}})["error"]
    assert err["code"] == -32021 and "sampling" in err["data"]["requiredCapabilities"]
    res = srv.mcall("tools/call", {"name": "elicit"}, {"elicitation": {}})["result"]
    ((key, req),) = res["inputRequests"].items()
    assert req["params"]["mode"] == "form"
    # Missing answer: asked again rather than an error.
    again = srv.mcall(
        "tools/call", {"name": "elicit", "requestState": res["requestState"], "inputResponses": {}}, {"elicitation": {}}
    )["result"]
    assert again["resultType"] == "input_required"
    done = srv.mcall(
        "tools/call",
        {"name": "elicit", "requestState": res["requestState"], "inputResponses": {key: {"action": "decline"}}},
        {"elicitation": {}},
    )["result"]
    assert done["structuredContent"] == {"action": "decline"}
    res = srv.mcall("tools/call", {"name": "elicit_url"}, {"elicitation": {"url": {}}})["result"]
    ((key, req),) = res["inputRequests"].items()
    assert req["params"]["mode"] == "url" and "elicitationId" not in req["params"]
    res = srv.mcall("tools/call", {"name": "roots"}, {"roots": {}})["result"]
    ((key, req),) = res["inputRequests"].items()
    assert req["method"] == "roots/list"
    done = srv.mcall(
        "tools/call",
        {
            "name": "roots",
            "requestState": res["requestState"],
            "inputResponses": {key: {"roots": [{"uri": "file:///r"}]}},
        },
        {"roots": {}},
    )
    assert text_of(done["result"]) == "file:///r"
    bad = srv.mcall("tools/call", {"name": "roots", "requestState": "tampered", "inputResponses": {}}, {"roots": {}})
    assert bad["error"]["code"] == -32602


def test_listen(spawn):
    srv = spawn()
    rid = srv.start(
        "subscriptions/listen",
        {
            "_meta": modern_meta(),
            "notifications": {"toolsListChanged": True, "resourceSubscriptions": ["example://hello"], "bogus": True},
        },
    )
    ack = srv.wait_for(lambda m: m.get("method") == "notifications/subscriptions/acknowledged")
    assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == rid
    assert ack["params"]["notifications"] == {"toolsListChanged": True, "resourceSubscriptions": ["example://hello"]}
    srv.mcall("tools/call", {"name": "add_tool", "arguments": {"name": "n1"}})
    note = srv.wait_for(lambda m: m.get("method") == "notifications/tools/list_changed")
    assert note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == rid
    srv.mcall("tools/call", {"name": "touch", "arguments": {"uri": "example://hello"}})
    note = srv.wait_for(lambda m: m.get("method") == "notifications/resources/updated")
    assert note["params"]["uri"] == "example://hello"
    srv.mcall("tools/call", {"name": "add_prompt", "arguments": {"name": "p1"}})  # not subscribed
    res = srv.mcall("tools/call", {"name": "end_listens"})["result"]
    assert "ended 1" in text_of(res)
    end = srv.response(rid)
    assert end["result"]["resultType"] == "complete"
    # cancelled by the client: no more notifications, no response
    rid2 = srv.start("subscriptions/listen", {"_meta": modern_meta(), "notifications": {"toolsListChanged": True}})
    srv.wait_for(lambda m: m.get("method") == "notifications/subscriptions/acknowledged")
    srv.notify("notifications/cancelled", {"requestId": rid2})
    assert "ended 0" in text_of(srv.mcall("tools/call", {"name": "end_listens"})["result"])


def test_listen_refuses_resource_subscriptions(spawn):
    srv = spawn("--refuse-resource-subscriptions")
    srv.start(
        "subscriptions/listen",
        {
            "_meta": modern_meta(),
            "notifications": {"promptsListChanged": True, "resourceSubscriptions": ["example://hello"]},
        },
    )
    ack = srv.wait_for(lambda m: m.get("method") == "notifications/subscriptions/acknowledged")
    assert ack["params"]["notifications"] == {"promptsListChanged": True}


def test_modern_tasks(spawn):
    srv = spawn()
    caps = {"extensions": {TASKS_EXT: {}}, "elicitation": {}}
    # Without the extension: a plain synchronous result.
    res = srv.mcall("tools/call", {"name": "task_work", "arguments": {"seconds": 0.01}})["result"]
    assert res["resultType"] == "complete" and "task done" in text_of(res)
    res = srv.mcall("tools/call", {"name": "task_work", "arguments": {"seconds": 0.1, "ask": True}}, caps)["result"]
    assert res["resultType"] == "task" and res["status"] == "working" and res["pollIntervalMs"] > 0
    assert res["ttlMs"] > 0 and res["task"]["taskId"] == res["taskId"]
    task_id = res["taskId"]
    while True:
        got = srv.mcall("tasks/get", {"taskId": task_id}, caps)["result"]
        assert got["resultType"] == "complete"
        if got["status"] == "input_required":
            break
        time.sleep(0.02)
    ((key, req),) = got["inputRequests"].items()
    assert req["method"] == "elicitation/create"
    assert srv.mcall(
        "tasks/update",
        {"taskId": task_id, "inputResponses": {key: {"action": "accept", "content": {"confirm": True}}}},
        caps,
    )["result"] == {
        "resultType": "complete",
        "_meta": {"io.modelcontextprotocol/serverInfo": got["_meta"]["io.modelcontextprotocol/serverInfo"]},
    }
    while got["status"] not in ("completed", "failed", "cancelled"):
        time.sleep(0.02)
        got = srv.mcall("tasks/get", {"taskId": task_id}, caps)["result"]
    assert got["status"] == "completed" and "answer: accept" in text_of(got["result"])
    # cancellation is acknowledged, then observed
    task_id = srv.mcall("tools/call", {"name": "task_work", "arguments": {"seconds": 30}}, caps)["result"]["taskId"]
    assert srv.mcall("tasks/cancel", {"taskId": task_id}, caps)["result"]["resultType"] == "complete"
    while srv.mcall("tasks/get", {"taskId": task_id}, caps)["result"]["status"] != "cancelled":
        time.sleep(0.02)
    # failures and errors
    task_id = srv.mcall("tools/call", {"name": "task_work", "arguments": {"seconds": 0, "fail": True}}, caps)["result"][
        "taskId"
    ]
    while (got := srv.mcall("tasks/get", {"taskId": task_id}, caps)["result"])["status"] == "working":
        time.sleep(0.02)
    assert got["status"] == "failed" and got["error"]["code"] == -32603
    assert srv.mcall("tasks/get", {"taskId": task_id})["error"]["code"] == -32021
    assert srv.mcall("tasks/get", {"taskId": "nope"}, caps)["error"]["code"] == -32602


def test_modern_task_notifications_via_listen(spawn):
    srv = spawn()
    caps = {"extensions": {TASKS_EXT: {}}}
    task_id = srv.mcall("tools/call", {"name": "task_work", "arguments": {"seconds": 0.2}}, caps)["result"]["taskId"]
    err = srv.mcall("subscriptions/listen", {"notifications": {"taskIds": [task_id]}})["error"]
    assert err["code"] == -32021
    rid = srv.start("subscriptions/listen", {"_meta": modern_meta(caps), "notifications": {"taskIds": [task_id]}})
    ack = srv.wait_for(lambda m: m.get("method") == "notifications/subscriptions/acknowledged")
    assert ack["params"]["notifications"] == {"taskIds": [task_id]}
    note = srv.wait_for(lambda m: m.get("method") == "notifications/tasks" and m["params"]["status"] == "completed")
    assert note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == rid
    assert "task done" in text_of(note["params"]["result"])


# ----------------------------------------------------------------------------- misbehaviour flags


def test_banner_garbage_crlf(spawn):
    srv = spawn("--banner", "--garbage", "--crlf", module=MISBEHAVING)
    assert srv.initialize()["protocolVersion"] == "2025-11-25"
    assert srv.result("ping") == {}
    raw = bytes(srv.raw)
    assert raw.startswith(b"mcpsync-example starting up") and b"banner: a stray print" in raw
    assert b'"jsonrpc":"1.0"' in raw and b"\xff\xfe\xfd" in raw and b'"id":987654321' in raw
    assert b"}\r\n\r\n" in raw


def test_content_length_framing(spawn):
    srv = spawn("--framing", "content-length")
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "x", "version": "0"},
            },
        }
    ).encode()
    srv.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    deadline = time.monotonic() + WAIT
    while True:
        raw = bytes(srv.raw)
        if b"\r\n\r\n" in raw:
            header, rest = raw.split(b"\r\n\r\n", 1)
            length = int(header.split(b":")[1])
            if len(rest) >= length:
                break
        assert time.monotonic() < deadline, "no whole Content-Length frame within %ss: %r" % (WAIT, raw)
        time.sleep(0.01)
    assert header.startswith(b"Content-Length: ")
    msg = json.loads(rest[:length])
    assert msg["result"]["protocolVersion"] == "2025-11-25"


def test_stderr_flood_and_exit_after(spawn):
    srv = spawn("--stderr-flood", "200000", "--exit-after", "2", module=MISBEHAVING)
    srv.initialize()
    assert srv.result("ping") == {}
    assert srv.proc.wait(timeout=WAIT) == 0
    srv.close()
    assert len(srv.stderr) >= 600000


def test_out_of_order_concurrent(spawn):
    srv = spawn("--out-of-order", module=MISBEHAVING)
    srv.initialize()
    ids = [srv.start("tools/call", {"name": "echo", "arguments": {"message": "m%d" % i}}) for i in range(40)]
    got = {}
    while len(got) < len(ids):
        msg = srv.next_message()
        got[msg["id"]] = text_of(msg["result"])
    assert got == {rid: "m%d" % i for i, rid in enumerate(ids)}


def test_server_pings(spawn):
    srv = spawn("--ping", "0.05")
    srv.initialize()
    ping = srv.wait_for(lambda m: m.get("method") == "ping")
    srv.send({"jsonrpc": "2.0", "id": ping["id"], "result": {}})
    assert srv.result("tools/list")["tools"]


def test_no_exit_on_eof_and_ignore_sigterm(spawn):
    srv = spawn("--no-exit-on-eof", "--ignore-sigterm", "--slow-start", "0.05", module=MISBEHAVING)
    srv.initialize()
    assert srv.proc.stdin is not None
    srv.proc.stdin.close()
    assert b"staying alive" in _wait_stderr(srv, b"staying alive")
    srv.proc.send_signal(signal.SIGTERM)
    with pytest.raises(subprocess.TimeoutExpired):
        srv.proc.wait(timeout=0.3)
    srv.kill()


def test_exits_on_eof(spawn):
    srv = spawn()
    srv.initialize()
    assert srv.close() == 0


@pytest.mark.skipif(os.name != "posix", reason="process groups are POSIX")
def test_spawn_grandchild(spawn):
    srv = spawn("--spawn-grandchild", new_session=True, module=MISBEHAVING)
    line = _wait_stderr(srv, b"grandchild pid")
    pid = int(line.split(b"grandchild pid", 1)[1].split()[0])
    srv.initialize()
    try:
        os.kill(pid, 0)  # alive
        os.kill(pid, signal.SIGTERM)  # ignored
        assert srv.result("ping") == {}
        os.kill(pid, 0)
    finally:
        os.killpg(srv.proc.pid, signal.SIGKILL)
    srv.kill()
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.02)
    else:
        raise AssertionError("grandchild survived SIGKILL of the group")


def _wait_stderr(srv: Server, needle: bytes) -> bytes:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        data = bytes(srv.stderr)
        if needle in data:
            return data[data.index(needle) :]
        time.sleep(0.01)
    raise AssertionError("%r not on stderr: %r" % (needle, bytes(srv.stderr)))


# ----------------------------------------------------------------------------- echo benchmark server


def test_echo_server(spawn):
    srv = spawn(module="mcpsync.example_server.echo")
    assert srv.result("initialize", {"protocolVersion": "2025-06-18"})["protocolVersion"] == "2025-06-18"
    srv.notify("notifications/initialized")
    assert text_of(srv.tool("echo", {"message": "fast"})) == "fast"
    res = srv.mcall("server/discover")["result"]
    assert res["resultType"] == "complete" and MODERN in res["supportedVersions"]
    res = srv.mcall("tools/call", {"name": "echo", "arguments": {"message": "m"}})["result"]
    assert res["resultType"] == "complete" and text_of(res) == "m"
    assert srv.call("nope/nope")["error"]["code"] == -32601


def test_module_imports_only_stdlib():
    code = (
        "import sys; import mcpsync.example_server, mcpsync.example_server.echo; "
        "bad = [m for m in ('requests', 'jsonschema', 'filelock', 'sseclient') if m in sys.modules]; "
        "print(bad)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        env=dict(os.environ, PYTHONPATH=ROOT),
    )
    assert out.stdout.strip() == "[]", out.stderr


# ----------------------------------------------------------------------------- the core API, in process (HTTP mount)


def test_core_api_in_process():
    from mcpsync.example_server import ExampleServer, QueueConnection

    server = ExampleServer(era="auto", ttl_ms=1000)
    try:
        # Modern era: one session and one connection per POST.
        conn = QueueConnection()
        session = server.new_session(conn)
        session.handle(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {
                    "name": "slow",
                    "arguments": {"seconds": 0.01, "steps": 2},
                    "_meta": modern_meta(progressToken=1),
                },
            },
            conn,
        )
        msgs = list(conn.until_response(1, timeout=WAIT))
        assert [m.get("method") for m in msgs[:-1]] == ["notifications/progress"] * 2
        assert msgs[-1]["result"]["resultType"] == "complete"
        session.close()
        # Legacy era: one session, several POST connections; the client's answer arrives on another POST.
        legacy = server.new_session()
        post = QueueConnection()
        legacy.handle(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {"sampling": {}},
                    "clientInfo": {"name": "x", "version": "0"},
                },
            },
            post,
        )
        assert post.get(WAIT)["result"]["protocolVersion"] == "2025-06-18"
        legacy.handle({"jsonrpc": "2.0", "method": "notifications/initialized"}, post)
        assert legacy.initialized and legacy.ready and legacy.protocol_version == "2025-06-18"
        call = QueueConnection()
        legacy.handle(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "sample", "arguments": {"prompt": "p"}},
            },
            call,
        )
        sampling = call.get(WAIT)
        assert sampling["method"] == "sampling/createMessage"
        answer = QueueConnection()
        legacy.handle(
            {
                "jsonrpc": "2.0",
                "id": sampling["id"],
                "result": {"role": "assistant", "model": "m", "content": {"type": "text", "text": "sampled"}},
            },
            answer,
        )
        assert text_of(call.get(WAIT)["result"]) == "sampled"
        assert answer.queue.empty()
        # Unsolicited legacy notifications go to the attached stream.
        stream = QueueConnection()
        legacy.attach(stream)
        legacy.handle(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "add_tool", "arguments": {"name": "zz"}},
            },
            post,
        )
        assert stream.get(WAIT)["method"] == "notifications/tools/list_changed"
        legacy.close()
    finally:
        server.shutdown()
