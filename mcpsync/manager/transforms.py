"""Tool transforms: how a tool is shown to a model, changed without touching its server.

A :class:`ToolTransform` gives a tool a new name and/or description, and per argument
(:class:`ArgTransform`) a new description, or hides it bound to a fixed value: the model never sees a hidden
argument (it is removed from the schema and from ``required``), and every call sends the bound value, whatever
the model wrote. Transforms are given per server in the configuration file::

    {"mcpServers": {"github": {"command": "...", "tools": {
        "search_issues": {"name": "find_issues", "description": "Search this project's issues",
                          "arguments": {"repo": {"hide": true, "value": "acme/widgets"}}}}}}}

or in code (``ServerConfig(tool_transforms={...})``, ``McpToolkit(transforms={...})``). The framework
integrations (:mod:`mcpsync.integrations`) apply them. Pure data: immutable and thread-safe.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Tuple

from ..errors import ConfigError
from ..types import JSON
from .naming import NAME_PATTERN

__all__ = ["ArgTransform", "ToolTransform", "apply_transform", "parse_transforms"]

_MISSING = object()


@dataclass(frozen=True)
class ArgTransform:
    """What happens to one argument.

    Attributes:
        hide: remove the argument from what the model sees; every call sends ``value``.
        value: the bound value of a hidden argument (required with ``hide``).
        description: a new description of a visible argument.
    """

    hide: bool = False
    value: Any = None
    description: Optional[str] = None

    @classmethod
    def from_dict(cls, data: Any, where: str) -> "ArgTransform":
        """Read one ``arguments`` entry of a configuration file; raises :class:`~mcpsync.ConfigError`."""
        if not isinstance(data, Mapping):
            raise ConfigError("%s: an argument transform must be an object" % where)
        unknown = set(data) - {"hide", "value", "description"}
        if unknown:
            raise ConfigError("%s: unknown keys %s (expected hide, value, description)" % (where, sorted(unknown)))
        hide = data.get("hide", False)
        if not isinstance(hide, bool):
            raise ConfigError("%s: hide must be true or false" % where)
        if hide and "value" not in data:
            raise ConfigError("%s: a hidden argument needs a value (the call always sends it)" % where)
        description = data.get("description")
        if description is not None and not isinstance(description, str):
            raise ConfigError("%s: description must be a string" % where)
        return cls(hide, copy.deepcopy(data.get("value")), description)


@dataclass(frozen=True)
class ToolTransform:
    """How one tool is shown to a model (see the module docstring).

    Attributes:
        name: the new name (``[a-zA-Z0-9_-]{1,64}``; None keeps the exposed name).
        description: the new description (None keeps the server's).
        arguments: ``{argument name: ArgTransform}``.
    """

    name: Optional[str] = None
    description: Optional[str] = None
    arguments: Mapping[str, ArgTransform] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.name is not None and (not isinstance(self.name, str) or not NAME_PATTERN.match(self.name)):
            raise ConfigError("a tool's new name must match [a-zA-Z0-9_-]{1,64}, got %r" % (self.name,))
        if self.description is not None and not isinstance(self.description, str):
            raise ConfigError("a tool's new description must be a string")
        args = {}
        for key, value in dict(self.arguments).items():
            if isinstance(value, Mapping):
                value = ArgTransform.from_dict(value, "argument %r" % key)
            if not isinstance(value, ArgTransform):
                raise ConfigError("argument %r: expected an ArgTransform, got %s" % (key, type(value).__name__))
            args[str(key)] = value
        object.__setattr__(self, "arguments", args)

    @classmethod
    def from_dict(cls, data: Any, where: str = "tool") -> "ToolTransform":
        """Read one ``tools`` entry of a configuration file; raises :class:`~mcpsync.ConfigError`."""
        if not isinstance(data, Mapping):
            raise ConfigError("%s: a tool transform must be an object" % where)
        unknown = set(data) - {"name", "description", "arguments"}
        if unknown:
            raise ConfigError("%s: unknown keys %s (expected name, description, arguments)" % (where, sorted(unknown)))
        raw_args = data.get("arguments") or {}
        if not isinstance(raw_args, Mapping):
            raise ConfigError("%s: arguments must be an object" % where)
        args = {str(k): ArgTransform.from_dict(v, "%s.arguments.%s" % (where, k)) for k, v in raw_args.items()}
        try:
            return cls(data.get("name"), data.get("description"), args)
        except ConfigError as exc:
            raise ConfigError("%s: %s" % (where, exc)) from None


def parse_transforms(data: Any, where: str) -> Dict[str, ToolTransform]:
    """A server's ``tools`` object from a configuration file: ``{tool name: ToolTransform}``."""
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise ConfigError("%s.tools must be an object of tool name -> transform" % where)
    return {str(k): ToolTransform.from_dict(v, "%s.tools.%s" % (where, k)) for k, v in data.items()}


def apply_transform(
    transform: Optional[ToolTransform], name: str, description: str, schema: JSON
) -> Tuple[str, str, JSON, JSON]:
    """``(name, description, schema, bound arguments)`` of a tool after ``transform`` (None: unchanged).
    ``schema`` is not modified."""
    if transform is None:
        return name, description, schema, {}
    schema = copy.deepcopy(schema)
    raw_props = schema.get("properties")
    props: JSON = raw_props if isinstance(raw_props, dict) else {}
    required = [r for r in schema.get("required") or [] if isinstance(r, str)]
    bound: JSON = {}
    for arg, how in transform.arguments.items():
        if how.hide:
            props.pop(arg, None)
            required = [r for r in required if r != arg]
            bound[arg] = copy.deepcopy(how.value)
        elif how.description is not None and isinstance(props.get(arg), dict):
            props[arg] = dict(props[arg], description=how.description)
    schema["properties"] = props
    if required:
        schema["required"] = required
    else:
        schema.pop("required", None)
    return (
        transform.name or name,
        transform.description if transform.description is not None else description,
        schema,
        bound,
    )
