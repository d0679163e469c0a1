"""Testing MCP servers with pytest and mcpsync: a plugin (:mod:`mcpsync.testing.plugin`, registered through the
``pytest11`` entry point, so pytest loads it by itself once mcpsync is installed) and assertion helpers.

Nothing imports this package but pytest and your tests: ``import mcpsync`` never does.

Usage (see docs/guides/testing.md)::

    import pytest
    from mcpsync.testing import assert_result, assert_tool_error

    @pytest.mark.mcp_server(["python", "-m", "my_server"], era=["legacy", "modern"])
    def test_add(mcp_client):
        assert_result(mcp_client.call_tool("add", {"a": 1, "b": 2}), text="3")

The marker also takes ``scope="module"`` / ``"session"`` (one server shared by the tests of a module / of the
run) and, as its target, a server object written with the official SDK or FastMCP, served in the test process
(:class:`mcpsync.testing.inprocess.InProcessServer`).

The helpers raise :class:`AssertionError` with the result in the message; they are plain functions and work
outside pytest too.
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any, Iterator, List, Mapping, Optional, Pattern, Sequence, Type, Union

from ..errors import MCPError, RemoteError
from ..types import CallToolResult

__all__ = [
    "ServerTarget",
    "assert_result",
    "assert_tool_error",
    "raises_mcp_error",
    "result_text",
]

#: What the ``mcp_server`` marker and the ``--mcp-server`` option accept: a command (a list, or a string split
#: like a shell would), an ``http(s)://`` URL, or one configuration entry (a dict as in ``mcpServers``).
ServerTarget = Union[str, Sequence[str], Mapping[str, Any]]


def result_text(result: CallToolResult) -> str:
    """The text of every text block of ``result``, joined with newlines."""
    return "\n".join(b.text for b in result.content if getattr(b, "type", None) == "text" and hasattr(b, "text"))


def _show(result: CallToolResult) -> str:
    try:
        return json.dumps(result.raw, ensure_ascii=False, sort_keys=True)[:2000]
    except (TypeError, ValueError):
        return repr(result)[:2000]


def assert_result(
    result: CallToolResult,
    *,
    text: Optional[str] = None,
    contains: Optional[str] = None,
    match: Union[str, Pattern[str], None] = None,
    structured: Any = None,
) -> CallToolResult:
    """Assert that a tool call succeeded (``isError`` false) and, when given, that its text equals ``text``,
    contains ``contains``, matches the regular expression ``match``, and that its ``structuredContent`` equals
    ``structured``. Returns ``result`` (for chaining). Raises :class:`AssertionError` showing the result."""
    if not isinstance(result, CallToolResult):
        raise AssertionError("expected a CallToolResult, got %r" % (result,))
    if result.is_error:
        raise AssertionError("the tool reported an error (isError): %s" % _show(result))
    _check_text(result, text, contains, match)
    if structured is not None and result.structured_content != structured:
        raise AssertionError(
            "structuredContent is %s, expected %s"
            % (json.dumps(result.structured_content, sort_keys=True), json.dumps(structured, sort_keys=True))
        )
    return result


def assert_tool_error(
    result: CallToolResult,
    *,
    contains: Optional[str] = None,
    match: Union[str, Pattern[str], None] = None,
) -> CallToolResult:
    """Assert that the tool ran and reported an error (``isError`` true), with ``contains`` in its text or a text
    matching ``match`` when given. Returns ``result``."""
    if not isinstance(result, CallToolResult):
        raise AssertionError("expected a CallToolResult, got %r" % (result,))
    if not result.is_error:
        raise AssertionError("expected the tool to report an error (isError), it succeeded: %s" % _show(result))
    _check_text(result, None, contains, match)
    return result


def _check_text(
    result: CallToolResult, text: Optional[str], contains: Optional[str], match: Union[str, Pattern[str], None]
) -> None:
    got = result_text(result)
    if text is not None and got != text:
        raise AssertionError("the result's text is %r, expected %r" % (got, text))
    if contains is not None and contains not in got:
        raise AssertionError("the result's text %r does not contain %r" % (got, contains))
    if match is not None and not re.search(match, got):
        raise AssertionError("the result's text %r does not match %r" % (got, getattr(match, "pattern", match)))


@contextlib.contextmanager
def raises_mcp_error(
    kind: Type[MCPError] = MCPError,
    *,
    code: Optional[int] = None,
    match: Union[str, Pattern[str], None] = None,
) -> Iterator[List[MCPError]]:
    """A ``with`` block that must raise ``kind`` (an :class:`~mcpsync.MCPError` subclass), with the JSON-RPC
    error ``code`` (a :class:`~mcpsync.RemoteError`) and a message matching ``match`` when given.

    Yields a list that holds the error afterwards::

        with raises_mcp_error(RemoteError, code=-32602) as caught:
            client.call_tool("add", {"a": "x"})
        assert caught[0].method == "tools/call"
    """
    caught: List[MCPError] = []
    try:
        yield caught
    except MCPError as exc:
        if not isinstance(exc, kind):
            raise AssertionError("expected %s, got %s: %s" % (kind.__name__, type(exc).__name__, exc)) from exc
        if code is not None and (not isinstance(exc, RemoteError) or exc.code != code):
            raise AssertionError(
                "expected error code %d, got %s: %s" % (code, getattr(exc, "code", None), exc)
            ) from exc
        if match is not None and not re.search(match, str(exc)):
            raise AssertionError("%r does not match %r" % (str(exc), getattr(match, "pattern", match))) from exc
        caught.append(exc)
    else:
        raise AssertionError("expected %s, nothing was raised" % kind.__name__)
