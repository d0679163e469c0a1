"""Tools in the formats of the model providers' APIs, and calls back from them.

:func:`tool_definitions` (any provider), :func:`to_openai_tools`, :func:`to_openai_responses_tools` and
:func:`to_anthropic_tools` turn the tools of a :class:`mcpsync.Client` or :class:`mcpsync.Manager` into the JSON each
API takes; :func:`parse_tool_call` and :func:`execute_tool_call` run the model's call, :func:`format_tool_result`
shapes the answer. See docs/guides/manager.md. Names load on first use.
"""

from types import MappingProxyType as _MappingProxyType
from typing import TYPE_CHECKING as _TYPE_CHECKING

from .._lazy import exports as _exports

if _TYPE_CHECKING:  # what the lazy names are, for type checkers (nothing is imported at run time)
    from ..manager.adapters import (
        PROVIDERS,
        ParsedToolCall,
        execute_tool_call,
        format_tool_result,
        parse_tool_call,
        to_anthropic_tools,
        to_openai_responses_tools,
        to_openai_tools,
        tool_definitions,
    )

__all__ = [
    "PROVIDERS",
    "ParsedToolCall",
    "execute_tool_call",
    "format_tool_result",
    "parse_tool_call",
    "to_anthropic_tools",
    "to_openai_responses_tools",
    "to_openai_tools",
    "tool_definitions",
]

_LAZY = _MappingProxyType(
    {
        "PROVIDERS": "..manager.adapters",
        "ParsedToolCall": "..manager.adapters",
        "execute_tool_call": "..manager.adapters",
        "format_tool_result": "..manager.adapters",
        "parse_tool_call": "..manager.adapters",
        "to_anthropic_tools": "..manager.adapters",
        "to_openai_responses_tools": "..manager.adapters",
        "to_openai_tools": "..manager.adapters",
        "tool_definitions": "..manager.adapters",
    }
)

__getattr__, __dir__ = _exports(__name__, _LAZY, globals())
