"""The single-server commands of the ``mcpsync`` command line.

Each ``cmd_<name>(cli, client)`` runs against an open :class:`mcpsync.Client`,
writes its output through ``cli`` (readable, or JSON with ``--json``) and
returns the exit code. Errors propagate; :func:`mcpsync.cli.app` maps them to
messages and exit codes.
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional

from ..errors import CapabilityError, MCPError, MethodNotFound, RemoteError
from ..types import CallToolResult, ProgressEvent
from . import output as out
from .context import Cli, UsageError, did_you_mean


if TYPE_CHECKING:  # pragma: no cover
    from ..client.client import Client

__all__ = [
    "cmd_call",
    "cmd_info",
    "cmd_prompt",
    "cmd_prompts",
    "cmd_read",
    "cmd_request",
    "cmd_resources",
    "cmd_tools",
    "progress_mode",
    "run_call",
]


def cmd_info(cli: Cli, client: Client) -> int:
    """``mcpsync info``: the server's identity, negotiated protocol and capabilities."""
    if cli.json:
        cli.emit_json(out.server_json(client))
        return 0
    cli.rows(out.describe_server(client))
    return 0


def cmd_tools(cli: Cli, client: Client) -> int:
    """``mcpsync tools``: every tool, with its arguments and description."""
    tools = client.list_tools()
    return cli.listing(
        tools, "tools", lambda: {"tools": [t.raw or t.to_dict() for t in tools]}, lambda: out.tool_rows(tools)
    )


def progress_mode(cli: Cli) -> str:
    """ "bar" when stderr is a terminal, "lines" with -v otherwise, else "off"."""
    if cli.err.isatty:
        return "bar"
    return "lines" if cli.verbose else "off"


def run_call(
    cli: Cli,
    client: Client,
    name: str,
    arguments: Optional[Dict[str, Any]],
    bar: out.ProgressBar,
    progress: Optional[Callable[[ProgressEvent], object]] = None,
) -> CallToolResult:
    """Call ``name`` and wait, cancelling it on Ctrl-C (the server gets ``notifications/cancelled``).

    ``progress`` (default: ``bar``) receives each progress event; ``bar`` is erased at the end.
    """
    cli.in_flight = True
    handle = client.call_tool_async(name, arguments, progress=progress or bar)
    try:
        return handle.result()
    except KeyboardInterrupt:
        # The session already cancels a request whose waiter is interrupted; this makes sure of it
        # (a no-op returning False when that happened).
        handle.cancel("cancelled by the user (Ctrl-C)")
        raise
    finally:
        bar.finish()


def cmd_request(cli: Cli, client: Client) -> int:
    """``mcpsync call --method METHOD [--params JSON]``: send any request; its raw result as JSON."""
    result = client.request(cli.args.method, getattr(cli.args, "request_params", None))
    if cli.json:
        cli.emit_json(result)
    else:
        cli.print(out.dump_json(result))
    return 0


def cmd_call(cli: Cli, client: Client) -> int:
    """``mcpsync call TOOL --args JSON``: call a tool; exit 1 when it reports isError."""
    if getattr(cli.args, "method", None):
        return cmd_request(cli, client)
    arguments = cli.args.arguments
    bar = out.ProgressBar(cli.err, progress_mode(cli), label=cli.args.tool)
    try:
        result = run_call(cli, client, cli.args.tool, arguments, bar)
    except RemoteError as exc:
        exc.cli_hint = _unknown_tool_hint(client, cli.args.tool)  # type: ignore[attr-defined]
        raise
    cli.in_flight = False
    return report_call_result(cli, cli.args.tool, result)


def report_call_result(cli: Cli, tool: str, result: CallToolResult) -> int:
    """Print a tool's result (JSON with ``--json``); the exit code: 1 when the tool reported isError, else 0."""
    if cli.json:
        cli.emit_json(result.raw)
    else:
        text = out.format_call_result(result)
        if text:
            cli.print(text)
    if result.is_error:
        cli.err.line("mcpsync: tool %r reported an error (isError)" % tool)
        return 1
    return 0


def _unknown_tool_hint(client: Client, name: str) -> Optional[str]:
    """After a failed call: when the server has no tool ``name``, a line saying so with the closest names."""
    try:
        names = [t.name for t in client.list_tools()]
    except MCPError:
        return None
    if name in names:
        return None
    return "mcpsync: the server has no tool %r%s; `mcpsync tools` lists them" % (name, did_you_mean(name, names))


def cmd_prompts(cli: Cli, client: Client) -> int:
    """``mcpsync prompts``: every prompt with its arguments (optional ones in brackets)."""
    prompts = client.list_prompts()
    return cli.listing(
        prompts, "prompts", lambda: {"prompts": [p.raw for p in prompts]}, lambda: out.prompt_rows(prompts)
    )


def cmd_prompt(cli: Cli, client: Client) -> int:
    """``mcpsync prompt NAME [--args JSON]``: the prompt's messages."""
    arguments = cli.args.arguments
    result = client.get_prompt(cli.args.prompt, {k: _as_str(v) for k, v in arguments.items()})
    if cli.json:
        cli.emit_json(result.raw)
    else:
        cli.print(out.format_prompt_result(result))
    return 0


def _as_str(value: Any) -> str:
    if isinstance(value, str):
        return value
    import json

    return json.dumps(value, ensure_ascii=False)


def cmd_resources(cli: Cli, client: Client) -> int:
    """``mcpsync resources``: the resources, then the resource templates."""
    resources = client.list_resources()
    templates: List[Any] = []
    try:
        templates = client.list_resource_templates()
    except (MethodNotFound, CapabilityError):
        pass
    except RemoteError as exc:  # a server without templates may answer anything; the listing still counts
        cli.err.line("mcpsync: could not list resource templates: %s" % exc.message)
    if cli.json:
        cli.emit_json({"resources": [r.raw for r in resources], "resourceTemplates": [t.raw for t in templates]})
        return 0
    if not resources and not templates:
        cli.print("(no resources)")
        return 0
    cli.rows(out.resource_rows(resources))
    if templates:
        if resources:
            cli.print()
        cli.print("Templates:")
        cli.rows(out.template_rows(templates), indent="  ")
    return 0


def cmd_read(cli: Cli, client: Client) -> int:
    """``mcpsync read URI [-o FILE]``: the resource's text (binary contents summarised, or saved with -o)."""
    result = client.read_resource(cli.args.uri)
    output = getattr(cli.args, "output", None)
    if output:
        if not result.contents:
            raise UsageError("the resource has no contents to write")
        first = result.contents[0]
        if first.blob is not None:
            try:
                data = base64.b64decode(first.blob)
            except (binascii.Error, ValueError):
                data = first.blob.encode("utf-8")
        else:
            data = (first.text or "").encode("utf-8")
        with open(output, "wb") as f:
            f.write(data)
        if not cli.json:
            cli.err.line("wrote %d bytes to %s" % (len(data), output))
    if cli.json:
        cli.emit_json(result.raw)
    elif not output:
        cli.print(out.format_read_result(result))
    return 0
