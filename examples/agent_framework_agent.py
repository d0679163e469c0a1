"""A Microsoft Agent Framework agent calling tools of two MCP servers through mcpsync.

    python examples/agent_framework_agent.py     (needs: pip install mcpsync[agent-framework])

The framework is async: ``main()`` runs the agent with ``asyncio.run``; ``amain()`` is the same agent on a running
loop (Jupyter: ``await amain()``). Each tool call is a blocking mcpsync call the framework runs on a worker thread.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any, Dict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from agent_framework import Agent, BaseChatClient, ChatResponse, Content, FunctionInvocationLayer, Message  # noqa: E402
from frameworks_common import CALLS, servers  # noqa: E402

import mcpsync  # noqa: E402
from mcpsync.integrations.agent_framework import agent_framework_tools  # noqa: E402


class StandInClient(FunctionInvocationLayer, BaseChatClient):  # type: ignore[misc]
    """Stands in for your chat client (e.g. OpenAIChatClient) so the example runs offline: it asks for CALLS,
    then answers; it keeps the tool results it was sent."""

    def __init__(self) -> None:
        super().__init__(function_invocation_configuration={"include_detailed_errors": True})
        self.results: Dict[str, str] = {}

    async def _inner_get_response(self, *, messages: Any, stream: bool, options: Any, **kwargs: Any) -> Any:
        names = {"call-%d" % i: name for i, (name, _) in enumerate(CALLS)}
        results = [c for m in messages for c in m.contents if c.type == "function_result"]
        self.results.update({names[c.call_id]: str(c.result) for c in results})
        if results:
            contents = [Content.from_text("2+3=5, 4+5=9")]
        else:
            contents = [Content.from_function_call(call_id=i, name=n, arguments=a) for i, n, a in calls()]
        return ChatResponse(messages=[Message(role="assistant", contents=contents)])


def calls() -> Any:
    return [("call-%d" % i, name, args) for i, (name, args) in enumerate(CALLS)]


async def amain(client: Any = None) -> Dict[str, str]:
    manager = await asyncio.to_thread(mcpsync.Manager, servers())  # connecting blocks: keep it off the loop
    try:
        tools = await asyncio.to_thread(agent_framework_tools, manager, max_result_chars=20_000)
        chat = client or StandInClient()
        await Agent(client=chat, tools=tools).run("Add 2 and 3 on one server, 4 and 5 on the other.")
        return chat.results  # type: ignore[no-any-return]
    finally:
        await asyncio.to_thread(manager.close)


def main(client: Any = None) -> Dict[str, str]:
    return asyncio.run(amain(client))


if __name__ == "__main__":
    for name, text in main().items():
        print("%s -> %s" % (name, text))
