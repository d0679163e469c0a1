"""Provider adapters: schema conversion, OpenAI/Anthropic definitions, tool calls and results."""

from __future__ import annotations

import copy
import json

import pytest

from mcpsync.manager.adapters import (
    ServerTool,
    execute_tool_call,
    format_tool_result,
    inline_refs,
    object_schema,
    parse_tool_call,
    provider_schema,
    restore_arguments,
    strict_schema,
    to_anthropic_tools,
    to_openai_responses_tools,
    to_openai_tools,
    tool_definitions,
)
from mcpsync.errors import ConfigError, RequestTimeout
from mcpsync.types import CallToolResult, Tool

# A PagerDuty-shaped schema: nested $defs, refs inside refs, optional fields.
PAGERDUTY = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {"incident": {"$ref": "#/$defs/Incident", "description": "the incident"}},
    "required": ["incident"],
    "$defs": {
        "Incident": {
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "service": {"$ref": "#/$defs/ServiceRef"},
                "urgency": {"type": "string", "enum": ["high", "low"]},
                "assignments": {"type": "array", "items": {"$ref": "#/$defs/ServiceRef"}},
            },
            "required": ["title", "service"],
        },
        "ServiceRef": {
            "type": "object",
            "properties": {"id": {"type": "string"}, "type": {"type": "string", "const": "service_reference"}},
            "required": ["id", "type"],
        },
    },
}


def _refs(node):
    text = json.dumps(node)
    return text.count('"$ref"')


def test_object_schema_matches_convertMcpTool():
    assert object_schema({}) == {"type": "object", "properties": {}, "additionalProperties": False}
    assert object_schema(None) == {"type": "object", "properties": {}, "additionalProperties": False}
    src = {"type": "string", "properties": None, "required": ["a"], "description": "d"}
    out = object_schema(src)
    assert out == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
        "required": ["a"],
        "description": "d",
    }
    assert src["type"] == "string"  # not modified


def test_refs_are_inlined_and_the_input_left_alone():
    before = copy.deepcopy(PAGERDUTY)
    out = inline_refs(PAGERDUTY)
    assert PAGERDUTY == before
    assert _refs(out) == 0 and "$defs" not in out
    incident = out["properties"]["incident"]
    assert incident["description"] == "the incident"  # the sibling keyword survives
    assert incident["properties"]["service"]["properties"]["type"]["const"] == "service_reference"
    assert incident["properties"]["assignments"]["items"]["required"] == ["id", "type"]


def test_recursive_refs_keep_their_defs():
    tree = {
        "type": "object",
        "properties": {"root": {"$ref": "#/definitions/Node"}},
        "definitions": {
            "Node": {
                "type": "object",
                "properties": {"children": {"type": "array", "items": {"$ref": "#/definitions/Node"}}},
            }
        },
    }
    out = inline_refs(tree)
    assert out["properties"]["root"]["properties"]["children"]["items"] == {"$ref": "#/definitions/Node"}
    assert "Node" in out["definitions"]


def test_a_property_named_ref_is_not_a_reference():
    schema = {"type": "object", "properties": {"$ref": {"type": "string"}}, "default": {"$ref": "#/x"}}
    assert inline_refs(schema) == schema


def test_top_level_combinators_are_merged_for_providers():
    schema = {
        "oneOf": [
            {
                "type": "object",
                "properties": {"id": {"type": "string"}, "q": {"type": "string"}},
                "required": ["id", "q"],
            },
            {"type": "object", "properties": {"url": {"type": "string"}, "q": {"type": "string"}}, "required": ["q"]},
        ],
        "allOf": [{"properties": {"limit": {"type": "integer"}}, "required": ["limit"]}],
    }
    out = provider_schema(schema)
    assert set(out["properties"]) == {"id", "q", "url", "limit"}
    assert out["required"] == ["limit", "q"]
    for kw in ("oneOf", "anyOf", "allOf"):
        assert kw not in out
    assert out["type"] == "object" and out["additionalProperties"] is False


