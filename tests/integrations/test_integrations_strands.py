"""Strands Agents: MCP tools run by ``strands.Agent``, driven by a scripted ``strands.models.Model`` that streams
tool-use events (no network)."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any, AsyncIterator, Dict, List, Tuple

import mcpsync

from .conftest import HARD_SERVER, need
from .scenario import CALLS, OPTIONS, check

need("strands")

from strands import Agent  # noqa: E402
from strands.models import Model  # noqa: E402

from mcpsync.integrations.strands import McpsyncAgentTool, McpsyncToolProvider, strands_tools  # noqa: E402


class ScriptedModel(Model):  # type: ignore[misc]
    """Streams a tool use for every scripted call in its first turn (the agent runs them), then "done"."""

    def __init__(self, calls: List[Tuple[str, Dict[str, Any]]]) -> None:
        self.calls = calls
        self.turn = 0
        self.config: Dict[str, Any] = {}

    def update_config(self, **config: Any) -> None:
        self.config.update(config)

    def get_config(self) -> Dict[str, Any]:
        return self.config

    async def structured_output(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:  # pragma: no cover
        raise NotImplementedError
        yield

    async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any) -> Any:
        self.turn += 1
        yield {"messageStart": {"role": "assistant"}}
        if self.turn == 1:
            for i, (name, args) in enumerate(self.calls):
                yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "call-%d" % i, "name": name}}}}
                yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(args)}}}}
                yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
        else:
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": "done"}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}


def results(agent: Any, calls: List[Tuple[str, Dict[str, Any]]]) -> Dict[str, Dict[str, Any]]:
    by_id = {"call-%d" % i: name for i, (name, _) in enumerate(calls)}
    out: Dict[str, Dict[str, Any]] = {}
    for message in agent.messages:
        for block in message["content"]:
            if "toolResult" in block:
                out[by_id[block["toolResult"]["toolUseId"]]] = block["toolResult"]
    return out


def text(result: Dict[str, Any]) -> str:
    return "\n".join(c["text"] for c in result["content"] if "text" in c)


def test_agent_sync_with_a_provider(hard_client: mcpsync.Client) -> None:
    provider = McpsyncToolProvider(hard_client, **OPTIONS)
    agent = Agent(model=ScriptedModel(CALLS), tools=[provider], callback_handler=None)
    names = set(agent.tool_names)
    assert "app_only" not in names and "crash" not in names  # visibility and policy
    answer = agent("use the tools")
    assert str(answer).strip() == "done"
    seen = results(agent, CALLS)
    check({name: text(r) for name, r in seen.items()})
    assert {n for n, r in seen.items() if r["status"] == "error"} == {"fail", "slow", "add"}
    agent.cleanup()
    assert not hard_client.closed  # the provider does not own the client it was given


def test_agent_async_image_and_bad_arguments(hard_client: mcpsync.Client) -> None:
    calls = [("image", {}), ("echo", {"wrong": 1})]
    agent = Agent(model=ScriptedModel(calls), tools=strands_tools(hard_client, **OPTIONS), callback_handler=None)
    asyncio.run(agent.invoke_async("go"))
    seen = results(agent, calls)
    assert text(seen["image"]).startswith("a red pixel") and seen["image"]["content"][1]["image"]["format"] == "png"
    assert seen["echo"]["status"] == "error" and text(seen["echo"]).startswith("Error: invalid arguments")


def test_provider_owning_its_servers_closes_them_with_the_last_agent() -> None:
    client = mcpsync.connect(HARD_SERVER)
    provider = McpsyncToolProvider(client, close_source=True, **OPTIONS)
    first = Agent(model=ScriptedModel([("tree", {"root": {"value": "x"}})]), tools=[provider], callback_handler=None)
    second = Agent(model=ScriptedModel([]), tools=[provider], callback_handler=None)
    first("go")
    assert text(results(first, [("tree", {})])["tree"]) == 'tree {"root": {"value": "x"}}'
    first.cleanup()
    assert not client.closed  # the second agent still uses it
    second.cleanup()
    assert client.closed


def test_two_real_servers(two_servers: mcpsync.Manager) -> None:
    calls = [("example_add", {"a": 2, "b": 3}), ("everything_get-sum", {"a": 4, "b": 5})]
    tools = strands_tools(two_servers, timeout=30)
    assert all(isinstance(t, McpsyncAgentTool) for t in tools)
    agent = Agent(model=ScriptedModel(calls), tools=tools, callback_handler=None)
    agent("sum")
    seen = results(agent, calls)
    assert "5" in text(seen["example_add"]) and "9" in text(seen["everything_get-sum"])


def test_from_config_owns_its_manager() -> None:
    config = {"mcpServers": {"example": {"command": sys.executable, "args": ["-m", "mcpsync.example_server"]}}}
    with McpsyncToolProvider.from_config(config) as provider:
        agent = Agent(model=ScriptedModel([("example_add", {"a": 1, "b": 1})]), tools=[provider], callback_handler=None)
        agent("go")
        assert "2" in text(results(agent, [("example_add", {})])["example_add"])
        manager = provider.toolkit.source
    assert manager.closed


def test_example_sync_and_in_jupyter() -> None:
    from .test_integrations_examples import CHECK, assert_sums, load, require_peer, run_notebook

    require_peer("everything")
    assert_sums(load("strands_agent").main())
    out = run_notebook(
        [
            "import asyncio, strands_agent as ex\nassert asyncio.get_running_loop().is_running()",
            "results = ex.main()\n" + CHECK,  # the sync agent call on the kernel's loop thread
            "results = await ex.amain()\n" + CHECK,  # invoke_async on the running loop
        ]
    )
    assert out[1].strip().splitlines()[-1].startswith("ok") and out[2].strip().splitlines()[-1].startswith("ok"), out


def test_prefix_false_gives_the_servers_own_names(two_servers: mcpsync.Manager) -> None:
    calls = [("add", {"a": 2, "b": 3}), ("get-sum", {"a": 4, "b": 5})]
    agent = Agent(model=ScriptedModel(calls), tools=[McpsyncToolProvider(two_servers, prefix=False, timeout=30)])
    agent("sum")
    seen = results(agent, calls)
    assert text(seen["add"]) == "5" and "9" in text(seen["get-sum"])


def test_the_next_agent_follows_the_servers_list() -> None:
    """Strands fixes an agent's tools when the agent is built: after tools/list_changed the next agent built
    from the same provider gets the new list."""
    with mcpsync.connect(HARD_SERVER, protocol="legacy") as client:
        provider = McpsyncToolProvider(client, **OPTIONS)
        calls = [("add_tool", {"name": "dyn_st"})]
        first = Agent(model=ScriptedModel(calls), tools=[provider], callback_handler=None)
        assert "dyn_st" not in first.tool_names
        first("add")
        assert text(results(first, calls)["add_tool"]) == "added tool dyn_st"
        calls = [("dyn_st", {"message": "hi"})]
        second = Agent(model=ScriptedModel(calls), tools=[provider], callback_handler=None)
        second("call")
        assert text(results(second, calls)["dyn_st"]) == "dyn_st: hi"


def test_any_arguments_give_a_tool_result_never_an_exception() -> None:
    from hypothesis import HealthCheck, given, settings

    from ..conftest import fuzz_examples
    from .fuzzargs import arguments

    with mcpsync.connect(HARD_SERVER) as client:
        tools = {t.tool_name: t for t in strands_tools(client, **OPTIONS)}

        ok: List[bool] = []

        @settings(max_examples=fuzz_examples(150, 40), deadline=None, suppress_health_check=list(HealthCheck))
        @given(name=st_names(), args=arguments())
        def prop(name: str, args: Any) -> None:
            result = tools[name].invoke("id-1", args)
            assert result["toolUseId"] == "id-1" and result["status"] in ("success", "error")
            assert result["content"] and isinstance(result["content"][0]["text"], str)
            ok.append(result["status"] == "success")

        prop()
        assert any(ok)  # some calls passed the argument check and reached the server


def st_names() -> Any:
    from hypothesis import strategies as st

    return st.sampled_from(["shapes", "measure", "tree", "noprops"])


def test_direct_tool_calls_sync_and_async(hard_client: mcpsync.Client) -> None:
    """Strands' own direct call (``agent.tool.<name>(...)``) runs the tool outside the model loop."""
    agent = Agent(model=ScriptedModel([]), tools=strands_tools(hard_client, **OPTIONS), callback_handler=None)
    result = agent.tool.tree(root={"value": "x"}, record_direct_tool_call=False)
    assert result["status"] == "success" and text(result) == 'tree {"root": {"value": "x"}}'
    failed = agent.tool.fail(message="boom", record_direct_tool_call=False)
    assert failed["status"] == "error" and "boom" in text(failed)

    async def main() -> Any:  # the same direct call made from a running event loop (Strands runs it aside)
        return agent.tool.echo(message="hi", record_direct_tool_call=False)

    assert text(asyncio.run(main())) == "hi"
