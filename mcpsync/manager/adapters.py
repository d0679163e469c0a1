"""MCP tools as LLM-provider tool definitions, and provider tool calls executed against MCP.

Three targets, named by a string:

* ``"openai"``: Chat Completions function tools
  (``{"type": "function", "function": {"name", "description", "parameters", "strict"}}``);
* ``"openai-responses"`` (alias ``"responses"``): Responses API function tools
  (``{"type": "function", "name", "description", "parameters", "strict"}``);
* ``"anthropic"``: Messages API tools (``{"name", "description", "input_schema"}``).

Every input schema is first made an object schema (:func:`object_schema`, the
same rule as OpenCode's ``convertMcpTool``): ``type: object``, ``properties``
defaulting to ``{}``, ``additionalProperties: false``. Local ``$ref`` pointers
(``#/$defs/...``, ``#/definitions/...``) are inlined by default (recursive ones
are kept with the ``$defs`` they need); top-level ``anyOf``/``oneOf``/``allOf``
(rejected by both providers) are merged into the root's properties.

OpenAI strict mode (``strict=True``) makes every property required and optional
ones nullable; a schema that cannot be expressed strictly (open maps, untyped
values, ``allOf``/``not``/``if``) falls back to ``strict: false`` for that tool
with a warning in the log. When a call comes back, ``null`` values the original
schema does not allow are dropped again (:func:`restore_arguments`).

Executing a call: :func:`parse_tool_call` reads a provider's tool call (a dict
or the provider SDK's object), :func:`format_tool_result` shapes a
:class:`~mcpsync.CallToolResult` (or an exception) as that provider's tool
result: text, images (where the provider accepts them), and errors flagged
(``is_error`` for Anthropic, an ``Error:`` prefix for OpenAI, which has no flag).

All functions are pure and thread-safe; none blocks except
:func:`execute_tool_call`, which blocks for as long as the ``call`` it is given.
"""

from __future__ import annotations

import copy
import json
import logging
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from .._pointer import resolve_pointer
from ..errors import ConfigError, MCPError
from ..types import (
    JSON,
    AudioContent,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    Tool,
)

__all__ = [
    "PROVIDERS",
    "ParsedToolCall",
    "ServerTool",
    "execute_tool_call",
    "format_tool_result",
    "inline_refs",
    "object_schema",
    "parse_tool_call",
    "provider_schema",
    "restore_arguments",
    "strict_schema",
    "to_anthropic_tools",
    "to_openai_responses_tools",
    "to_openai_tools",
    "tool_definitions",
]

log = logging.getLogger(__name__)

PROVIDERS = ("openai", "openai-responses", "anthropic")
_ALIASES = MappingProxyType(
    {"openai-chat": "openai", "chat": "openai", "responses": "openai-responses", "claude": "anthropic"}
)

# Keywords whose value is one subschema / a list of subschemas / a map of name -> subschema.
_SCHEMA_KW = (
    "items",
    "additionalProperties",
    "not",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
)
_LIST_KW = ("allOf", "anyOf", "oneOf", "prefixItems")
_MAP_KW = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_ANNOTATIONS = ("$schema", "$id", "$comment", "default", "examples", "deprecated", "readOnly", "writeOnly")
_NOT_STRICT_KW = (
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "patternProperties",
    "dependentRequired",
    "dependentSchemas",
    "unevaluatedProperties",
    "propertyNames",
    "contains",
    "prefixItems",
)


@dataclass
class ServerTool:
    """One tool of one server, as the manager exposes it.

    Attributes:
        name: the exposed, provider-safe name (``{server}_{tool}``, see :mod:`mcpsync.manager.naming`).
        server: the server's configured name.
        tool: the :class:`~mcpsync.Tool` exactly as the server listed it (``tool.name`` is the original name).
        input_schema: the converted object schema (:func:`object_schema`).
    """

    name: str
    server: str
    tool: Tool
    input_schema: JSON = field(default_factory=dict)

    @property
    def description(self) -> str:
        """The tool's description ("" when it has none)."""
        return self.tool.description or ""

    @property
    def original_name(self) -> str:
        """The tool's name on its server."""
        return self.tool.name


ToolLike = Union[ServerTool, Tool, Tuple[str, Tool]]


