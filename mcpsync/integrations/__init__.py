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

from types import MappingProxyType as _MappingProxyType

from .._lazy import exports

TYPE_CHECKING = False
if TYPE_CHECKING:  # what the lazy names are, for type checkers (mypy reads TYPE_CHECKING as true)
    from .core import McpTool, McpToolkit
    from .results import Rendered, ResultBudget, ResultStore

__all__ = ["McpTool", "McpToolkit", "Rendered", "ResultBudget", "ResultStore"]

_LAZY = _MappingProxyType({
    "McpTool": "core",
    "McpToolkit": "core",
    "Rendered": "results",
    "ResultBudget": "results",
    "ResultStore": "results",
})


__getattr__, __dir__ = exports(__name__, _LAZY, globals())
