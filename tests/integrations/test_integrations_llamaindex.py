"""LlamaIndex: MCP tools run by a FunctionAgent workflow, driven by LlamaIndex's MockFunctionCallingLLM."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List, Sequence, Tuple

import mcpsync

from .conftest import HARD_SERVER, need
from .scenario import CALLS, OPTIONS, check

need("llama_index.core")

from llama_index.core.agent.workflow import FunctionAgent, ToolCallResult  # noqa: E402
from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock  # noqa: E402
from llama_index.core.llms.mock import MockFunctionCallingLLM  # noqa: E402

from mcpsync.integrations import McpToolkit  # noqa: E402
from mcpsync.integrations.llamaindex import llamaindex_tools  # noqa: E402


def scripted(calls: List[Tuple[str, Dict[str, Any]]]) -> MockFunctionCallingLLM:
    def respond(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        if any(m.role == MessageRole.TOOL for m in messages):
            return ChatMessage(role=MessageRole.ASSISTANT, content="done")
        blocks = [ToolCallBlock(tool_call_id="c%d" % i, tool_name=n, tool_kwargs=a) for i, (n, a) in enumerate(calls)]
        return ChatMessage(role=MessageRole.ASSISTANT, blocks=blocks)

    return MockFunctionCallingLLM(response_generator=respond)


def run(tools: Any, calls: List[Tuple[str, Dict[str, Any]]]) -> Tuple[str, Dict[str, Any]]:
    agent = FunctionAgent(tools=tools, llm=scripted(calls))

    async def main() -> Tuple[str, Dict[str, Any]]:
        handler = agent.run(user_msg="use the tools")
        results: Dict[str, Any] = {}
        async for event in handler.stream_events():
            if isinstance(event, ToolCallResult):
                results[event.tool_name] = event.tool_output
        answer = await handler
        return str(answer), results

    return asyncio.run(main())


def test_function_agent(hard_client: mcpsync.Client) -> None:
    tools = llamaindex_tools(hard_client, **OPTIONS)
    assert "app_only" not in {t.metadata.name for t in tools}
    answer, outputs = run(tools, CALLS)
    assert "done" in answer
    check({name: out.content for name, out in outputs.items()})
    for name in ("fail", "slow", "add"):
        assert outputs[name].is_error, name
    assert not outputs["echo"].is_error


def test_image_bad_arguments_and_two_servers(hard_client: mcpsync.Client, two_servers: mcpsync.Manager) -> None:
    _, outputs = run(llamaindex_tools(hard_client, **OPTIONS), [("image", {}), ("echo", {"wrong": 1})])
    assert outputs["image"].content.startswith("a red pixel") and len(outputs["image"].blocks) == 2
    assert outputs["echo"].is_error and "invalid arguments" in outputs["echo"].content
    calls = [("example_add", {"a": 2, "b": 3}), ("everything_get-sum", {"a": 4, "b": 5})]
    _, outputs = run(llamaindex_tools(two_servers, timeout=30), calls)
    assert outputs["example_add"].content == "5" and "9" in outputs["everything_get-sum"].content


def test_prefix_false_and_the_next_read_follows_the_servers_list(two_servers: mcpsync.Manager) -> None:
    calls = [("add", {"a": 2, "b": 3}), ("get-sum", {"a": 4, "b": 5})]
    _, outputs = run(llamaindex_tools(two_servers, prefix=False, timeout=30), calls)
    assert outputs["add"].content == "5" and "9" in outputs["get-sum"].content
    with mcpsync.connect(HARD_SERVER, protocol="legacy") as client:
        kit = McpToolkit(client, **OPTIONS)
        _, outputs = run(llamaindex_tools(kit), [("add_tool", {"name": "dyn_li"})])
        assert outputs["add_tool"].content == "added tool dyn_li"
        _, outputs = run(llamaindex_tools(kit), [("dyn_li", {"message": "hi"})])
        assert outputs["dyn_li"].content == "dyn_li: hi"
