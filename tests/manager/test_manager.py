"""The manager against real stdio servers: concurrent connects, statuses, routing, caching, recovery, adapters."""

from __future__ import annotations

import json
import os
import signal
import sys
import textwrap
import threading
from typing import Any, List

import pytest

from mcpsync.client.client import Client
from mcpsync.errors import ClientClosed, ConfigError, ConnectError, RequestTimeout, ServerExited
from mcpsync.manager import Manager, ServerStatus, UnknownTool
from tests.conftest import misbehaving_cmd, server_cmd, wait_for

PY = sys.executable


def wrapper(tmp_path, name: str, body: str) -> List[str]:
    """A stdio server command: run ``body`` (Python), then the example server."""
    script = tmp_path / ("%s.py" % name)
    script.write_text(textwrap.dedent(body) + "\nfrom mcpsync.example_server.stdio import main\nsys.exit(main([]))\n")
    return [PY, str(script)]


class Recorder:
    """Collects manager events (they arrive on the events thread)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.events: List[Any] = []

    def tools_changed(self, server: str) -> None:
        with self.lock:
            self.events.append(("tools", server))

    def status_changed(self, server: str, status: ServerStatus) -> None:
        with self.lock:
            self.events.append(("status", server, status.status))

    def seen(self, *event: Any) -> bool:
        with self.lock:
            return event in self.events


class CountingClient(Client):
    """A real client that counts tools/list calls and can be told to fail or block them."""

    lists = 0
    fail_lists = False
    gate: "threading.Event | None" = None
    count_lock = threading.Lock()

    def list_tools(self, **kwargs: Any) -> Any:
        with CountingClient.count_lock:
            CountingClient.lists += 1
        if CountingClient.gate is not None:
            CountingClient.gate.wait(10)
        if CountingClient.fail_lists:
            raise RequestTimeout("simulated", timeout=1)
        return super().list_tools(**kwargs)


@pytest.fixture
def counting():
    CountingClient.lists, CountingClient.fail_lists, CountingClient.gate = 0, False, None
    yield CountingClient
    CountingClient.fail_lists, CountingClient.gate = False, None


def test_twenty_servers_connect_concurrently_and_a_broken_one_does_not_delay_them(tmp_path):
    # Each server waits until all 20 processes exist: connecting one after the other could never finish.
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    cmd = wrapper(
        tmp_path,
        "barrier",
        """
        import os, sys, time
        d = %r
        open(os.path.join(d, str(os.getpid())), "w").close()
        deadline = time.time() + 60
        while len(os.listdir(d)) < 20:
            if time.time() > deadline:
                sys.exit("only %%d servers started" %% len(os.listdir(d)))
            time.sleep(0.02)
    """
        % str(barrier),
    )
    config = {"s%02d" % i: {"command": cmd, "connect_timeout": 90} for i in range(20)}
    config["broken"] = {"command": [PY, "-c", "import sys; sys.stderr.write('no config\\n'); sys.exit(3)"]}
    config["hangs"] = {"command": misbehaving_cmd("--slow-start", "600"), "connect_timeout": 1}
    rec = Recorder()
    with Manager(config, on_status_changed=rec.status_changed) as mgr:
        status = mgr.status()
        assert [s for s in status if status[s].status == "connected"] == ["s%02d" % i for i in range(20)]
        assert status["broken"].status == "failed" and status["broken"].exit_code == 3
        assert status["broken"].stderr_tail == ("no config",)
        assert "exited with code 3" in status["broken"].reason and "no config" in status["broken"].reason
        assert status["hangs"].status == "failed" and isinstance(status["hangs"].error, RequestTimeout)
        assert len(mgr.clients()) == 20
        assert len(mgr.tools()) == 20 * len(mgr.clients()["s00"].list_tools())
        assert wait_for(lambda: rec.seen("status", "s19", "connected"))
        assert rec.seen("status", "s00", "connecting")


def test_statuses_disabled_lazy_failed_and_disconnected(tmp_path):
    config = {
        "off": {"command": server_cmd(), "enabled": False},
        "lazy": {"command": server_cmd(), "lazy": True},
        "nocfg": {"command": server_cmd(), "env": {"TOKEN": "${SURELY_NOT_SET_VAR}"}},
        "missing": {"command": [str(tmp_path / "no-such-program")]},
        "ok": {"command": server_cmd()},
    }
    with Manager(config) as mgr:
        st = mgr.status()
        assert st["off"].status == "disabled" and st["lazy"].status == "not_connected"
        assert st["nocfg"].status == "failed" and "SURELY_NOT_SET_VAR is not set" in st["nocfg"].reason
        assert st["missing"].status == "failed" and st["missing"].reason
        assert st["ok"].status == "connected" and st["ok"].transport == "stdio"
        assert st["ok"].to_dict() == {"name": "ok", "status": "connected", "transport": "stdio"}
        assert json.dumps({k: v.to_dict() for k, v in st.items()})
        with pytest.raises(ConnectError, match="disabled"):
            mgr.client("off")
        with pytest.raises(ConfigError, match="SURELY_NOT_SET_VAR"):
            mgr.client("nocfg")
        # lazy: connected by first use
        assert mgr.call_tool("lazy_echo", {"message": "hi"}).text == "hi"
        assert mgr.status("lazy").status == "connected"
        assert mgr.disconnect("lazy").status == "disconnected"
        assert "lazy" not in mgr.clients()
        assert not [t for t in mgr.tools() if t.server == "lazy"]
        with pytest.raises(ConnectError, match="disconnected"):
            mgr.call_tool("lazy_echo", {"message": "hi"})
        assert mgr.connect("lazy").status == "connected"
        assert mgr.call_tool("lazy_echo", {"message": "back"}).text == "back"
        # connect() works on a disabled server too (an explicit user action)
        assert mgr.connect("off").status == "connected"


def test_lazy_manager_connects_everything_on_first_tools_call():
    with Manager({"a": {"command": server_cmd()}, "b": {"command": server_cmd()}}, lazy=True) as mgr:
        assert {s.status for s in mgr.status().values()} == {"not_connected"}
        names = {t.name for t in mgr.tools()}
        assert {"a_echo", "b_echo"} <= names
        assert {s.status for s in mgr.status().values()} == {"connected"}


def test_same_tool_on_two_servers_routes_to_each_server():
    with Manager({"a": {"command": server_cmd()}, "b.srv": {"command": server_cmd()}}) as mgr:
        names = [t.name for t in mgr.tools()]
        assert "a_pid" in names and "b_srv_pid" in names
        tool = {t.name: t for t in mgr.tools()}["b_srv_pid"]
        assert (tool.server, tool.original_name) == ("b.srv", "pid")
        assert tool.input_schema["additionalProperties"] is False and tool.input_schema["type"] == "object"
        pid_a = mgr.call_tool("a_pid").text
        pid_b = mgr.call_tool("b_srv_pid").text
        assert pid_a != pid_b
        assert mgr.clients()["a"].call_tool("pid").text == pid_a
        assert mgr.call_tool("pid", server="b.srv").text == pid_b
        with pytest.raises(UnknownTool):
            mgr.call_tool("c_pid")
        with pytest.raises(ConfigError):
            mgr.call_tool("pid", server="nope")


def test_tool_lists_are_cached_and_refreshed_on_list_changed(counting):
    rec = Recorder()
    changed = threading.Event()
    mgr = Manager({"a": {"command": server_cmd()}}, client_factory=counting, on_tools_changed=rec.tools_changed)
    mgr.on("tools_changed", lambda server: changed.set())
    try:
        mgr.open()
        assert counting.lists == 1
        for _ in range(5):
            mgr.tools()
            mgr.tools_for("anthropic")
        assert counting.lists == 1  # served from the cache
        assert mgr.call_tool("a_add_tool", {"name": "fresh"}).text == "added tool fresh"
        assert changed.wait(10)
        assert "a_fresh" in [t.name for t in mgr.tools()]
        assert rec.seen("tools", "a")
        assert mgr.call_tool("a_fresh", {"x": 1}).text.startswith("fresh")
        # A failing refresh keeps the previous list.
        counting.fail_lists = True
        changed.clear()
        mgr.call_tool("a_add_tool", {"name": "later"})
        assert wait_for(lambda: counting.lists >= 3)
        assert "a_fresh" in [t.name for t in mgr.tools()] and "a_later" not in [t.name for t in mgr.tools()]
        counting.fail_lists = False
        mgr.refresh_tools("a")
        assert "a_later" in [t.name for t in mgr.tools()]
    finally:
        mgr.close()


def test_list_changed_refreshes_are_coalesced(counting):
    with Manager({"a": {"command": server_cmd()}}, client_factory=counting) as mgr:
        rec = mgr._servers["a"]
        gate = counting.gate = threading.Event()
        before = counting.lists
        mgr._tools_changed(rec, rec.generation)
        assert wait_for(lambda: counting.lists == before + 1)  # one refresh in flight (held at the gate)
        for _ in range(10):
            mgr._tools_changed(rec, rec.generation)  # ten more notifications meanwhile: coalesced into one
        gate.set()
        assert wait_for(lambda: rec.refresh_thread is None)
        assert counting.lists == before + 2


def test_a_killed_server_is_restarted_on_next_use_and_a_sent_call_is_not_retried(tmp_path):
    starts = tmp_path / "starts.log"
    marker = tmp_path / "refuse"
    cmd = wrapper(
        tmp_path,
        "restartable",
        """
        import os, sys
        with open(%r, "a") as f:
            f.write("start\\n")
        if os.path.exists(%r):
            sys.stderr.write("refusing to start\\n")
            sys.exit(7)
    """
        % (str(starts), str(marker)),
    )
    rec = Recorder()
    with Manager({"r": {"command": cmd}}, restart_backoff=(0.2, 0.4), on_status_changed=rec.status_changed) as mgr:
        pid = int(mgr.call_tool("r_pid").text)
        os.kill(pid, signal.SIGKILL)
        assert wait_for(lambda: mgr.status("r").status == "failed")
        assert mgr.status("r").exit_code == -signal.SIGKILL
        new_pid = int(mgr.call_tool("r_pid").text)  # restarted on use
        assert new_pid != pid and mgr.status("r").status == "connected"
        # A call that was sent is never retried: the crash surfaces, the next call restarts.
        with pytest.raises(ServerExited):
            mgr.call_tool("r_crash", {"code": 4})
        assert starts.read_text().count("start") == 2
        # Failed restarts back off: the second call inside the backoff does not spawn anything.
        marker.write_text("x")
        pid = int(mgr.call_tool("r_pid").text) if mgr.status("r").status == "connected" else None
        assert pid is None
        with pytest.raises(ConnectError):
            mgr.call_tool("r_pid")  # this restart attempt fails (exit 7)
        spawned = starts.read_text().count("start")
        with pytest.raises(ConnectError, match="next restart attempt in"):
            mgr.call_tool("r_pid")
        assert starts.read_text().count("start") == spawned
        assert mgr.status("r").exit_code == 7 and "refusing to start" in mgr.status("r").reason
        marker.unlink()
        assert wait_for(lambda: _try_pid(mgr) is not None, timeout=10)
        assert mgr.status("r").status == "connected"
        assert mgr._servers["r"].failures == 0  # the counter resets after a success


def _try_pid(mgr: Manager) -> Any:
    try:
        return int(mgr.call_tool("r_pid").text)
    except ConnectError:
        return None


def test_per_call_timeout_comes_from_the_configuration_and_resets_on_progress():
    with Manager({"s": {"command": server_cmd(), "timeout": 0.5}}) as mgr:
        with pytest.raises(RequestTimeout):
            mgr.call_tool("s_slow", {"seconds": 30, "steps": 1})
        # 40 progress notifications 0.05 s apart: never 0.5 s of silence.
        assert mgr.call_tool("s_slow", {"seconds": 2, "steps": 40}).text == "done"
        assert mgr.call_tool("s_slow", {"seconds": 1, "steps": 1}, timeout=20).text == "done"


def test_openai_and_anthropic_round_trips():
    with Manager({"calc": {"command": server_cmd()}}) as mgr:
        openai_tools = mgr.tools_for("openai", strict=True)
        add = [t for t in openai_tools if t["function"]["name"] == "calc_add"][0]
        assert add["function"]["parameters"]["type"] == "object"
        reply = mgr.call_from_tool_call(
            {"id": "call_1", "type": "function", "function": {"name": "calc_add", "arguments": '{"a": 2, "b": 3}'}}
        )
        assert reply == {"role": "tool", "tool_call_id": "call_1", "content": "5"}
        anthropic_tools = mgr.tools_for("anthropic")
        assert "calc_echo" in [t["name"] for t in anthropic_tools]
        reply = mgr.call_from_tool_call(
            {"type": "tool_use", "id": "toolu_1", "name": "calc_echo", "input": {"message": "hello"}}
        )
        assert reply == {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": [{"type": "text", "text": "hello"}],
        }
        reply = mgr.call_from_tool_call(
            {"type": "tool_use", "id": "toolu_2", "name": "calc_fail", "input": {"message": "nope"}}
        )
        assert reply["is_error"] is True and reply["content"][0]["text"] == "nope"
        reply = mgr.call_from_tool_call(
            {"type": "function_call", "call_id": "c", "name": "calc_nothing", "arguments": "{}"}
        )
        assert reply["output"].startswith("Error: no server offers a tool named 'calc_nothing'")
        assert mgr.tools_for("openai-responses")[0]["type"] == "function"


def test_prompts_and_resources_carry_the_server_name():
    with Manager({"a": {"command": server_cmd()}, "b": {"command": server_cmd()}}) as mgr:
        prompts = mgr.prompts()
        assert {p.server for p in prompts} == {"a", "b"}
        first = [p for p in prompts if p.server == "b"][0]
        args = {a.name: "x" for a in first.prompt.arguments if a.required}
        assert mgr.get_prompt("b", first.name, args).messages
        resources = mgr.resources()
        assert {r.server for r in resources} == {"a", "b"}
        res = [r for r in resources if r.server == "a"][0]
        assert mgr.read_resource("a", res.uri).contents
        assert {t.server for t in mgr.resource_templates()} <= {"a", "b"}


def test_add_remove_and_close_from_a_listener():
    closed = threading.Event()
    mgr = Manager()
    mgr.open()
    assert mgr.add("x", {"command": server_cmd()}).status == "connected"
    assert "x_echo" in [t.name for t in mgr.tools()]
    assert mgr.add("x", {"command": server_cmd(), "enabled": False}).status == "disabled"  # replaced
    assert "x_echo" not in [t.name for t in mgr.tools()]
    mgr.remove("x")
    assert mgr.names == [] and mgr.tools() == []
    with pytest.raises(ConfigError):
        mgr.remove("x")

    def on_status(server: str, status: ServerStatus) -> None:
        if status.status == "connected":
            mgr.close()  # from the events thread: must not deadlock
            closed.set()

    mgr.on("status_changed", on_status)
    mgr.add("y", {"command": server_cmd()}, wait=False)
    assert closed.wait(30)
    assert mgr.closed
    mgr.close()  # idempotent
    with pytest.raises(ClientClosed):
        mgr.tools()


def test_from_file_reads_a_claude_desktop_config(tmp_path, monkeypatch):
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(json.dumps({"mcpServers": {"ex": {"command": PY, "args": ["-m", "mcpsync.example_server"]}}}))
    with Manager.from_file(path) as mgr:
        assert mgr.call_tool("ex_echo", {"message": "from file"}).text == "from file"
    monkeypatch.setenv("MCPSYNC_CONFIG", str(path))
    mgr = Manager.from_file()
    assert mgr.names == ["ex"]
    mgr.close()
