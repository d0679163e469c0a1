"""MCP Apps, part 1: the ``io.modelcontextprotocol/ui`` capability (both eras) and tool visibility everywhere a
model sees tools, against the example server's counter App (``--apps``)."""

from __future__ import annotations

import json
from typing import Any, Dict

import pytest

from mcpsync import Client, ToolDenied
from mcpsync.manager import Manager
from mcpsync.manager.adapters import definitions_by_name, to_anthropic_tools, to_openai_tools
from mcpsync.types import Tool

from tests.conftest import server_cmd
from mcpsync.client import ClientOptions

UI = "io.modelcontextprotocol/ui"


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_apps_capability_is_declared_in_both_eras(era: str) -> None:
    with Client(server_cmd("--apps"), protocol=era, options=ClientOptions(apps=True)) as client:
        seen = client.call_tool("app_host_capability").structured_content
        assert seen == {"apps": True, "mimeTypes": ["text/html;profile=mcp-app"]}
    with Client(server_cmd("--apps"), protocol=era) as client:
        assert client.call_tool("app_host_capability").structured_content == {"apps": False, "mimeTypes": None}


def test_apps_capability_sits_beside_tasks_in_the_modern_envelope() -> None:
    client = Client(server_cmd(), protocol="modern", options=ClientOptions(apps=True))
    caps = client._capabilities(True)
    assert caps["extensions"][UI] == {"mimeTypes": ["text/html;profile=mcp-app"]}
    assert "io.modelcontextprotocol/tasks" in caps["extensions"]
    assert client._capabilities(False)["extensions"] == {UI: {"mimeTypes": ["text/html;profile=mcp-app"]}}


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_list_tools_audience(era: str) -> None:
    with Client(server_cmd("--apps"), protocol=era, options=ClientOptions(apps=True)) as client:
        every = {t.name for t in client.list_tools()}
        model = {t.name for t in client.list_tools(audience="model")}
        app = {t.name for t in client.list_tools(audience="app")}
        assert {"show_counter", "counter_increment", "model_only_fact", "echo"} <= every
        assert "counter_increment" not in model and {"show_counter", "model_only_fact", "echo"} <= model
        assert "model_only_fact" not in app and {"show_counter", "counter_increment", "echo"} <= app
        legacy = client.get_tool("show_legacy_link")
        assert legacy is not None and legacy.ui_resource_uri == "ui://example/counter"
        with pytest.raises(ValueError):
            client.list_tools(audience="robot")


def _tool(name: str, visibility: Any) -> Tool:
    meta = {"ui": {"visibility": visibility}}
    return Tool.from_dict({"name": name, "inputSchema": {"type": "object"}, "_meta": meta})


def test_adapters_never_show_a_model_an_app_only_tool() -> None:
    tools = [_tool("both", ["model", "app"]), _tool("app_only", ["app"]), _tool("model_only", ["model"])]
    assert set(definitions_by_name(to_openai_tools(tools))) == {"both", "model_only"}
    assert set(definitions_by_name(to_anthropic_tools(tools))) == {"both", "model_only"}
    assert set(definitions_by_name(to_openai_tools([("x_app", tools[1]), ("x_both", tools[0])]))) == {"x_both"}
    # malformed visibility means the default (both)
    assert set(definitions_by_name(to_openai_tools([_tool("junk", "app")]))) == {"junk"}


def test_manager_tools_for_and_call_from_tool_call_honour_visibility() -> None:
    with Manager({"ex": {"command": server_cmd("--apps")}}, apps=True) as mgr:
        assert mgr.call_tool("ex_app_host_capability").structured_content["apps"] is True
        every = {t.name for t in mgr.tools()}
        assert "ex_counter_increment" in every
        assert "ex_counter_increment" not in {t.name for t in mgr.tools(audience="model")}
        assert "ex_model_only_fact" not in {t.name for t in mgr.tools(audience="app")}
        for provider in ("openai", "openai-responses", "anthropic"):
            names = set(definitions_by_name(mgr.tools_for(provider)))
            assert "ex_show_counter" in names and "ex_counter_increment" not in names, provider

        def call(name: str) -> Dict[str, Any]:
            args = json.dumps({"count": 1})
            call = {"id": "c1", "type": "function", "function": {"name": name, "arguments": args}}
            return mgr.call_from_tool_call(call)

        refused = call("ex_counter_increment")
        assert refused["role"] == "tool" and "app-only" in refused["content"]
        with pytest.raises(ToolDenied) as info:
            mgr.call_from_tool_call(
                {"id": "c2", "type": "function", "function": {"name": "ex_counter_increment", "arguments": "{}"}},
                raise_errors=True,
            )
        assert info.value.by == "visibility" and info.value.server == "ex"
        allowed = call("ex_model_only_fact")
        assert "three hearts" in allowed["content"]


def test_manager_config_option_declares_apps_per_server() -> None:
    config = {
        "on": {"command": server_cmd("--apps"), "options": {"apps": True}},
        "off": {"command": server_cmd("--apps")},
    }
    with Manager(config) as mgr:
        assert mgr.call_tool("on_app_host_capability").structured_content["apps"] is True
        assert mgr.call_tool("off_app_host_capability").structured_content["apps"] is False
