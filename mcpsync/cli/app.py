"""The ``mcpsync`` command line: talk to any MCP server from a shell.

Usage (see docs/guides/cli.md)::

    mcpsync demo
    mcpsync tools -- npx -y @modelcontextprotocol/server-everything
    mcpsync call echo --args '{"message": "hi"}' -- python -m mcpsync.example_server
    mcpsync tools --url https://example.com/mcp --header 'Authorization: Bearer ...'
    mcpsync --config opencode.json status

Everything before ``--`` is for mcpsync; everything after it is the server's
command line (run over stdio). Exit codes: 0 success, 1 the tool reported an
error (isError), 2 usage or configuration error, 3 connection or transport
failure, 4 server or protocol error, 5 timeout, 6 authentication required or
failed, 130 interrupted (Ctrl-C), 70 internal error (a bug: please report it).

This package (:mod:`mcpsync.cli`) is the only part of mcpsync that
writes to stdout.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from types import MappingProxyType
from typing import IO, Any, Dict, List, Mapping, Optional, Sequence, Tuple, Type

from ..__version__ import __version__
from ..errors import (
    AuthError,
    AuthRequired,
    ClientClosed,
    ConfigError,
    ConnectTimeout,
    MCPError,
    NeedsClientRegistration,
    RemoteError,
    RequestCancelled,
    RequestTimeout,
    ServerExited,
    ToolError,
    TransportError,
)
from .context import Cli, UsageError

__all__ = ["main", "build_parser", "EXIT_CODES"]

EXIT_OK = 0
EXIT_TOOL_ERROR = 1
EXIT_USAGE = 2
EXIT_CONNECTION = 3
EXIT_SERVER = 4
EXIT_TIMEOUT = 5
EXIT_AUTH = 6
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130

#: Every exit code and its meaning (documented in docs/guides/cli.md).
EXIT_CODES: Mapping[int, str] = MappingProxyType({
    EXIT_OK: "success",
    EXIT_TOOL_ERROR: "the tool ran and reported an error (isError)",
    EXIT_USAGE: "usage or configuration error (bad option, bad JSON, no server given)",
    EXIT_CONNECTION: "connection or transport failure (server did not start, crashed, unreachable)",
    EXIT_SERVER: "server or protocol error (JSON-RPC error, unknown tool/prompt/resource, missing capability)",
    EXIT_TIMEOUT: "a request timed out (the server was told to cancel it)",
    EXIT_AUTH: "authentication required or failed",
    EXIT_INTERNAL: "internal error in mcpsync (a bug)",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C); a call in flight was cancelled",
})

#: Commands that need one server (after ``--`` or ``--url``), or the configured servers.
SERVER_COMMANDS = ("info", "tools", "call", "prompts", "prompt", "resources", "read")
#: Commands the multi-server manager (``--config``) answers.
MANAGER_COMMANDS = ("status", "info", "tools", "call", "prompts", "prompt", "resources", "read")

# ---------------------------------------------------------------------------- the parser


def _option(*flags: str, **kwargs: Any) -> Tuple[Tuple[str, ...], Dict[str, Any]]:
    return flags, kwargs


def _add_common(p: argparse.ArgumentParser, top: bool) -> None:
    """Options accepted both before and after the command (``mcpsync --json tools`` = ``mcpsync tools --json``).

    The table is built on each call, so no two parsers share a list default. On a subcommand (``top`` false) each
    option's default and help are ``SUPPRESS``: it is accepted there too, without repeating it in the help, and
    without overwriting what was given before the command."""
    groups = (
        ("output", (
            _option("--json", action="store_true", default=False, help="machine output: JSON on stdout"),
            _option("-v", "--verbose", action="count", default=0,
                    help="show server log messages and server stderr on stderr (-vv: also mcpsync debug logging and "
                    "the protocol trace: every frame in and out, truncated, secrets redacted)"),
        )),
        ("server", (
            _option("--url", default=None, help="connect to a remote server (Streamable HTTP, falling back to SSE)"),
            _option("--card", default=None, metavar="URL",
                    help="connect to the remote a Server Card describes (its headers: --header or --card-input;"
                    " docs/guides/cards.md)"),
            _option("--card-input", action="append", default=[], metavar="NAME=VALUE",
                    help="answer a --card header or URL variable by name (repeatable)"),
            _option("--allow-local", action="append", default=[], metavar="HOST",
                    help="let --card use plain http and this local or private host (repeatable; '*' allows every one)"),
            _option("--transport", choices=("auto", "http", "sse"), default="auto",
                    help="remote transport (default auto)"),
            _option("--header", action="append", default=[], metavar="'K: V'",
                    help="HTTP header for --url (repeatable)"),
            _option("--no-cache", action="store_true", default=False,
                    help="do not reuse what an earlier run learned about the server (protocol era, discover result, "
                    "listings within their TTL; kept in $MCPSYNC_CACHE_DIR/warm, else ~/.cache/mcpsync/warm)"),
            _option("--auth", default=None, metavar="TOKEN",
                    help="bearer token for --url, sent as 'Authorization: Bearer TOKEN' ('@FILE' reads it from a "
                    "file, which keeps it out of the process list and the shell history)"),
            _option("--config", default=None, metavar="FILE",
                    help="server configuration file (multi-server mode; also found in the usual places)"),
            _option("--env", action="append", default=[], metavar="K=V",
                    help="environment variable for the server command (repeatable)"),
            _option("--inherit-env", action="store_true", default=False,
                    help="pass this whole environment to the server (default: a safe subset plus --env)"),
            _option("--server", default=None, metavar="NAME",
                    help="with a configuration: the configured server to use (info, tools, call, prompts, prompt, "
                    "resources, read)"),
            _option("--auth-file", default=None, metavar="STORE",
                    help="credential store for --url: a file, keyring[:SERVICE] or redis://... (default: "
                    "$MCPSYNC_AUTH_STORE, $MCPSYNC_AUTH_FILE or the user store, as `mcpsync auth` uses)"),
            _option("--cwd", default=None, metavar="DIR", help="working directory of the server command"),
            _option("--name", default=None, help="display name of the server (logs and messages)"),
            _option("--protocol", default="auto", metavar="auto|modern|legacy|VERSION",
                    help="protocol era or revision (default auto: negotiate)"),
            _option("--timeout", type=_seconds, default=60.0, metavar="SECONDS",
                    help="idle timeout per request, reset by progress (0: none; default 60)"),
            _option("--connect-timeout", type=_seconds, default=30.0, metavar="SECONDS",
                    help="one bound for the whole connect: start, protocol probe, fallback, handshake (default 30)"),
        )),
    )
    for title, options in groups:
        g = p.add_argument_group(title)
        for flags, kwargs in options:
            if not top:
                kwargs.update(default=argparse.SUPPRESS, help=argparse.SUPPRESS)
            g.add_argument(*flags, **kwargs)


def _seconds(text: str) -> Optional[float]:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("expected a number of seconds, got %r" % text) from None
    if value < 0:
        raise argparse.ArgumentTypeError("must not be negative")
    return value or None


#: Where the server comes from, as every server command's usage line says.
_SERVER_USAGE = "(-- SERVER_COMMAND [ARG ...] | --url URL | --config FILE)"

EXAMPLES = """\
examples:
  mcpsync demo
  mcpsync tools -- npx -y @modelcontextprotocol/server-everything
  mcpsync call echo -a message=hi -- python -m mcpsync.example_server
  mcpsync call add --args '{"a": 1, "b": 2}' -- python -m mcpsync.example_server
  mcpsync call --method tools/list -- python -m mcpsync.example_server
  mcpsync tools --url https://example.com/mcp --auth @token.txt
  mcpsync --config .mcp.json status
  mcpsync --config .mcp.json call echo -a message=hi
  mcpsync auth login work --url https://example.com/mcp
  source <(mcpsync completion bash)
