"""MCP tools as CrewAI tools (``pip install mcpsync[crewai]``).

::

    from mcpsync.integrations.crewai import crewai_tools

    agent = crewai.Agent(role="...", goal="...", backstory="...", tools=crewai_tools(client_or_manager))

Each tool is a ``crewai.tools.BaseTool`` (:class:`McpsyncCrewTool`) whose ``args_schema`` is the pydantic model
built from the MCP schema; ``_run`` makes the blocking call (CrewAI's agents are synchronous; no event loop is
involved). A tool error, a timeout or a denied call returns a ``crewai.tools.ToolFailure`` (reason
``mcp_error``; ``retryable`` for a timeout): the agent reads its message, and CrewAI records the failure under
its ``tool_failure_policy``. On a CrewAI without ``ToolFailure`` the message is returned as text. ``_arun`` runs
the same call on a worker thread for ``kickoff_async()`` (CrewAI refuses a synchronous ``kickoff()`` inside a
running event loop, e.g. in Jupyter: use ``await crew.kickoff_async()`` there).
"""

from __future__ import annotations

import asyncio
from typing import Any, List, Optional

from crewai.tools import BaseTool
from pydantic import ConfigDict, PrivateAttr

from ..errors import RequestTimeout
from .core import McpTool, McpToolkit, ToolSource, toolkit_of
from .results import Rendered

try:
    from crewai.tools.tool_failure import ToolFailure, ToolFailureReason
except ImportError:  # pragma: no cover - CrewAI before structured tool failures
    ToolFailure = None
    ToolFailureReason = None

__all__ = ["McpsyncCrewTool", "crewai_tools"]


def _failure(rendered: Rendered) -> Any:
    if ToolFailure is None:  # pragma: no cover
        return rendered.text
    return ToolFailure(
        message=rendered.text,
        reason=ToolFailureReason.MCP_ERROR,
        retryable=isinstance(rendered.error, RequestTimeout),
    )


class McpsyncCrewTool(BaseTool):  # type: ignore[misc,unused-ignore]
    """One MCP tool as a CrewAI ``BaseTool`` (build it with :func:`crewai_tools`)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    _mcp: Any = PrivateAttr(default=None)

    @classmethod
    def of(cls, tool: McpTool) -> "McpsyncCrewTool":
        """The CrewAI tool for ``tool``."""
        made = cls(name=tool.name, description=tool.description or tool.name, args_schema=tool.args_model)
        made._mcp = tool
        return made

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        tool: McpTool = self._mcp
        if args and len(args) == 1 and isinstance(args[0], dict) and not kwargs:
            kwargs = dict(args[0])
        rendered = tool.call_validated(kwargs)
        return _failure(rendered) if rendered.is_error else rendered.text

    async def _arun(self, *args: Any, **kwargs: Any) -> Any:
        """The same blocking call on a worker thread (``crew.kickoff_async()``, Jupyter)."""
        return await asyncio.to_thread(self._run, *args, **kwargs)


def crewai_tools(source: ToolSource, *, toolkit: Optional[McpToolkit] = None, **options: Any) -> List[Any]:
    """Every tool of ``source`` the model may see, as CrewAI tools (blocks while listing). ``options`` are
    :class:`~mcpsync.integrations.core.McpToolkit`'s."""
    kit = toolkit_of(source, toolkit, options)
    return [McpsyncCrewTool.of(t) for t in kit.tools()]
