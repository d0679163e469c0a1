"""Microsoft Agent Framework: MCP tools run by ``agent_framework.Agent``, driven by a scripted chat client (the
framework's ``BaseChatClient`` with its ``FunctionInvocationLayer``, answering from a script; no network)."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List, Tuple

import mcpsync

from .conftest import HARD_SERVER, need
from .scenario import CALLS, OPTIONS, check

need("agent_framework")

from agent_framework import (  # noqa: E402
    Agent,
    BaseChatClient,
    ChatResponse,
    Content,
    FunctionInvocationLayer,
    FunctionTool,
    Message,
)

from mcpsync.integrations import McpToolkit  # noqa: E402
from mcpsync.integrations.agent_framework import agent_framework_tools  # noqa: E402


class ScriptedChatClient(FunctionInvocationLayer, BaseChatClient):  # type: ignore[misc]
    """Asks for every scripted call in its first turn (the framework runs them), then answers "done"."""

    def __init__(self, calls: List[Tuple[str, Dict[str, Any]]], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.calls = calls
        self.turn = 0
        self.results: Dict[str, Any] = {}

    async def _inner_get_response(self, *, messages: Any, stream: bool, options: Any, **kwargs: Any) -> Any:
        self.turn += 1
        if self.turn == 1:
            contents = [
                Content.from_function_call(call_id="call-%d" % i, name=name, arguments=args)
                for i, (name, args) in enumerate(self.calls)
            ]
        else:
            by_id = {"call-%d" % i: name for i, (name, _) in enumerate(self.calls)}
            for message in messages:
                for content in message.contents:
                    if content.type == "function_result":
                        self.results[by_id[content.call_id]] = content
            contents = [Content.from_text("done")]
        return ChatResponse(messages=[Message(role="assistant", contents=contents)], response_id="r%d" % self.turn)


def text(content: Any) -> str:
    return str(content.result)  # the framework joins the text items of a function result


def run(tools: Any, calls: Any, *, detailed: bool = True) -> Tuple[str, Dict[str, Any]]:
    client = ScriptedChatClient(calls, function_invocation_configuration={"include_detailed_errors": detailed})
    response = asyncio.run(Agent(client=client, tools=tools).run("use the tools"))
    return response.text, client.results


def test_agent_run(hard_client: mcpsync.Client) -> None:
    tools = agent_framework_tools(hard_client, **OPTIONS)
    assert all(isinstance(t, FunctionTool) for t in tools)
    names = {t.name for t in tools}
    assert "app_only" not in names and "crash" not in names  # visibility and policy
    answer, results = run(tools, CALLS)
    assert answer == "done"
    check({name: text(c) for name, c in results.items()})
    for name in ("fail", "slow", "add"):  # the framework's failed-call result: the message kept as its exception
        assert results[name].exception and results[name].exception in text(results[name])
    assert results["echo"].exception is None


def test_default_errors_hide_detail_and_bad_arguments(hard_client: mcpsync.Client) -> None:
    calls = [("fail", {"message": "boom"}), ("echo", {"wrong": 1}), ("image", {})]
    _, results = run(agent_framework_tools(hard_client, **OPTIONS), calls, detailed=False)
    # without include_detailed_errors the framework tells the model only that the call failed
    assert text(results["fail"]) == "Error: Function failed." and "boom" in results["fail"].exception
    assert text(results["echo"]).startswith("Error") and results["echo"].exception
    items = results["image"].items  # the text and the image, as the framework's Content items
    assert items[0].text.startswith("a red pixel") and items[1].media_type == "image/png"


def test_tool_called_directly_sync_and_async(hard_client: mcpsync.Client) -> None:
    tool = {t.name: t for t in agent_framework_tools(hard_client, **OPTIONS)}["tree"]
    assert tool(root={"value": "x"}) == 'tree {"root": {"value": "x"}}'  # a plain blocking call
    result = asyncio.run(tool.invoke(arguments={"root": {"value": "y"}}))
    assert result[0].text == 'tree {"root": {"value": "y"}}'


def test_two_real_servers(two_servers: mcpsync.Manager) -> None:
    calls = [("example_add", {"a": 2, "b": 3}), ("everything_get-sum", {"a": 4, "b": 5})]
    _, results = run(agent_framework_tools(two_servers, timeout=30), calls)
    assert "5" in text(results["example_add"]) and "9" in text(results["everything_get-sum"])


def test_example_sync_and_in_jupyter() -> None:
    from .test_integrations_examples import CHECK, assert_sums, load, require_peer, run_notebook

    require_peer("everything")
    assert_sums(load("agent_framework_agent").main())  # asyncio.run in a plain program
    # the framework is async: on Jupyter's running loop the agent is awaited (asyncio.run would refuse)
    out = run_notebook(["import agent_framework_agent as ex", "results = await ex.amain()\n" + CHECK])
    assert out[1].strip().splitlines()[-1].startswith("ok"), out


def test_prefix_false_gives_the_servers_own_names(two_servers: mcpsync.Manager) -> None:
    calls = [("add", {"a": 2, "b": 3}), ("get-sum", {"a": 4, "b": 5})]
    _, results = run(agent_framework_tools(two_servers, prefix=False, timeout=30), calls)
    assert text(results["add"]) == "5" and "9" in text(results["get-sum"])


def test_the_next_agent_follows_the_servers_list() -> None:
    """An agent's tools are the list it was given: after tools/list_changed a new list from the same toolkit
    has the new tool."""
    with mcpsync.connect(HARD_SERVER, protocol="legacy") as client:
        kit = McpToolkit(client, **OPTIONS)
        _, results = run(agent_framework_tools(kit), [("add_tool", {"name": "dyn_af"})])
        assert text(results["add_tool"]) == "added tool dyn_af"
        _, results = run(agent_framework_tools(kit), [("dyn_af", {"message": "hi"})])
        assert text(results["dyn_af"]) == "dyn_af: hi"


def test_framework_approval_holds_the_call(hard_client: mcpsync.Client) -> None:
    """approval_mode="always_require": the framework asks its user before the call; nothing is sent until then."""
    tools = agent_framework_tools(hard_client, approval_mode="always_require", **OPTIONS)
    client = ScriptedChatClient([("echo", {"message": "held"})])
    response = asyncio.run(Agent(client=client, tools=tools).run("go"))
    requests = response.user_input_requests
    assert [r.function_call.name for r in requests] == ["echo"] and client.results == {}
    assert client.turn == 1  # the run stopped for approval: the tool was not called


def test_any_arguments_give_a_result_or_the_frameworks_failure() -> None:
    """Whatever the model sends, the tool gives a result or fails the framework's way (its argument check, or
    ToolExecutionException); nothing else escapes."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from agent_framework.exceptions import ToolExecutionException

    from ..conftest import fuzz_examples
    from .fuzzargs import arguments

    with mcpsync.connect(HARD_SERVER) as client:
        tools = {t.name: t for t in agent_framework_tools(client, **OPTIONS)}

        ok: List[bool] = []

        @settings(max_examples=fuzz_examples(150, 40), deadline=None, suppress_health_check=list(HealthCheck))
        @given(name=st.sampled_from(["shapes", "measure", "tree", "noprops"]), args=arguments())
        def prop(name: str, args: Any) -> None:
            try:
                result = asyncio.run(tools[name].invoke(arguments=args))
            except ToolExecutionException as exc:
                assert str(exc).startswith("Error")
            except TypeError as exc:  # the framework's own argument check (before our function runs)
                assert type(exc).__name__ == "_FunctionArgumentValidationError", repr(exc)
            else:
                assert result and isinstance(result[0].text, str)
                ok.append(True)

        prop()
        assert any(ok)  # some calls passed the argument check and reached the server
