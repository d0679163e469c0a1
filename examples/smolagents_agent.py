"""A smolagents ToolCallingAgent calling tools of two MCP servers through mcpsync.

    python examples/smolagents_agent.py       (needs: pip install mcpsync[smolagents])

The tool collection owns its Manager: leaving the ``with`` block closes both servers.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, List

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from frameworks_common import CALLS, servers  # noqa: E402
from smolagents import ToolCallingAgent  # noqa: E402
from smolagents.memory import ActionStep  # noqa: E402
from smolagents.models import ChatMessage, ChatMessageToolCall, ChatMessageToolCallFunction, MessageRole, Model  # noqa: E402

from mcpsync.integrations.smolagents import McpsyncToolCollection  # noqa: E402


class StandInModel(Model):
    """Stands in for your model (e.g. InferenceClientModel) so the example runs offline: one tool call per step
    (tool names are Python identifiers in smolagents: get-sum is get_sum), then the final answer."""

    def __init__(self) -> None:
        super().__init__(model_id="stand-in")
        self.script = [(n.replace("-", "_"), a) for n, a in CALLS] + [("final_answer", {"answer": "5 and 9"})]

    def generate(
        self,
        messages: Any,
        stop_sequences: Any = None,
        response_format: Any = None,
        tools_to_call_from: Any = None,
        **kwargs: Any,
    ) -> ChatMessage:
        name, args = self.script.pop(0)
        call = ChatMessageToolCall(
            id=name, type="function", function=ChatMessageToolCallFunction(name=name, arguments=args)
        )
        return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[call])


def main(model: Any = None) -> Dict[str, str]:
    with McpsyncToolCollection.from_config(servers(), max_result_chars=20_000) as collection:
        agent = ToolCallingAgent(tools=collection.tools, model=model or StandInModel(), verbosity_level=0)
        agent.run("Add 2 and 3 on one server, 4 and 5 on the other.")
        steps: List[Any] = [s for s in agent.memory.steps if isinstance(s, ActionStep) and s.tool_calls]
        return {s.tool_calls[0].name: (s.observations or "").strip() for s in steps}


if __name__ == "__main__":
    for name, text in main().items():
        print("%s -> %s" % (name, text))
