"""Haystack: MCP tools run by haystack's Agent (its ToolInvoker), driven by a scripted chat generator component."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import mcpsync

from .conftest import HARD_SERVER, need
from .scenario import CALLS, OPTIONS, check

need("haystack")

from haystack import component  # noqa: E402
from haystack.components.agents import Agent  # noqa: E402
from haystack.dataclasses import ChatMessage, ToolCall  # noqa: E402
from haystack.tools import flatten_tools_or_toolsets  # noqa: E402

from mcpsync.integrations import McpToolkit  # noqa: E402
from mcpsync.integrations.haystack import McpsyncToolset, haystack_tools  # noqa: E402


@component
class ScriptedGenerator:
    """A chat generator that asks for every scripted tool call at once, then answers "done"."""

    def __init__(self, calls: List[Tuple[str, Dict[str, Any]]]) -> None:
        self.calls = calls

    @component.output_types(replies=List[ChatMessage])
    def run(self, messages: List[ChatMessage], tools: Optional[Any] = None, **kwargs: Any) -> Dict[str, Any]:
        if any(m.tool_call_results for m in messages):
            return {"replies": [ChatMessage.from_assistant("done")]}
        calls = [ToolCall(tool_name=n, arguments=a, id="c%d" % i) for i, (n, a) in enumerate(self.calls)]
        return {"replies": [ChatMessage.from_assistant(tool_calls=calls)]}


def run(tools: List[Any], calls: List[Tuple[str, Dict[str, Any]]]) -> Dict[str, Any]:
    agent = Agent(chat_generator=ScriptedGenerator(calls), tools=tools)
    agent.warm_up()
    result = agent.run(messages=[ChatMessage.from_user("use the tools")])
    assert result["messages"][-1].text == "done"
    return {r.origin.tool_name: r for m in result["messages"] for r in m.tool_call_results}


def test_agent(hard_client: mcpsync.Client) -> None:
    tools = haystack_tools(hard_client, **OPTIONS)
    assert "app_only" not in {t.name for t in tools}
    results = run(tools, CALLS)
    # Haystack's ToolInvoker shows a failure as "Failed to invoke Tool `x` with parameters {...}. Error: <message>"
    check({name: "Error: " + r.result.split(". Error: ", 1)[1] if r.error else r.result for name, r in results.items()})
    for name in ("fail", "slow", "add"):
        assert results[name].error, name
    assert not results["echo"].error


def test_agent_two_real_servers(two_servers: mcpsync.Manager) -> None:
    results = run(
        haystack_tools(two_servers, timeout=30),
        [("example_add", {"a": 2, "b": 3}), ("everything_get-sum", {"a": 4, "b": 5})],
    )
    assert results["example_add"].result == "5" and "9" in results["everything_get-sum"].result


def test_prefix_false_and_the_next_read_follows_the_servers_list(two_servers: mcpsync.Manager) -> None:
    calls = [("add", {"a": 2, "b": 3}), ("get-sum", {"a": 4, "b": 5})]
    results = run(haystack_tools(two_servers, prefix=False, timeout=30), calls)
    assert results["add"].result == "5" and "9" in results["get-sum"].result
    with mcpsync.connect(HARD_SERVER, protocol="legacy") as client:
        kit = McpToolkit(client, **OPTIONS)
        assert run(haystack_tools(kit), [("add_tool", {"name": "dyn_hs"})])["add_tool"].result == "added tool dyn_hs"
        assert run(haystack_tools(kit), [("dyn_hs", {"message": "hi"})])["dyn_hs"].result == "dyn_hs: hi"


def test_the_toolset_follows_the_servers_list_within_a_run() -> None:
    """The model adds a tool (the server sends tools/list_changed); at the Agent's next step the McpsyncToolset
    offers it and the model calls it."""
    offered: List[List[str]] = []

    @component
    class Stepper:
        @component.output_types(replies=List[ChatMessage])
        def run(self, messages: List[ChatMessage], tools: Optional[Any] = None, **kwargs: Any) -> Dict[str, Any]:
            offered.append(sorted(t.name for t in flatten_tools_or_toolsets(tools)))
            if len(offered) == 1:
                call = ToolCall(tool_name="add_tool", arguments={"name": "dyn_hs_live"}, id="a")
            elif len(offered) == 2:
                call = ToolCall(tool_name="dyn_hs_live", arguments={"message": "hi"}, id="b")
            else:
                return {"replies": [ChatMessage.from_assistant("done")]}
            return {"replies": [ChatMessage.from_assistant(tool_calls=[call])]}

    with mcpsync.connect(HARD_SERVER, protocol="legacy") as client:
        agent = Agent(chat_generator=Stepper(), tools=McpsyncToolset(client, **OPTIONS))
        agent.warm_up()
        result = agent.run(messages=[ChatMessage.from_user("go")])
    assert "dyn_hs_live" not in offered[0] and "dyn_hs_live" in offered[1]
    results = {r.origin.tool_name: r for m in result["messages"] for r in m.tool_call_results}
    assert results["dyn_hs_live"].result == "dyn_hs_live: hi" and not results["dyn_hs_live"].error
