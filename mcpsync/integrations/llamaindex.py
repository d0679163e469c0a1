"""MCP tools as LlamaIndex function tools (``pip install mcpsync[llamaindex]``).

::

    from mcpsync.integrations.llamaindex import llamaindex_tools

    agent = llama_index.core.agent.workflow.FunctionAgent(tools=llamaindex_tools(client_or_manager), llm=llm)

Each tool is a ``llama_index.core.tools.FunctionTool`` whose ``fn_schema`` is the pydantic model built from the
MCP schema. ``call`` blocks; ``acall`` (what LlamaIndex's agent workflows use) runs the blocking call on a
worker thread. The output is the text, or a ``TextBlock`` plus ``ImageBlock`` list when there are images. A tool
error, a timeout, a denied call or invalid arguments raise :class:`McpToolFailed` with the model-facing message:
LlamaIndex's agents turn a raising tool into a ``ToolOutput`` with ``is_error=True`` that the model reads.
"""

from __future__ import annotations

import asyncio
import base64
from typing import Any, List, Optional

from llama_index.core.base.llms.types import ImageBlock, TextBlock
from llama_index.core.tools import FunctionTool

from .core import McpTool, McpToolkit, ToolSource, toolkit_of
from .results import Rendered

__all__ = ["McpToolFailed", "llamaindex_tool", "llamaindex_tools"]


class McpToolFailed(Exception):
    """A tool call failed; the message is what the model should read."""


def _output(rendered: Rendered) -> Any:
    if rendered.is_error:
        raise McpToolFailed(rendered.text)
    if not rendered.images:
        return rendered.text
    blocks: List[Any] = [TextBlock(text=rendered.text)]
    for mime, data in rendered.images:
        blocks.append(ImageBlock(image=base64.b64decode(data), image_mimetype=mime))
    return blocks


def llamaindex_tool(tool: McpTool) -> Any:
    """One :class:`~mcpsync.integrations.core.McpTool` as a ``FunctionTool``."""
    model = tool.args_model

    def run(**kwargs: Any) -> Any:
        return _output(tool.call_validated(kwargs))

    async def arun(**kwargs: Any) -> Any:
        return await asyncio.to_thread(run, **kwargs)

    return FunctionTool.from_defaults(
        fn=run, async_fn=arun, name=tool.name, description=tool.description or tool.name, fn_schema=model
    )


def llamaindex_tools(source: ToolSource, *, toolkit: Optional[McpToolkit] = None, **options: Any) -> List[Any]:
    """Every tool of ``source`` the model may see, as ``FunctionTool`` objects (blocks while listing).
    ``options`` are :class:`~mcpsync.integrations.core.McpToolkit`'s."""
    kit = toolkit_of(source, toolkit, options)
    return [llamaindex_tool(t) for t in kit.tools()]
