"""MCP tools as DSPy tools (``pip install mcpsync[dspy]``).

::

    from mcpsync.integrations.dspy import dspy_tools

    react = dspy.ReAct("question -> answer", tools=dspy_tools(client_or_manager, max_result_chars=20_000))

Each tool is a ``dspy.Tool`` whose ``args`` are the MCP schema's properties (each carrying the schema's
``$defs`` so recursive references still resolve when DSPy checks an argument). Calling it validates the
arguments with the pydantic model built from the schema and makes the blocking call; ``acall`` runs it on a
worker thread. A tool error, a timeout, a denied call or invalid arguments come back as the observation text,
starting ``Error:``.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any, Dict, List, Optional

import dspy

from .core import McpTool, McpToolkit, ToolSource, toolkit_of

__all__ = ["dspy_tool", "dspy_tools"]


def dspy_tool(tool: McpTool) -> Any:
    """One :class:`~mcpsync.integrations.core.McpTool` as a ``dspy.Tool``."""
    params = tool.parameters
    defs = {k: params[k] for k in ("$defs", "definitions") if isinstance(params.get(k), dict)}
    args: Dict[str, Any] = {}
    for name, schema in (params.get("properties") or {}).items():
        sub = copy.deepcopy(schema) if isinstance(schema, dict) else {}
        sub.update(copy.deepcopy(defs))
        args[str(name)] = sub
    arg_desc = {k: str(v.get("description")) for k, v in args.items() if v.get("description")}

    def run(**kwargs: Any) -> str:
        return tool.call_validated(kwargs).text

    async def arun(**kwargs: Any) -> str:
        return await asyncio.to_thread(run, **kwargs)

    made = dspy.Tool(
        run,
        name=tool.name,
        desc=tool.description or tool.name,
        args=args,
        arg_types={k: Any for k in args},
        arg_desc=arg_desc,
    )
    return made


def dspy_tools(source: ToolSource, *, toolkit: Optional[McpToolkit] = None, **options: Any) -> List[Any]:
    """Every tool of ``source`` the model may see, as ``dspy.Tool`` objects (blocks while listing). ``options``
    are :class:`~mcpsync.integrations.core.McpToolkit`'s."""
    kit = toolkit_of(source, toolkit, options)
    return [dspy_tool(t) for t in kit.tools()]
