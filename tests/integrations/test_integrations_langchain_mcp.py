"""The ``langchain.mcp``-shaped entry point: ``MCPAdapter`` (a target in, LangChain tools out) feeding LangChain's
own ``create_agent`` loop, driven by LangChain's fake chat model, in ``async with`` and plain ``with`` form."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any, Dict

import pytest

import mcpsync

from tests.peers.interop_peers import require_peer
from .conftest import need
from .scenario import CALLS, OPTIONS, check

need("langchain_core")
need("langchain.agents")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel  # noqa: E402
from langchain_core.messages import AIMessage, ToolMessage  # noqa: E402

from mcpsync.integrations.langchain_mcp import MCPAdapter  # noqa: E402

HARD = Path(__file__).with_name("hardserver.py")


class ToolCallingFake(FakeMessagesListChatModel):
    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


def script(calls: Any) -> ToolCallingFake:
    tool_calls = [{"name": n, "args": a, "id": "call-%d" % i, "type": "tool_call"} for i, (n, a) in enumerate(calls)]
    return ToolCallingFake(responses=[AIMessage(content="", tool_calls=tool_calls), AIMessage(content="done")])


def outputs(state: Dict[str, Any]) -> Dict[str, ToolMessage]:
    return {m.name: m for m in state["messages"] if isinstance(m, ToolMessage)}


def text_of(message: ToolMessage) -> str:
    if isinstance(message.content, str):
        return message.content
    return "\n".join(b["text"] for b in message.content if b.get("type") == "text")


def servers() -> Dict[str, Any]:
    everything = require_peer("everything")
    return {
        "mcpServers": {
            "example": {"command": sys.executable, "args": ["-m", "mcpsync.example_server"]},
            "everything": {"command": everything[0], "args": everything[1:]},
        }
    }


def test_async_with_a_configuration_of_servers() -> None:
    calls = [("example_add", {"a": 2, "b": 3}), ("everything_get-sum", {"a": 4, "b": 5})]

    async def main() -> Any:
        async with MCPAdapter(servers(), timeout=30) as adapter:  # langchain.mcp's documented shape
            assert asyncio.get_running_loop().is_running()
            agent = create_agent(script(calls), await adapter.list_tools())
            state = await agent.ainvoke({"messages": [{"role": "user", "content": "sum"}]})
            return adapter, outputs(state)

    adapter, seen = asyncio.run(main())
    assert "5" in text_of(seen["example_add"]) and "9" in text_of(seen["everything_get-sum"])
    assert adapter.client.closed  # leaving the block closed both servers


def test_sync_with_a_local_script_and_the_hard_scenario() -> None:
    client_options = {"approval_handler": _deny_add, "disabled_tools": ["crash"]}
    with MCPAdapter(HARD, client_options=client_options, **OPTIONS) as adapter:
        tools = adapter.list_tools_sync()
        names = {t.name for t in tools}
        assert "app_only" not in names and "crash" not in names
        state = create_agent(script(CALLS), tools).invoke({"messages": [("user", "use the tools")]})
        seen = outputs(state)
        check({name: text_of(m) for name, m in seen.items()})
        assert {n for n, m in seen.items() if m.status == "error"} == {"fail", "slow", "add"}
        assert len(adapter.toolkit.full_result(seen["payload"].artifact["handle"]).text) == 5000
        client = adapter.client
    assert client.closed
    # after close a tool answers with an error the model reads, never an exception in the agent
    after = create_agent(script([("echo", {"message": "late"})]), tools).invoke({"messages": [("user", "x")]})
    late = outputs(after)["echo"]
    assert late.status == "error" and "closed" in text_of(late)


def _deny_add(request: mcpsync.middleware.ToolApprovalRequest) -> mcpsync.middleware.Approval:
    if request.tool == "add":
        return mcpsync.middleware.Approval.deny("adding is not allowed here")
    return mcpsync.middleware.Approval.approve()


def test_targets_refused_before_anything_runs(tmp_path: Path) -> None:
    script_file = tmp_path / "server.py"
    script_file.write_text("raise SystemExit('must not run')\n")
    with pytest.raises(mcpsync.ConfigError, match="not an http"):
        MCPAdapter(str(script_file))  # a string is never run as a program (langchain.mcp's rule too)
    with pytest.raises(mcpsync.ConfigError):
        MCPAdapter(tmp_path / "server.exe")
    with pytest.raises(mcpsync.ConfigError, match="unsupported"):
        MCPAdapter(42)
    with pytest.raises(mcpsync.ConfigError):
        MCPAdapter(HARD, no_such_option=1)  # refused before the server is started
    adapter = MCPAdapter(script_file, client_options={"connect_timeout": 20})  # a Path is run: it exits at once
    with pytest.raises(mcpsync.MCPError):
        adapter.list_tools_sync()
    assert adapter.client.closed  # a failed connect leaves nothing running
    with pytest.raises(mcpsync.ConfigError, match="closed"):
        adapter.open()


def test_a_given_client_is_not_closed(hard_client: mcpsync.Client) -> None:
    with MCPAdapter(hard_client) as adapter:
        assert [t.name for t in adapter.list_tools_sync() if t.name == "echo"] == ["echo"]
        assert adapter.list_tools_sync(cache_mode="refresh")
    assert not hard_client.closed


NOTEBOOK_AGENT = """
from frameworks_common import CALLS, servers
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, ToolMessage
from mcpsync.integrations.langchain_mcp import MCPAdapter

class Fake(FakeMessagesListChatModel):
    def bind_tools(self, tools, **kwargs):
        return self

def model():
    calls = [{"name": n, "args": a, "id": "c%d" % i, "type": "tool_call"} for i, (n, a) in enumerate(CALLS)]
    return Fake(responses=[AIMessage(content="", tool_calls=calls), AIMessage(content="done")])
"""


def test_in_jupyter_async_with_and_sync_with() -> None:
    from .test_integrations_examples import CHECK, run_notebook

    require_peer("everything")
    out = run_notebook(
        [
            NOTEBOOK_AGENT,
            "async with MCPAdapter(servers()) as adapter:\n"
            "    agent = create_agent(model(), await adapter.list_tools())\n"
            "    state = await agent.ainvoke({'messages': [('user', 'x')]})\n"
            "results = {m.name: str(m.content) for m in state['messages'] if isinstance(m, ToolMessage)}\n" + CHECK,
            "with MCPAdapter(servers()) as adapter:\n"  # the sync form, on the kernel's loop thread
            "    state = create_agent(model(), adapter.list_tools_sync()).invoke({'messages': [('user', 'x')]})\n"
            "results = {m.name: str(m.content) for m in state['messages'] if isinstance(m, ToolMessage)}\n" + CHECK,
        ]
    )
    assert out[1].strip().splitlines()[-1].startswith("ok") and out[2].strip().splitlines()[-1].startswith("ok"), out


def test_a_url_target_in_both_eras() -> None:
    """An http(s) URL (langchain.mcp's commonest target) against the example server behind a real local HTTP
    server, in each protocol era."""
    from tests.peers.httpserver import MCPTestServer

    for era in ("legacy", "modern"):
        with MCPTestServer(era=era) as server:

            async def main(url: str = server.url) -> Any:
                async with MCPAdapter(url, timeout=30) as adapter:
                    agent = create_agent(script([("add", {"a": 2, "b": 3})]), await adapter.list_tools())
                    return outputs(await agent.ainvoke({"messages": [{"role": "user", "content": "sum"}]}))

            assert text_of(asyncio.run(main())["add"]) == "5", era
