"""A small MCP server built on FastMCP (the ``fastmcp`` package), run over stdio, for the pytest plugin's tests
(tests/testing/test_testing_plugin.py). ``fastmcp`` is not a test dependency of the main virtualenv: the CI stage
``.ci/plugin-peers`` installs it into a virtualenv of its own."""

from fastmcp import FastMCP

mcp = FastMCP("fastmcp-peer")


@mcp.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool
def fail(reason: str) -> str:
    """Always fails."""
    raise ValueError("failing on purpose: " + reason)


if __name__ == "__main__":
    mcp.run(show_banner=False)
