"""Tool policy (allow/deny lists) and the approval handler, against the real example server.

The server records every request it receives (``--record``), so "never reaches the server" is proven
from the server's side, not inferred from the client's.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, List, Tuple

import pytest

import mcpsync
from mcpsync import ConfigError, ToolDenied
from mcpsync.middleware import Approval, ToolApprovalRequest, ToolPolicy
from mcpsync.manager import Manager, UnknownTool
from tests.conftest import misbehaving_cmd

ERAS = ["legacy", "modern"]


def tool_calls(record: Path) -> List[Any]:
    if not record.exists():
        return []
    lines = [json.loads(line) for line in record.read_text().splitlines() if line.strip()]
    return [x["tool"] for x in lines if x["method"] == "tools/call"]


def test_policy_matching_exact_and_glob() -> None:
    p = ToolPolicy(allowed=("echo", "sl?w", "get_*"), denied=("get_secret*",))
    assert p.allows("echo") and p.allows("slow") and p.allows("get_weather")
    assert not p.allows("get_secret_key")  # deny wins
    assert not p.allows("add") and not p.allows("Echo")  # case-sensitive, not in the allow list
    assert "deny list" in (p.check("get_secret") or "")
    assert ToolPolicy(allowed=()).check("echo") is not None  # an empty allow list allows nothing
    assert ToolPolicy.of(None, None) is None and ToolPolicy.of(None, []) is None
    with pytest.raises(ConfigError):
        ToolPolicy(denied="echo")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        ToolPolicy(denied=("",))


@pytest.mark.parametrize("era", ERAS)
def test_denied_tools_are_hidden_and_never_reach_the_server(tmp_path: Path, era: str) -> None:
    record = tmp_path / "requests.jsonl"
    with mcpsync.connect(
        misbehaving_cmd("--era", era, "--record", str(record)), middleware=[ToolPolicy(denied=["ad*", "fail"])]
    ) as c:
        names = [t.name for t in c.list_tools()]
        assert "echo" in names and "add" not in names and "fail" not in names
        assert c.get_tool("add") is None
        with pytest.raises(ToolDenied) as info:
            c.call_tool("add", {"a": 1, "b": 2})
        assert info.value.by == "policy" and info.value.tool == "add"
        assert info.value.server == c.name and info.value.method == "tools/call"
        with pytest.raises(ToolDenied):
            c.call_tool_async("fail", {})
        with pytest.raises(ToolDenied):
            mcpsync.tasks.start_task(c, "add", {"a": 1, "b": 2})
        assert c.call_tool("echo", {"message": "hi"}).text == "hi"  # the connection is fine
    assert tool_calls(record) == ["echo"]


def test_allow_list_exposes_only_matching_tools(tmp_path: Path) -> None:
    record = tmp_path / "requests.jsonl"
    with mcpsync.connect(
        misbehaving_cmd("--record", str(record)), middleware=[ToolPolicy(allowed=["echo", "sl?w"])]
    ) as c:
        assert sorted(t.name for t in c.list_tools()) == ["echo", "slow"]
        with pytest.raises(ToolDenied, match="allow list"):
            c.call_tool("add", {"a": 1, "b": 2})
        assert c.call_tool("echo", {"message": "x"}).text == "x"
    assert tool_calls(record) == ["echo"]


@pytest.mark.parametrize("era", ERAS)
def test_approval_handler_approves_denies_and_edits(tmp_path: Path, era: str) -> None:
    record = tmp_path / "requests.jsonl"
    seen: List[Tuple[str, Any, bool, str]] = []

    def approve(req: ToolApprovalRequest) -> Approval:
        seen.append((req.tool, dict(req.annotations), req.read_only, threading.current_thread().name))
        if req.tool == "add":
            return Approval.deny("no arithmetic today")
        if req.tool == "echo":
            return Approval.approve({"message": str(req.arguments["message"]).upper()})
        return Approval.approve()

    with mcpsync.connect(misbehaving_cmd("--era", era, "--record", str(record)), approval_handler=approve) as c:
        # the tool was never listed: the client lists once so the handler sees the (untrusted) annotations
        assert c.call_tool("echo", {"message": "hi"}).text == "HI"
        with pytest.raises(ToolDenied) as info:
            c.call_tool("add", {"a": 1, "b": 2})
        assert info.value.by == "approval" and info.value.reason == "no arithmetic today"
        assert "no arithmetic today" in str(info.value)
        handle = c.call_tool_async("echo", {"message": "async"})
        assert handle.result(timeout=10).text == "ASYNC"
    assert tool_calls(record) == ["echo", "echo"]
    echo = seen[0]
    assert echo[0] == "echo" and echo[1].get("readOnlyHint") is True and echo[2] is True
    assert all(s[3] == threading.current_thread().name for s in seen)  # the calling thread


def test_approval_handler_must_return_an_approval(tmp_path: Path) -> None:
    record = tmp_path / "requests.jsonl"
    with mcpsync.connect(misbehaving_cmd("--record", str(record)), approval_handler=lambda r: True) as c:  # type: ignore
        with pytest.raises(ConfigError, match="Approval"):
            c.call_tool("echo", {"message": "x"})
    assert tool_calls(record) == []


def test_approval_request_destructive_default() -> None:
    r = ToolApprovalRequest(server="s", tool="t", arguments={}, annotations={})
    assert r.destructive and not r.read_only  # the spec's defaults for a tool with no hints
    r = ToolApprovalRequest(server="s", tool="t", arguments={}, annotations={"readOnlyHint": True})
    assert not r.destructive


@pytest.mark.parametrize(
    "entry_keys",
    [
        {"disabledTools": ["add", "fa*"]},
        {"excludeTools": ["add", "fail"]},
        {"allowedTools": ["echo", "slow"]},
        {"includeTools": ["echo", "slow"], "excludeTools": ["slow"]},
    ],
)
def test_manager_config_keys_filter_listings_adapters_and_calls(tmp_path: Path, entry_keys: Any) -> None:
    record = tmp_path / "requests.jsonl"
    cmd = misbehaving_cmd("--record", str(record))
    config = {"mcpServers": {"ex": dict({"command": cmd[0], "args": cmd[1:]}, **entry_keys)}}
    with Manager(config) as mgr:
        exposed = {t.name for t in mgr.tools()}
        assert "ex_echo" in exposed and "ex_add" not in exposed and "ex_fail" not in exposed
        openai = {d["function"]["name"] for d in mgr.tools_for("openai")}
        anthropic = {d["name"] for d in mgr.tools_for("anthropic")}
        assert openai == anthropic == exposed
        with pytest.raises(UnknownTool):
            mgr.call_tool("ex_add", {"a": 1, "b": 2})
        with pytest.raises(ToolDenied):
            mgr.call_tool("add", {"a": 1, "b": 2}, server="ex")
        reply = mgr.call_from_tool_call(
            {"id": "c1", "type": "function", "function": {"name": "ex_add", "arguments": "{}"}}
        )
        assert "ex_add" in json.dumps(reply)
        assert mgr.call_tool("ex_echo", {"message": "m"}).text == "m"
    assert tool_calls(record) == ["echo"]


def test_native_config_and_client_options_policy(tmp_path: Path) -> None:
    record = tmp_path / "requests.jsonl"
    config = {"ex": {"command": misbehaving_cmd("--record", str(record)), "disabled_tools": ["add"]}}
    cfg = mcpsync.manager.parse_config(config)["ex"]
    assert cfg.disabled_tools == ["add"] and cfg.allowed_tools is None
    with Manager(config) as mgr:
        assert "ex_add" not in {t.name for t in mgr.tools()}
    with pytest.raises(ConfigError, match="disabledTools"):
        mcpsync.manager.parse_config({"mcpServers": {"a": {"command": "x", "disabledTools": "add"}}})
    with pytest.raises(ConfigError):
        mcpsync.manager.ServerConfig("a", command=["x"], disabled_tools="add")  # type: ignore[arg-type]
    assert tool_calls(record) == []
