"""MCP tools as OpenAI Agents SDK function tools (``pip install mcpsync[openai-agents]``).

::

    from mcpsync.integrations.openai_agents import openai_agents_tools

    agent = agents.Agent(name="helper", tools=openai_agents_tools(client_or_manager, max_result_chars=20_000))
    agents.Runner.run_sync(agent, "...")

Each tool is an ``agents.FunctionTool``. Its parameters are the MCP schema in strict form when it can be
expressed strictly (``strict_json_schema=True``; optional arguments become nullable and the nulls are dropped
again before the call), else the schema as it is with ``strict_json_schema=False``. ``on_invoke_tool`` parses
the model's JSON, validates it with the pydantic model built from the schema and runs the blocking call on a
worker thread. Results are the text, or ``ToolOutputText`` plus ``ToolOutputImage`` parts when there are images.
A tool error, a timeout, a denied call and invalid arguments come back as a string the model reads (the SDK's
convention for errors that should not fail the run).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, List, Optional

from agents import FunctionTool
from agents.tool import ToolOutputImage, ToolOutputText
from pydantic import ValidationError

from ..manager.adapters import strict_schema
from .core import McpTool, McpToolkit, ToolSource, toolkit_of
from .results import Rendered

__all__ = ["openai_agents_tool", "openai_agents_tools"]


def _output(rendered: Rendered) -> Any:
    if rendered.is_error or not rendered.images:
        return rendered.text
    parts: List[Any] = [ToolOutputText(text=rendered.text)]
    for mime, data in rendered.images:
        parts.append(ToolOutputImage(image_url="data:%s;base64,%s" % (mime, data)))
    return parts


def openai_agents_tool(tool: McpTool, *, strict: bool = True) -> Any:
    """One :class:`~mcpsync.integrations.core.McpTool` as a ``FunctionTool`` (strict when ``strict`` and the
    schema allows it)."""
    schema = tool.json_schema()
    converted = strict_schema(schema) if strict else None

    async def invoke(ctx: Any, raw: str) -> Any:
        try:
            values = json.loads(raw) if raw else {}
        except ValueError as exc:
            return "Error: the arguments are not valid JSON: %s" % exc
        if not isinstance(values, dict):
            return "Error: the arguments must be a JSON object"
        try:
            arguments = tool.args_model.model_validate(values)
        except ValidationError as exc:
            return "Error: invalid arguments for %s: %s" % (tool.name, exc)
        return _output(await asyncio.to_thread(tool.call, arguments))

    return FunctionTool(
        name=tool.name,
        description=tool.description or tool.name,
        params_json_schema=converted if converted is not None else schema,
        on_invoke_tool=invoke,
        strict_json_schema=converted is not None,
    )


def openai_agents_tools(
    source: ToolSource, *, toolkit: Optional[McpToolkit] = None, strict: bool = True, **options: Any
) -> List[Any]:
    """Every tool of ``source`` the model may see, as ``FunctionTool`` objects (blocks while listing).
    ``options`` are :class:`~mcpsync.integrations.core.McpToolkit`'s."""
    kit = toolkit_of(source, toolkit, options)
    return [openai_agents_tool(t, strict=strict) for t in kit.tools()]
