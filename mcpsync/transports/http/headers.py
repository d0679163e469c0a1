"""2026-07-28 request metadata headers: ``Mcp-Method``, ``Mcp-Name``, ``x-mcp-header`` -> ``Mcp-Param-*``.

Pure functions, stdlib only. See the Streamable HTTP page of the 2026-07-28
specification ("Request Metadata"): values that are not plain visible ASCII are
sent as ``=?base64?<base64(utf-8)>?=``; tools whose ``x-mcp-header`` annotations
are invalid are dropped from ``tools/list`` results with a warning.
"""

from __future__ import annotations

import base64
import logging
import re
from types import MappingProxyType
from typing import Any, Callable, Dict, List, Optional, Tuple

__all__ = [
    "ToolHeaders",
    "encode_header_value",
    "mcp_name",
    "name_source",
    "param_headers",
    "tool_header_spec",
]

logger = logging.getLogger(__name__)

_SAFE = re.compile(r"[\x20-\x7e\t]*\Z")
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")
MAX_SAFE_INTEGER = 2**53 - 1
# the params field whose value is sent as ``Mcp-Name``: the spec's three, and the tasks extension's
# (``io.modelcontextprotocol/tasks``, "Streamable HTTP: Routing Headers": the client MUST send the task id, so a
# load balancer can route every later request of a task to the instance holding its state)
_NAME_METHODS = MappingProxyType(
    {
        "tools/call": "name",
        "prompts/get": "name",
        "resources/read": "uri",
        "tasks/get": "taskId",
        "tasks/update": "taskId",
        "tasks/cancel": "taskId",
    }
)
_PRIMITIVES = ("string", "integer", "boolean")

# (header name without the "Mcp-Param-" prefix, property path, JSON type)
ToolHeaders = List[Tuple[str, Tuple[str, ...], str]]


def encode_header_value(value: str) -> str:
    """A header-safe form of ``value``: as-is when plain visible ASCII, else the base64 sentinel form."""
    if (
        _SAFE.match(value)
        and value[:1] not in (" ", "\t")
        and value[-1:] not in (" ", "\t")
        and not (value.startswith("=?base64?") and value.endswith("?="))
    ):
        return value
    return "=?base64?%s?=" % base64.b64encode(value.encode("utf-8", "surrogatepass")).decode("ascii")


def mcp_name(method: str, params: Any, encode: Callable[[str], str] = encode_header_value) -> Optional[str]:
    """The ``Mcp-Name`` value for ``method``, encoded (by ``encode``: :func:`encode_header_value` or a function
    that returns what it would); else None.

    ``tools/call`` and ``prompts/get``: ``params.name``; ``resources/read``: ``params.uri``; ``tasks/get``,
    ``tasks/update`` and ``tasks/cancel`` (the tasks extension): ``params.taskId``.
    """
    value = name_source(method, params)
    return None if value is None else encode(value)


def name_source(method: str, params: Any) -> Optional[str]:
    """The params value ``Mcp-Name`` carries for ``method`` (see :func:`mcp_name`), not yet encoded; else None."""
    key = _NAME_METHODS.get(method)
    if key is None or type(params) is not dict:
        return None
    value = params.get(key)
    return value if type(value) is str else None


def _walk(node: Any, path: Tuple[str, ...], found: List[Tuple[Tuple[str, ...], Any]]) -> None:
    if isinstance(node, dict):
        if "x-mcp-header" in node:
            found.append((path, node))
        for key, value in node.items():
            if isinstance(value, (dict, list)):
                _walk(value, path + (str(key),), found)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            if isinstance(value, (dict, list)):
                _walk(value, path + ("[%d]" % i,), found)


def _primitive_type(schema: Dict[str, Any]) -> Optional[str]:
    t = schema.get("type")
    if isinstance(t, str):
        return t if t in _PRIMITIVES else None
    if isinstance(t, list):
        kinds = [k for k in t if k != "null"]
        if len(kinds) == 1 and isinstance(kinds[0], str) and kinds[0] in _PRIMITIVES:
            return kinds[0]
    return None


def tool_header_spec(tool: Dict[str, Any]) -> Tuple[Optional[ToolHeaders], Optional[str]]:
    """Validate a tool's ``x-mcp-header`` annotations.

    Returns ``(headers, None)`` when valid (an empty list when the tool has none) or
    ``(None, reason)`` when the tool must be dropped.
    """
    schema = tool.get("inputSchema")
    if not isinstance(schema, dict):
        return [], None
    found: List[Tuple[Tuple[str, ...], Any]] = []
    _walk(schema, (), found)
    headers: ToolHeaders = []
    seen: Dict[str, str] = {}
    for path, node in found:
        name = node.get("x-mcp-header")
        where = "/".join(path) or "<root>"
        if len(path) == 0 or len(path) % 2 or any(path[i] != "properties" for i in range(0, len(path), 2)):
            return None, "x-mcp-header at %s is not reachable through properties only" % where
        if not isinstance(name, str) or not name:
            return None, "x-mcp-header at %s is empty or not a string" % where
        if "\r" in name or "\n" in name or not _TOKEN.match(name):
            return None, "x-mcp-header %r at %s is not an HTTP field-name token" % (name, where)
        key = name.lower()
        if key in seen:
            return None, "x-mcp-header %r is used twice (case-insensitively)" % (name,)
        seen[key] = name
        kind = _primitive_type(node)
        if kind is None:
            return None, "x-mcp-header %r at %s is on a property whose type is not string, integer or boolean" % (
                name,
                where,
            )
        if kind == "integer":
            for bound in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
                b = node.get(bound)
                if isinstance(b, (int, float)) and not isinstance(b, bool) and abs(b) > MAX_SAFE_INTEGER + 1:
                    return None, "x-mcp-header %r allows integers outside the safe range" % (name,)
        headers.append((name, tuple(path[i] for i in range(1, len(path), 2)), kind))
    return headers, None


def param_headers(spec: ToolHeaders, arguments: Any) -> Dict[str, str]:
    """The ``Mcp-Param-*`` headers for one ``tools/call`` (absent or null values are omitted)."""
    out: Dict[str, str] = {}
    if not spec or not isinstance(arguments, dict):
        return out
    for name, path, kind in spec:
        value: Any = arguments
        for key in path:
            if not isinstance(value, dict) or key not in value:
                value = None
                break
            value = value[key]
        if value is None:
            continue
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, int):
            text = str(value)
        elif isinstance(value, float) and value.is_integer() and kind == "integer":
            text = str(int(value))
        elif isinstance(value, str):
            text = value
        else:
            continue  # a value of the wrong type: the server will say so (-32020 / -32602)
        out["Mcp-Param-" + name] = encode_header_value(text)
    return out


def filter_tools(tools: List[Any], registry: Dict[str, ToolHeaders], server: str = "") -> List[Any]:
    """Drop tools with invalid annotations (warning each), record the valid ones' header specs in ``registry``."""
    kept: List[Any] = []
    for tool in tools:
        if not isinstance(tool, dict):
            kept.append(tool)
            continue
        spec, reason = tool_header_spec(tool)
        name = tool.get("name")
        if spec is None:
            logger.warning("%sdropping tool %r: %s", ("[%s] " % server) if server else "", name, reason)
            continue
        if isinstance(name, str):
            if spec:
                registry[name] = spec
            else:
                registry.pop(name, None)
        kept.append(tool)
    return kept
