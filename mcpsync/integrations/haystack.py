"""MCP tools as Haystack tools (``pip install mcpsync[haystack]``).

::

    from mcpsync.integrations.haystack import haystack_tools

    agent = haystack.components.agents.Agent(chat_generator=generator, tools=haystack_tools(client_or_manager))

Each tool is a ``haystack.tools.Tool`` with the MCP schema as ``parameters``; ``function`` validates the
arguments with the pydantic model built from the schema and makes the blocking call, ``async_function`` runs
it on a worker thread. A tool error, a timeout, a denied call or invalid arguments raise :class:`McpToolFailed`
with the model-facing message: Haystack's ``ToolInvoker`` (and so its ``Agent``, unless
``raise_on_tool_invocation_failure``) turns it into a tool result with ``error=True`` the model reads.

:func:`haystack_tools` returns the tools listed now; :class:`McpsyncToolset` (a ``haystack.tools.Toolset``) is
read again at every step of an ``Agent`` run, so it follows the server's tool list::

    agent = Agent(chat_generator=generator, tools=McpsyncToolset(client_or_manager))
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Dict, List, Optional

from haystack.tools import Tool, Toolset

from .core import McpTool, McpToolkit, ToolSource, toolkit_of

__all__ = ["McpToolFailed", "McpsyncToolset", "haystack_tool", "haystack_tools"]


class McpToolFailed(Exception):
    """A tool call failed; the message is what the model should read."""


def haystack_tool(tool: McpTool) -> Any:
    """One :class:`~mcpsync.integrations.core.McpTool` as a Haystack ``Tool``."""

    def run(**kwargs: Any) -> str:
        rendered = tool.call_validated(kwargs)
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


class McpsyncToolset(Toolset):  # type: ignore[misc,unused-ignore]
    """A Client's or a Manager's tools as a Haystack ``Toolset`` that follows the server's tool list: Haystack's
    ``Agent`` iterates its toolsets at every step, and each iteration after ``notifications/tools/list_changed``
    gives the new list (unchanged tools are the same objects). Iterating blocks while the toolkit lists again
    after a change; otherwise it does no I/O.

    Args:
        source: a :class:`~mcpsync.Client` or :class:`~mcpsync.Manager` (or pass ``toolkit=``).
        toolkit: a ready :class:`~mcpsync.integrations.core.McpToolkit`.
        options: :class:`~mcpsync.integrations.core.McpToolkit`'s keyword arguments.
    """

    def __init__(
        self, source: Optional[ToolSource] = None, *, toolkit: Optional[McpToolkit] = None, **options: Any
    ) -> None:
        # Toolset's dataclass __init__ stores a fixed list: here the toolkit is the list (see ``tools``)
        if toolkit is None and source is None:
            raise TypeError("give a Client, a Manager or an McpToolkit")
        self.toolkit = toolkit_of(source, toolkit, options)
        self._lock = threading.Lock()
        self._made: Dict[int, Any] = {}  # id(McpTool) -> (McpTool, its haystack Tool)

    @property
    def tools(self) -> List[Any]:  # type: ignore[override,unused-ignore]
        """The tools now (read by every ``Toolset`` method)."""
        listed = self.toolkit.tools()
        with self._lock:
            made: Dict[int, Any] = {}
            for t in listed:
                entry = self._made.get(id(t))
                made[id(t)] = entry if entry is not None and entry[0] is t else (t, haystack_tool(t))
            self._made = made
            return [made[id(t)][1] for t in listed]

    def add(self, tool: Any) -> None:
        raise TypeError("an McpsyncToolset lists its server's tools; add tools to another Toolset")

