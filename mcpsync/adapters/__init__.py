"""Tools in the formats of the model providers' APIs, and calls back from them.

:func:`tool_definitions` (any provider), :func:`to_openai_tools`, :func:`to_openai_responses_tools` and
:func:`to_anthropic_tools` turn the tools of a :class:`mcpsync.Client` or :class:`mcpsync.Manager` into the JSON each
API takes; :func:`parse_tool_call` and :func:`execute_tool_call` run the model's call, :func:`format_tool_result`
shapes the answer. See docs/guides/manager.md. Names load on first use.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from .._lazy import exports as _exports
from .._lazy import table as _table

if _TYPE_CHECKING:  # the lazy names, for type checkers ("X as X" re-exports each; nothing is imported at run time)
    from ..manager.adapters import PROVIDERS as PROVIDERS, ParsedToolCall as ParsedToolCall
    from ..manager.adapters import execute_tool_call as execute_tool_call, format_tool_result as format_tool_result
    from ..manager.adapters import parse_tool_call as parse_tool_call, to_anthropic_tools as to_anthropic_tools
    from ..manager.adapters import to_openai_responses_tools as to_openai_responses_tools
    from ..manager.adapters import to_openai_tools as to_openai_tools, tool_definitions as tool_definitions

_LAZY = _table(
    {
        "..manager.adapters": ("PROVIDERS", "ParsedToolCall", "execute_tool_call", "format_tool_result",
                               "parse_tool_call", "to_anthropic_tools", "to_openai_responses_tools", "to_openai_tools",
                               "tool_definitions"),
    }
)
__all__ = sorted(_LAZY)

__getattr__, __dir__ = _exports(__name__, _LAZY, globals())
