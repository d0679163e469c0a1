"""MCP tools as Microsoft Agent Framework function tools (``pip install mcpsync[agent-framework]``).

::

    from agent_framework import Agent
    from mcpsync.integrations.agent_framework import agent_framework_tools

    agent = Agent(client=chat_client, tools=agent_framework_tools(client_or_manager, max_result_chars=20_000))
    result = await agent.run("...")

Each tool is an ``agent_framework.FunctionTool`` whose ``input_model`` is the MCP tool's JSON Schema (passed to
the model as it is) and whose ``func`` is a plain blocking function: the framework runs it on a worker thread
(``asyncio.to_thread``) when the agent invokes it, so the agent's event loop never blocks, in a script
(``asyncio.run``) as inside Jupyter. The arguments are checked against a pydantic model built from the schema
before the call. Results are the text, or the text plus ``Content.from_data`` images.

A tool error, a timeout, a denied call and invalid arguments raise ``ToolExecutionException``: the framework's
own way for a tool to fail. The agent goes on and the model gets a function result that says the call failed
(``"Error: Function failed."``, plus the message when the chat client's ``function_invocation_configuration``
has ``include_detailed_errors=True``); the message is kept on the result's ``exception``.
``approval_mode="always_require"`` puts the framework's own human approval in front of every call, on top of
mcpsync's approval handler.
"""

from __future__ import annotations

import base64
from typing import Any, List, Literal, Optional

from agent_framework import Content, FunctionTool
from agent_framework.exceptions import ToolExecutionException

from .core import McpTool, McpToolkit, ToolSource, toolkit_of
from .results import Rendered

__all__ = ["agent_framework_tool", "agent_framework_tools"]

ApprovalMode = Literal["always_require", "never_require"]


def _output(rendered: Rendered) -> Any:
    if not rendered.images:
        return rendered.text
    parts: List[Any] = [Content.from_text(rendered.text)]
    for mime, data in rendered.images:
        try:
            parts.append(Content.from_data(data=base64.b64decode(data), media_type=mime))
        except ValueError:
            parts.append(Content.from_text("[an image that is not valid base64 was left out]"))
    return parts


def agent_framework_tool(tool: McpTool, *, approval_mode: Optional[ApprovalMode] = None) -> Any:
    """One :class:`~mcpsync.integrations.core.McpTool` as a ``FunctionTool``. Calling it blocks the calling
    thread for the tool's duration (the agent calls it on a worker thread)."""

    def run(**kwargs: Any) -> Any:
        rendered = tool.call_validated(kwargs)
        if rendered.is_error:
            raise ToolExecutionException(rendered.text)
        return _output(rendered)

    return FunctionTool(
        name=tool.name,
        description=tool.description or tool.name,
        approval_mode=approval_mode,
        func=run,
        input_model=tool.json_schema(),
        additional_properties={"mcp_server": tool.server, "mcp_tool": tool.tool.name},
    )


def agent_framework_tools(
    source: ToolSource,
    *,
    toolkit: Optional[McpToolkit] = None,
    approval_mode: Optional[ApprovalMode] = None,
    **options: Any,
) -> List[Any]:
    """Every tool of ``source`` (a Client or a Manager) the model may see, as ``FunctionTool`` objects (blocks
    while listing). ``options`` are :class:`~mcpsync.integrations.core.McpToolkit`'s; ``approval_mode``
    (``"always_require"`` / ``"never_require"``) is the framework's own approval setting for every tool."""
    kit = toolkit_of(source, toolkit, options)
    return [agent_framework_tool(t, approval_mode=approval_mode) for t in kit.tools()]
