"""MCP tools as Haystack tools (``pip install mcpsync[haystack]``).

::

    from mcpsync.integrations.haystack import haystack_tools

    agent = haystack.components.agents.Agent(chat_generator=generator, tools=haystack_tools(client_or_manager))

Each tool is a ``haystack.tools.Tool`` with the MCP schema as ``parameters``; ``function`` validates the
arguments with the pydantic model built from the schema and makes the blocking call, ``async_function`` runs
it on a worker thread. A tool error, a timeout, a denied call or invalid arguments raise :class:`McpToolFailed`
with the model-facing message: Haystack's ``ToolInvoker`` (and so its ``Agent``, unless
``raise_on_tool_invocation_failure``) turns it into a tool result with ``error=True`` the model reads.
"""

from __future__ import annotations

import asyncio
from typing import Any, List, Optional

from haystack.tools import Tool
from pydantic import ValidationError

from .core import McpTool, McpToolkit, ToolSource, toolkit_of

__all__ = ["McpToolFailed", "haystack_tool", "haystack_tools"]


class McpToolFailed(Exception):
    """A tool call failed; the message is what the model should read."""


def haystack_tool(tool: McpTool) -> Any:
    """One :class:`~mcpsync.integrations.core.McpTool` as a Haystack ``Tool``."""

    def run(**kwargs: Any) -> str:
        try:
            arguments = tool.args_model.model_validate(kwargs)
        except ValidationError as exc:
            raise McpToolFailed("invalid arguments for %s: %s" % (tool.name, exc)) from None
        rendered = tool.call(arguments)
        if rendered.is_error:  # Haystack prefixes "Failed to invoke Tool ... Error: " itself
            raise McpToolFailed(rendered.text[7:] if rendered.text.startswith("Error: ") else rendered.text)
        return rendered.text

    async def arun(**kwargs: Any) -> str:
        return await asyncio.to_thread(run, **kwargs)

    return Tool(
        name=tool.name,
        description=tool.description or tool.name,
        parameters=tool.json_schema(),
        function=run,
        async_function=arun,
    )


def haystack_tools(source: ToolSource, *, toolkit: Optional[McpToolkit] = None, **options: Any) -> List[Any]:
    """Every tool of ``source`` the model may see, as Haystack ``Tool`` objects (blocks while listing).
    ``options`` are :class:`~mcpsync.integrations.core.McpToolkit`'s."""
    kit = toolkit_of(source, toolkit, options)
    return [haystack_tool(t) for t in kit.tools()]
