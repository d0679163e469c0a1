"""MCP tools for agent frameworks: one module per framework, each imported only when used.

* :mod:`mcpsync.integrations.langchain` -- LangChain / LangGraph ``StructuredTool`` (``pip install mcpsync[langchain]``)
* :mod:`mcpsync.integrations.pydantic_ai` -- a pydantic-ai toolset (``mcpsync[pydantic-ai]``)
* :mod:`mcpsync.integrations.smolagents` -- smolagents ``Tool`` and a closing collection (``mcpsync[smolagents]``)
* :mod:`mcpsync.integrations.openai_agents` -- OpenAI Agents SDK ``FunctionTool`` (``mcpsync[openai-agents]``)
* :mod:`mcpsync.integrations.llamaindex` -- LlamaIndex ``FunctionTool`` (``mcpsync[llamaindex]``)
* :mod:`mcpsync.integrations.crewai` -- CrewAI ``BaseTool`` (``mcpsync[crewai]``)
* :mod:`mcpsync.integrations.dspy` / :mod:`mcpsync.integrations.haystack` -- ``dspy.Tool`` / Haystack ``Tool``

All of them sit on :class:`~mcpsync.integrations.core.McpToolkit` (listing, visibility, policy, naming,
transforms, result budget, error mapping). Importing this package imports no framework.
"""

from __future__ import annotations

from typing import Any

__all__ = ["McpTool", "McpToolkit", "Rendered", "ResultBudget", "ResultStore"]

_LAZY = {
    "McpTool": "core",
    "McpToolkit": "core",
    "Rendered": "results",
    "ResultBudget": "results",
    "ResultStore": "results",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError("module %r has no attribute %r" % (__name__, name))
    import importlib

    value = getattr(importlib.import_module("%s.%s" % (__name__, module)), name)
    globals()[name] = value
    return value