"""

#: Other names of a command: ``mcpsync list`` is ``mcpsync tools`` (what fastmcp users type).
COMMAND_ALIASES: Mapping[str, str] = MappingProxyType({"list": "tools"})
COMMAND_ALIASES_OF: Mapping[str, Tuple[str, ...]] = MappingProxyType({"tools": ("list",)})

def _global_note() -> str:
    """The end of each server command's help: the global options are accepted there too, listed once (read
    from :func:`_add_common` itself, so an option added there is named here too)."""
    import textwrap

    probe = argparse.ArgumentParser(add_help=False)
    _add_common(probe, True)
    names = [a.option_strings[0] for a in probe._actions if a.option_strings]
    return textwrap.fill(
        "global options (see `mcpsync --help`) go before or after the command: " + ", ".join(names),
        width=108,
        break_on_hyphens=False,
    )

#: (usage after "mcpsync", help, examples) of each command.
_COMMANDS: Mapping[str, Tuple[str, str, Sequence[str]]] = MappingProxyType({
    "demo": ("demo [OPTIONS]", "run the bundled example server and show a short session", ["mcpsync demo --json"]),
    "info": (
        "info [OPTIONS] " + _SERVER_USAGE,
        "show the server's identity, protocol and capabilities",
        ["mcpsync info -- python -m mcpsync.example_server", "mcpsync info --url https://example.com/mcp"],
    ),
    "status": (
        "status [OPTIONS] " + _SERVER_USAGE,
        "show the status of every configured server (--config), or the one server's info",
        ["mcpsync --config .mcp.json status", "mcpsync status --json"],
    ),
    "tools": (
        "tools [OPTIONS] " + _SERVER_USAGE,
        "list the tools with their arguments (type, default; optional ones in brackets)",
        ["mcpsync tools -- python -m mcpsync.example_server", "mcpsync --config .mcp.json --server github tools"],
    ),
    "call": (
        "call [OPTIONS] (TOOL [--args JSON] [-a K=V ...] | --method METHOD [--params JSON]) " + _SERVER_USAGE,
        "call a tool (or send any request with --method)",
        [
            "mcpsync call echo -a message=hi -- python -m mcpsync.example_server",
            "mcpsync call add --args '{\"a\": 1, \"b\": 2}' --url https://example.com/mcp --auth @token.txt",
            "mcpsync --config .mcp.json call echo -a message=hi   (the one server offering echo)",
            "mcpsync --config .mcp.json --server b call echo -a message=hi",
            "mcpsync call --method tools/list --params '{}' -- python -m mcpsync.example_server",
        ],
    ),
    "prompts": (
        "prompts [OPTIONS] " + _SERVER_USAGE,
        "list the prompts",
        ["mcpsync prompts --url https://example.com/mcp"],
    ),
    "prompt": (
        "prompt [OPTIONS] NAME [--args JSON] [-a K=V ...] " + _SERVER_USAGE,
        "get a prompt",
        ["mcpsync prompt greet -a name=Ada -- python -m mcpsync.example_server"],
    ),
    "resources": (
        "resources [OPTIONS] " + _SERVER_USAGE,
        "list the resources and resource templates",
        ["mcpsync resources -- python -m mcpsync.example_server"],
    ),
    "read": (
        "read [OPTIONS] URI [-o FILE] " + _SERVER_USAGE,
        "read a resource",
        [
            "mcpsync read example://hello -- python -m mcpsync.example_server",
            "mcpsync read file:///logo.png -o logo.png --url URL",
        ],
    ),
})


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (everything after ``--`` is split off before parsing)."""
    parser = argparse.ArgumentParser(
        prog="mcpsync",
        usage="mcpsync [OPTIONS] COMMAND [COMMAND OPTIONS] [-- SERVER_COMMAND [ARG ...]]",
        description="Talk to an MCP server from the command line. Put the server's command after `--` (stdio),\n"
        "or use --url for a remote server, or --config for the servers of a configuration file.",
        epilog=EXAMPLES + "\nexit codes:\n" + "\n".join("  %-3d %s" % kv for kv in sorted(EXIT_CODES.items())),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version="mcpsync %s" % __version__)
    _add_common(parser, True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    global_note = _global_note()

    def cmd(name: str) -> argparse.ArgumentParser:
        usage, help_text, examples = _COMMANDS[name]
        p = sub.add_parser(
            name,
            aliases=list(COMMAND_ALIASES_OF.get(name, ())),
            help=help_text,
            description=help_text,
            usage="mcpsync " + usage,
            epilog="examples:\n" + "\n".join("  " + e for e in examples) + "\n\n" + global_note,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        _add_common(p, False)
        return p

    for name in ("demo", "info", "status", "tools"):
        cmd(name)
    p = cmd("call")
    p.add_argument(
        "tool", metavar="TOOL", nargs="?", help="the tool's name (with --config: its own name or SERVER_TOOL)"
    )
    _add_args_options(p, "the tool's arguments")
    p.add_argument(
        "--method", metavar="METHOD", help="send this JSON-RPC request instead of calling a tool (raw result)"
    )
    p.add_argument("--params", metavar="JSON", help="the request's params as a JSON object ('@FILE', '-' for stdin)")
    cmd("prompts")
    p = cmd("prompt")
    p.add_argument("prompt", metavar="NAME")
    _add_args_options(p, "the prompt's arguments (values are sent as strings)")
    cmd("resources")
    p = cmd("read")
    p.add_argument("uri", metavar="URI")
    p.add_argument("-o", "--output", metavar="FILE", help="write the (first) content's bytes to FILE")
    _add_extension_parsers(sub)
    return parser


def _add_args_options(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--args",
        dest="args_json",
        metavar="JSON",
        help="%s as a JSON object ('@FILE' reads a file, '-' reads stdin)" % what,
    )
    p.add_argument(
        "-a",
        "--arg",
        dest="arg_pairs",
        action="append",
        default=[],
        metavar="K=V",
        help="one argument (the value is parsed as JSON when it can be, else a string; repeatable)",
    )


def _add_extension_parsers(sub: Any) -> None:
    """The ``mcpsync auth`` subcommands, ``search``/``install``/``outdated``/``update`` (MCP Registry),
    ``discover`` (Server Cards) and ``mcpsync completion``."""
    from .auth import add_auth_parser
    from .cards import add_cards_parser
    from .completion import add_completion_parser
    from .registry import add_registry_parsers

    add_auth_parser(sub)
    add_registry_parsers(sub)
    add_cards_parser(sub)
    add_completion_parser(sub, build_parser)


# ---------------------------------------------------------------------------- argument helpers


def split_argv(argv: Sequence[str]) -> Tuple[List[str], Optional[List[str]]]:
    """Split at the first ``--``: (mcpsync's arguments, the server command or None)."""
    argv = list(argv)
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1 :]
    return argv, None


def parse_json_args(text: Optional[str], pairs: Sequence[str], stdin: IO[str]) -> Dict[str, Any]:
    """Build the arguments object from ``--args JSON`` and ``--arg K=V`` (which win)."""
    result: Dict[str, Any] = {}
    if text is not None:
        source = "--args"
        if text == "-":
            text, source = stdin.read(), "--args - (stdin)"
        elif text.startswith("@"):
            try:
                with open(text[1:], encoding="utf-8") as f:
                    text, source = f.read(), text[1:]
            except OSError as exc:
                raise UsageError("cannot read %s: %s" % (text[1:], exc.strerror or exc)) from None
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise UsageError("%s is not valid JSON: %s" % (source, exc)) from None
        if not isinstance(value, dict):
            raise UsageError(
                '%s must be a JSON object like \'{"key": "value"}\', not %s' % (source, type(value).__name__)
            )
        result.update(value)
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise UsageError("--arg expects KEY=VALUE, got %r" % pair)
        try:
            result[key] = json.loads(raw)
        except ValueError:
            result[key] = raw
    return result


# ---------------------------------------------------------------------------- running


class _LogFormatter(logging.Formatter):
    """One line per record: an expected failure (an MCPError: needs login, server refused...) attached to a log
    record is shown as its type and message, never as a traceback; anything else keeps its traceback."""

    def format(self, record: logging.LogRecord) -> str:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, MCPError):
            record = logging.makeLogRecord(dict(record.__dict__, exc_info=None, exc_text=None))
            return "%s (%s: %s)" % (super().format(record), type(exc).__name__, exc.message)
        return super().format(record)


