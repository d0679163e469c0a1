"""CrewAI: MCP tools run by a Crew's agent (CrewAI's ReAct tool loop), driven by a scripted BaseLLM."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Tuple

import mcpsync

from .conftest import HARD_SERVER, need
from .scenario import CALLS, OPTIONS, check

need("crewai")
# only where CrewAI runs (its own venv, .ci/frameworks): in the main run these would switch OpenTelemetry off for
# every later test of the process (tests/docs/test_docs_production.py's tracing example)
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")

from crewai import Agent, Crew, Task  # noqa: E402
from crewai.llms.base_llm import BaseLLM  # noqa: E402

from mcpsync.integrations import McpToolkit  # noqa: E402
from mcpsync.integrations.crewai import crewai_tools  # noqa: E402


class ScriptedLLM(BaseLLM):  # type: ignore[misc]
    """Answers in CrewAI's ReAct format: one Action per turn, then the Final Answer; records observations."""

    calls: List[Tuple[str, Dict[str, Any]]] = []
    seen: Dict[str, str] = {}
    turn: int = 0

    def call(
        self,
        messages: Any,
        tools: Any = None,
        callbacks: Any = None,
        available_functions: Any = None,
        from_task: Any = None,
        from_agent: Any = None,
        response_model: Any = None,
        **kwargs: Any,
    ) -> str:
        if self.turn > 0 and isinstance(messages, list):
            with_observation = [str(m.get("content")) for m in messages if "Observation:" in str(m.get("content"))]
            self.seen[self.calls[self.turn - 1][0]] = with_observation[-1] if with_observation else ""
        self.turn += 1
        if self.turn <= len(self.calls):
            name, args = self.calls[self.turn - 1]
            return "Thought: I will use %s\nAction: %s\nAction Input: %s" % (name, name, json.dumps(args))
        return "Thought: I now know the final answer\nFinal Answer: done"

    def supports_function_calling(self) -> bool:
        return False


def kickoff(tools: List[Any], calls: List[Tuple[str, Dict[str, Any]]]) -> Tuple[Any, Dict[str, str]]:
    llm = ScriptedLLM(model="scripted", calls=calls, seen={}, turn=0)
    agent = Agent(
        role="tester",
        goal="call tools",
        backstory="a test",
        tools=tools,
        llm=llm,
        max_iter=len(calls) + 3,
        verbose=False,
    )
    task = Task(description="Use the tools", expected_output="done", agent=agent)
    output = Crew(agents=[agent], tasks=[task], verbose=False).kickoff()
    return output, llm.seen


def observation(text: str) -> str:
    marker = "Observation:"
    text = text[text.index(marker) + len(marker) :] if marker in text else text
    return text.split("\n\n\nYou ONLY have access")[0].strip()  # CrewAI appends a reminder now and then


def test_crew(hard_client: mcpsync.Client) -> None:
    tools = crewai_tools(hard_client, **OPTIONS)
    assert "app_only" not in {t.name for t in tools}
    output, seen = kickoff(tools, CALLS)
    assert "done" in str(output)
    check({name: observation(text) for name, text in seen.items()})


def test_crew_over_two_real_servers(two_servers: mcpsync.Manager) -> None:
    calls = [("example_add", {"a": 2, "b": 3}), ("everything_get-sum", {"a": 4, "b": 5})]
    _, seen = kickoff(crewai_tools(two_servers, timeout=30), calls)
    assert observation(seen["example_add"]) == "5" and "9" in observation(seen["everything_get-sum"])


def test_prefix_false_and_the_next_read_follows_the_servers_list(two_servers: mcpsync.Manager) -> None:
    calls = [("add", {"a": 2, "b": 3}), ("get-sum", {"a": 4, "b": 5})]
    _, seen = kickoff(crewai_tools(two_servers, prefix=False, timeout=30), calls)
    assert observation(seen["add"]) == "5" and "9" in observation(seen["get-sum"])
    with mcpsync.connect(HARD_SERVER, protocol="legacy") as client:
        kit = McpToolkit(client, **OPTIONS)
        _, seen = kickoff(crewai_tools(kit), [("add_tool", {"name": "dyn_crew"})])
        assert observation(seen["add_tool"]) == "added tool dyn_crew"
        _, seen = kickoff(crewai_tools(kit), [("dyn_crew", {"message": "hi"})])
        assert observation(seen["dyn_crew"]) == "dyn_crew: hi"