def test_strict_mode_makes_optional_properties_nullable_and_required():
    out = strict_schema(provider_schema(PAGERDUTY))
    incident = out["properties"]["incident"]
    assert incident["required"] == ["title", "service", "urgency", "assignments"]
    assert incident["properties"]["urgency"]["type"] == ["string", "null"]
    assert incident["properties"]["urgency"]["enum"] == ["high", "low", None]
    assert incident["additionalProperties"] is False
    assert "$schema" not in out


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"tags": {"type": "object", "additionalProperties": {"type": "string"}}}},
        {"type": "object", "properties": {"anything": {}}},
        {"type": "object", "properties": {"a": {"type": "array"}}},
        {"type": "object", "properties": {"a": {"allOf": [{"type": "string"}]}}},
    ],
)
def test_strict_falls_back_when_impossible(schema, caplog):
    assert strict_schema(provider_schema(schema)) is None
    tool = Tool.from_dict({"name": "t", "inputSchema": schema})
    [definition] = to_openai_tools([tool], strict=True)
    assert definition["function"]["strict"] is False
    assert "cannot be made strict" in caplog.text


def test_definition_shapes():
    tool = Tool.from_dict(
        {
            "name": "srv_add",
            "description": "Add",
            "inputSchema": {
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"],
            },
        }
    )
    [chat] = to_openai_tools([tool], strict=True)
    assert chat["type"] == "function" and chat["function"]["name"] == "srv_add"
    assert chat["function"]["strict"] is True and chat["function"]["parameters"]["required"] == ["a", "b"]
    [resp] = to_openai_responses_tools([tool])
    assert resp["type"] == "function" and resp["name"] == "srv_add" and resp["strict"] is False
    assert set(resp) == {"type", "name", "description", "parameters", "strict"}
    [anth] = to_anthropic_tools([("other_name", tool)])
    assert anth == {
        "name": "other_name",
        "description": "Add",
        "input_schema": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
            "additionalProperties": False,
        },
    }
    st = ServerTool(name="s_add", server="s", tool=tool, input_schema=object_schema(tool.input_schema))
    assert tool_definitions([st], "claude")[0]["name"] == "s_add"
    assert st.original_name == "srv_add" and st.description == "Add"
    with pytest.raises(ConfigError, match="unknown provider"):
        tool_definitions([tool], "gemini-ultra")


def test_every_definition_passes_the_provider_shape_rules():
    schemas = [
        PAGERDUTY,
        {},
        {"type": "string"},
        {"anyOf": [{"properties": {"a": {"type": "string"}}}]},
        {"type": "object", "properties": {"x": {"$ref": "#/$defs/X"}}, "$defs": {"X": {"type": "integer"}}},
    ]
    tools = [Tool.from_dict({"name": "t%d" % i, "inputSchema": s}) for i, s in enumerate(schemas)]
    for provider in ("openai", "openai-responses", "anthropic"):
        for d in tool_definitions(tools, provider, strict=True):
            params = d.get("input_schema") or d.get("parameters") or d["function"]["parameters"]
            assert params["type"] == "object" and isinstance(params["properties"], dict)
            for kw in ("anyOf", "oneOf", "allOf", "$ref", "$schema"):
                assert kw not in params


def test_restore_arguments_drops_strict_nulls_only():
    args = {
        "incident": {
            "title": "t",
            "service": {"id": "1", "type": "service_reference"},
            "urgency": None,
            "assignments": None,
        }
    }
    out = restore_arguments(args, PAGERDUTY)
    assert out == {"incident": {"title": "t", "service": {"id": "1", "type": "service_reference"}}}
    nullable = {"type": "object", "properties": {"a": {"type": ["string", "null"]}, "b": {}}}
    assert restore_arguments({"a": None, "b": None, "c": None}, nullable) == {"a": None, "b": None, "c": None}


