"""A LangChain agent (LangChain 1.x ``create_agent``, a LangGraph graph) calling tools of two MCP servers through
mcpsync -- no event loop of mcpsync's own.

    python examples/langgraph_agent.py        (needs: pip install mcpsync[langchain] langchain)

``main()`` runs the agent synchronously (``invoke``); ``amain()`` runs it with ``ainvoke`` inside a running
event loop (Jupyter: ``await amain()``), where each tool call runs on a worker thread.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any, Dict, List

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from frameworks_common import CALLS, servers  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel  # noqa: E402
from langchain_core.messages import AIMessage, ToolMessage  # noqa: E402
from langchain.agents import create_agent  # noqa: E402

import mcpsync  # noqa: E402
from mcpsync.integrations.langchain import langchain_tools  # noqa: E402


class StandInModel(FakeMessagesListChatModel):
    """Stands in for your chat model (e.g. ChatOpenAI) so the example runs offline: it asks for CALLS, then
    answers."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


def stand_in_model() -> StandInModel:
    calls = [{"name": n, "args": a, "id": "call-%d" % i, "type": "tool_call"} for i, (n, a) in enumerate(CALLS)]
    return StandInModel(responses=[AIMessage(content="", tool_calls=calls), AIMessage(content="2+3=5, 4+5=9")])


def tool_results(state: Dict[str, Any]) -> Dict[str, str]:
    return {m.name: str(m.content) for m in state["messages"] if isinstance(m, ToolMessage)}


def main(model: Any = None) -> Dict[str, str]:
    with mcpsync.Manager(servers()) as manager:
        agent = create_agent(model or stand_in_model(), langchain_tools(manager, max_result_chars=20_000))
        state = agent.invoke({"messages": [("user", "Add 2 and 3 on one server, 4 and 5 on the other.")]})
        return tool_results(state)


async def amain(model: Any = None) -> Dict[str, str]:
    manager = await asyncio.to_thread(mcpsync.Manager, servers())  # connecting blocks: keep it off the loop
    try:
        tools: List[Any] = await asyncio.to_thread(langchain_tools, manager)
        agent = create_agent(model or stand_in_model(), tools)
        state = await agent.ainvoke({"messages": [("user", "Add 2 and 3, then 4 and 5.")]})
        return tool_results(state)
    finally:
        await asyncio.to_thread(manager.close)


if __name__ == "__main__":
    for name, text in main().items():
        print("%s -> %s" % (name, text))
