"""MCP tools for agent frameworks: one module per framework, each imported only when used.

* :mod:`mcpsync.integrations.langchain` -- LangChain / LangGraph ``StructuredTool`` (``pip install mcpsync[langchain]``)
* :mod:`mcpsync.integrations.pydantic_ai` -- a pydantic-ai toolset (``mcpsync[pydantic-ai]``)
* :mod:`mcpsync.integrations.smolagents` -- smolagents ``Tool`` and a closing collection (``mcpsync[smolagents]``)
* :mod:`mcpsync.integrations.openai_agents` -- OpenAI Agents SDK ``FunctionTool`` (``mcpsync[openai-agents]``)
* :mod:`mcpsync.integrations.llamaindex` -- LlamaIndex ``FunctionTool`` (``mcpsync[llamaindex]``)
* :mod:`mcpsync.integrations.crewai` -- CrewAI ``BaseTool`` (``mcpsync[crewai]``)
* :mod:`mcpsync.integrations.dspy` / :mod:`mcpsync.integrations.haystack` -- ``dspy.Tool`` / Haystack ``Tool``
* :mod:`mcpsync.integrations.agent_framework` -- Agent Framework ``FunctionTool`` (``mcpsync[agent-framework]``)
* :mod:`mcpsync.integrations.strands` -- Strands ``AgentTool`` and a ``ToolProvider`` (``mcpsync[strands]``)
* :mod:`mcpsync.integrations.google_adk` -- Google ADK ``BaseTool`` and a ``BaseToolset`` (``mcpsync[google-adk]``)
* :mod:`mcpsync.integrations.langchain_mcp` -- ``MCPAdapter`` in ``langchain.mcp``'s shape (``mcpsync[langchain]``)

All of them sit on :class:`~mcpsync.integrations.core.McpToolkit` (listing, visibility, policy, naming,
transforms, result budget, error mapping). Importing this package imports no framework.
"""

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING

from .._lazy import exports as _exports
from .._lazy import table as _table

if _TYPE_CHECKING:  # the lazy names, for type checkers ("X as X" re-exports each; nothing is imported at run time)
    from .core import McpTool as McpTool, McpToolkit as McpToolkit
    from .results import Rendered as Rendered, ResultBudget as ResultBudget, ResultStore as ResultStore

_LAZY = _table(
    {
        ".core": ("McpTool", "McpToolkit"),
        ".results": ("Rendered", "ResultBudget", "ResultStore"),
    }
)
__all__ = sorted(_LAZY)

__getattr__, __dir__ = _exports(__name__, _LAZY, globals())
