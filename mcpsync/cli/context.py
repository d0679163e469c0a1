"""One run of the ``mcpsync`` command line (:class:`Cli`): the parsed options, the output streams and the client
they make. Every command module (:mod:`.commands`, :mod:`.demo`, :mod:`.servers`) works with a :class:`Cli`;
nothing in the CLI imports back up into :mod:`.app`.

:class:`Cli` is what every command module works with; :class:`UsageError` is a command-line mistake.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import sys
from typing import IO, Any, Callable, Dict, Iterable, List, Optional, Sequence

from ..errors import TransportError
from . import output as out

__all__ = [
    "Cli",
    "EXAMPLE_SERVER",
    "UsageError",
    "check_url",
    "did_you_mean",
    "no_server_message",
    "read_token",
    "server_name",
]

EXAMPLE_SERVER = (sys.executable, "-m", "mcpsync.example_server")


class UsageError(Exception):
    """A command-line mistake: printed without a traceback, exit code 2."""


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """`` (did you mean X?)`` for the closest candidates to ``name``, or an empty string."""
    close = difflib.get_close_matches(name, sorted(set(candidates)), n=3, cutoff=0.6)
    if not close:
        return ""
    return " (did you mean %s?)" % " or ".join(repr(c) for c in close)


def _parse_env(items: Sequence[str]) -> Optional[Dict[str, str]]:
    env: Dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError("--env expects K=V, got %r" % item)
        env[key] = value
    return env or None


def _parse_headers(items: Sequence[str]) -> Dict[str, str]:
    headers: Dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition(":")
        if not sep or not key.strip():
            raise UsageError("--header expects 'Name: value', got %r" % item.split(":")[0])
        headers[key.strip()] = value.strip()
    return headers


def server_name(command: Sequence[str]) -> str:
    """A readable name for a server command (``npx -y @scope/server-x`` -> ``server-x``)."""
    base = os.path.basename(command[0]) if command else "server"
    launchers = ("python", "python3", "py", "node", "npx", "uvx", "uv", "bunx", "bun", "deno", "pipx", "docker")
    stem = base.lower()
    if stem.endswith(".exe"):
        stem = stem[:-4]
    if stem.rstrip("0123456789.") in launchers:
        rest = list(command[1:])
        for i, arg in enumerate(rest):
            if arg == "-m" and i + 1 < len(rest):
                return rest[i + 1].split(".")[-1] if rest[i + 1].endswith("example_server") else rest[i + 1]
            if arg.startswith("-") or arg in ("run", "exec", "x"):
                continue
            return os.path.basename(arg.rstrip("/")).split("@")[0] or base
    return base


class Cli:
    """One run of the command line: parsed options, the output streams, the client options."""

    def __init__(
        self,
        args: argparse.Namespace,
        server_cmd: Optional[List[str]],
        stdout: IO[str],
        stderr: IO[str],
        stdin: IO[str],
    ) -> None:
        self.args = args
        self.server_cmd = server_cmd
        self.stdout = stdout
        self.stderr = stderr
        self.stdin = stdin
        self.err = out.Console(stderr)
        self.json = bool(getattr(args, "json", False))
        self.verbose = int(getattr(args, "verbose", 0) or 0)
        self._tty: Optional[bool] = None  # whether stdout is a terminal (asked once)
        self.in_flight = False  # True while a tool call waits (for the Ctrl-C message)
        self._oauth: Any = None  # an OAuthManager opened for stored credentials (closed by close())

    # output ---------------------------------------------------------------------

    def print(self, text: str = "") -> None:
        """Write a line to stdout (control characters escaped when stdout is a terminal)."""
        self.stdout.write((out.escape_controls(text) if self._stdout_tty() else text) + "\n")

    def emit_json(self, value: Any) -> None:
        """Write one JSON document to stdout."""
        self.stdout.write(out.dump_json(value) + "\n")

    def listing(
        self,
        items: Sequence[Any],
        what: str,
        as_json: Callable[[], Any],
        rows: Callable[[], Sequence[Sequence[str]]],
    ) -> int:
        """A listing command's output: ``as_json()`` with ``--json``, else ``(no WHAT)`` when ``items`` is
        empty, else the table ``rows()``. Returns the exit code, 0."""
        if self.json:
            self.emit_json(as_json())
        elif not items:
            self.print("(no %s)" % what)
        else:
            self.rows(rows())
        return 0

    def rows(self, rows: Sequence[Sequence[str]], indent: str = "") -> None:
        """Print an aligned table, clipped to the terminal's width."""
        tty = self._stdout_tty()
        if tty:  # escaped before the columns are measured
            rows = [[out.escape_controls(cell) for cell in row] for row in rows]
        width = out.terminal_width(self.stdout, 0) if tty else 0
        for line in out.table(rows, width=width, indent=indent):
            self.stdout.write(line + "\n")

    def _stdout_tty(self) -> bool:
        if self._tty is None:
            self._tty = out.is_terminal(self.stdout)
        return self._tty

    def on_log(self, params: Dict[str, Any]) -> None:
        """Show one server log message (notifications/message) on stderr."""
        data = params.get("data")
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        logger_name = params.get("logger")
        where = "%s " % logger_name if isinstance(logger_name, str) and logger_name else ""
        self.err.line("server log [%s] %s%s" % (params.get("level", "info"), where, text))

    def on_stderr(self, line: str) -> None:
        """Show one line of the server's stderr (with -v)."""
        self.err.line("server stderr: %s" % line)

    # the client -------------------------------------------------------------------

    def client_options(self) -> Dict[str, Any]:
        """Keyword arguments for :class:`mcpsync.Client` from the options, by flat names (see
        :func:`mcpsync.manager.flat.grouped`)."""
        a = self.args
        opts: Dict[str, Any] = {
            "timeout": a.timeout,
            "connect_timeout": a.connect_timeout,
            "protocol": a.protocol,
        }
        if not getattr(a, "no_cache", False):  # near-instant reconnects: on for the CLI (each run is a new process)
            from ..warm import WarmCache

            opts["extensions"] = [WarmCache()]
        if a.name:
            opts["name"] = a.name
        if self.verbose:
            opts["log_level"] = "debug" if self.verbose > 1 else "info"
            opts["on_log"] = self.on_log
        return opts

    def connect(self) -> Any:
        """Open the client for the server given after ``--`` or with ``--url``."""
        from ..client.client import Client
        from ..manager.flat import grouped

        a = self.args
        opts = self.client_options()
        if getattr(a, "card", None):
            client = self.card_client(opts)
        elif a.url:
            if self.server_cmd:
                raise UsageError("give either --url or a server command after `--`, not both")
            if a.env or a.cwd or a.inherit_env:
                raise UsageError("--env, --cwd and --inherit-env apply to a server command, not to --url")
            check_url(a.url)
            opts.update(transport=a.transport)
            headers = _parse_headers(a.header)
            token = getattr(a, "auth", None)
            if token is not None:
                if any(k.lower() == "authorization" for k in headers):
                    raise UsageError(
                        "give the token either with --auth or with --header 'Authorization: ...', not both"
                    )
                headers["Authorization"] = "Bearer " + read_token(token)
            if headers:
                opts["headers"] = headers
            if not any(k.lower() == "authorization" for k in headers):
                auth = self.stored_auth(a.url)
                if auth is not None:
                    opts["auth"] = auth
            client = Client(a.url, **grouped(opts, remote=True))
        else:
            if not self.server_cmd:
                raise UsageError(no_server_message(a.command))
            if a.header or a.transport != "auto" or getattr(a, "auth", None) is not None:
                raise UsageError("--header, --auth and --transport apply to --url, not to a server command")
            opts.setdefault("name", server_name(self.server_cmd))
            opts.update(cwd=a.cwd, env=_parse_env(a.env), inherit_env=a.inherit_env)
            if self.verbose:
                opts["on_stderr"] = self.on_stderr
            client = Client(list(self.server_cmd), **grouped(opts, remote=False))
        try:
            client.open()
        except ImportError as exc:
            raise TransportError("remote transports are not available: %s" % exc) from exc
        return client

    def card_client(self, opts: Dict[str, Any]) -> Any:
        """The (unopened) client for ``--card URL``: the card's remote, its headers from ``--header`` and
        ``--card-input``, ``--allow-local`` hosts allowed."""
        from ..cards.connector import client_for

        a = self.args
        if a.url or self.server_cmd:
            raise UsageError("give one server: --card, --url or a command after `--`")
        if a.env or a.cwd or a.inherit_env:
            raise UsageError("--env, --cwd and --inherit-env apply to a server command, not to --card")
        check_url(a.card, "--card")
        headers = _parse_headers(a.header)
        token = getattr(a, "auth", None)
        if token is not None:
            headers["Authorization"] = "Bearer " + read_token(token)
        inputs: Dict[str, str] = {}
        for pair in a.card_input or []:
            key, sep, value = pair.partition("=")
            if not sep or not key:
                raise UsageError("--card-input expects NAME=VALUE, got %r" % pair)
            inputs[key] = value
        allow = list(a.allow_local or [])
        if a.transport != "auto":
            opts["transport"] = a.transport
        if a.protocol == "auto":
            opts.pop("protocol", None)  # the card's supportedProtocolVersions decide
        return client_for(a.card, inputs=inputs, headers=headers or None,
                          allow_local=True if "*" in allow else allow, **opts)

    def stored_auth(self, url: str) -> Any:
        """OAuth for ``url`` from credentials that ``mcpsync auth login NAME --url URL`` stored, or None.

        Looks in ``--auth-file`` (default: ``$MCPSYNC_AUTH_STORE``, ``$MCPSYNC_AUTH_FILE`` or the user data
        directory; a path, ``keyring[:SERVICE]`` or ``redis://...``) for a server
        entry with tokens whose URL is ``url``; reads the store only, no network.
        """
        from ..auth import OAuthManager
        from ..auth.backends import ENV_AUTH_STORE, is_file_spec
        from ..auth.store import default_store_path

        spec = getattr(self.args, "auth_file", None) or os.environ.get(ENV_AUTH_STORE) or default_store_path()
        if is_file_spec(spec) and not os.path.isfile(spec):
            return None
        oauth = OAuthManager(store=spec)
        for name, entry in sorted(oauth.store.all().items()):
            if isinstance(entry, dict) and _same_url(entry.get("serverUrl"), url) and entry.get("tokens"):
                oauth.add_server(name, url, True)
                self._oauth = oauth
                return oauth.auth(name)
        oauth.close()
        return None

    def close(self) -> None:
        """Release what the run opened besides the client (the OAuth manager of stored credentials)."""
        oauth, self._oauth = self._oauth, None
        if oauth is not None:
            oauth.close()


