"""Google ADK: MCP tools run by an ``LlmAgent`` under ADK's ``InMemoryRunner``, driven by a scripted ``BaseLlm``
that answers with function calls (no network)."""

from __future__ import annotations

import asyncio
import sys
from typing import Any, Dict, List, Tuple

import mcpsync

from .conftest import HARD_SERVER, need
from .scenario import CALLS, OPTIONS, check

need("google.adk")

from google.adk.agents import LlmAgent  # noqa: E402
from google.adk.models import BaseLlm, LlmResponse  # noqa: E402
from google.adk.runners import InMemoryRunner  # noqa: E402
from google.genai import types  # noqa: E402

from mcpsync.integrations.google_adk import McpsyncToolset, adk_tools  # noqa: E402


class ScriptedLlm(BaseLlm):  # type: ignore[misc]
    """Calls every scripted function in its first turn (ADK runs them), then answers "done"."""

    calls: List[Any] = []
    turn: int = 0
    declared: List[str] = []

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
        self.turn += 1
        if self.turn == 1:
            self.declared = sorted(llm_request.tools_dict)
            parts = [
                types.Part(function_call=types.FunctionCall(id="call-%d" % i, name=name, args=args))
                for i, (name, args) in enumerate(self.calls)
            ]
        else:
            parts = [types.Part(text="done")]
        yield LlmResponse(content=types.Content(role="model", parts=parts))


def new_message() -> Any:
    return types.Content(role="user", parts=[types.Part(text="use the tools")])


def collect(events: Any, out: Dict[str, Any]) -> None:
    for event in events:
        for part in (event.content.parts if event.content else None) or []:
            if part.function_response is not None:
                out[part.function_response.name] = part.function_response.response
            if part.text:
                out["__text__"] = part.text


def run_sync(tools: List[Any], calls: List[Tuple[str, Dict[str, Any]]]) -> Tuple[ScriptedLlm, Dict[str, Any]]:
    llm = ScriptedLlm(model="scripted", calls=calls)
    runner = InMemoryRunner(agent=LlmAgent(name="t", model=llm, tools=tools), app_name="t")
    session = asyncio.run(runner.session_service.create_session(app_name="t", user_id="u"))
    seen: Dict[str, Any] = {}
    collect(runner.run(user_id="u", session_id=session.id, new_message=new_message()), seen)
    return llm, seen


def shown(response: Dict[str, Any]) -> str:
    return str(response["error"] if "error" in response else response["result"])


def test_runner_sync(hard_client: mcpsync.Client) -> None:
    llm, seen = run_sync([McpsyncToolset(hard_client, **OPTIONS)], CALLS)
    assert "app_only" not in llm.declared and "crash" not in llm.declared and "tree" in llm.declared
    assert seen["__text__"] == "done"
    check({name: shown(r) for name, r in seen.items() if name != "__text__"})
    assert {n for n, r in seen.items() if "error" in r} == {"fail", "slow", "add"}


def test_runner_async_filter_prefix_and_bad_arguments(hard_client: mcpsync.Client) -> None:
    calls = [("mcp_image", {}), ("mcp_echo", {"wrong": 1})]
    toolset = McpsyncToolset(hard_client, tool_filter=["image", "echo"], tool_name_prefix="mcp", **OPTIONS)
    llm = ScriptedLlm(model="scripted", calls=calls)
    runner = InMemoryRunner(agent=LlmAgent(name="t", model=llm, tools=[toolset]), app_name="t")

    async def main() -> Dict[str, Any]:
        session = await runner.session_service.create_session(app_name="t", user_id="u")
        seen: Dict[str, Any] = {}
        async for event in runner.run_async(user_id="u", session_id=session.id, new_message=new_message()):
            collect([event], seen)
        return seen

    seen = asyncio.run(main())
    assert llm.declared == ["mcp_echo", "mcp_image"]  # ADK's own filter and prefix on top of mcpsync's names
    assert (
        seen["mcp_image"]["result"].startswith("a red pixel") and "[image 1: image/png]" in seen["mcp_image"]["result"]
    )
    assert seen["mcp_echo"]["error"].startswith("Error: invalid arguments")


def test_toolset_owning_its_servers_closes_them() -> None:
    config = {"mcpServers": {"example": {"command": sys.executable, "args": ["-m", "mcpsync.example_server"]}}}
    toolset = McpsyncToolset.from_servers(config)
    _, seen = run_sync([toolset], [("example_add", {"a": 1, "b": 1})])
    assert seen["example_add"]["structured_content"] == {"sum": 2.0}
    asyncio.run(toolset.close())
    assert toolset.toolkit.source.closed
    client = mcpsync.connect(HARD_SERVER)
    try:
        asyncio.run(McpsyncToolset(client).close())
        assert not client.closed  # not owned: left open
    finally:
        client.close()


def test_two_real_servers(two_servers: mcpsync.Manager) -> None:
    calls = [("example_add", {"a": 2, "b": 3}), ("everything_get-sum", {"a": 4, "b": 5})]
    _, seen = run_sync(adk_tools(two_servers, timeout=30), calls)
    assert "5" in seen["example_add"]["result"] and "9" in seen["everything_get-sum"]["result"]


