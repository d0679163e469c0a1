"""pydantic-ai: the toolset run by a pydantic-ai Agent, driven by FunctionModel and TestModel."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List

import mcpsync

from .conftest import HARD_SERVER, need
from .scenario import CALLS, OPTIONS, check

need("pydantic_ai")

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.messages import (  # noqa: E402
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from pydantic_ai.models.test import TestModel  # noqa: E402

from mcpsync.integrations.pydantic_ai import McpsyncToolset  # noqa: E402


def returned(messages: List[ModelMessage]) -> Dict[str, Any]:
    """tool name -> what the model got back (the text, or the part for multimodal returns)."""
    out: Dict[str, Any] = {}
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, ToolReturnPart):
                    out[part.tool_name] = part
                elif isinstance(part, RetryPromptPart) and part.tool_name:
                    out[part.tool_name] = part
    return out


def text(part: Any) -> str:
    if isinstance(part, RetryPromptPart):
        return part.model_response()
    content = part.content
    if isinstance(content, list):
        return "\n".join(c for c in content if isinstance(c, str))
    return str(content)


def scripted(calls: Any) -> FunctionModel:
    def respond(messages: List[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart(n, a, tool_call_id="c%d" % i) for i, (n, a) in enumerate(calls)])
        return ModelResponse(parts=[TextPart("done")])

    return FunctionModel(respond)


def test_agent_with_function_model(hard_client: mcpsync.Client) -> None:
    toolset = McpsyncToolset(hard_client, **OPTIONS)
    agent = Agent(scripted(CALLS), toolsets=[toolset])
    result = agent.run_sync("use the tools")
    assert result.output == "done"
    seen = returned(result.all_messages())
    check({name: text(part) for name, part in seen.items()})
    for name in ("fail", "slow", "add"):  # ToolFailed: a failed result the model sees, no retry used up
        assert seen[name].outcome == "failed", seen[name]
    assert seen["echo"].outcome == "success"


def test_tool_list_visibility_and_test_model(hard_client: mcpsync.Client) -> None:
    toolset = McpsyncToolset(hard_client, include=["tree", "either", "noprops", "shapes", "echo"], **OPTIONS)
    seen: Dict[str, Any] = {}

    def respond(messages: List[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen["tools"] = {t.name: t for t in info.function_tools}
        return ModelResponse(parts=[TextPart("ok")])

    Agent(FunctionModel(respond), toolsets=[toolset]).run_sync("list")
    assert set(seen["tools"]) == {"tree", "either", "noprops", "shapes", "echo"}
    # TestModel calls every tool with arguments it generates from the schemas (recursive $ref included)
    result = Agent(TestModel(call_tools="all"), toolsets=[toolset]).run_sync("call everything")
    parts = returned(result.all_messages())
    assert set(parts) == {"tree", "either", "noprops", "shapes", "echo"}
    for name, part in parts.items():
        assert isinstance(part, ToolReturnPart) and text(part).startswith(name) or name == "echo", (name, part)


def test_image_and_invalid_arguments_in_a_running_loop(hard_client: mcpsync.Client) -> None:
    toolset = McpsyncToolset(hard_client, **OPTIONS)
    agent = Agent(scripted([("image", {}), ("echo", {"wrong": 1})]), toolsets=[toolset])

    async def main() -> Any:
        return await agent.run("go")

    result = asyncio.run(main())
    seen = returned(result.all_messages())
    image = seen["image"].content
    assert image[0].startswith("a red pixel") and image[1].media_type == "image/png"
    # asked to correct its arguments (a RetryPromptPart, or a ToolReturnPart marked "retried" in newer releases)
    retry = seen["echo"]
    assert isinstance(retry, RetryPromptPart) or retry.outcome == "retried"
    assert "invalid arguments" in text(retry)


def test_two_real_servers(two_servers: mcpsync.Manager) -> None:
    agent = Agent(
        scripted([("example_add", {"a": 2, "b": 3}), ("everything_get-sum", {"a": 4, "b": 5})]),
        toolsets=[McpsyncToolset(two_servers, timeout=30)],
    )
    seen = returned(agent.run_sync("sum").all_messages())
    assert text(seen["example_add"]) == "5" and "9" in text(seen["everything_get-sum"])


def test_prefix_false_gives_the_servers_own_names(two_servers: mcpsync.Manager) -> None:
    agent = Agent(
        scripted([("add", {"a": 2, "b": 3}), ("get-sum", {"a": 4, "b": 5})]),
        toolsets=[McpsyncToolset(two_servers, prefix=False, timeout=30)],
    )
    seen = returned(agent.run_sync("sum").all_messages())
    assert text(seen["add"]) == "5" and "9" in text(seen["get-sum"])


def test_the_tools_follow_the_servers_list_within_a_run() -> None:
    """The model adds a tool (the server sends tools/list_changed); the agent's next step offers it."""
    offered: List[Any] = []

    def respond(messages: List[ModelMessage], info: AgentInfo) -> ModelResponse:
        offered.append({t.name for t in info.function_tools})
        if len(offered) == 1:
            return ModelResponse(parts=[ToolCallPart("add_tool", {"name": "dyn_pa"}, tool_call_id="a")])
        if len(offered) == 2:
            return ModelResponse(parts=[ToolCallPart("dyn_pa", {"message": "hi"}, tool_call_id="b")])
        return ModelResponse(parts=[TextPart("done")])

    with mcpsync.connect(HARD_SERVER, protocol="legacy") as client:
        result = Agent(FunctionModel(respond), toolsets=[McpsyncToolset(client)]).run_sync("go")
    assert "dyn_pa" not in offered[0] and "dyn_pa" in offered[1]
    assert text(returned(result.all_messages())["dyn_pa"]) == "dyn_pa: hi"
