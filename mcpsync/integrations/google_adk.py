"""MCP tools as Google Agent Development Kit tools (``pip install mcpsync[google-adk]``).

::

    from google.adk.agents import LlmAgent
    from mcpsync.integrations.google_adk import McpsyncToolset

    with mcpsync.Manager("mcp.json") as manager:
        agent = LlmAgent(name="helper", model="gemini-2.5-flash", tools=[McpsyncToolset(manager)])

Each tool is a ``google.adk.tools.BaseTool`` (:class:`McpsyncAdkTool`) whose function declaration carries the
MCP tool's JSON Schema as ``parameters_json_schema`` (every ADK model backend reads it: Gemini, LiteLLM,
Anthropic). ``run_async`` checks the arguments against a pydantic model built from the schema and runs the
blocking mcpsync call on a worker thread (``asyncio.to_thread``), so the runner's event loop never blocks:
``Runner.run`` in a script, ``Runner.run_async`` in async code and Jupyter. A result is ``{"result": text}``
(``"structured_content"`` added when the tool returned some); a tool error, a timeout, a denied call or
invalid arguments are ``{"error": message}``, the dict ADK's own MCP tool and function tools give the model
for a failed call; the agent goes on. Images are named in the text (``[image 1: image/png]``): ADK's function
responses carry JSON only.

:class:`McpsyncToolset` is a ``google.adk.tools.BaseToolset``: ADK's ``tool_filter`` (names or a predicate)
and ``tool_name_prefix`` apply on top of mcpsync's naming; ``await toolset.close()`` (which ADK's runner calls
when it closes) closes the source when ``close_source`` is set; ``require_confirmation`` puts ADK's own tool
confirmation in front of the calls. :func:`adk_tools` gives the plain list.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Dict, List, Optional, Union

from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset
from google.genai import types

from .core import McpTool, McpToolkit, ToolSource, over_new_manager, toolkit_of
from .results import Rendered

__all__ = ["McpsyncAdkTool", "McpsyncToolset", "adk_tools"]

#: ADK's confirmation setting: every call, none, or a function of (tool name, arguments) that says which
Confirmation = Union[bool, Callable[[str, Dict[str, Any]], bool]]


def _response(rendered: Rendered) -> Dict[str, Any]:
    if rendered.is_error:
        return {"error": rendered.text}
    out: Dict[str, Any] = {"result": rendered.text}
    if rendered.structured is not None:
        out["structured_content"] = rendered.structured
    return out


class McpsyncAdkTool(BaseTool):  # type: ignore[misc,unused-ignore]
    """One MCP tool as an ADK ``BaseTool`` (see the module docstring)."""

    def __init__(self, mcp_tool: McpTool, *, require_confirmation: Confirmation = False) -> None:
        super().__init__(
            name=mcp_tool.name,
            description=mcp_tool.description or mcp_tool.name,
            custom_metadata={"mcp_server": mcp_tool.server, "mcp_tool": mcp_tool.tool.name},
        )
        self.mcp_tool = mcp_tool
        self.require_confirmation = require_confirmation

    def _get_declaration(self) -> Optional[types.FunctionDeclaration]:
        return types.FunctionDeclaration(
            name=self.name, description=self.description, parameters_json_schema=self.mcp_tool.json_schema()
        )

    def invoke(self, args: Any) -> Dict[str, Any]:
        """Call the tool with the model's ``args`` and return the function response dict. Blocks for the call;
        raises nothing for what the tool, its server or the arguments do."""
        return _response(self.mcp_tool.call_validated(args if args is not None else {}))

    async def check_require_confirmation(self, args: Dict[str, Any], tool_context: Any) -> bool:
        if callable(self.require_confirmation):
            return bool(self.require_confirmation(self.mcp_tool.name, dict(args or {})))
        return bool(self.require_confirmation)

    async def run_async(self, *, args: Dict[str, Any], tool_context: Any) -> Any:
        if tool_context is not None and await self.check_require_confirmation(args, tool_context):
            confirmation = getattr(tool_context, "tool_confirmation", None)
            if confirmation is None:  # ADK's human-in-the-loop: ask, and call nothing until the answer comes
                tool_context.request_confirmation(hint="Approve or reject the call to %s." % self.name)
                tool_context.actions.skip_summarization = True
                return {"error": "This tool call requires confirmation, please approve or reject."}
            if not confirmation.confirmed:
                return {"error": "This tool call is rejected."}
        return await asyncio.to_thread(self.invoke, args)


def adk_tools(
    source: ToolSource,
    *,
    toolkit: Optional[McpToolkit] = None,
    require_confirmation: Confirmation = False,
    **options: Any,
) -> List[McpsyncAdkTool]:
    """Every tool of ``source`` (a Client or a Manager) the model may see, as :class:`McpsyncAdkTool` (blocks
    while listing). ``options`` are :class:`~mcpsync.integrations.core.McpToolkit`'s; ``require_confirmation``
    is ADK's tool confirmation (see :class:`McpsyncToolset`)."""
    kit = toolkit_of(source, toolkit, options)
    return [McpsyncAdkTool(t, require_confirmation=require_confirmation) for t in kit.tools()]