def test_example_sync_and_in_jupyter() -> None:
    from .test_integrations_examples import CHECK, assert_sums, load, require_peer, run_notebook

    require_peer("everything")
    assert_sums(load("google_adk_agent").main())
    out = run_notebook(
        [
            "import asyncio, google_adk_agent as ex\nassert asyncio.get_running_loop().is_running()",
            "results = ex.main()\n" + CHECK,  # Runner.run (its own thread) from the kernel's loop thread
            "results = await ex.amain()\n" + CHECK,  # run_async on the running loop
        ]
    )
    assert out[1].strip().splitlines()[-1].startswith("ok") and out[2].strip().splitlines()[-1].startswith("ok"), out


def test_prefix_false_gives_the_servers_own_names(two_servers: mcpsync.Manager) -> None:
    calls = [("add", {"a": 2, "b": 3}), ("get-sum", {"a": 4, "b": 5})]
    _, seen = run_sync([McpsyncToolset(two_servers, prefix=False, timeout=30)], calls)
    assert seen["add"]["result"] == "5" and "9" in seen["get-sum"]["result"]


class StepLlm(BaseLlm):  # type: ignore[misc]
    """Adds a tool, then calls it, then answers; records the tools offered at each step."""

    offered: List[Any] = []

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
        self.offered.append(set(llm_request.tools_dict))
        step = len(self.offered)
        if step == 1:
            part = types.Part(function_call=types.FunctionCall(id="a", name="add_tool", args={"name": "dyn_adk"}))
        elif step == 2:
            part = types.Part(function_call=types.FunctionCall(id="b", name="dyn_adk", args={"message": "hi"}))
        else:
            part = types.Part(text="done")
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


def test_the_tools_follow_the_servers_list_within_a_run() -> None:
    """The model adds a tool (the server sends tools/list_changed); the runner's next step offers it."""
    with mcpsync.connect(HARD_SERVER, protocol="legacy") as client:
        llm = StepLlm(model="steps")
        runner = InMemoryRunner(agent=LlmAgent(name="t", model=llm, tools=[McpsyncToolset(client)]), app_name="t")
        session = asyncio.run(runner.session_service.create_session(app_name="t", user_id="u"))
        seen: Dict[str, Any] = {}
        collect(runner.run(user_id="u", session_id=session.id, new_message=new_message()), seen)
    assert "dyn_adk" not in llm.offered[0] and "dyn_adk" in llm.offered[1]
    assert seen["dyn_adk"]["result"] == "dyn_adk: hi"


def test_any_arguments_give_a_function_response_never_an_exception() -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from ..conftest import fuzz_examples
    from .fuzzargs import arguments

    with mcpsync.connect(HARD_SERVER) as client:
        tools = {t.name: t for t in adk_tools(client, **OPTIONS)}

        ok: List[bool] = []

        @settings(max_examples=fuzz_examples(150, 40), deadline=None, suppress_health_check=list(HealthCheck))
        @given(name=st.sampled_from(["shapes", "measure", "tree", "noprops"]), args=arguments())
        def prop(name: str, args: Any) -> None:
            response = asyncio.run(tools[name].run_async(args=args, tool_context=None))
            assert set(response) in ({"error"}, {"result"}, {"result", "structured_content"})
            assert isinstance(response.get("error", response.get("result")), str)
            ok.append("result" in response)

        prop()
        assert any(ok)  # some calls passed the argument check and reached the server


def test_adk_confirmation_holds_the_call_until_confirmed(hard_client: mcpsync.Client) -> None:
    """require_confirmation: ADK asks its user first (adk_request_confirmation); nothing is sent to the server
    until the answer, and a rejection reaches the model as an error."""
    for confirmed, expected in ((True, {"result": "held"}), (False, {"error": "This tool call is rejected."})):
        toolset = McpsyncToolset(hard_client, require_confirmation=lambda name, args: name == "echo", **OPTIONS)
        llm = ScriptedLlm(model="scripted", calls=[("echo", {"message": "held"})])
        runner = InMemoryRunner(agent=LlmAgent(name="t", model=llm, tools=[toolset]), app_name="t")
        session = asyncio.run(runner.session_service.create_session(app_name="t", user_id="u"))
        asked = []
        for event in runner.run(user_id="u", session_id=session.id, new_message=new_message()):
            for part in (event.content.parts if event.content else None) or []:
                if part.function_call is not None and part.function_call.name == "adk_request_confirmation":
                    asked.append(part.function_call.id)
        assert len(asked) == 1 and llm.turn == 1  # the run paused for the user: the server got nothing
        answer = types.FunctionResponse(id=asked[0], name="adk_request_confirmation", response={"confirmed": confirmed})
        seen: Dict[str, Any] = {}
        resume = types.Content(role="user", parts=[types.Part(function_response=answer)])
        collect(runner.run(user_id="u", session_id=session.id, new_message=resume), seen)
        assert seen["echo"] == expected, seen
