"""LangChain / LangGraph: MCP tools run by LangGraph's ReAct agent, driven by LangChain's fake chat model."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any, Dict, List

import mcpsync

from .conftest import HARD_SERVER, need
from .scenario import CALLS, OPTIONS, check, typed

need("langchain_core")
need("langgraph")

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel  # noqa: E402
from langchain_core.messages import AIMessage, ToolMessage  # noqa: E402
from langgraph.prebuilt import create_react_agent  # noqa: E402

from mcpsync.integrations import McpToolkit  # noqa: E402
from mcpsync.integrations.langchain import langchain_tools  # noqa: E402


class ToolCallingFake(FakeMessagesListChatModel):
    """LangChain's fake chat model, accepting bound tools (it answers from its script either way)."""

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


def test_react_agent_sync(hard_client: mcpsync.Client) -> None:
    kit = McpToolkit(hard_client, **OPTIONS)
    tools = langchain_tools(kit)
    names = {t.name for t in tools}
    assert "app_only" not in names and "crash" not in names  # visibility and policy
    agent = create_react_agent(script(CALLS), tools)
    state = agent.invoke({"messages": [("user", "use the tools")]})
    seen = outputs(state)
    check({name: text_of(m) for name, m in seen.items()})
    assert seen["fail"].status == "error" and seen["slow"].status == "error" and seen["add"].status == "error"
    assert seen["echo"].status == "success"
    assert seen["payload"].artifact["truncated"] is True
    assert len(kit.full_result(seen["payload"].artifact["handle"]).text) == 5000  # the full result is kept
    assert state["messages"][-1].content == "done"


def test_react_agent_async_in_running_loop(hard_client: mcpsync.Client) -> None:
    tools = langchain_tools(hard_client, **OPTIONS)
    agent = create_react_agent(script(CALLS), tools)

    async def main() -> Dict[str, Any]:
        return await agent.ainvoke({"messages": [("user", "use the tools")]})  # type: ignore[no-any-return]

    state = asyncio.run(main())
    check({name: text_of(m) for name, m in outputs(state).items()})


def test_image_and_invalid_arguments(hard_client: mcpsync.Client) -> None:
    tools = langchain_tools(hard_client, **OPTIONS)
    agent = create_react_agent(script([("image", {}), ("echo", {"wrong": 1})]), tools)
    seen = outputs(agent.invoke({"messages": [("user", "go")]}))
    blocks = seen["image"].content
    assert isinstance(blocks, list) and blocks[0]["text"].startswith("a red pixel")
    assert blocks[1]["type"] == "image" and blocks[1]["mime_type"] == "image/png"
    assert seen["echo"].status == "error" and "invalid arguments" in text_of(seen["echo"])


def test_two_real_servers_through_a_manager(two_servers: mcpsync.Manager) -> None:
    tools = langchain_tools(two_servers, timeout=30)
    names = {t.name for t in tools}
    assert {"example_add", "everything_get-sum"} <= names
    calls = [("example_add", {"a": 2, "b": 3}), ("everything_get-sum", {"a": 4, "b": 5})]
    seen = outputs(create_react_agent(script(calls), tools).invoke({"messages": [("user", "sum")]}))
    assert text_of(seen["example_add"]) == "5" and "9" in text_of(seen["everything_get-sum"])
    assert typed(seen["example_add"].artifact["structured_content"]) == {"sum": ("int", 5)}  # ints stay ints


def test_prefix_false_gives_the_servers_own_names(two_servers: mcpsync.Manager) -> None:
    tools = langchain_tools(two_servers, prefix=False, timeout=30)
    assert {"add", "get-sum"} <= {t.name for t in tools}
    calls = [("add", {"a": 2, "b": 3}), ("get-sum", {"a": 4, "b": 5})]
    seen = outputs(create_react_agent(script(calls), tools).invoke({"messages": [("user", "sum")]}))
    assert text_of(seen["add"]) == "5" and "9" in text_of(seen["get-sum"])


def test_the_next_read_of_the_toolkit_follows_the_servers_list() -> None:
    """An agent adds a tool (tools/list_changed); the next ``langchain_tools(kit)`` has it, and an agent built
    from that list calls it."""
    with mcpsync.connect(HARD_SERVER, protocol="legacy") as client:
        kit = McpToolkit(client, **OPTIONS)
        tools = langchain_tools(kit)
        seen = outputs(create_react_agent(script([("add_tool", {"name": "dyn_lc"})]), tools).invoke({"messages": []}))
        assert text_of(seen["add_tool"]) == "added tool dyn_lc"
        tools = langchain_tools(kit)
        seen = outputs(create_react_agent(script([("dyn_lc", {"message": "hi"})]), tools).invoke({"messages": []}))
        assert text_of(seen["dyn_lc"]) == "dyn_lc: hi"


class Recording(ToolCallingFake):
    """The scripted fake that also keeps every message list it was given."""

    seen: List[List[Any]] = []

    def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def test_the_docs_fragment_runs_with_langchains_create_agent(tmp_path: Path) -> None:
    """docs/guides/frameworks.md's LangChain fragment, executed as written: only its config file is made real (two real
    servers) and ``model`` is the scripted fake. The agent calls example_add(2, 3); the model is shown '5'."""
    need("langchain")
    from tests.peers.interop_peers import require_peer

    everything = require_peer("everything")
    doc = (Path(__file__).resolve().parents[2] / "docs" / "guides" / "frameworks.md").read_text(encoding="utf-8")
    section = doc.split("## LangChain / LangGraph", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    config = tmp_path / "mcp.json"
    servers = {
        "example": {"command": sys.executable, "args": ["-m", "mcpsync.example_server"]},
        "everything": {"command": everything[0], "args": everything[1:]},
    }
    config.write_text(json.dumps({"mcpServers": servers}))
    assert code.count('"mcp.json"') == 1 and "import mcpsync" in code and "create_react_agent" not in code
    calls = [("example_add", {"a": 2, "b": 3})]
    tool_calls = [{"name": n, "args": a, "id": "call-%d" % i, "type": "tool_call"} for i, (n, a) in enumerate(calls)]
    model = Recording(responses=[AIMessage(content="", tool_calls=tool_calls), AIMessage(content="done")], seen=[])
    exec(compile(code.replace('"mcp.json"', repr(str(config))), "docs/guides/frameworks.md", "exec"), {"model": model})
    answers = [m for m in model.seen[-1] if isinstance(m, ToolMessage)]
    assert [(m.name, m.content, m.status) for m in answers] == [("example_add", "5", "success")]


def test_max_total_timeout_caps_a_tool_that_keeps_reporting_progress(hard_client: mcpsync.Client) -> None:
    """``timeout=`` is an idle timeout that each progress notification restarts: ``slow`` reports progress every
    0.1 s for 30 s, so only ``max_total_timeout=`` ends it; the agent reads a timeout error."""
    tools = langchain_tools(hard_client, timeout=2, max_total_timeout=0.5)
    agent = create_react_agent(script([("slow", {"seconds": 30, "steps": 300})]), tools)
    seen = outputs(agent.invoke({"messages": []}))
    assert seen["slow"].status == "error" and "timed out" in text_of(seen["slow"])
