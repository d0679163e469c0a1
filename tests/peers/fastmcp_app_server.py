"""An MCP App server built on FastMCP 4.2 (``FastMCPApp``), run over stdio, for tests/apps/test_apps_fastmcp.py.

The counter page is the example server's (``mcpsync.example_server.apps.COUNTER_HTML``: put the source tree on
``PYTHONPATH``), served by FastMCP as ``ui://fastmcp/counter``. The tools:

- ``show_counter`` (model and app) links the page;
- ``counter_increment`` is a ``FastMCPApp`` backend tool (``visibility: ["app"]``) that this server leaves out
  of ``tools/list`` (a middleware hides every app-only tool from the listing, as a server may do to keep a
  model's context small); FastMCP also serves it as ``__<hash>_counter_increment``, a name no listing shows;
- ``model_only_fact`` (``visibility: ["model"]``) an App must not call.

``fastmcp`` is not a test dependency of the main virtualenv: ``bash .ci/apps`` installs it (pinned) into
``.ci/apps-fastmcp``, whose interpreter runs this file.
"""

from typing import Any, Dict, Sequence

from fastmcp import FastMCP, FastMCPApp
from fastmcp.apps.config import AppConfig
from fastmcp.server.middleware import Middleware

from mcpsync.example_server.apps import COUNTER_HTML

URI = "ui://fastmcp/counter"

mcp = FastMCP("fastmcp-app-peer")
app = FastMCPApp("Counter")


@app.tool()
def counter_increment(count: int) -> Dict[str, int]:
    """Adds one to a count (called by the counter App only)."""
    return {"count": count + 1}


@mcp.tool(app=AppConfig(resource_uri=URI, visibility=["model", "app"]))
def show_counter(start: int = 0) -> Dict[str, int]:
    """Shows an interactive counter starting at `start`."""
    return {"count": start}


@mcp.tool(app=AppConfig(visibility=["model"]))
def model_only_fact() -> str:
    """A fact for the model; an App may not call this tool."""
    return "Octopuses have three hearts."


@mcp.resource(URI, mime_type="text/html;profile=mcp-app")
def counter_page() -> str:
    return COUNTER_HTML


class HideAppOnlyTools(Middleware):
    """Leaves app-only tools out of tools/list; calling them still works."""

    async def on_list_tools(self, context: Any, call_next: Any) -> Sequence[Any]:
        tools = await call_next(context)
        return [t for t in tools if ((t.meta or {}).get("ui") or {}).get("visibility") != ["app"]]


mcp.add_provider(app)
mcp.add_middleware(HideAppOnlyTools())

if __name__ == "__main__":
    mcp.run(show_banner=False)
