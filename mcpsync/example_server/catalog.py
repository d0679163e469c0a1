"""Prompts, resources, resource templates and completions of the example server."""

from __future__ import annotations

import base64
import json
import re
from typing import Any, Dict, List, Optional

from .protocol import INVALID_PARAMS, RpcError, text_content

PROMPT_DEFS: List[Dict[str, Any]] = [
    {
        "name": "greet",
        "title": "Greeting",
        "description": "Greets someone.",
        "arguments": [
            {"name": "name", "description": "Who to greet", "required": True},
            {"name": "style", "description": "formal, casual or pirate", "required": False},
        ],
    },
    {
        "name": "summarize",
        "title": "Summarize",
        "description": "Asks for a summary of a text.",
        "arguments": [{"name": "text", "description": "The text to summarize", "required": True}],
    },
]

BLOB_BYTES = bytes(range(256))

#: uri -> (definition, contents-without-uri)
RESOURCES: Dict[str, Dict[str, Any]] = {
    "example://hello": {
        "def": {
            "uri": "example://hello",
            "name": "hello",
            "title": "Hello",
            "description": "A greeting.",
            "mimeType": "text/plain",
        },
        "contents": {"mimeType": "text/plain", "text": "Hello, world!"},
    },
    "example://data.json": {
        "def": {
            "uri": "example://data.json",
            "name": "data.json",
            "title": "Data",
            "description": "Some JSON.",
            "mimeType": "application/json",
        },
        "contents": {
            "mimeType": "application/json",
            "text": json.dumps({"answer": 42, "items": [1, 2, 3], "ok": True}, sort_keys=True),
        },
    },
    "example://readme.md": {
        "def": {"uri": "example://readme.md", "name": "readme.md", "title": "Readme", "mimeType": "text/markdown"},
        "contents": {"mimeType": "text/markdown", "text": "# Example\n\nThe mcpsync example server.\n"},
    },
    "example://blob.bin": {
        "def": {
            "uri": "example://blob.bin",
            "name": "blob.bin",
            "title": "Blob",
            "description": "256 bytes 0..255.",
            "mimeType": "application/octet-stream",
            "size": len(BLOB_BYTES),
        },
        "contents": {"mimeType": "application/octet-stream", "blob": base64.b64encode(BLOB_BYTES).decode("ascii")},
    },
}

TEMPLATE_DEFS: List[Dict[str, Any]] = [
    {
        "uriTemplate": "example://items/{id}",
        "name": "item",
        "title": "Item",
        "description": "An item by numeric id (1-150).",
        "mimeType": "application/json",
    },
]

_ITEM_RE = re.compile(r"^example://items/([^/]+)$")

NAMES = ["Ada", "Alan", "Alice", "Barbara", "Bob", "Carol", "Charles", "Dennis", "Edsger", "Grace"]
PIRATE_NAMES = ["Anne Bonny", "Blackbeard", "Calico Jack", "Mary Read"]
STYLES = ["casual", "formal", "pirate"]


def prompt_messages(name: str, args: Dict[str, Any], extra_prompts: Dict[str, Dict[str, Any]]) -> Dict[str, Any]:
    """The ``prompts/get`` result (without era decorations). Raises RpcError -32602."""
    if not isinstance(args, dict):
        raise RpcError(INVALID_PARAMS, "arguments must be an object")
    if name == "greet":
        who = args.get("name")
        if not isinstance(who, str) or not who:
            raise RpcError(INVALID_PARAMS, "Missing required argument: name")
        style = args.get("style") or "casual"
        text = "Please greet %s in a %s style." % (who, style)
        return {
            "description": "A %s greeting for %s" % (style, who),
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        }
    if name == "summarize":
        given = args.get("text")
        if not isinstance(given, str):
            raise RpcError(INVALID_PARAMS, "Missing required argument: text")
        return {
            "description": "Summarize a text",
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Summarize:\n\n" + given}},
                {"role": "assistant", "content": {"type": "text", "text": "Here is a summary:"}},
            ],
        }
    if name in extra_prompts:
        return {
            "description": "A prompt added at run time",
            "messages": [{"role": "user", "content": {"type": "text", "text": "Prompt %s" % name}}],
        }
    raise RpcError(INVALID_PARAMS, "Unknown prompt: %s" % name, {"name": name})


def read_resource(uri: str, extra: Dict[str, Dict[str, Any]]) -> Optional[List[Dict[str, Any]]]:
    """Contents for ``uri`` or None when unknown."""
    entry = RESOURCES.get(uri) or extra.get(uri)
    if entry is not None:
        contents = dict(entry["contents"])
        contents["uri"] = uri
        return [contents]
    match = _ITEM_RE.match(uri)
    if match and match.group(1).isdigit() and 1 <= int(match.group(1)) <= 150:
        item_id = int(match.group(1))
        return [
            {
                "uri": uri,
                "mimeType": "application/json",
                "text": json.dumps({"id": item_id, "name": "item %d" % item_id}, sort_keys=True),
            }
        ]
    return None


def resource_exists(uri: str, extra: Dict[str, Dict[str, Any]]) -> bool:
    return read_resource(uri, extra) is not None


def complete(ref: Any, argument: Any, context: Any, extra_prompts: Dict[str, Any]) -> Dict[str, Any]:
    """The ``completion/complete`` result. Raises RpcError -32602 for unknown references."""
    if not isinstance(ref, dict) or not isinstance(argument, dict):
        raise RpcError(INVALID_PARAMS, "ref and argument are required")
    arg_name = argument.get("name")
    value = str(argument.get("value") or "")
    ctx_args = context.get("arguments") if isinstance(context, dict) else None
    ctx_args = ctx_args if isinstance(ctx_args, dict) else {}
    candidates: List[str]
    if ref.get("type") == "ref/prompt":
        if ref.get("name") == "greet":
            if arg_name == "name":
                candidates = PIRATE_NAMES if ctx_args.get("style") == "pirate" else NAMES
            elif arg_name == "style":
                candidates = STYLES
            else:
                candidates = []
        elif ref.get("name") in ("summarize",) or ref.get("name") in extra_prompts:
            candidates = []
        else:
            raise RpcError(INVALID_PARAMS, "Unknown prompt: %s" % ref.get("name"))
    elif ref.get("type") == "ref/resource":
        if ref.get("uri") == "example://items/{id}" and arg_name == "id":
            candidates = [str(i) for i in range(1, 151)]
        elif ref.get("uri") == "example://items/{id}":
            candidates = []
        else:
            raise RpcError(INVALID_PARAMS, "Unknown resource template: %s" % ref.get("uri"))
    else:
        raise RpcError(INVALID_PARAMS, "Unknown reference type: %s" % ref.get("type"))
    matches = [c for c in candidates if c.lower().startswith(value.lower())]
    completion: Dict[str, Any] = {"values": matches[:100], "total": len(matches)}
    completion["hasMore"] = len(matches) > 100
    return {"completion": completion}


def dynamic_prompt_def(name: str) -> Dict[str, Any]:
    return {"name": name, "description": "A prompt added at run time.", "arguments": []}


def dynamic_resource(uri: str, text: str) -> Dict[str, Any]:
    return {
        "def": {"uri": uri, "name": uri.rsplit("/", 1)[-1] or uri, "mimeType": "text/plain"},
        "contents": {"mimeType": "text/plain", "text": text},
    }


__all__ = ["PROMPT_DEFS", "RESOURCES", "TEMPLATE_DEFS", "complete", "prompt_messages", "read_resource", "text_content"]