class McpsyncToolset(BaseToolset):  # type: ignore[misc,unused-ignore]
    """A Client's or a Manager's tools as an ADK toolset.

    Args:
        source: a :class:`~mcpsync.Client` or :class:`~mcpsync.Manager` (or pass ``toolkit=``).
        toolkit: a ready :class:`~mcpsync.integrations.core.McpToolkit`.
        tool_filter: ADK's filter: a list of tool names or a ``ToolPredicate``.
        tool_name_prefix: ADK's prefix (``{prefix}_{name}``), on top of mcpsync's naming.
        close_source: :meth:`close` closes the source (default False: the caller owns it).
        require_confirmation: ADK's tool confirmation, on top of mcpsync's approval handler: True for every call,
            or a function of (tool name, arguments) returning whether this call needs it. Such a call is not
            made until the user confirms it (ADK's ``adk_request_confirmation`` round trip); a rejected one
            gives the model ``{"error": "This tool call is rejected."}``.
        options: :class:`~mcpsync.integrations.core.McpToolkit`'s keyword arguments.

    ADK asks for the tools at every step of a run; they follow the server's list (after
    ``notifications/tools/list_changed`` the next step offers the new list; listing runs on a worker thread and is
    served from memory otherwise). ``refresh()`` re-lists now.
    """

    def __init__(
        self,
        source: Optional[ToolSource] = None,
        *,
        toolkit: Optional[McpToolkit] = None,
        tool_filter: Optional[Union[Any, List[str]]] = None,
        tool_name_prefix: Optional[str] = None,
        close_source: bool = False,
        require_confirmation: Confirmation = False,
        **options: Any,
    ) -> None:
        if toolkit is None and source is None:
            raise TypeError("give a Client, a Manager or an McpToolkit")
        self.require_confirmation = require_confirmation
        super().__init__(tool_filter=tool_filter, tool_name_prefix=tool_name_prefix)
        if close_source and toolkit is None and not isinstance(source, McpToolkit):
            options["close_source"] = True
        self.toolkit = toolkit_of(source, toolkit, options)
        # ADK keeps a toolset's list for a whole invocation by default; ours follows the server's list at every
        # step instead (served from memory unless the server said its list changed), as ADK's skill toolset does
        self._use_invocation_cache = False

    @classmethod
    def from_servers(cls, config: Any, **options: Any) -> "McpsyncToolset":
        """A toolset over a new :class:`~mcpsync.Manager` built from ``config`` (a path or a dict), closed by
        :meth:`close`. Blocks while the servers connect."""
        return over_new_manager(config, lambda manager: cls(manager, close_source=True, **options))

    async def get_tools(self, readonly_context: Any = None) -> List[BaseTool]:
        listed = await asyncio.to_thread(self.toolkit.tools)
        tools = [McpsyncAdkTool(t, require_confirmation=self.require_confirmation) for t in listed]
        return [t for t in tools if self._is_tool_selected(t, readonly_context)]

    def refresh(self) -> None:
        """Re-list the tools now (blocks)."""
        self.toolkit.tools(refresh=True)

    async def close(self) -> None:
        """Close the toolkit (and the source when the toolset owns it) on a worker thread. Idempotent."""
        await asyncio.to_thread(self.toolkit.close)
