"""DSPy: MCP tools run by dspy.ReAct, driven by DSPy's DummyLM."""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

import mcpsync

from .conftest import HARD_SERVER, need
from .scenario import CALLS, OPTIONS, check

need("dspy")

import dspy  # noqa: E402
from dspy.utils.dummies import DummyLM  # noqa: E402

from mcpsync.integrations import McpToolkit  # noqa: E402
from mcpsync.integrations.dspy import dspy_tools  # noqa: E402


def react(tools: List[Any], calls: List[Tuple[str, Dict[str, Any]]]) -> Dict[str, str]:
    answers: List[Dict[str, Any]] = [
        {"next_thought": "use %s" % n, "next_tool_name": n, "next_tool_args": a} for n, a in calls
    ]
    answers += [
        {"next_thought": "finished", "next_tool_name": "finish", "next_tool_args": {}},
        {"reasoning": "all done", "answer": "done"},
    ]
    program = dspy.ReAct("question -> answer", tools=tools, max_iters=len(calls) + 2)
    with dspy.context(lm=DummyLM(answers), adapter=dspy.ChatAdapter()):
        prediction = program(question="use the tools")
    assert prediction.answer == "done"
    trajectory = prediction.trajectory
    return {trajectory["tool_name_%d" % i]: str(trajectory["observation_%d" % i]) for i in range(len(calls))}


def test_react(hard_client: mcpsync.Client) -> None:
    tools = dspy_tools(hard_client, **OPTIONS)
    assert "app_only" not in {t.name for t in tools}
    check(react(tools, CALLS))


def test_react_two_real_servers(two_servers: mcpsync.Manager) -> None:
    seen = react(
        dspy_tools(two_servers, timeout=30),
        [("example_add", {"a": 2, "b": 3}), ("everything_get-sum", {"a": 4, "b": 5})],
    )
    assert seen["example_add"] == "5" and "9" in seen["everything_get-sum"]


def test_prefix_false_and_the_next_read_follows_the_servers_list(two_servers: mcpsync.Manager) -> None:
    seen = react(
        dspy_tools(two_servers, prefix=False, timeout=30), [("add", {"a": 2, "b": 3}), ("get-sum", {"a": 4, "b": 5})]
    )
    assert seen["add"] == "5" and "9" in seen["get-sum"]
    with mcpsync.connect(HARD_SERVER, protocol="legacy") as client:
        kit = McpToolkit(client, **OPTIONS)
        assert react(dspy_tools(kit), [("add_tool", {"name": "dyn_dspy"})])["add_tool"] == "added tool dyn_dspy"
        assert react(dspy_tools(kit), [("dyn_dspy", {"message": "hi"})])["dyn_dspy"] == "dyn_dspy: hi"
