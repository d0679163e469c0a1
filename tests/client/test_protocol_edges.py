"""Protocol corner cases against small scripted servers written for each case."""

from __future__ import annotations

import json
import sys
import textwrap
import threading
from typing import List

import pytest

import mcpsync

from tests.conftest import server_cmd
from mcpsync.client import Callbacks, ClientOptions, StdioOptions

HEADER = textwrap.dedent(
    """
    import json, sys
    def send(obj):
        sys.stdout.write(json.dumps(obj) + "\\n"); sys.stdout.flush()
    def log(obj):
        sys.stderr.write("SEEN " + json.dumps(obj) + "\\n"); sys.stderr.flush()
    INIT = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}
    DISCOVER = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "m", "version": "1"}}}
    """
)


def script(tmp_path, body: str) -> List[str]:  # type: ignore[no-untyped-def]
    path = tmp_path / "server.py"
    path.write_text(HEADER + textwrap.dedent(body))
    return [sys.executable, str(path)]


def test_unknown_result_type_is_a_protocol_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    cmd = script(
        tmp_path,
        """
        for line in sys.stdin:
            m = json.loads(line)
            if m.get("method") == "server/discover":
                send({"jsonrpc": "2.0", "id": m["id"], "result": DISCOVER})
            elif "id" in m:
                send({"jsonrpc": "2.0", "id": m["id"], "result": {"resultType": "mystery"}})
        """,
    )
    with mcpsync.connect(cmd) as c:
        assert c.era == "modern" and c.server_info.name == "m"
        with pytest.raises(mcpsync.ProtocolError) as info:
            c.call_tool("x")
        assert "mystery" in str(info.value)


def test_request_state_is_echoed_exactly_and_never_invented(tmp_path) -> None:  # type: ignore[no-untyped-def]
    cmd = script(
        tmp_path,
        """
        rounds = 0
        for line in sys.stdin:
            m = json.loads(line)
            if m.get("method") == "server/discover":
                send({"jsonrpc": "2.0", "id": m["id"], "result": DISCOVER}); continue
            if m.get("method") != "tools/call":
                continue
            p = m["params"]
            log({"state": p.get("requestState", "<absent>"), "responses": p.get("inputResponses")})
            rounds += 1
            if rounds == 1:   # inputRequests, no requestState
                send({"jsonrpc": "2.0", "id": m["id"], "result": {"resultType": "input_required",
                      "inputRequests": {"r": {"method": "roots/list", "params": {}}}}})
            elif rounds == 2:   # requestState only: retry right away
                send({"jsonrpc": "2.0", "id": m["id"], "result": {"resultType": "input_required",
                      "requestState": "  opaque \\u00e9 state  "}})
            else:
                send({"jsonrpc": "2.0", "id": m["id"], "result": {"content": [{"type": "text", "text": "ok"}]}})
        """,
    )
    lines: List[str] = []
    with mcpsync.connect(cmd, roots=["/tmp"], stdio=StdioOptions(on_stderr=lines.append)) as c:
        assert c.call_tool("x").text == "ok"
        c.close()
    seen = [json.loads(line[5:]) for line in lines if line.startswith("SEEN ")]
    assert seen[0]["state"] == "<absent>"
    assert seen[1]["state"] == "<absent>" and seen[1]["responses"]["r"]["roots"][0]["uri"] == "file:///tmp"
    assert seen[2]["state"] == "  opaque \u00e9 state  " and seen[2]["responses"] is None


def test_initialize_answered_with_32022_probes_again(tmp_path) -> None:  # type: ignore[no-untyped-def]
    cmd = script(
        tmp_path,
        """
        probes = 0
        for line in sys.stdin:
            m = json.loads(line)
            if m.get("method") == "server/discover":
                probes += 1
                if probes == 1:
                    continue          # the first probe times out...
                send({"jsonrpc": "2.0", "id": m["id"], "result": DISCOVER})
            elif m.get("method") == "initialize":   # ...but locked the server modern
                send({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32022, "message": "modern only",
                      "data": {"supported": ["2026-07-28"]}}})
            elif "id" in m:
                send({"jsonrpc": "2.0", "id": m["id"], "result": {"content": []}})
        """,
    )
    with mcpsync.connect(cmd, options=ClientOptions(probe_timeout=0.5)) as c:
        assert c.era == "modern"


def test_batch_of_server_requests_gets_a_batch_of_answers(tmp_path) -> None:  # type: ignore[no-untyped-def]
    cmd = script(
        tmp_path,
        """
        for line in sys.stdin:
            m = json.loads(line)
            if isinstance(m, list):
                log(m); continue
            if m.get("method") == "initialize":
                send({"jsonrpc": "2.0", "id": m["id"], "result": INIT})
            elif m.get("method") == "server/discover":
                send({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32601, "message": "no"}})
            elif m.get("method") == "tools/call":
                send([{"jsonrpc": "2.0", "id": "a", "method": "ping"},
                      {"jsonrpc": "2.0", "id": 7, "method": "roots/list"},
                      {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}])
                send({"jsonrpc": "2.0", "id": m["id"], "result": {"content": []}})
        """,
    )
    lines: List[str] = []
    got = threading.Event()

    def on_stderr(line: str) -> None:
        lines.append(line)
        if line.startswith("SEEN ["):
            got.set()

    with mcpsync.connect(cmd, roots=["/tmp"], stdio=StdioOptions(on_stderr=on_stderr)) as c:
        c.call_tool("x")
        assert got.wait(5)
    batch = json.loads([x for x in lines if x.startswith("SEEN [")][0][5:])
    by_id = {m["id"]: m for m in batch}
    assert set(by_id) == {"a", 7}  # ids echoed exactly (a string stays a string)
    assert by_id["a"]["result"] == {} and by_id[7]["result"]["roots"][0]["uri"] == "file:///tmp"


def test_request_handle_is_future_like() -> None:
    with mcpsync.connect(server_cmd()) as c:
        h = c.call_tool_async("echo", {"message": "f"})
        assert h.exception() is None and h.result().text == "f" and not h.cancelled() and not h.running()
        slow = c.call_tool_async("slow", {"seconds": 5, "steps": 5})
        assert slow.running()
        slow.cancel()
        assert slow.cancelled() and isinstance(slow.exception(), mcpsync.RequestCancelled)
        done = threading.Event()
        c.call_tool_async("echo", {"message": "cb"}).add_done_callback(lambda _h: done.set())
        assert done.wait(5)


def test_task_status_callback_during_transparent_call() -> None:
    seen = []
    with mcpsync.connect(
        server_cmd("--era", "modern", "--task-poll-interval-ms", "20"), callbacks=Callbacks(on_task_status=seen.append)
    ) as c:
        assert "task done" in c.call_tool("task_work", {"seconds": 0.3}).text
    assert seen and seen[-1].status == "completed"
