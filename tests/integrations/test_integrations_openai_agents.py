"""OpenAI Agents SDK: MCP tools run by Runner, driven by a scripted agents Model (no network)."""

from __future__ import annotations

import asyncio
import json
from typing import Any, AsyncIterator, Dict, List, Tuple

import mcpsync

from .conftest import HARD_SERVER, need
from .scenario import CALLS, OPTIONS, check

need("agents")

from agents import Agent, Runner, set_tracing_disabled  # noqa: E402
from agents.items import ModelResponse, ToolCallOutputItem  # noqa: E402
from agents.models.interface import Model  # noqa: E402
from agents.usage import Usage  # noqa: E402
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText  # noqa: E402

from mcpsync.integrations import McpToolkit  # noqa: E402
from mcpsync.integrations.openai_agents import openai_agents_tools  # noqa: E402

set_tracing_disabled(True)  # no trace export (it would go to the network)


class ScriptedModel(Model):  # type: ignore[misc]
    """Asks for every scripted tool call in its first turn, then answers "done"."""

    def __init__(self, calls: List[Tuple[str, Dict[str, Any]]]) -> None:
        self.calls = calls
        self.turn = 0
        self.tools: List[Any] = []

    async def get_response(
        self,
        system_instructions: Any,
        input: Any,
        model_settings: Any,
        tools: Any,
        output_schema: Any,
        handoffs: Any,
        tracing: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        self.turn += 1
        self.tools = list(tools)
        if self.turn == 1:
            output: List[Any] = [
                ResponseFunctionToolCall(
                    arguments=json.dumps(args), call_id="call-%d" % i, name=name, type="function_call", id="fc-%d" % i
                )
                for i, (name, args) in enumerate(self.calls)
            ]
        else:
            output = [
                ResponseOutputMessage(
                    id="msg",
                    role="assistant",
                    status="completed",
                    type="message",
                    content=[ResponseOutputText(text="done", type="output_text", annotations=[])],
                )
            ]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:  # pragma: no cover - unused
        raise NotImplementedError


def outputs(result: Any, calls: List[Tuple[str, Dict[str, Any]]]) -> Dict[str, Any]:
    by_id = {"call-%d" % i: name for i, (name, _) in enumerate(calls)}
    out: Dict[str, Any] = {}
    for item in result.new_items:
        if isinstance(item, ToolCallOutputItem):
            raw = item.raw_item
            call_id = raw["call_id"] if isinstance(raw, dict) else raw.call_id
            out[by_id[call_id]] = item.output
    return out


def test_runner_sync(hard_client: mcpsync.Client) -> None:
    tools = openai_agents_tools(hard_client, **OPTIONS)
    by_name = {t.name: t for t in tools}
    assert "app_only" not in by_name and "crash" not in by_name
    assert by_name["shapes"].strict_json_schema is True  # expressible strictly
    model = ScriptedModel(CALLS)
    result = Runner.run_sync(Agent(name="t", tools=tools, model=model), "use the tools")
    assert result.final_output == "done"
    check({k: str(v) for k, v in outputs(result, CALLS).items()})


def test_runner_async_image_and_bad_arguments(hard_client: mcpsync.Client) -> None:
    calls = [("image", {}), ("echo", {"wrong": 1})]
    tools = openai_agents_tools(hard_client, **OPTIONS)

    async def main() -> Any:
        return await Runner.run(Agent(name="t", tools=tools, model=ScriptedModel(calls)), "go")

    seen = outputs(asyncio.run(main()), calls)
    assert seen["image"][0].text.startswith("a red pixel") and seen["image"][1].image_url.startswith("data:image/png")
    assert seen["echo"].startswith("Error: invalid arguments")


def test_two_real_servers(two_servers: mcpsync.Manager) -> None:
    calls = [("example_add", {"a": 2, "b": 3}), ("everything_get-sum", {"a": 4, "b": 5})]
    agent = Agent(name="t", tools=openai_agents_tools(two_servers, timeout=30), model=ScriptedModel(calls))
    seen = outputs(Runner.run_sync(agent, "sum"), calls)
    assert seen["example_add"] == "5" and "9" in seen["everything_get-sum"]


def test_prefix_false_gives_the_servers_own_names(two_servers: mcpsync.Manager) -> None:
    calls = [("add", {"a": 2, "b": 3}), ("get-sum", {"a": 4, "b": 5})]
    tools = openai_agents_tools(two_servers, prefix=False, timeout=30)
    seen = outputs(Runner.run_sync(Agent(name="t", tools=tools, model=ScriptedModel(calls)), "sum"), calls)
    assert seen["add"] == "5" and "9" in seen["get-sum"]


def test_the_next_read_follows_the_servers_list() -> None:
    with mcpsync.connect(HARD_SERVER, protocol="legacy") as client:
        kit = McpToolkit(client, **OPTIONS)
        calls = [("add_tool", {"name": "dyn_oa"})]
        agent = Agent(name="t", tools=openai_agents_tools(kit), model=ScriptedModel(calls))
        assert outputs(Runner.run_sync(agent, "add"), calls)["add_tool"] == "added tool dyn_oa"
        calls = [("dyn_oa", {"message": "hi"})]
        agent = Agent(name="t", tools=openai_agents_tools(kit), model=ScriptedModel(calls))
        assert outputs(Runner.run_sync(agent, "call"), calls)["dyn_oa"] == "dyn_oa: hi"
