"""The JSON Schemas of the configuration formats mcpsync reads, and the validation that turns their errors into
:class:`~mcpsync.ConfigError` messages naming the bad key (:mod:`mcpsync.manager.config` parses; this checks).
``jsonschema`` is imported only when a document is validated."""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any, Iterable, Tuple

from ..errors import ConfigError
from ..types import JSON

__all__ = ["FOREIGN_KNOWN", "GEMINI_KNOWN", "REMOTE_TYPES", "STDIO_TYPES", "validate_document"]

#: The ``type`` values of a stdio server, and of a remote one.
STDIO_TYPES = frozenset({"stdio", "local"})
REMOTE_TYPES = frozenset({"http", "remote", "streamable-http", "streamable_http", "streamablehttp", "sse"})
_STDIO_TYPES, _REMOTE_TYPES = STDIO_TYPES, REMOTE_TYPES

_STR_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
_STR_LIST = {"type": "array", "items": {"type": "string"}}
_POSITIVE = {"type": "number", "exclusiveMinimum": 0}
_HTTP_URL = {"type": "string", "pattern": "^https?://"}
_OAUTH_OBJECT = {  # OpenCode's keys; the native format also takes every OAuthConfig option (mcpsync.auth)
    "type": "object",
    "properties": {k: {"type": "string"} for k in ("clientId", "client_id", "clientSecret", "client_secret", "scope")},
    "additionalProperties": False,
}
_TOOL_TRANSFORMS = {  # per tool: a new name/description, arguments hidden and bound (mcpsync.manager.transforms)
    "type": "object",
    "additionalProperties": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$"},
            "description": {"type": "string"},
            "arguments": {
                "type": "object",
                "additionalProperties": {
                    "type": "object",
                    "properties": {"hide": {"type": "boolean"}, "value": {}, "description": {"type": "string"}},
                    "additionalProperties": False,
                },
            },
        },
        "additionalProperties": False,
    },
}
_CARD = {  # a Server Card (mcpsync.cards): its URL, or the URL with the card settings
    "anyOf": [
        _HTTP_URL,
        {
            "type": "object",
            "properties": {
                "url": _HTTP_URL,
                "inputs": _STR_MAP,
                "allow_local": {"anyOf": [{"type": "boolean"}, _STR_LIST]},
                "allow_other_domains": {"type": "boolean"},
                "remote": {"anyOf": [{"type": "integer", "minimum": 0}, {"enum": ["streamable-http", "sse"]}]},
            },
            "required": ["url"],
            "additionalProperties": False,
        },
    ]
}
#: Keys every format spells alike: a stdio server's arguments, environment and folder, a remote one's URL and headers.
_COMMON = MappingProxyType(
    {
        "args": _STR_LIST,
        "env": _STR_MAP,
        "cwd": {"type": "string"},
        "url": _HTTP_URL,
        "headers": _STR_MAP,
    }
)
#: mcpsync's own keys, read in its native format and in the ``mcpServers``/``servers`` files of other tools alike:
#: ``oauth`` false turns OAuth off, an object holds OAuthConfig settings.
_MCPSYNC_KEYS = MappingProxyType(
    {
        "oauth": {"type": ["boolean", "object"]},
        "bearer_token": {"type": "string"},
        "tools": _TOOL_TRANSFORMS,
        "card": _CARD,
    }
)
_NATIVE_ENTRY = {
    "type": "object",
    "properties": {
        "type": {"enum": sorted(_STDIO_TYPES | _REMOTE_TYPES | {"streamableHttp"})},
        **_COMMON,
        **_MCPSYNC_KEYS,
        "command": {"anyOf": [{"type": "string", "minLength": 1}, dict(_STR_LIST, minItems=1)]},
        "environment": _STR_MAP,
        "inherit_env": {"type": "boolean"},
        "transport": {"enum": ["auto", "http", "sse"]},
        "enabled": {"type": "boolean"},
        "disabled": {"type": "boolean"},
        "timeout": {"anyOf": [_POSITIVE, {"type": "null"}]},
        "connect_timeout": _POSITIVE,
        "lazy": {"type": "boolean"},
        "allowed_tools": _STR_LIST,
        "disabled_tools": _STR_LIST,
        "options": {"type": "object"},
        "description": {"type": "string"},
        "registry": {"type": "object"},
    },
    "additionalProperties": False,
    "if": {"required": ["url"]},
    "then": {"not": {"anyOf": [{"required": ["command"]}, {"required": ["card"]}]}},
    "else": {"oneOf": [{"required": ["command"]}, {"required": ["card"]}]},
}
_OPENCODE_LOCAL = {
    "properties": {
        "type": {},
        "command": dict(_STR_LIST, minItems=1),
        "environment": _STR_MAP,
        "enabled": {"type": "boolean"},
        "timeout": {"type": "integer", "exclusiveMinimum": 0},
    },
    "required": ["command"],
    "additionalProperties": False,
}
_OPENCODE_REMOTE = {
    "properties": {
        "type": {},
        "url": _HTTP_URL,
        "headers": _STR_MAP,
        "oauth": {"anyOf": [{"const": False}, _OAUTH_OBJECT]},
        "enabled": {"type": "boolean"},
        "timeout": {"type": "integer", "exclusiveMinimum": 0},
    },
    "required": ["url"],
    "additionalProperties": False,
}
_OPENCODE_ENTRY = {
    "type": "object",
    "required": ["type"],
    "properties": {"type": {"enum": ["local", "remote"]}},
    "allOf": [
        {"if": {"required": ["type"], "properties": {"type": {"const": "local"}}}, "then": _OPENCODE_LOCAL},
        {"if": {"required": ["type"], "properties": {"type": {"const": "remote"}}}, "then": _OPENCODE_REMOTE},
    ],
}
_FOREIGN_ENTRY = {
    "type": "object",
    "properties": {
        "type": {"enum": ["stdio", "http", "sse", "streamable-http", "streamableHttp", "streamable_http"]},
        **_COMMON,
        **_MCPSYNC_KEYS,
        "command": {"type": "string", "minLength": 1},
        "envFile": {"type": "string"},
        "serverUrl": _HTTP_URL,
        "bearerToken": {"type": "string"},
        "disabled": {"type": "boolean"},
        "timeout": _POSITIVE,
        "allowedTools": _STR_LIST,
        "includeTools": _STR_LIST,
        "disabledTools": _STR_LIST,
        "excludeTools": _STR_LIST,
    },
    "if": {"anyOf": [{"required": ["url"]}, {"required": ["serverUrl"]}]},
    "then": {},
    "else": {"oneOf": [{"required": ["command"]}, {"required": ["card"]}]},
}
_FOREIGN_KNOWN = set(_FOREIGN_ENTRY["properties"]) | {
    "autoApprove",
    "alwaysAllow",
    "description",
    "gallery",
    "oauth",
    "registry",
    "version",
    "transportType",
    "dev",
}