def check_url(url: str, option: str = "--url") -> None:
    """Raise :class:`UsageError` unless ``url`` is an http(s) URL with a host (said in the CLI's words)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        ok = False
    if not ok:
        raise UsageError(
            "%s expects the server's http:// or https:// address, such as https://example.com/mcp; got %r"
            % (option, url)
        )


def read_token(value: str) -> str:
    """The bearer token of ``--auth``: the value itself, or the first line of the file ``@FILE``."""
    token = value
    if value.startswith("@"):
        try:
            with open(value[1:], encoding="utf-8") as f:
                token = f.readline()
        except OSError as exc:
            raise UsageError("--auth: cannot read %s: %s" % (value[1:], exc.strerror or exc)) from None
    token = token.strip()
    if token.lower().startswith("bearer "):
        token = token[7:].strip()
    if not token or any(c.isspace() or ord(c) < 0x21 or ord(c) > 0x7E for c in token):
        raise UsageError("--auth expects a bearer token (printable ASCII without spaces)")
    return token


def _same_url(stored: Any, url: str) -> bool:
    """Whether a stored server URL names ``url`` (ignoring a trailing slash and the case of scheme and host)."""
    if not isinstance(stored, str):
        return False
    from urllib.parse import urlsplit

    def norm(u: str) -> Any:
        parts = urlsplit(u.strip())
        return parts.scheme.lower(), parts.netloc.lower(), parts.path.rstrip("/") or "/", parts.query

    try:
        return bool(norm(stored) == norm(url))
    except ValueError:
        return False


def no_server_message(command: str) -> str:
    """The usage hint shown when a command has no server."""
    return (
        "no server given: put the server's command after `--` (mcpsync %s -- npx -y "
        "@modelcontextprotocol/server-everything), use --url URL, or --config FILE for configured servers" % command
    )
