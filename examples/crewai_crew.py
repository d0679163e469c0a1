"""A CrewAI crew whose agent calls tools of two MCP servers through mcpsync (no mcpadapt, no hidden loop).

    python examples/crewai_crew.py            (needs: pip install mcpsync[crewai])

``main()`` kicks the crew off synchronously; in Jupyter (a running event loop, where CrewAI refuses a
synchronous ``kickoff()``) use ``await amain()``, which runs ``kickoff_async()``.
"""

from __future__ import annotations

import json
import os
import sys
import asyncio
from typing import Any, Dict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

from crewai import Agent, Crew, Task  # noqa: E402
from crewai.llms.base_llm import BaseLLM  # noqa: E402
from frameworks_common import CALLS, servers  # noqa: E402

import mcpsync  # noqa: E402
from mcpsync.integrations.crewai import crewai_tools  # noqa: E402


class StandInLLM(BaseLLM):
    """Stands in for your LLM (e.g. crewai.LLM("gpt-4o")) so the example runs offline: CrewAI's ReAct format,
    one Action per turn, then the Final Answer. Records each observation it is shown."""

    turn: int = 0
    observations: Dict[str, str] = {}

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
        if self.turn and isinstance(messages, list):
            shown = [str(m.get("content")) for m in messages if "Observation:" in str(m.get("content"))]
            text = shown[-1].split("Observation:", 1)[1] if shown else ""
            self.observations[CALLS[self.turn - 1][0]] = text.split("\n\n\n")[0].strip()
        self.turn += 1
        if self.turn <= len(CALLS):
            name, args = CALLS[self.turn - 1]
            return "Thought: I need %s\nAction: %s\nAction Input: %s" % (name, name, json.dumps(args))
        return "Thought: I now know the final answer\nFinal Answer: 5 and 9"

    def supports_function_calling(self) -> bool:
        return False


def build_crew(manager: mcpsync.Manager, llm: Any) -> Crew:
    agent = Agent(
        role="calculator",
        goal="add numbers with the tools",
        backstory="careful",
        tools=crewai_tools(manager, max_result_chars=20_000),
        llm=llm,
        verbose=False,
    )
    task = Task(description="Add 2 and 3, then 4 and 5.", expected_output="the two sums", agent=agent)
    return Crew(agents=[agent], tasks=[task], verbose=False)


def main(llm: Any = None) -> Dict[str, str]:
    llm = llm or StandInLLM(model="stand-in", observations={})
    with mcpsync.Manager(servers()) as manager:
        build_crew(manager, llm).kickoff()
    return dict(getattr(llm, "observations", {}))


async def amain(llm: Any = None) -> Dict[str, str]:
    llm = llm or StandInLLM(model="stand-in", observations={})
    manager = await asyncio.to_thread(mcpsync.Manager, servers())  # connecting blocks: keep it off the loop
    try:
        crew = await asyncio.to_thread(build_crew, manager, llm)
        await crew.kickoff_async()
    finally:
        await asyncio.to_thread(manager.close)
    return dict(getattr(llm, "observations", {}))


if __name__ == "__main__":
    for name, text in main().items():
        print("%s -> %s" % (name, text))