_GEMINI_ENTRY = {
    "type": "object",
    "properties": {
        "type": {"enum": ["stdio", "http", "sse", "streamable-http", "streamable_http"]},
        **_COMMON,
        "command": {"type": "string", "minLength": 1},
        "httpUrl": _HTTP_URL,
        "timeout": _POSITIVE,  # milliseconds
        "trust": {"type": "boolean"},
        "description": {"type": "string"},
        "includeTools": _STR_LIST,
        "excludeTools": _STR_LIST,
        "extensionName": {"type": "string"},
        "authProviderType": {"type": "string"},
        "oauth": {
            "type": "object",
            "properties": {
                "enabled": {"type": "boolean"},
                "clientId": {"type": "string"},
                "clientSecret": {"type": "string"},
                "scopes": _STR_LIST,
            },
        },
    },
    "if": {"anyOf": [{"required": ["url"]}, {"required": ["httpUrl"]}]},
    "then": {"not": {"required": ["command"]}},
    "else": {"required": ["command"]},
}
_GEMINI_KNOWN = set(_GEMINI_ENTRY["properties"]) | {"targetAudience", "targetServiceAccount"}


def _object(**properties: JSON) -> JSON:
    """An object schema with these ``properties`` (other keys allowed)."""
    return {"type": "object", "properties": properties}