# ---------------------------------------------------------------------------
# Schemas
# ---------------------------------------------------------------------------


def object_schema(input_schema: Any) -> JSON:
    """The tool input schema forced to an object: ``type: object``, ``properties`` (default ``{}``),
    ``additionalProperties: false``; every other keyword is kept. The input is not modified."""
    schema = dict(input_schema) if isinstance(input_schema, dict) else {}
    props = schema.get("properties")
    schema["type"] = "object"
    schema["properties"] = dict(props) if isinstance(props, dict) else {}
    schema["additionalProperties"] = False
    return schema


def _walk(node: Any, fn: Callable[[Any], Any]) -> Any:
    """Apply ``fn`` to every direct subschema of ``node`` (a schema dict); returns a new dict."""
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key in _SCHEMA_KW and isinstance(value, (dict, bool)):
            out[key] = fn(value)
        elif key == "items" and isinstance(value, list):
            out[key] = [fn(v) for v in value]
        elif key in _LIST_KW and isinstance(value, list):
            out[key] = [fn(v) for v in value]
        elif key in _MAP_KW and isinstance(value, dict):
            out[key] = {k: fn(v) for k, v in value.items()}
        else:
            out[key] = value
    return out


def inline_refs(schema: Any, *, max_depth: int = 32) -> Any:
    """Replace local ``$ref`` pointers with the schema they point at.

    Sibling keywords of a ``$ref`` (``description``...) are kept and win. A
    recursive reference (or one nested deeper than ``max_depth``) is left as a
    ``$ref``, and the root keeps its ``$defs``/``definitions`` so it still
    resolves; otherwise those containers are dropped. Unresolvable or remote
    references are left untouched. The input is not modified.
    """
    if not isinstance(schema, dict):
        return schema
    root = schema
    kept_refs: List[str] = []

    def visit(node: Any, stack: Tuple[str, ...]) -> Any:
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#"):
            target = resolve_pointer(root, ref)
            if target is None:
                return _walk(node, lambda n: visit(n, stack))
            if ref in stack or len(stack) >= max_depth:
                kept_refs.append(ref)
                return _walk(node, lambda n: visit(n, stack))
            resolved = visit(target, stack + (ref,))
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            if not isinstance(resolved, dict):
                return resolved if not siblings else dict(siblings)
            merged = dict(resolved)
            merged.update(_walk(siblings, lambda n: visit(n, stack)))
            return merged
        return _walk(node, lambda n: visit(n, stack))

    body = {k: v for k, v in root.items() if k not in ("$defs", "definitions")}
    out = visit(body, ())
    if kept_refs:
        for container in ("$defs", "definitions"):
            if isinstance(root.get(container), dict):
                out[container] = copy.deepcopy(root[container])
    return out


def _merge_top_level_combinators(schema: JSON) -> JSON:
    """Fold a root ``allOf``/``anyOf``/``oneOf`` into the root's properties (providers reject them at the top).

    ``allOf`` branches add their properties and required names; ``anyOf``/``oneOf``
    branches add their properties, and only names required by every branch stay
    required. ``not``/``if``/``then``/``else``/``enum``/``const`` at the root are dropped.
    """
    out = dict(schema)
    props: JSON = dict(out.get("properties") or {})
    required: List[str] = [r for r in out.get("required") or [] if isinstance(r, str)]
    changed = False
    for sub in out.pop("allOf", None) or []:
        changed = True
        if isinstance(sub, dict):
            for k, v in (sub.get("properties") or {}).items():
                props.setdefault(k, v)
            required.extend(r for r in sub.get("required") or [] if isinstance(r, str))
    for kw in ("anyOf", "oneOf"):
        branches = out.pop(kw, None)
        if not isinstance(branches, list):
            continue
        changed = True
        dict_branches = [b for b in branches if isinstance(b, dict)]
        for b in dict_branches:
            for k, v in (b.get("properties") or {}).items():
                props.setdefault(k, v)
        if dict_branches:
            common = set(dict_branches[0].get("required") or [])
            for b in dict_branches[1:]:
                common &= set(b.get("required") or [])
            required.extend(sorted(r for r in common if isinstance(r, str)))
    for kw in ("not", "if", "then", "else", "enum", "const"):
        if kw in out:
            changed = True
            out.pop(kw)
    if changed:
        out["properties"] = props
        seen: List[str] = []
        for r in required:
            if r not in seen:
                seen.append(r)
        if seen:
            out["required"] = seen
        else:
            out.pop("required", None)
    return out


