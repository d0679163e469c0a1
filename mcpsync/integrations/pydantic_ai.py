"""MCP tools as a pydantic-ai toolset (``pip install mcpsync[pydantic-ai]``).

::

    from mcpsync.integrations.pydantic_ai import McpsyncToolset

    agent = pydantic_ai.Agent(model, toolsets=[McpsyncToolset(client_or_manager, max_result_chars=20_000)])

:class:`McpsyncToolset` is a ``pydantic_ai.toolsets.AbstractToolset``. Its tools are the toolkit's (visibility,
policy, naming, transforms). Arguments are checked against a pydantic model built from the MCP schema;
invalid ones raise ``ModelRetry`` (the model is asked to correct them, within the tool's retry budget). A tool
error, a timeout or a denied call raises ``ToolFailed``: the model sees the failure and adapts, without using
up retries. Results are the text, or the text plus ``BinaryContent`` images. Each call runs the blocking
mcpsync call on a worker thread (``asyncio.to_thread``), so the agent's event loop never blocks.
"""

from __future__ import annotations

import asyncio
import base64
from typing import Any, Dict, Optional

from pydantic import ValidationError
from pydantic_ai.exceptions import ModelRetry, ToolFailed
from pydantic_ai.messages import BinaryContent
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.toolsets.abstract import ToolsetTool
from pydantic_core import SchemaValidator, core_schema

from .core import McpTool, McpToolkit, ToolSource, toolkit_of
from .results import Rendered

__all__ = ["McpsyncToolset"]

_ANY = SchemaValidator(core_schema.any_schema())


def _output(rendered: Rendered) -> Any:
    if not rendered.images:
        return rendered.text
    parts: list = [rendered.text]  # type: ignore[type-arg]
    for mime, data in rendered.images:
        try:
            parts.append(BinaryContent(data=base64.b64decode(data), media_type=mime))
        except ValueError:
            parts.append("[an image that is not valid base64 was left out]")
    return parts


class McpsyncToolset(AbstractToolset[Any]):  # type: ignore[misc,unused-ignore]
    """A Client's or a Manager's tools as a pydantic-ai toolset.

    Args:
        source: a :class:`~mcpsync.Client` or :class:`~mcpsync.Manager` (or pass ``toolkit=``).
        toolkit: a ready :class:`~mcpsync.integrations.core.McpToolkit`.
        id: the toolset's id (unique among an agent's toolsets).
        max_retries: how often the model may retry after invalid arguments (None: the agent's default).
        options: :class:`~mcpsync.integrations.core.McpToolkit`'s keyword arguments.

    pydantic-ai asks for the tools at every step of a run: they follow the server's list (after
    ``notifications/tools/list_changed`` the next step sees the new list; listing runs on a worker thread).
    ``refresh()`` re-lists now.
    """

    def __init__(
        self,
        source: Optional[ToolSource] = None,
        *,
        toolkit: Optional[McpToolkit] = None,
        id: Optional[str] = None,
        max_retries: Optional[int] = None,
        **options: Any,
    ) -> None:
        if toolkit is None and source is None:
            raise TypeError("give a Client, a Manager or an McpToolkit")
        self.toolkit = toolkit_of(source, toolkit, options)
        self._id = id
        self._max_retries = max_retries
        self._by_name: Dict[str, McpTool] = {}

    @property
    def id(self) -> Optional[str]:
        return self._id

    @property
    def label(self) -> str:
        return "mcpsync toolset"

    def refresh(self) -> None:
        """Re-list the tools now (blocks)."""
        self.toolkit.tools(refresh=True)

    async def get_tools(self, ctx: Any) -> Dict[str, Any]:
        tools = await asyncio.to_thread(self.toolkit.tools)
        retries = self._max_retries if self._max_retries is not None else ctx.max_retries
        out: Dict[str, Any] = {}
        for tool in tools:
            definition = ToolDefinition(
                name=tool.name,
                description=tool.description,
                parameters_json_schema=tool.json_schema(),
                metadata={"mcp_server": tool.server, "mcp_tool": tool.tool.name},
            )
            out[tool.name] = ToolsetTool(toolset=self, tool_def=definition, max_retries=retries, args_validator=_ANY)
        self._by_name = {t.name: t for t in tools}
        return out

    async def call_tool(self, name: str, tool_args: Dict[str, Any], ctx: Any, tool: Any) -> Any:
        mcp_tool: Optional[McpTool] = self._by_name.get(name)
        if mcp_tool is None:
            raise ToolFailed("there is no tool named %r" % name)
        try:
            arguments = mcp_tool.args_model.model_validate(tool_args or {})
        except ValidationError as exc:
            raise ModelRetry("invalid arguments for %s: %s" % (name, exc)) from None
        rendered = await asyncio.to_thread(mcp_tool.call, arguments)
        if rendered.is_error:
            raise ToolFailed(rendered.text)
        return _output(rendered)
