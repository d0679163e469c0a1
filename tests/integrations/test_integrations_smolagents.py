"""smolagents: MCP tools run by a ToolCallingAgent, driven by a smolagents Model subclass that returns tool calls."""

from __future__ import annotations

import sys
from typing import Any, Dict, List, Tuple

import mcpsync

from .conftest import HARD_SERVER, need
from .scenario import CALLS, OPTIONS, check

need("smolagents")

from smolagents import ToolCallingAgent  # noqa: E402
from smolagents.memory import ActionStep  # noqa: E402
from smolagents.models import ChatMessage, ChatMessageToolCall, ChatMessageToolCallFunction, MessageRole, Model  # noqa: E402

from mcpsync.integrations.smolagents import McpsyncToolCollection, smolagents_tools  # noqa: E402


class ScriptedModel(Model):  # type: ignore[misc]
    """A smolagents model that calls the scripted tools one per step, then gives the final answer."""

    def __init__(self, calls: List[Tuple[str, Dict[str, Any]]]) -> None:
        super().__init__(model_id="scripted")
        self.calls = list(calls)
        self.step = 0

    def generate(
        self,
        messages: Any,
        stop_sequences: Any = None,
        response_format: Any = None,
        tools_to_call_from: Any = None,
        **kwargs: Any,
    ) -> ChatMessage:
        if self.step < len(self.calls):
            name, args = self.calls[self.step]
        else:
            name, args = "final_answer", {"answer": "done"}
        self.step += 1
        call = ChatMessageToolCall(
            id="call-%d" % self.step, type="function", function=ChatMessageToolCallFunction(name=name, arguments=args)
        )
        return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[call])


def observations(agent: Any) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for step in agent.memory.steps:
        message = step.model_output_message if isinstance(step, ActionStep) else None
        if message is not None and message.tool_calls:
            text = (step.observations or "").strip()
            out[message.tool_calls[0].function.name] = text if step.error is None else "AgentError: %s" % step.error
    return out


def run(tools: Any, calls: Any) -> Tuple[Any, Dict[str, str]]:
    agent = ToolCallingAgent(tools=tools, model=ScriptedModel(calls), max_steps=len(calls) + 2, verbosity_level=0)
    answer = agent.run("use the tools")
    return answer, observations(agent)


def test_tool_calling_agent(hard_client: mcpsync.Client) -> None:
    tools = smolagents_tools(hard_client, **OPTIONS)
    assert "app_only" not in {t.name for t in tools} and "crash" not in {t.name for t in tools}
    answer, seen = run(tools, CALLS)
    assert answer == "done"
    check(seen)
    answer, seen = run(tools, [("image", {}), ("echo", {"wrong": 1})])
    assert seen["image"].startswith("a red pixel")
    # smolagents checks arguments against the tool's inputs itself and shows the model its own error
    assert seen["echo"].startswith("AgentError") and "wrong" in seen["echo"]


def test_collection_closes_its_manager_and_names_are_identifiers() -> None:
    from tests.peers.interop_peers import require_peer

    everything = require_peer("everything")
    config = {
        "mcpServers": {
            "example": {"command": sys.executable, "args": ["-m", "mcpsync.example_server"]},
            "everything": {"command": everything[0], "args": everything[1:]},
        }
    }
    with McpsyncToolCollection.from_config(config, timeout=30) as collection:
        names = {t.name for t in collection.tools}
        assert {"example_add", "everything_get_sum"} <= names  # get-sum is no Python identifier
        answer, seen = run(
            collection.tools, [("example_add", {"a": 2, "b": 3}), ("everything_get_sum", {"a": 4, "b": 5})]
        )
        manager = collection.toolkit.source
    assert answer == "done" and seen["example_add"] == "5" and "9" in seen["everything_get_sum"]
    assert manager.closed  # the collection closed the manager it owned


def test_collection_over_a_client() -> None:
    client = mcpsync.connect(HARD_SERVER)
    with McpsyncToolCollection(client, **OPTIONS) as collection:
        answer, seen = run(collection.tools, [("tree", {"root": {"value": "x"}})])
        assert seen["tree"] == 'tree {"root": {"value": "x"}}'
    assert client.closed


def test_from_config_prefix_false_gives_the_servers_own_names() -> None:
    from tests.peers.interop_peers import require_peer

    everything = require_peer("everything")
    config = {
        "mcpServers": {
            "example": {"command": sys.executable, "args": ["-m", "mcpsync.example_server"]},
            "everything": {"command": everything[0], "args": everything[1:]},
        }
    }
    with McpsyncToolCollection.from_config(config, prefix=False, timeout=30) as collection:
        names = {t.name for t in collection.tools}
        assert {"add", "get_sum"} <= names and "example_add" not in names
        answer, seen = run(collection.tools, [("add", {"a": 2, "b": 3}), ("get_sum", {"a": 4, "b": 5})])
    assert seen["add"] == "5" and "9" in seen["get_sum"]


def test_the_collection_follows_the_servers_list() -> None:
    """After the server's tools/list_changed, the next read of ``collection.tools`` has the new tool."""
    client = mcpsync.connect(HARD_SERVER, protocol="legacy")
    with McpsyncToolCollection(client, **OPTIONS) as collection:
        first = {t.name: t for t in collection.tools}
        assert "dyn_smol" not in first
        _, seen = run(collection.tools, [("add_tool", {"name": "dyn_smol"})])
        assert seen["add_tool"] == "added tool dyn_smol"
        second = {t.name: t for t in collection.tools}
        assert second["echo"] is first["echo"]  # unchanged tools are the same objects
        _, seen = run(collection.tools, [("dyn_smol", {"message": "hi"})])
        assert seen["dyn_smol"] == "dyn_smol: hi"