class _NotStrict(Exception):
    pass


def _types_of(node: JSON) -> List[str]:
    t = node.get("type")
    if isinstance(t, str):
        return [t]
    if isinstance(t, list):
        return [x for x in t if isinstance(x, str)]
    return []


def _nullable(node: JSON) -> JSON:
    node = dict(node)
    types = _types_of(node)
    if types:
        if "null" not in types:
            node["type"] = types + ["null"]
            if isinstance(node.get("enum"), list) and None not in node["enum"]:
                node["enum"] = node["enum"] + [None]
        return node
    if isinstance(node.get("anyOf"), list):
        if not any(isinstance(b, dict) and _types_of(b) == ["null"] for b in node["anyOf"]):
            node["anyOf"] = node["anyOf"] + [{"type": "null"}]
        return node
    return {"anyOf": [node, {"type": "null"}]}


def _strictify(schema: Any, path: str) -> JSON:
    if not isinstance(schema, dict):
        raise _NotStrict("%s: boolean schema" % path)
    for kw in _NOT_STRICT_KW:
        if kw in schema:
            raise _NotStrict("%s: %s is not supported in strict mode" % (path, kw))
    node: JSON = {k: v for k, v in schema.items() if k not in _ANNOTATIONS}
    if "oneOf" in node:
        node["anyOf"] = node.pop("oneOf")
    if isinstance(node.get("anyOf"), list):
        node["anyOf"] = [_strictify(b, "%s/anyOf/%d" % (path, i)) for i, b in enumerate(node["anyOf"])]
    types = _types_of(node)
    if not types and "anyOf" not in node and "$ref" not in node and "enum" not in node and "const" not in node:
        raise _NotStrict("%s: a value without a type" % path)
    if "object" in types or "properties" in node:
        extra = node.get("additionalProperties")
        if extra not in (None, False):
            raise _NotStrict("%s: open object (additionalProperties)" % path)
        props = node.get("properties") or {}
        required = set(node.get("required") or [])
        new_props = {}
        for name, sub in props.items():
            converted = _strictify(sub, "%s/properties/%s" % (path, name))
            new_props[name] = converted if name in required else _nullable(converted)
        node["properties"] = new_props
        node["required"] = list(new_props)
        node["additionalProperties"] = False
    if "array" in types:
        items = node.get("items")
        if not isinstance(items, dict):
            raise _NotStrict("%s: array without an items schema" % path)
        node["items"] = _strictify(items, path + "/items")
    for container in ("$defs", "definitions"):
        if isinstance(node.get(container), dict):
            node[container] = {k: _strictify(v, "%s/%s/%s" % (path, container, k)) for k, v in node[container].items()}
    return node


def strict_schema(schema: JSON) -> Optional[JSON]:
    """The OpenAI strict-mode form of an object schema, or None when it cannot be expressed strictly."""
    try:
        return _strictify(schema, "#")
    except _NotStrict as exc:
        log.debug("schema not strict-compatible: %s", exc)
        return None


def provider_schema(input_schema: Any, *, inline: bool = True) -> JSON:
    """The input schema as every provider accepts it: :func:`object_schema`, refs inlined
    (when ``inline``), root combinators merged, ``$schema``/``$id`` dropped."""
    schema = object_schema(input_schema)
    if inline:
        schema = inline_refs(schema)
    schema = _merge_top_level_combinators(schema)
    schema.pop("$schema", None)
    schema.pop("$id", None)
    return object_schema(schema)


def _normalize_provider(provider: str) -> str:
    p = (provider or "").strip().lower()
    p = _ALIASES.get(p, p)
    if p not in PROVIDERS:
        raise ConfigError("unknown provider %r; expected one of %s" % (provider, ", ".join(PROVIDERS)))
    return p


