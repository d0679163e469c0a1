"""The framework-independent core of mcpsync.integrations, typed results, and tool transforms.

Runs in the main test environment (no agent framework needed); the schema-model tests need pydantic.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mcpsync
from mcpsync.integrations import McpToolkit, ResultBudget
from mcpsync.integrations.results import ResultStore, render_result
from mcpsync.manager.transforms import ArgTransform, ToolTransform, parse_transforms

from tests.conftest import fuzz_examples
from mcpsync.middleware import ToolPolicy

HARD = [sys.executable, str(Path(__file__).parent / "hardserver.py")]
FRAMEWORKS = [
    "langchain_core",
    "langgraph",
    "pydantic_ai",
    "smolagents",
    "agents",
    "llama_index",
    "crewai",
    "dspy",
    "haystack",
    "pydantic",
    "agent_framework",
    "strands",
    "google.adk",
    "google.genai",
    "langchain",
    "fastmcp",
]


def test_import_mcpsync_imports_no_framework() -> None:
    code = (
        "import sys, mcpsync, mcpsync.integrations; mcpsync.integrations.McpToolkit; "
        "bad = [m for m in %r if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)" % (FRAMEWORKS,)
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


@dataclasses.dataclass
class Sum:
    sum: float


@dataclasses.dataclass
class Outer:
    items: List[Sum]
    label: Optional[str] = None


def test_data_and_parse_from_a_real_server() -> None:
    with mcpsync.connect([sys.executable, "-m", "mcpsync.example_server"]) as client:
        result = client.call_tool("add", {"a": 2, "b": 3})
        assert result.data == {"sum": 5}
        assert result.parse(Sum) == Sum(5.0)
        assert result.output_schema is not None
        failed = client.call_tool("fail", {"message": "no"})
        with pytest.raises(mcpsync.ToolError):
            _ = failed.data
        with pytest.raises(mcpsync.errors.ToolOutputInvalid):
            result.parse(Outer)


def test_parse_nested_dataclasses_pydantic_and_unwrap() -> None:
    raw = {"content": [], "structuredContent": {"items": [{"sum": 1}, {"sum": 2.5}], "label": None, "extra": 1}}
    result = mcpsync.CallToolResult.from_dict(raw)
    assert result.parse(Outer) == Outer([Sum(1.0), Sum(2.5)], None)
    wrapped = mcpsync.CallToolResult.from_dict({"content": [], "structuredContent": {"result": [1, 2]}})
    wrapped.output_schema = {"type": "object", "x-fastmcp-wrap-result": True}
    assert wrapped.data == [1, 2]
    pydantic = pytest.importorskip("pydantic")

    class Model(pydantic.BaseModel):
        items: List[Dict[str, float]]

    assert result.parse(Model).items == [{"sum": 1.0}, {"sum": 2.5}]
    assert wrapped.parse(List[int]) == [1, 2]
    with pytest.raises(mcpsync.errors.ToolOutputInvalid):
        wrapped.parse(List[Sum])


def test_toolkit_visibility_policy_transforms_budget_and_spill(tmp_path: Path) -> None:
    transforms = {
        "echo": ToolTransform(
            name="say", description="Say something", arguments={"message": ArgTransform(hide=True, value="bound!")}
        ),
        "payload": ToolTransform(arguments={"size": ArgTransform(description="how many characters")}),
    }
    with mcpsync.connect(HARD, middleware=[ToolPolicy(denied=["crash"])]) as client:
        kit = McpToolkit(client, transforms=transforms, max_result_tokens=100, spill=True, prefix=True)
        tools = {t.name: t for t in kit.tools()}
        assert "hard_app_only" not in tools and "hardserver_app_only" not in tools
        assert not any(n.endswith("_crash") for n in tools)
        assert "say" in tools and not any(n.endswith("_echo") for n in tools)
        say = tools["say"]
        assert say.description == "Say something" and "message" not in say.parameters["properties"]
        assert "required" not in say.parameters
        assert say.call({"message": "the model's own"}).text == "bound!"
        payload = next(t for n, t in tools.items() if n.endswith("_payload"))
        assert payload.parameters["properties"]["size"]["description"] == "how many characters"
        out = payload.call({"size": 1000})
        assert out.truncated and out.handle and out.spill_path and len(out.text) <= 400
        assert Path(out.spill_path).read_text() == kit.full_result(out.handle).text
        spill_dir = Path(out.spill_path).parent
        assert kit.call("nope", {}).is_error
        kit.close()
        assert not spill_dir.exists()  # the private spill directory is removed on close
        assert payload.call({"size": 1}).is_error  # closed: an error result, nothing sent
    # a caller's spill directory keeps its files
    with mcpsync.connect(HARD) as client:
        with McpToolkit(client, budget=ResultBudget(max_chars=10, spill=True, spill_dir=str(tmp_path))) as kit:
            out = kit.call("payload", {"size": 50})
        assert out.spill_path and Path(out.spill_path).exists()


def test_transforms_from_config_dict() -> None:
    parsed = parse_transforms(
        {"search": {"name": "find", "arguments": {"repo": {"hide": True, "value": "a/b"}, "q": {"description": "d"}}}},
        "mcpServers.gh",
    )
    assert parsed["search"].name == "find" and parsed["search"].arguments["repo"].value == "a/b"
    for bad in (
        {"search": {"name": "has space"}},
        {"search": {"arguments": {"repo": {"hide": True}}}},
        {"search": {"color": 1}},
        {"search": []},
        [],
    ):
        with pytest.raises(mcpsync.ConfigError):
            parse_transforms(bad, "mcpServers.gh")


def test_store_is_bounded() -> None:
    store = ResultStore(keep=2)
    handles = [store.put(mcpsync.CallToolResult.from_dict({"content": []})) for _ in range(3)]
    with pytest.raises(KeyError):
        store.get(handles[0])
    assert store.get(handles[2]) is not None


@settings(max_examples=fuzz_examples(500))
@given(st.text(max_size=3000), st.integers(min_value=1, max_value=500))
def test_budget_property(text: str, limit: int) -> None:
    result = mcpsync.CallToolResult.from_dict({"content": [{"type": "text", "text": text}]})
    out = render_result(result, ResultBudget(max_chars=limit), ResultStore())
    if len(text) <= limit:
        assert out.text == text and not out.truncated
    else:
        assert out.truncated and "[... truncated" in out.text
        shown = out.text[: out.text.index("\n[... truncated")]
        assert text.startswith(shown) and (len(out.text) <= limit or not shown)


JSON_SCHEMA = st.recursive(
    st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(
                ["string", "integer", "number", "boolean", "null", "object", "array", ["string", "null"]]
            ),
            "enum": st.lists(st.one_of(st.none(), st.integers(), st.text(max_size=3)), max_size=3),
            "default": st.integers(),
        },
    ),
    lambda inner: st.fixed_dictionaries(
        {},
        optional={
            "type": st.just("object"),
            "properties": st.dictionaries(st.text(max_size=6), inner, max_size=4),
            "required": st.lists(st.text(max_size=6), max_size=3),
            "items": inner,
            "anyOf": st.lists(inner, max_size=3),
            "$ref": st.sampled_from(["#", "#/$defs/a", "#/nowhere", "http://x"]),
            "$defs": st.fixed_dictionaries({"a": inner}),
        },
    ),
    max_leaves=12,
)


@settings(max_examples=fuzz_examples(300))
@given(JSON_SCHEMA)
def test_argument_model_never_raises(schema: Dict[str, Any]) -> None:
    pytest.importorskip("pydantic")
    from mcpsync.integrations.schema_model import argument_model

    model = argument_model(schema, "fuzz")
    model.model_json_schema()


def test_argument_model_hard_schemas() -> None:
    pytest.importorskip("pydantic")
    from mcpsync.integrations.schema_model import argument_model, dump_arguments

    from tests.integrations.hardserver import HARD as HARD_TOOLS

    by_name = {t["name"]: t["inputSchema"] for t in HARD_TOOLS}
    tree = argument_model(by_name["tree"], "tree")
    value = {"root": {"value": "a", "children": [{"value": "b", "children": [{"value": "c"}]}]}}
    assert dump_arguments(tree, value) == value
    either = argument_model(by_name["either"], "either")
    assert dump_arguments(either, {"lat": 1, "lon": 2}) == {"lat": 1.0, "lon": 2.0}
    shapes = argument_model(by_name["shapes"], "shapes")
    assert dump_arguments(shapes, {"box": {"w": 1}, "class": "k"}) == {"box": {"w": 1}, "class": "k"}
    with pytest.raises(ValueError):
        dump_arguments(shapes, {"box": {"w": 1}, "color": "blue"})
    assert json.dumps(argument_model(by_name["noprops"], "n").model_json_schema())


def test_transforms_in_a_configuration_file_reach_the_toolkit(tmp_path: Path) -> None:
    config = {
        "mcpServers": {
            "example": {
                "command": sys.executable,
                "args": ["-m", "mcpsync.example_server"],
                "tools": {
                    "echo": {
                        "name": "say",
                        "description": "Says the fixed text",
                        "arguments": {"message": {"hide": True, "value": "fixed"}},
                    },
                    "add": {"arguments": {"a": {"description": "the first addend"}}},
                },
            }
        }
    }
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(config))
    with mcpsync.Manager(str(path)) as manager:
        assert manager.config("example").tool_transforms["echo"].name == "say"
        kit = McpToolkit(manager)
        tools = {t.name: t for t in kit.tools()}
        assert "say" in tools and "example_echo" not in tools
        assert tools["say"].description == "Says the fixed text" and tools["say"].parameters["properties"] == {}
        assert tools["example_add"].parameters["properties"]["a"]["description"] == "the first addend"
        assert kit.call("say", {"message": "ignored"}).text == "fixed"
        # code's transforms win over the file's
        kit2 = McpToolkit(manager, transforms={"example_echo": ToolTransform(name="shout")})
        assert "shout" in {t.name for t in kit2.tools()}


@pytest.mark.parametrize(
    "tools",
    [
        {"echo": {"name": "bad name"}},
        {"echo": {"arguments": {"message": {"hide": True}}}},
        {"echo": {"unknown": 1}},
        {"echo": {"arguments": {"message": {"hide": "yes", "value": 1}}}},
    ],
)
def test_bad_transforms_in_a_configuration_file(tools: Dict[str, Any]) -> None:
    from mcpsync.manager.config import parse_config

    for config in (
        {"mcpServers": {"example": {"command": "x", "tools": tools}}},
        {"example": {"command": "x", "tools": tools}},
    ):
        try:
            configs = parse_config(config)
        except mcpsync.ConfigError as exc:  # the document is refused...
            assert "tools" in str(exc)
        else:  # ...or this one server fails with the reason, like any bad entry
            error = configs["example"].error
            assert isinstance(error, mcpsync.ConfigError) and "tools" in str(error)


class JunkSource:
    """A Client stand-in that lists hostile tool definitions and answers with hostile results (the boundary
    property below: nothing the server sends makes the toolkit raise)."""

    name = "junk"

    def __init__(self, tools: List[Dict[str, Any]], result: Any) -> None:
        self.tools = [mcpsync.Tool.from_dict(t) for t in tools]
        self.result = result
        self.sent: List[Dict[str, Any]] = []

    def list_tools(self) -> List[mcpsync.Tool]:
        return self.tools

    def call_tool(self, name: str, arguments: Dict[str, Any], timeout: Any = None) -> mcpsync.CallToolResult:
        self.sent.append(arguments)
        return mcpsync.CallToolResult.from_dict(
            self.result if isinstance(self.result, dict) else {"content": self.result}
        )


JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=10,
)
TOOL_DEF = st.fixed_dictionaries(
    {"name": st.text(min_size=1, max_size=70)},
    optional={"description": JSON_VALUE, "inputSchema": JSON_VALUE | JSON_SCHEMA, "_meta": JSON_VALUE},
)
CONTENT = st.lists(
    st.one_of(
        JSON_VALUE,
        st.fixed_dictionaries(
            {"type": st.sampled_from(["text", "image", "audio", "resource", "resource_link", "x"])},
            optional={
                "text": JSON_VALUE,
                "data": JSON_VALUE,
                "mimeType": JSON_VALUE,
                "resource": JSON_VALUE,
                "uri": JSON_VALUE,
            },
        ),
    ),
    max_size=4,
)


@settings(max_examples=fuzz_examples(300))
@given(
    st.lists(TOOL_DEF, max_size=4),
    st.one_of(CONTENT, st.dictionaries(st.text(max_size=20), JSON_VALUE)),
    st.dictionaries(st.text(max_size=6), JSON_VALUE, max_size=3),
    st.integers(min_value=1, max_value=200),
)
def test_hostile_tools_and_results_never_raise(
    tools: List[Dict[str, Any]], result: Any, arguments: Dict[str, Any], budget: int
) -> None:
    source = JunkSource(tools, result)
    kit = McpToolkit(source, max_result_chars=budget)  # type: ignore[arg-type]
    offered = kit.tools()
    names = [t.name for t in offered]
    assert len(names) == len(set(names))
    for tool in offered:
        assert isinstance(tool.parameters.get("properties"), dict)
        out = tool.call(arguments)
        assert isinstance(out.text, str)
    kit.close()


def test_a_rename_onto_a_taken_name_is_skipped(caplog: Any) -> None:
    source = JunkSource([{"name": "a"}, {"name": "b"}], {"content": []})
    kit = McpToolkit(source, transforms={"a": ToolTransform(name="b")})  # type: ignore[arg-type]
    assert [t.name for t in kit.tools()] == ["b"]


@settings(max_examples=fuzz_examples(1000))
@given(JSON_VALUE)
def test_transform_config_junk_gives_config_errors_only(data: Any) -> None:
    try:
        parsed = parse_transforms(data, "mcpServers.x")
    except mcpsync.ConfigError:
        return
    for transform in parsed.values():
        assert isinstance(transform, ToolTransform)


def test_per_tool_and_per_call_budgets() -> None:
    with mcpsync.connect(HARD) as client:
        kit = McpToolkit(client, max_result_chars=100, tool_budgets={"payload": ResultBudget(max_chars=300)})
        assert (
            len(kit.call("payload", {"size": 1000}).text) <= 300
            and kit.call("payload", {"size": 250}).text == ("0123456789abcdefghijklmnopqrstuvwxyz" * 10)[:250]
        )
        assert len(kit.call("echo", {"message": "x" * 500}).text) <= 100
        assert len(kit.call("payload", {"size": 1000}, budget=ResultBudget(max_tokens=10)).text) <= 40 + 120
        assert kit.call("payload", {"size": 1000}, budget=ResultBudget()).text.startswith("0123")  # unlimited
        assert len(kit.call("payload", {"size": 1000}, budget=ResultBudget()).text) == 1000
        kit.close()


def test_a_server_that_dies_mid_call_is_an_error_result_and_nothing_leaks() -> None:
    with mcpsync.connect(HARD) as client:
        kit = McpToolkit(client, timeout=30)
        out = kit.call("crash", {"code": 3})
        assert out.is_error and out.text.startswith("Error: ") and isinstance(out.error, mcpsync.MCPError)
        again = kit.call("echo", {"message": "still there?"})
        assert again.is_error  # the connection is gone: a readable error again, never an exception
        kit.close()


def test_the_toolkit_and_typed_results_need_no_pydantic(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "sys.modules['pydantic'] = None  # pydantic is optional: make importing it fail\n"
        "import dataclasses, mcpsync\n"
        "@dataclasses.dataclass\n"
        "class Sum:\n"
        "    sum: float\n"
        "with mcpsync.connect([sys.executable, '-m', 'mcpsync.example_server']) as client:\n"
        "    kit = mcpsync.integrations.McpToolkit(client, max_result_chars=50)\n"
        "    assert kit.call('payload', {'size': 100}).truncated\n"
        "    assert kit.call('echo', {'message': 'hi'}).text == 'hi'\n"
        "    assert client.call_tool('add', {'a': 1, 'b': 2}).parse(Sum) == Sum(3.0)\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stdout + out.stderr


def test_over_new_manager_closes_the_manager_when_the_build_fails(tmp_path: Path) -> None:
    """The frameworks' ``from_servers`` / ``from_config``: the new Manager goes to the build; a failing build
    closes it (its server process stops) and the error leaves unchanged."""
    from mcpsync.integrations.core import over_new_manager

    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"example": {"command": sys.executable,
                                                           "args": ["-m", "mcpsync.example_server"]}}}))
    built: List[Any] = []

    def build_ok(manager: Any) -> McpToolkit:
        built.append(manager)
        return McpToolkit(manager)

    kit = over_new_manager(str(path), build_ok)
    try:
        assert "example_echo" in {t.name for t in kit.tools()}
    finally:
        built[0].close()

    def build_fails(manager: Any) -> McpToolkit:
        built.append(manager)
        assert "example_echo" in {t.name for t in McpToolkit(manager).tools()}
        raise ValueError("bad option")

    with pytest.raises(ValueError, match="bad option"):
        over_new_manager(str(path), build_fails)
    with pytest.raises(mcpsync.MCPError):
        built[1].call_tool("example_echo", {"message": "after close"})
