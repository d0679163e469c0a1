"""A Google ADK agent calling tools of two MCP servers through mcpsync.

    python examples/google_adk_agent.py       (needs: pip install mcpsync[google-adk])

``main()`` uses the runner's synchronous ``run`` (also fine on Jupyter's loop thread); ``amain()`` iterates
``run_async`` (Jupyter: ``await amain()``), with a toolset that owns its Manager: closing the runner closes it.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any, Dict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from frameworks_common import CALLS, servers  # noqa: E402
from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.models import BaseLlm, LlmResponse  # noqa: E402
from google.adk.runners import InMemoryRunner  # noqa: E402
from google.genai import types  # noqa: E402

import mcpsync  # noqa: E402
from mcpsync.integrations.google_adk import McpsyncToolset  # noqa: E402

PROMPT = types.Content(role="user", parts=[types.Part(text="Add 2 and 3 on one server, 4 and 5 on the other.")])


class StandInLlm(BaseLlm):  # type: ignore[misc]
    """Stands in for your model (e.g. model="gemini-2.5-flash") so the example runs offline: it asks for CALLS,
    then answers."""

    asked: bool = False

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
        if self.asked:
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="2+3=5, 4+5=9")]))
            return
        self.asked = True
        calls = [types.Part(function_call=types.FunctionCall(name=n, args=a)) for n, a in CALLS]
        yield LlmResponse(content=types.Content(role="model", parts=calls))


def new_runner(toolset: Any, model: Any = None) -> Any:
    agent = LlmAgent(name="helper", model=model or StandInLlm(model="stand-in"), tools=[toolset])
    return InMemoryRunner(agent=agent, app_name="example")


def collect(event: Any, out: Dict[str, str]) -> None:
    for part in (event.content.parts if event.content else None) or []:
        if part.function_response is not None:
            response = part.function_response.response or {}
            out[part.function_response.name] = str(response.get("result", response.get("error")))


def main(model: Any = None) -> Dict[str, str]:
    out: Dict[str, str] = {}
    with mcpsync.Manager(servers()) as manager:  # a synchronous program owns its servers with a ``with``
        runner = new_runner(McpsyncToolset(manager, max_result_chars=20_000), model)
        session = runner.session_service.create_session_sync(app_name="example", user_id="me")
        for event in runner.run(user_id="me", session_id=session.id, new_message=PROMPT):
            collect(event, out)
    return out


async def amain(model: Any = None) -> Dict[str, str]:
    toolset = await asyncio.to_thread(McpsyncToolset.from_servers, servers(), max_result_chars=20_000)
    runner = new_runner(toolset, model)  # the toolset owns its Manager: closing the runner closes it
    out: Dict[str, str] = {}
    try:
        session = await runner.session_service.create_session(app_name="example", user_id="me")
        async for event in runner.run_async(user_id="me", session_id=session.id, new_message=PROMPT):
            collect(event, out)
        return out
    finally:
        await runner.close()


if __name__ == "__main__":
    for name, text in main().items():
        print("%s -> %s" % (name, text))
