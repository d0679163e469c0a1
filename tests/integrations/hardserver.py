"""The example server plus tools with schemas frameworks find hard, an image, a big result and an app-only
tool: ``python tests/integrations/hardserver.py`` (stdio). Each hard tool answers with its arguments as JSON."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Dict

from mcpsync.example_server import core, stdio, tools

NODE = {
    "type": "object",
    "properties": {"value": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
    "required": ["value"],
}
HARD = [
    {
        "name": "tree",
        "description": "Takes a recursive tree (recursive $ref).",
        "inputSchema": {
            "type": "object",
            "$defs": {"node": NODE},
            "properties": {"root": {"$ref": "#/$defs/node"}},
            "required": ["root"],
        },
    },
    {
        "name": "either",
        "description": "anyOf at the root: give a city or coordinates.",
        "inputSchema": {
            "type": "object",
            "anyOf": [
                {"properties": {"city": {"type": "string"}}, "required": ["city"]},
                {"properties": {"lat": {"type": "number"}, "lon": {"type": "number"}}, "required": ["lat", "lon"]},
            ],
        },
    },
    {"name": "noprops", "description": "A schema without properties.", "inputSchema": {"type": "object"}},
    {
        "name": "shapes",
        "description": "Enums, defaults, nullables and nested objects.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "color": {"type": "string", "enum": ["red", "green"], "default": "red"},
                "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "box": {
                    "type": "object",
                    "properties": {"w": {"type": "integer"}, "h": {"type": "integer", "default": 1}},
                    "required": ["w"],
                },
                "class": {"type": "string", "description": "a Python keyword as a name"},
            },
            "required": ["box"],
        },
    },
    {
        "name": "measure",
        "description": "Integers and numbers, top level and nested: echoes them as the server got them.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "count": {"type": "integer"},
                "ratio": {"type": "number"},
                "scale": {"type": "number"},
                "points": {"type": "array", "items": {"type": "number"}},
                "box": {"type": "object", "properties": {"w": {"type": "number"}}, "required": ["w"]},
            },
            "required": ["count", "ratio", "scale"],
        },
    },
    {
        "name": "break_listing",
        "description": "Adds a tool (list_changed) and answers every later tools/list with an error.",
        "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    },
    {"name": "image", "description": "Returns a 1x1 PNG and a caption.", "inputSchema": {"type": "object"}},
    {
        "name": "app_only",
        "description": "Only for the app.",
        "inputSchema": {"type": "object"},
        "_meta": {"ui": {"visibility": ["app"], "resourceUri": "ui://x/app.html"}},
    },
]
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def t_args(ctx: Any, args: Dict[str, Any]) -> Dict[str, Any]:
    return tools.tool_result("%s %s" % (ctx.tool_name, json.dumps(args, sort_keys=True)))


def t_image(ctx: Any, args: Dict[str, Any]) -> Dict[str, Any]:
    return {
        "content": [{"type": "text", "text": "a red pixel"}, {"type": "image", "data": PNG, "mimeType": "image/png"}]
    }


_init = core.ExampleServer.__init__


def _patched(self: Any, *a: Any, **k: Any) -> None:
    _init(self, *a, **k)
    self.extra_tools.update({t["name"]: t for t in HARD})


core.ExampleServer.__init__ = _patched  # type: ignore[method-assign]
_list = core.LEGACY_HANDLERS["tools/list"]
_BROKEN: Dict[str, bool] = {}


def _tools_list(self: Any, ctx: Any) -> Dict[str, Any]:
    if _BROKEN.get("on"):
        raise core.RpcError(-32603, "the tool list is broken on purpose")
    return _list(self, ctx)  # type: ignore[no-any-return]


def t_break_listing(ctx: Any, args: Dict[str, Any]) -> Dict[str, Any]:
    _BROKEN["on"] = True
    ctx.server.add_tool(str(args["name"]))
    return tools.tool_result("listing broken after adding %s" % args["name"])


core.LEGACY_HANDLERS["tools/list"] = core.MODERN_HANDLERS["tools/list"] = _tools_list
for _t in HARD:
    tools.TOOL_FUNCS[_t["name"]] = t_args
tools.TOOL_FUNCS["image"] = t_image
tools.TOOL_FUNCS["break_listing"] = t_break_listing

if __name__ == "__main__":
    code = stdio.main()
    sys.stdout.flush()
    os._exit(code)
