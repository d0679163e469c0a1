"""MCP tools as LangChain / LangGraph tools (``pip install mcpsync[langchain]``).

::

    from mcpsync.integrations.langchain import langchain_tools

    tools = langchain_tools(client_or_manager, max_result_chars=20_000, max_total_timeout=120)
    agent = langchain.agents.create_agent(model, tools)   # or LangGraph's create_react_agent(model, tools)

Each tool is a ``langchain_core.tools.StructuredTool`` with a pydantic ``args_schema`` built from the MCP
schema, ``response_format="content_and_artifact"``: the content is the result's text, or a list of text and
image content blocks when the tool returned images; the artifact is a dict with ``structured_content``,
``is_error``, ``truncated``, ``handle`` and ``spill_path``. A tool error, a timeout, a denied call and invalid
arguments come back as a ``ToolMessage`` with ``status="error"`` (``handle_tool_error`` /
``handle_validation_error``), never as an exception in the agent. ``invoke`` blocks the calling thread;
``ainvoke`` runs the same blocking call on a worker thread (``asyncio.to_thread``), so it works inside a
running event loop (Jupyter, LangGraph's async graph) without blocking it.

The list is built when this is called (the agent keeps it): after the server's tool list changed, call
:func:`langchain_tools` again over the same :class:`~mcpsync.integrations.core.McpToolkit` for the next agent.
"""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List, Optional, Tuple

from langchain_core.tools import StructuredTool, ToolException

from .core import McpTool, McpToolkit, ToolSource, toolkit_of
from .results import Rendered

__all__ = ["langchain_tool", "langchain_tools"]


def _content(rendered: Rendered) -> Tuple[Any, Dict[str, Any]]:
    artifact = {
        "structured_content": rendered.structured,
        "is_error": rendered.is_error,
        "truncated": rendered.truncated,
        "handle": rendered.handle,
        "spill_path": rendered.spill_path,
    }
    if not rendered.images:
        return rendered.text, artifact
    blocks: List[Dict[str, Any]] = [{"type": "text", "text": rendered.text}]
    blocks += [{"type": "image", "base64": data, "mime_type": mime} for mime, data in rendered.images]
    return blocks, artifact


def _validation_message(exc: Exception) -> str:
    return "Error: invalid arguments: %s" % exc


def langchain_tool(tool: McpTool) -> Any:
    """One :class:`~mcpsync.integrations.core.McpTool` as a ``StructuredTool``."""
    model = tool.args_model

    def run(**kwargs: Any) -> Tuple[Any, Dict[str, Any]]:
        arguments = model.model_validate(kwargs)  # LangChain passes field names; the call sends the real names
        rendered = tool.call(arguments)
        if rendered.is_error:
            raise ToolException(rendered.text)
        return _content(rendered)

    async def arun(**kwargs: Any) -> Tuple[Any, Dict[str, Any]]:
        return await asyncio.to_thread(run, **kwargs)

    return StructuredTool(
        name=tool.name,
        description=tool.description or tool.name,
        args_schema=model,
        func=run,
        coroutine=arun,
        response_format="content_and_artifact",
        handle_tool_error=True,
        handle_validation_error=_validation_message,
        metadata={"mcp_server": tool.server, "mcp_tool": tool.tool.name},
    )


def langchain_tools(source: ToolSource, *, toolkit: Optional[McpToolkit] = None, **options: Any) -> List[Any]:
    """Every tool of ``source`` (a Client or a Manager) the model may see, as ``StructuredTool`` objects.

    ``options`` are :class:`~mcpsync.integrations.core.McpToolkit`'s (``server``, ``prefix``, ``timeout``,
    ``max_total_timeout``, ``max_result_chars``, ``transforms``...; an unknown one is a ``ConfigError``); or pass
    a ready ``toolkit``. Blocks while the tools are listed.
    """
    kit = toolkit_of(source, toolkit, options)
    return [langchain_tool(t) for t in kit.tools()]
