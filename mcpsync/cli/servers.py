"""Multi-server commands of the ``mcpsync`` CLI, run against the servers of a configuration file.

``mcpsync [--config FILE] status | info | tools | call SERVER_TOOL | prompts | prompt NAME | resources |
read URI``, each with ``--json``; ``--server NAME`` restricts a command to one configured server.
:func:`mcpsync.cli.app.run` calls :func:`run` when a configuration is given or found (see
:func:`mcpsync.manager.config.find_config`). Exit codes follow :mod:`mcpsync.cli`; a listing also exits 3
when a configured (enabled) server is unavailable, after showing what the others answered. Connecting is
bounded by each server's ``connect_timeout``; a broken server never stops the others. Nothing here
registers an OAuth client: a server that needs one is reported (``mcpsync auth login NAME`` registers).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Callable, Dict, IO, List, Mapping, Optional, Sequence, Tuple

from ..errors import ConfigError
from ..manager.manager import Manager
from ..manager.records import ServerStatus, UnknownTool
from . import commands
from . import output as out
from .context import Cli, UsageError, did_you_mean

__all__ = ["run"]

_MARK = MappingProxyType({
    "connected": "ok",
    "disabled": "-",
    "failed": "FAILED",
    "needs_auth": "AUTH",
    "needs_client_registration": "REGISTER",
})
#: Exit code when a configured server the command needed is unavailable (as a connection failure).
EXIT_UNAVAILABLE = 3


def _status_rows(status: Dict[str, ServerStatus]) -> List[Sequence[str]]:
    return [
        (name, _MARK.get(s.status, s.status), s.status, s.reason or (s.transport or "")) for name, s in status.items()
    ]


def _write(stream: IO[str], lines: List[str]) -> None:
    for line in lines:
        stream.write(line + "\n")


def _unavailable(status: Dict[str, ServerStatus]) -> List[ServerStatus]:
    return [s for s in status.values() if s.status not in ("connected", "disabled")]


def _report_unavailable(cli: Cli, down: List[ServerStatus], mgr: Optional[Manager] = None) -> None:
    for s in down:
        hint = ""
        if s.status == "needs_auth":
            static = mgr is not None and mgr.config(s.name).static_credential
            hint = (
                " (the server rejected the credential its configuration sends: check its Authorization header "
                "or bearer token)"
                if static
                else " (log in with: mcpsync auth login %s)" % s.name
            )
        cli.err.line("mcpsync: server %s: %s%s%s" % (s.name, s.status, " (%s)" % s.reason if s.reason else "", hint))


def run(cli: Cli, config_path: str) -> int:
    """Run one multi-server command; returns the exit code. Blocks while servers connect and answer.

    Errors other than a failed tool propagate as :class:`~mcpsync.MCPError` (or
    :class:`~mcpsync.cli.context.UsageError`) for the CLI to map to exit codes.
    """
    args = cli.args
    command = getattr(args, "command", None) or "status"
    mgr = Manager(
        config_path,
        register_clients=False,
        client_options={"warm_cache": not getattr(args, "no_cache", False)},  # as for one server (context.py)
    )
    try:
        names = mgr.names
        if not names:
            raise UsageError(
                "%s defines no servers (expected an object of servers under 'mcpServers', 'servers' or 'mcp')"
                % config_path
            )
        only = getattr(args, "server", None)
        if only is not None and only not in names:
            raise UsageError("no server %r in %s%s" % (only, config_path, did_you_mean(only, names)))
        if only is not None:
            mgr.connect(only)
        else:
            mgr.open()
        status = mgr.status()
        if only is not None:
            status = {only: status[only]}
        down = _unavailable(status)
        if command == "status":
            _status(cli, config_path, status)
            return EXIT_UNAVAILABLE if down else 0
        if command == "call":
            return _call(cli, mgr)
        if not cli.json:
            _report_unavailable(cli, down, mgr)
        code = _COMMANDS[command](cli, mgr, status)
        if command in ("prompt", "read"):  # one server answered: the others' state does not matter
            return code
        return code or (EXIT_UNAVAILABLE if down else 0)
    finally:
        mgr.close()


def _status(cli: Cli, config_path: str, status: Dict[str, ServerStatus]) -> None:
    if cli.json:
        cli.emit_json({"config": str(config_path), "servers": [s.to_dict() for s in status.values()]})
        return
    cli.print("config: %s" % config_path)
    cli.rows(_status_rows(status))


def _connected(mgr: Manager, status: Dict[str, ServerStatus]) -> List[str]:
    return [name for name, s in status.items() if s.status == "connected"]


def _info(cli: Cli, mgr: Manager, status: Dict[str, ServerStatus]) -> int:
    names = _connected(mgr, status)
    if cli.json:
        cli.emit_json({name: out.server_json(mgr.client(name)) for name in names})
        return 0
    for i, name in enumerate(names):
        if i:
            cli.print()
        cli.print("[%s]" % name)
        cli.rows(out.describe_server(mgr.client(name)), indent="  ")
    return 0


def _tools(cli: Cli, mgr: Manager, status: Dict[str, ServerStatus]) -> int:
    server = getattr(cli.args, "server", None)
    tools = mgr.tools(server) if server else mgr.tools()
    if cli.json:
        cli.emit_json(
            [
                {
                    "name": t.name,
                    "server": t.server,
                    "tool": t.original_name,
                    "description": t.description,
                    "inputSchema": t.input_schema,
                }
                for t in tools
            ]
        )
        return 0
    if not tools:
        cli.print("(no tools)")
        return 0
    rows = out.tool_rows([t.tool for t in tools])
    cli.rows([(t.name,) + tuple(row[1:]) for t, row in zip(tools, rows)])
    return 0


def _prompts(cli: Cli, mgr: Manager, status: Dict[str, ServerStatus]) -> int:
    prompts = [p for p in mgr.prompts() if p.server in status]

    def rows() -> List[Tuple[str, ...]]:
        return [(p.server,) + tuple(row) for p, row in zip(prompts, out.prompt_rows([p.prompt for p in prompts]))]

    return cli.listing(prompts, "prompts", lambda: [dict(p.prompt.raw, server=p.server) for p in prompts], rows)


def _resources(cli: Cli, mgr: Manager, status: Dict[str, ServerStatus]) -> int:
    resources = [r for r in mgr.resources() if r.server in status]
    templates = [t for t in mgr.resource_templates() if t.server in status]
    if cli.json:
        cli.emit_json(
            {
                "resources": [dict(r.resource.raw, server=r.server) for r in resources],
                "resourceTemplates": [dict(t.template.raw, server=t.server) for t in templates],
            }
        )
        return 0
    if not resources and not templates:
        cli.print("(no resources)")
        return 0
    rows = out.resource_rows([r.resource for r in resources]) + out.template_rows([t.template for t in templates])
    servers = [r.server for r in resources] + [t.server for t in templates]
    cli.rows([(s,) + tuple(row) for s, row in zip(servers, rows)])
    return 0


def _pick(cli: Cli, what: str, matches: List[str], connected: List[str], candidates: List[str], key: str) -> str:
    """The one server to ask for ``key``: the only one that lists it, else the only one connected."""
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise UsageError(
            "%s %r is offered by several servers (%s); choose one with --server NAME" % (what, key, ", ".join(matches))
        )
    if len(connected) == 1:
        return connected[0]
    if not connected:
        raise UsageError("no configured server is connected")
    raise UsageError(
        "no connected server lists %s %r%s; choose one with --server NAME (%s)"
        % (what, key, did_you_mean(key, candidates), ", ".join(connected))
    )


def _prompt(cli: Cli, mgr: Manager, status: Dict[str, ServerStatus]) -> int:
    offered = [(p.server, p.prompt.name) for p in mgr.prompts() if p.server in status]
    return _on_the_server(cli, mgr, status, "prompt", cli.args.prompt, offered, commands.cmd_prompt)


def _read(cli: Cli, mgr: Manager, status: Dict[str, ServerStatus]) -> int:
    offered = [(r.server, r.resource.uri) for r in mgr.resources() if r.server in status]
    return _on_the_server(cli, mgr, status, "resource", cli.args.uri, offered, commands.cmd_read)


def _on_the_server(
    cli: Cli,
    mgr: Manager,
    status: Dict[str, ServerStatus],
    what: str,
    key: str,
    offered: List[Tuple[str, str]],
    handler: Callable[[Cli, Any], int],
) -> int:
    """Run ``handler`` on ``--server``, else on the server that offers ``key`` (see :func:`_pick`)."""
    server = getattr(cli.args, "server", None)
    if server is None:
        matches = sorted({s for s, k in offered if k == key})
        server = _pick(cli, what, matches, _connected(mgr, status), [k for _, k in offered], key)
    return _on_server(cli, mgr, status, server, handler)


def _on_server(
    cli: Cli, mgr: Manager, status: Dict[str, ServerStatus], server: str, handler: Callable[[Cli, Any], int]
) -> int:
    if status[server].status != "connected":
        raise ConfigError("server %s is not connected (%s)" % (server, status[server].status), server=server)
    return int(handler(cli, mgr.client(server)))


def _resolve_tool(cli: Cli, mgr: Manager, name: str) -> Tuple[str, Optional[str]]:
    """(name, server) for :meth:`Manager.call_tool`: ``name`` as typed on ``--server``, an exposed name
    (``SERVER_TOOL``), or a tool's own name when exactly one server offers it.

    Raises :class:`UsageError` (listing the candidates) when several servers offer ``name`` and
    :class:`UnknownTool` (with the closest names) when none does.
    """
    server = getattr(cli.args, "server", None)
    tools = mgr.tools(server) if server else mgr.tools()
    if server:
        if any(t.original_name == name for t in tools):
            return name, server
        for t in tools:
            if t.name == name:  # the exposed name typed together with --server
                return t.original_name, server
        raise UnknownTool(
            "server %s has no tool named %r%s" % (server, name, did_you_mean(name, [t.original_name for t in tools])),
            server=server,
        )
    if any(t.name == name for t in tools):
        return name, None
    owners = [t for t in tools if t.original_name == name]
    if len(owners) == 1:
        return name, owners[0].server
    if owners:
        raise UsageError(
            "%d servers offer a tool named %r (%s): call one of %s, or choose the server with --server NAME"
            % (len(owners), name, ", ".join(t.server for t in owners), ", ".join(t.name for t in owners))
        )
    names = [t.name for t in tools] + [t.original_name for t in tools]
    raise UnknownTool("no server offers a tool named %r%s" % (name, did_you_mean(name, names)))


def _call(cli: Cli, mgr: Manager) -> int:
    # The per-call timeout is each server's configured ``timeout`` (default 30 s).
    if getattr(cli.args, "method", None):
        status = mgr.status()
        server = getattr(cli.args, "server", None)
        if server is None:
            connected = _connected(mgr, status)
            if len(connected) != 1:
                raise UsageError(
                    "--method sends one request to one server: choose it with --server NAME (%s)"
                    % ", ".join(connected or sorted(status))
                )
            server = connected[0]
        return _on_server(cli, mgr, status, server, commands.cmd_request)
    name = cli.args.tool
    tool, server = _resolve_tool(cli, mgr, name)
    result = mgr.call_tool(tool, getattr(cli.args, "arguments", None) or {}, server=server)
    return commands.report_call_result(cli, name, result)


_COMMANDS: Mapping[str, Callable[[Cli, Manager, Dict[str, ServerStatus]], int]] = MappingProxyType({
    "info": _info,
    "tools": _tools,
    "prompts": _prompts,
    "prompt": _prompt,
    "resources": _resources,
    "read": _read,
})
