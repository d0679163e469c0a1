"""Multi-server commands of the ``mcpsync`` CLI: ``mcpsync [--config FILE] status | tools | call SERVER_TOOL
--args JSON | prompts | resources``, each with ``--json``.

:mod:`mcpsync.cli` calls :func:`run` with its parsed arguments when a
configuration is given or found (see :func:`mcpsync.manager.config.find_config`).
Output goes to the streams passed in (only ``cli_*`` modules write to stdout).
Exit codes follow :mod:`mcpsync.cli`: 0 ok, 1 the tool reported an error,
3 a server needed by the command is unavailable. Connecting is bounded by each
server's ``connect_timeout``; a broken server never stops the others.
"""

from __future__ import annotations

import sys
from typing import IO, Any, Dict, List, Optional

from ..manager.manager import Manager, ServerStatus
from . import output as out

__all__ = ["run"]

_MARK = {
    "connected": "ok",
    "disabled": "-",
    "failed": "FAILED",
    "needs_auth": "AUTH",
    "needs_client_registration": "REGISTER",
}


def _manager(config_path: str) -> Manager:
    return Manager(config_path)


def _status_lines(status: Dict[str, ServerStatus]) -> List[str]:
    rows = [
        (name, _MARK.get(s.status, s.status), s.status, s.reason or (s.transport or "")) for name, s in status.items()
    ]
    return out.table(rows)


def _write(stream: IO[str], lines: List[str]) -> None:
    for line in lines:
        stream.write(line + "\n")


def _unavailable(status: Dict[str, ServerStatus], stderr: IO[str]) -> None:
    for s in status.values():
        if s.status not in ("connected", "disabled"):
            stderr.write("mcpsync: server %s: %s%s\n" % (s.name, s.status, " (%s)" % s.reason if s.reason else ""))


def run(args: Any, config_path: str, *, stdout: Optional[IO[str]] = None, stderr: Optional[IO[str]] = None) -> int:
    """Run one multi-server command; returns the exit code. Blocks while servers connect and answer.

    ``args`` is the CLI's namespace: ``command`` (status, tools, call, prompts, resources), ``json``,
    ``tool`` and ``arguments`` (a dict) for ``call``. Errors other than a failed
    tool propagate as :class:`~mcpsync.MCPError` for the CLI to map to exit codes.
    """
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    as_json = bool(getattr(args, "json", False))
    command = getattr(args, "command", None) or "status"
    mgr = _manager(config_path)
    try:
        mgr.open()
        if command == "call":
            return _call(mgr, args, as_json, stdout)
        status = mgr.status()
        if command == "status":
            if as_json:
                stdout.write(
                    out.dump_json({"config": str(config_path), "servers": [s.to_dict() for s in status.values()]})
                    + "\n"
                )
            else:
                _write(stdout, _status_lines(status))
            return 0
        if not as_json:
            _unavailable(status, stderr)
        if command == "tools":
            tools = mgr.tools()
            if as_json:
                stdout.write(
                    out.dump_json(
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
                    + "\n"
                )
            else:
                rows = out.tool_rows([t.tool for t in tools])
                _write(
                    stdout,
                    out.table([(t.name,) + row[1:] for t, row in zip(tools, rows)], width=out.terminal_width(stdout)),
                )
            return 0
        if command == "prompts":
            prompts = mgr.prompts()
            if as_json:
                stdout.write(out.dump_json([dict(p.prompt.raw, server=p.server) for p in prompts]) + "\n")
            else:
                rows = out.prompt_rows([p.prompt for p in prompts])
                _write(
                    stdout,
                    out.table([(p.server,) + row for p, row in zip(prompts, rows)], width=out.terminal_width(stdout)),
                )
            return 0
        if command == "resources":
            resources, templates = mgr.resources(), mgr.resource_templates()
            if as_json:
                stdout.write(
                    out.dump_json(
                        {
                            "resources": [dict(r.resource.raw, server=r.server) for r in resources],
                            "resourceTemplates": [dict(t.template.raw, server=t.server) for t in templates],
                        }
                    )
                    + "\n"
                )
            else:
                rows = out.resource_rows([r.resource for r in resources])
                rows += out.template_rows([t.template for t in templates])
                servers = [r.server for r in resources] + [t.server for t in templates]
                _write(
                    stdout, out.table([(s,) + row for s, row in zip(servers, rows)], width=out.terminal_width(stdout))
                )
            return 0
        stderr.write("mcpsync: %s is not a multi-server command\n" % command)
        return 2
    finally:
        mgr.close()


def _call(mgr: Manager, args: Any, as_json: bool, stdout: IO[str]) -> int:
    # The per-call timeout is each server's configured ``timeout`` (default 30 s).
    result = mgr.call_tool(args.tool, getattr(args, "arguments", None) or {})
    if as_json:
        stdout.write(out.dump_json(result.raw) + "\n")
    else:
        stdout.write(out.format_call_result(result) + "\n")
    return 1 if result.is_error else 0