def _as_triples(tools: Iterable[ToolLike]) -> List[Tuple[str, str, JSON]]:
    out = []
    for item in tools:
        original = item.tool if isinstance(item, ServerTool) else item if isinstance(item, Tool) else item[1]
        if not original.visible_to_model:  # MCP Apps: a host MUST NOT show a model an app-only tool
            log.debug("tool %s is app-only (MCP Apps visibility); left out of the model's tools", original.name)
            continue
        if isinstance(item, ServerTool):
            out.append((item.name, item.description, item.input_schema or item.tool.input_schema))
        elif isinstance(item, Tool):
            out.append((item.name, item.description or "", item.input_schema))
        else:
            name, tool = item
            out.append((name, tool.description or "", tool.input_schema))
    return out


def tool_definitions(
    tools: Iterable[ToolLike], provider: str, *, strict: bool = False, inline: bool = True
) -> List[JSON]:
    """Tool definitions ready to send to ``provider`` (see the module docstring for the shapes).

    ``tools`` are :class:`ServerTool` (the manager's), plain :class:`~mcpsync.Tool`
    (used under their own names, which must already be provider-safe) or
    ``(name, Tool)`` pairs. ``strict`` applies to the OpenAI targets only. MCP Apps app-only tools
    (``_meta.ui.visibility`` without ``"model"``) are left out: a model must never see them.
    """
    target = _normalize_provider(provider)
    defs: List[JSON] = []
    for name, description, raw_schema in _as_triples(tools):
        schema = provider_schema(raw_schema, inline=inline)
        if target == "anthropic":
            defs.append({"name": name, "description": description, "input_schema": schema})
            continue
        is_strict = False
        if strict:
            converted = strict_schema(schema)
            if converted is None:
                log.warning("tool %s: schema cannot be made strict; sending it with strict=false", name)
            else:
                schema, is_strict = converted, True
        if target == "openai":
            defs.append(
                {
                    "type": "function",
                    "function": {"name": name, "description": description, "parameters": schema, "strict": is_strict},
                }
            )
        else:
            defs.append(
                {
                    "type": "function",
                    "name": name,
                    "description": description,
                    "parameters": schema,
                    "strict": is_strict,
                }
            )
    return defs


def to_openai_tools(tools: Iterable[ToolLike], *, strict: bool = False, inline: bool = True) -> List[JSON]:
    """OpenAI Chat Completions function tools; see :func:`tool_definitions`."""
    return tool_definitions(tools, "openai", strict=strict, inline=inline)


def to_openai_responses_tools(tools: Iterable[ToolLike], *, strict: bool = False, inline: bool = True) -> List[JSON]:
    """OpenAI Responses API function tools; see :func:`tool_definitions`."""
    return tool_definitions(tools, "openai-responses", strict=strict, inline=inline)


def to_anthropic_tools(tools: Iterable[ToolLike], *, inline: bool = True) -> List[JSON]:
    """Anthropic Messages API tools; see :func:`tool_definitions`."""
    return tool_definitions(tools, "anthropic", inline=inline)


def _allows_null(schema: Any, root: JSON, depth: int = 0) -> bool:
    if not isinstance(schema, dict) or depth > 16:
        return True
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = resolve_pointer(root, ref)
        return _allows_null(target, root, depth + 1) if target is not None else True
    types = _types_of(schema)
    if "null" in types:
        return True
    for kw in ("anyOf", "oneOf"):
        if isinstance(schema.get(kw), list):
            return any(_allows_null(b, root, depth + 1) for b in schema[kw])
    if isinstance(schema.get("enum"), list):
        return None in schema["enum"]
    if "const" in schema:
        return schema["const"] is None
    return not types


def restore_arguments(arguments: Any, input_schema: Any) -> Any:
    """Drop ``null`` values the original schema does not allow (strict mode sends them for omitted options).

    Walks nested objects through ``properties``; anything else is returned as is.
    """
    root = input_schema if isinstance(input_schema, dict) else {}

    def fix(value: Any, schema: Any, depth: int) -> Any:
        if not isinstance(value, dict) or not isinstance(schema, dict) or depth > 16:
            return value
        ref = schema.get("$ref")
        if isinstance(ref, str):
            target = resolve_pointer(root, ref)
            if isinstance(target, dict):
                schema = target
        props = schema.get("properties")
        if not isinstance(props, dict):
            return value
        out = {}
        for key, item in value.items():
            sub = props.get(key)
            if item is None and sub is not None and not _allows_null(sub, root):
                continue
            out[key] = fix(item, sub, depth + 1)
        return out

    return fix(arguments, root, 0)