def _by_name(entry: JSON) -> JSON:
    """An object schema mapping each server's name to an ``entry``."""
    return {"type": "object", "additionalProperties": entry}


def _document_schema(fmt: str) -> JSON:
    if fmt == "gemini":
        mcp = _object(allowed=_STR_LIST, excluded=_STR_LIST, serverCommand={"type": "string"})
        return _object(mcpServers=_by_name(_GEMINI_ENTRY), mcp=mcp)
    if fmt == "opencode":
        experimental = _object(mcp_timeout={"type": "integer", "exclusiveMinimum": 0})
        return _object(mcp=_by_name(_OPENCODE_ENTRY), experimental=experimental)
    if fmt == "vscode-settings":
        return _object(mcp=_object(servers=_by_name(_FOREIGN_ENTRY)))
    if fmt in ("mcpServers", "vscode"):
        return _object(**{"mcpServers" if fmt == "mcpServers" else "servers": _by_name(_FOREIGN_ENTRY)})
    return _by_name(_NATIVE_ENTRY)


def _path_text(parts: Iterable[Any]) -> str:
    out = ""
    for p in parts:
        out += "[%d]" % p if isinstance(p, int) else ("." if out else "") + str(p)
    return out or "(top level)"


_JSON_TYPES = MappingProxyType(
    {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        list: "array",
        dict: "object",
        type(None): "null",
    }
)


def _humanize(error: Any) -> Tuple[str, str]:
    """(path, message) for one jsonschema ValidationError."""
    path = list(error.absolute_path)
    v, inst = error.validator, error.instance
    if v == "additionalProperties" and isinstance(inst, dict):
        allowed = sorted(error.schema.get("properties") or {})
        extra = sorted(k for k in inst if k not in allowed)
        return _path_text(path + extra[:1]), "unknown key %s; expected one of: %s" % (
            ", ".join(repr(k) for k in extra),
            ", ".join(allowed),
        )
    if v == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        return _path_text(path), "missing required key %r" % missing
    if v == "type":
        return _path_text(path), "expected %s, got %s %s" % (
            error.validator_value if isinstance(error.validator_value, str) else " or ".join(error.validator_value),
            _JSON_TYPES.get(type(inst), type(inst).__name__),
            json.dumps(inst, default=str)[:60],
        )
    if v == "enum":
        return _path_text(path), "expected one of %s, got %s" % (
            ", ".join(json.dumps(x) for x in error.validator_value),
            json.dumps(inst, default=str)[:60],
        )
    if v == "pattern":
        return _path_text(path), "expected a value matching %s, got %s" % (error.validator_value, json.dumps(inst)[:60])
    if v in ("exclusiveMinimum", "minimum"):
        return _path_text(path), "expected a number > %s, got %s" % (error.validator_value, json.dumps(inst)[:60])
    if v == "not" and "command" in str(error.validator_value):
        return _path_text(path), "give either 'command' or 'url', not both"
    if v in ("anyOf", "oneOf") and error.context:
        best = sorted(error.context, key=lambda e: -len(list(e.absolute_path)))[0]
        return _humanize(best)
    return _path_text(path), error.message


def validate_document(data: Any, fmt: str, source: str) -> None:
    """Raise :class:`~mcpsync.ConfigError` naming up to five problems when ``data`` (a configuration document in
    format ``fmt``) breaks its JSON Schema; ``source`` names the file or object in the message."""
    import jsonschema  # lazily: `import mcpsync` must not import it

    validator = jsonschema.Draft202012Validator(_document_schema(fmt))
    errors = sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    if not errors:
        return
    lines = []
    for err in errors[:5]:
        path, message = _humanize(err)
        lines.append("%s: %s" % (path, message))
    more = "" if len(errors) <= 5 else " (and %d more)" % (len(errors) - 5)
    raise ConfigError("%s: %s%s" % (source, "; ".join(lines), more))


FOREIGN_KNOWN = _FOREIGN_KNOWN
GEMINI_KNOWN = _GEMINI_KNOWN