def test_parse_tool_calls_of_each_provider():
    class Fn:
        name = "srv_add"
        arguments = '{"a": 1}'

    class SdkCall:  # the shape of openai's ChatCompletionMessageToolCall
        id = "call_9"
        type = "function"
        function = Fn()

    parsed = parse_tool_call(SdkCall())
    assert (parsed.provider, parsed.call_id, parsed.name, parsed.arguments) == ("openai", "call_9", "srv_add", {"a": 1})
    parsed = parse_tool_call({"type": "function_call", "call_id": "c", "name": "n", "arguments": ""})
    assert parsed.provider == "openai-responses" and parsed.arguments == {}
    parsed = parse_tool_call({"type": "tool_use", "id": "toolu_1", "name": "n", "input": {"x": [1]}})
    assert parsed.provider == "anthropic" and parsed.arguments == {"x": [1]}
    assert "not valid JSON" in parse_tool_call({"function": {"name": "n", "arguments": "{"}, "id": "x"}).error
    assert "JSON object" in parse_tool_call({"function": {"name": "n", "arguments": "[1]"}, "id": "x"}).error
    with pytest.raises(ConfigError):
        parse_tool_call({"something": "else"})


RESULT = CallToolResult.from_dict(
    {
        "content": [
            {"type": "text", "text": "two lines"},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "embedded"}},
            {"type": "resource_link", "uri": "file:///b", "name": "b"},
        ]
    }
)


def test_results_in_each_provider_shape():
    chat = format_tool_result("openai", "c1", RESULT)
    assert chat["role"] == "tool" and chat["tool_call_id"] == "c1"
    assert chat["content"].startswith("two lines\n[image image/png") and "embedded" in chat["content"]
    resp = format_tool_result("responses", "c1", RESULT)
    assert resp["type"] == "function_call_output" and resp["call_id"] == "c1"
    assert resp["output"][1] == {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}
    anth = format_tool_result("anthropic", "toolu", RESULT)
    assert anth["tool_use_id"] == "toolu" and "is_error" not in anth
    assert anth["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
    }
    text_only = CallToolResult.from_dict({"content": [{"type": "text", "text": "ok"}]})
    assert format_tool_result("openai-responses", "c", text_only)["output"] == "ok"
    structured = CallToolResult.from_dict({"structuredContent": {"sum": 3}})
    assert json.loads(format_tool_result("openai", "c", structured)["content"]) == {"sum": 3}
    assert "content" not in format_tool_result("anthropic", "c", CallToolResult.from_dict({}))


def test_errors_are_flagged():
    failed = CallToolResult.from_dict({"content": [{"type": "text", "text": "division by zero"}], "isError": True})
    assert format_tool_result("anthropic", "t", failed)["is_error"] is True
    assert format_tool_result("openai", "c", failed)["content"] == "Error: division by zero"
    assert format_tool_result("openai-responses", "c", failed)["output"] == "Error: division by zero"
    exc = format_tool_result("anthropic", "t", RequestTimeout(timeout=3))
    assert exc["is_error"] is True and "timed out" in exc["content"][0]["text"]


def test_execute_tool_call_routes_and_converts_failures():
    calls = []

    def call(name, arguments):
        calls.append((name, arguments))
        if name == "slow":
            raise RequestTimeout(timeout=1)
        return CallToolResult.from_dict({"content": [{"type": "text", "text": "ok %s" % arguments.get("a")}]})

    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}}
    out = execute_tool_call(
        {"id": "1", "function": {"name": "t", "arguments": '{"a": 2, "b": null}'}}, call, schema_for=lambda name: schema
    )
    assert out == {"role": "tool", "tool_call_id": "1", "content": "ok 2"}
    assert calls[-1] == ("t", {"a": 2})
    out = execute_tool_call({"type": "tool_use", "id": "2", "name": "slow", "input": {}}, call)
    assert out["is_error"] is True
    out = execute_tool_call({"type": "function_call", "call_id": "3", "name": "t", "arguments": "{"}, call)
    assert out["output"].startswith("Error: the arguments are not valid JSON")
    with pytest.raises(RequestTimeout):
        execute_tool_call({"type": "tool_use", "id": "2", "name": "slow", "input": {}}, call, raise_errors=True)