# ---------------------------------------------------------------------------
# Tool calls and results
# ---------------------------------------------------------------------------


@dataclass
class ParsedToolCall:
    """A provider's tool call, read.

    Attributes:
        provider: ``openai``, ``openai-responses`` or ``anthropic``.
        call_id: the id to answer with (``tool_call_id`` / ``call_id`` / ``tool_use_id``).
        name: the tool name the model used.
        arguments: the decoded arguments (a dict).
        error: set when the arguments could not be decoded (then ``arguments`` is ``{}``).
    """

    provider: str
    call_id: str
    name: str
    arguments: JSON = field(default_factory=dict)
    error: Optional[str] = None


def _get(obj: Any, key: str) -> Any:
    if isinstance(obj, dict):
        return obj.get(key)
    return getattr(obj, key, None)


def _detect(tool_call: Any) -> str:
    if _get(tool_call, "function") is not None:
        return "openai"
    kind = _get(tool_call, "type")
    if kind == "function_call" or _get(tool_call, "call_id") is not None:
        return "openai-responses"
    if kind == "tool_use" or _get(tool_call, "input") is not None:
        return "anthropic"
    raise ConfigError(
        "not a recognised tool call (expected an OpenAI tool call, a Responses function_call "
        "or an Anthropic tool_use block)"
    )


def parse_tool_call(tool_call: Any, provider: Optional[str] = None) -> ParsedToolCall:
    """Read a tool call from any supported provider (a dict or an SDK object); the provider is detected
    from its shape unless given. Raises :class:`~mcpsync.ConfigError` for something that is no tool call."""
    target = _normalize_provider(provider) if provider else _detect(tool_call)
    if target == "openai":
        fn = _get(tool_call, "function")
        name, raw, call_id = _get(fn, "name"), _get(fn, "arguments"), _get(tool_call, "id")
    elif target == "openai-responses":
        name, raw, call_id = _get(tool_call, "name"), _get(tool_call, "arguments"), _get(tool_call, "call_id")
    else:
        name, raw, call_id = _get(tool_call, "name"), _get(tool_call, "input"), _get(tool_call, "id")
    parsed = ParsedToolCall(provider=target, call_id=str(call_id or ""), name=str(name or ""))
    if raw is None or raw == "":
        return parsed
    if isinstance(raw, (str, bytes)):
        try:
            raw = json.loads(raw)
        except ValueError as exc:
            parsed.error = "the arguments are not valid JSON: %s" % exc
            return parsed
    if not isinstance(raw, dict):
        parsed.error = "the arguments must be a JSON object, got %s" % type(raw).__name__
        return parsed
    parsed.arguments = raw
    return parsed


def _parts(result: CallToolResult) -> List[Tuple[str, str, str]]:
    """(kind, text_or_data, mime) parts: kind is "text" or "image"."""
    parts: List[Tuple[str, str, str]] = []
    for block in result.content:
        if isinstance(block, TextContent):
            parts.append(("text", block.text, ""))
        elif isinstance(block, ImageContent):
            parts.append(("image", block.data, block.mime_type or "image/png"))
        elif isinstance(block, AudioContent):
            parts.append(("text", "[audio %s, %d base64 characters omitted]" % (block.mime_type, len(block.data)), ""))
        elif isinstance(block, EmbeddedResource) and block.resource is not None:
            res = block.resource
            if res.text is not None:
                parts.append(("text", res.text, ""))
            elif res.blob is not None and (res.mime_type or "").startswith("image/"):
                parts.append(("image", res.blob, res.mime_type or ""))
            else:
                parts.append(
                    ("text", "[resource %s (%s), binary content omitted]" % (res.uri, res.mime_type or "?"), "")
                )
        elif isinstance(block, ResourceLink):
            parts.append(("text", "[resource link: %s %s]" % (block.name, block.uri), ""))
        else:
            parts.append(("text", json.dumps(block.raw, ensure_ascii=False, default=str), ""))
    if not parts and result.structured_content is not None:
        parts.append(("text", json.dumps(result.structured_content, ensure_ascii=False, default=str), ""))
    return [p for p in parts if p[0] == "image" or p[1]]


