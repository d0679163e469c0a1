"""A small MCP server built on the official Python SDK (``mcp`` 2.x, ``MCPServer``), run over stdio.

Test-only peer for tests/e2e/test_interop_sdk.py: ``python tests/peers/sdk_server.py``. It runs in the SDK's
default mode (it answers both ``server/discover`` and ``initialize``; the client picks the era).
"""

from __future__ import annotations

from typing import Annotated

import anyio
from pydantic import BaseModel

from mcp.server.mcpserver import Context, Elicit, ListRoots, MCPServer, Resolve, Sample
from mcp_types import ListRootsResult, SamplingMessage, TextContent

server = MCPServer("mcpsync-interop-sdk", instructions="Interop peer for mcpsync's tests.", version="1.2.3")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def shout(text: str) -> str:
    """Upper-case the text."""
    return text.upper()


@server.tool()
def fail(reason: str) -> str:
    """Always fails (the result has isError set)."""
    raise ValueError("failing on purpose: " + reason)


@server.tool()
async def count_up(steps: int, ctx: Context) -> str:
    """Report ``steps`` progress notifications, then finish."""
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, "step %d" % i)
        await anyio.sleep(0.01)
    return "counted to %d" % steps


class Person(BaseModel):
    name: str
    age: int = 30


def ask_person() -> Elicit[Person]:
    return Elicit("Who are you?", Person)


@server.tool()
def greet(person: Annotated[Person, Resolve(ask_person)]) -> str:
    """Ask the user who they are (elicitation), then greet them."""
    return "hello %s (%d)" % (person.name, person.age)


def ask_model() -> Sample:
    return Sample([SamplingMessage(role="user", content=TextContent(type="text", text="say pong"))], max_tokens=20)


@server.tool()
def think(answer: Annotated[object, Resolve(ask_model)]) -> str:
    """Ask the client's model (sampling) and return its text."""
    content = getattr(answer, "content", None)
    return "model said: %s" % getattr(content, "text", content)


def ask_roots() -> ListRoots:
    return ListRoots()


@server.tool()
def where(roots: Annotated[ListRootsResult, Resolve(ask_roots)]) -> str:
    """Ask the client for its roots and list their URIs."""
    return " ".join(str(r.uri) for r in roots.roots)


@server.prompt()
def review(code: str, language: str = "python") -> str:
    """Ask for a code review."""
    return "Please review this %s code:\n%s" % (language, code)


@server.resource("config://app")
def app_config() -> str:
    """The app's configuration."""
    return '{"debug": false}'


@server.resource("users://{user_id}/profile")
def user_profile(user_id: str) -> str:
    """A user's profile."""
    return "profile of %s" % user_id


if __name__ == "__main__":
    server.run("stdio")