def _configure_logging(verbose: int, stderr: IO[str]) -> None:
    """-v: mcpsync's own INFO logging on stderr; -vv: DEBUG, with the protocol trace (every frame in and out,
    truncated, secrets redacted) of the ``mcpsync.wire`` logger. Server logs are shown through ``on_log``."""
    if not verbose:
        return
    handler = logging.StreamHandler(stderr)
    handler.setFormatter(_LogFormatter("mcpsync %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(lambda record: not record.name.startswith("mcpsync.server."))
    root = logging.getLogger("mcpsync")
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose > 1 else logging.INFO)


def _find_config(explicit: Optional[str]) -> Optional[str]:
    if explicit:
        if not os.path.isfile(explicit):
            raise UsageError("configuration file not found: %s" % explicit)
        return explicit
    from ..manager.config import find_config

    found = find_config()
    return str(found) if found is not None else None


def run(cli: Cli) -> int:
    """Run the parsed command; returns the exit code (errors propagate as exceptions)."""
    from . import commands as commands

    a = cli.args
    command = a.command
    if command == "demo":
        if cli.server_cmd or a.url:
            raise UsageError("demo runs the bundled example server; it takes no server command or --url")
        from .demo import run_demo

        return run_demo(cli)
    if command == "call":
        _check_call(a)
    if command in ("call", "prompt"):  # check the arguments before starting any server
        a.arguments = parse_json_args(a.args_json, a.arg_pairs, cli.stdin)
        if command == "call" and a.method:
            a.request_params = parse_json_args(a.params, [], cli.stdin) if a.params is not None else None
    single = bool(cli.server_cmd) or bool(a.url) or bool(getattr(a, "card", None))
    if getattr(a, "auth", None) is not None and not (a.url or getattr(a, "card", None)):
        raise UsageError("--auth gives a bearer token to a --url server (configured servers take theirs from the "
                         "configuration's headers)")
    if not single and command in MANAGER_COMMANDS:
        config = _find_config(a.config)
        if config is not None:
            return run_manager(cli, config)
        if command == "status":
            raise UsageError("status needs a configuration (--config FILE) or one server (`--` COMMAND or --url)")
    elif single and a.config:
        raise UsageError("--config selects configured servers; it cannot be combined with `--` COMMAND or --url")
    if a.server and not (command in MANAGER_COMMANDS and not single):
        raise UsageError("--server NAME picks a server of a configuration (--config FILE); it does not apply here")
    if command == "status":
        command = "info"
    handler = getattr(commands, "cmd_" + command)
    try:
        client = cli.connect()
        try:
            return int(handler(cli, client))
        finally:
            client.close()
    finally:
        cli.close()


def _check_call(a: argparse.Namespace) -> None:
    """``call`` takes a TOOL or ``--method`` (with ``--params``), never both."""
    if a.method and (a.tool or a.args_json is not None or a.arg_pairs):
        raise UsageError("give either a TOOL (with --args/--arg) or --method METHOD (with --params), not both")
    if not a.method and not a.tool:
        raise UsageError("call needs the name of a tool (mcpsync tools lists them), or --method METHOD")
    if a.params is not None and not a.method:
        raise UsageError("--params goes with --method; a tool's arguments are given with --args or --arg")


def run_manager(cli: Cli, config_path: str) -> int:
    """Multi-server mode: hand the command to :mod:`mcpsync.cli.servers`.

    Errors propagate as MCPError / UsageError; :func:`main` maps them to messages and exit codes.
    """
    from . import servers

    return servers.run(cli, config_path)


# ---------------------------------------------------------------------------- errors


def classify(exc: BaseException) -> Tuple[int, str]:
    """The exit code and the one-paragraph message for an expected failure (plus a ``cli_hint`` the command
    attached to the exception, on a line of its own)."""
    code, message = _classify(exc)
    hint = getattr(exc, "cli_hint", None)
    return code, ("%s\n%s" % (message, hint) if isinstance(hint, str) and hint else message)


#: The exit code and message of the failures that need nothing but their message (``%s``); the first match wins.
_FAILURES: Tuple[Tuple[Tuple[Type[MCPError], ...], int, str], ...] = (
    ((AuthRequired,), EXIT_AUTH, "authentication required: %s (log in with: mcpsync auth login NAME --url URL)"),
    ((AuthError,), EXIT_AUTH, "authentication failed: %s"),
    ((ConnectTimeout,), EXIT_TIMEOUT, "%s (raise --connect-timeout to wait longer)"),
    ((RequestTimeout,), EXIT_TIMEOUT, "%s (the server was asked to cancel; raise --timeout to wait longer)"),
    ((RequestCancelled,), EXIT_INTERRUPTED, "cancelled: %s"),
    ((ServerExited,), EXIT_CONNECTION, "the server exited: %s"),
    ((TransportError, ClientClosed), EXIT_CONNECTION, "connection failed: %s"),
    ((ToolError,), EXIT_TOOL_ERROR, "%s"),
)


def _classify(exc: BaseException) -> Tuple[int, str]:
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED, "interrupted"
    if isinstance(exc, UsageError):
        return EXIT_USAGE, str(exc)
    if isinstance(exc, ConfigError):
        return EXIT_USAGE, exc.message
    if isinstance(exc, NeedsClientRegistration):
        hint = ""
        if exc.redirect_uri:
            hint = " (register the redirect URI %s with the authorization server)" % exc.redirect_uri
        return EXIT_AUTH, "authentication failed: %s%s" % (exc.message, hint)
    for kinds, code, template in _FAILURES:
        if isinstance(exc, kinds):
            return code, template % exc.message
    if isinstance(exc, RemoteError):
        where = " (%s)" % exc.method if exc.method else ""
        return EXIT_SERVER, "server error%s: %s (code %d)" % (where, exc.message, exc.code)
    if isinstance(exc, MCPError):
        return EXIT_SERVER, exc.message
    return EXIT_INTERNAL, "internal error: %s: %s" % (type(exc).__name__, exc)


def main(
    argv: Optional[Sequence[str]] = None,
    *,
    stdout: Optional[IO[str]] = None,
    stderr: Optional[IO[str]] = None,
    stdin: Optional[IO[str]] = None,
) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    stdin = stdin or sys.stdin
    head, server_cmd = split_argv(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = parser.parse_args(head)
    except SystemExit as exc:  # --help, --version, or a usage error already printed by argparse
        return int(exc.code or 0) if isinstance(exc.code, int) else EXIT_USAGE
    args.command = COMMAND_ALIASES.get(args.command, args.command)
    if not args.command:
        parser.print_help(stderr)
        return EXIT_USAGE
    if getattr(args, "func", None) is None and args.command not in ("demo", "status") + SERVER_COMMANDS:
        parser.print_help(stderr)
        return EXIT_USAGE
    cli = Cli(args, server_cmd, stdout, stderr, stdin)
    _configure_logging(cli.verbose, stderr)
    try:
        if getattr(args, "func", None) is not None:  # a subcommand contributed by an extension module
            return int(args.func(args, stdout=stdout, stderr=stderr, stdin=stdin) or 0)
        return run(cli)
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_OK
    except (KeyboardInterrupt, Exception) as exc:  # noqa: BLE001 - every failure becomes a message and a code
        code, message = classify(exc)
        cli.err.clear_live()
        if code == EXIT_INTERNAL:
            import traceback

            traceback.print_exception(type(exc), exc, exc.__traceback__, file=stderr)
        if code == EXIT_INTERRUPTED and isinstance(exc, KeyboardInterrupt):
            message = "interrupted" + ("; the call in flight was cancelled" if cli.in_flight else "")
        if isinstance(exc, AuthRequired) and _static_credential(args):
            message = (
                "authentication failed: the server rejected the token given with %s (%s); pass a valid token"
                % (_static_credential(args), exc.message)
            )
        elif isinstance(exc, AuthRequired) and getattr(args, "url", None):
            message = message.replace("NAME --url URL", "%s --url %s" % (args.name or _host(args.url), args.url))
        _report(cli, code, message, exc)
        return code


def _report(cli: Cli, code: int, message: str, exc: BaseException) -> None:
    try:
        if cli.json and code not in (EXIT_INTERRUPTED,):
            cli.emit_json({"error": {"type": type(exc).__name__, "message": message, "exitCode": code}})
            cli.stdout.flush()
        from .output import escape_controls, is_terminal

        cli.stderr.write("mcpsync: %s\n" % (escape_controls(message) if is_terminal(cli.stderr) else message))
        cli.stderr.flush()
    except (OSError, ValueError):
        pass


def _static_credential(args: argparse.Namespace) -> str:
    """The option that carried a credential the user wrote ("--auth" or "--header Authorization"), or ""."""
    if getattr(args, "auth", None) is not None:
        return "--auth"
    for item in getattr(args, "header", None) or []:
        if isinstance(item, str) and item.partition(":")[0].strip().lower() == "authorization":
            return "--header Authorization"
    return ""


def _host(url: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(url).hostname or "server"


def _silence_stdout() -> None:
    """After a broken pipe (``mcpsync tools | head``): point stdout at /dev/null so the exit is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