def _error_prefix(parts: List[Tuple[str, str, str]]) -> List[Tuple[str, str, str]]:
    if parts and parts[0][0] == "text":
        first = parts[0][1]
        if not first.lower().startswith("error"):
            first = "Error: " + first
        return [("text", first, "")] + parts[1:]
    return [("text", "Error: the tool reported a failure", "")] + parts


def format_tool_result(provider: str, call_id: str, result: Union[CallToolResult, BaseException, str]) -> JSON:
    """The tool result to send back to ``provider`` for the call ``call_id``.

    ``result`` is a :class:`~mcpsync.CallToolResult`, an exception (sent as an
    error the model can read), or an error message string.

    * ``openai``: ``{"role": "tool", "tool_call_id", "content": str}`` (images become a
      short placeholder: Chat Completions tool messages take text only);
    * ``openai-responses``: ``{"type": "function_call_output", "call_id", "output"}``, a
      string, or a list of ``input_text``/``input_image`` parts when there are images;
    * ``anthropic``: ``{"type": "tool_result", "tool_use_id", "content": [...], "is_error"}``.
    """
    target = _normalize_provider(provider)
    if isinstance(result, CallToolResult):
        is_error = result.is_error
        parts = _parts(result)
    else:
        is_error = True
        message = str(result) if str(result) else type(result).__name__
        parts = [("text", message, "")]
    if target == "anthropic":
        blocks: List[JSON] = []
        for kind, data, mime in parts:
            if kind == "text":
                blocks.append({"type": "text", "text": data})
            else:
                blocks.append({"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}})
        out: JSON = {"type": "tool_result", "tool_use_id": call_id}
        if blocks:
            out["content"] = blocks
        if is_error:
            out["is_error"] = True
        return out
    if is_error:
        parts = _error_prefix(parts)
    if target == "openai":
        texts = [
            data
            if kind == "text"
            else "[image %s, %d base64 characters: not representable in a tool message]" % (mime, len(data))
            for kind, data, mime in parts
        ]
        return {"role": "tool", "tool_call_id": call_id, "content": "\n".join(texts)}
    if all(kind == "text" for kind, _, _ in parts):
        output: Any = "\n".join(data for _, data, _ in parts)
    else:
        output = [
            {"type": "input_text", "text": data}
            if kind == "text"
            else {"type": "input_image", "image_url": "data:%s;base64,%s" % (mime, data)}
            for kind, data, mime in parts
        ]
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def execute_tool_call(
    tool_call: Any,
    call: Callable[[str, JSON], CallToolResult],
    *,
    provider: Optional[str] = None,
    schema_for: Optional[Callable[[str], Optional[JSON]]] = None,
    raise_errors: bool = False,
) -> JSON:
    """Run one provider tool call through ``call(name, arguments)`` and return the provider-shaped result.

    Blocks for as long as ``call`` does. ``schema_for(name)`` gives the tool's
    original input schema (used to drop strict-mode ``null`` placeholders).
    Failures (undecodable arguments, unknown tool, timeouts, a dead server, any
    :class:`~mcpsync.MCPError`) become an error result the model can read,
    unless ``raise_errors`` is true. Other exceptions propagate.
    """
    parsed = parse_tool_call(tool_call, provider)
    if parsed.error is not None:
        if raise_errors:
            raise ConfigError(parsed.error)
        return format_tool_result(parsed.provider, parsed.call_id, parsed.error)
    arguments = parsed.arguments
    if schema_for is not None:
        schema = schema_for(parsed.name)
        if schema is not None:
            arguments = restore_arguments(arguments, schema)
    try:
        result = call(parsed.name, arguments)
    except MCPError as exc:
        if raise_errors:
            raise
        log.debug("tool call %s failed: %s", parsed.name, exc)
        return format_tool_result(parsed.provider, parsed.call_id, exc)
    return format_tool_result(parsed.provider, parsed.call_id, result)


def definitions_by_name(definitions: Sequence[JSON]) -> Dict[str, JSON]:
    """Index tool definitions of any provider shape by name (a small convenience for tests and apps)."""
    out = {}
    for d in definitions:
        name = d.get("name") or (d.get("function") or {}).get("name")
        out[str(name)] = d
    return out
