"""``mcpsync auth login|logout|status``: OAuth logins from the command line.

Wiring (two lines in the CLI's parser builder; the main dispatcher calls ``args.func(args)``)::

    from mcpsync.cli.auth import add_auth_parser
    add_auth_parser(subparsers)

``login`` prints the authorization URL and the redirect URI, opens the browser, and waits
for the redirect; when no browser can be opened (SSH, containers, ``--no-browser``) the
user pastes the redirect URL (or the code) on stdin instead; the first of the callback
and the paste wins. The server's URL and OAuth settings come from ``--url`` and the
options, or from the configuration file (``--config`` or the usual places) by NAME.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from typing import Any, Dict, Optional, TextIO

__all__ = ["add_auth_parser", "run_auth"]


def add_auth_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``auth`` command (with ``login``, ``logout``, ``status``) to ``subparsers``."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "auth",
        help="log in to remote servers with OAuth, log out, show login status",
        description="OAuth logins for remote MCP servers. Credentials are kept in mcp-auth.json in the user "
        "data directory (override with MCPSYNC_AUTH_FILE or --auth-file); MCPSYNC_AUTH_STORE or --auth-file "
        "can also name the OS keyring (keyring[:SERVICE]) or a Redis store (redis://...).",
    )
    commands = parser.add_subparsers(dest="auth_command", metavar="ACTION")
    commands.required = True

    def common(p: argparse.ArgumentParser, name_required: bool) -> None:
        if name_required:
            p.add_argument("name", metavar="NAME", help="the server's name (the key of its credentials)")
        else:
            p.add_argument("name", metavar="NAME", nargs="?", help="the server's name (default: every stored one)")
        p.add_argument("--url", default=argparse.SUPPRESS, help="the server's URL (else taken from the configuration)")
        p.add_argument("--config", default=argparse.SUPPRESS, metavar="FILE", help="server configuration file")
        p.add_argument(
            "--auth-file",
            default=None,
            metavar="STORE",
            help="credential store: a file, keyring[:SERVICE] or redis://... (default: $MCPSYNC_AUTH_STORE or the "
            "user file)",
        )
        p.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="machine output: JSON")

    login = commands.add_parser("login", help="log in (browser, or paste the redirect URL)")
    common(login, True)
    login.add_argument("--client-id", help="a pre-registered client id")
    login.add_argument("--client-secret", help="its secret (confidential clients)")
    login.add_argument("--scope", help="extra scopes to request (space separated)")
    login.add_argument("--callback-port", type=int, help="loopback port for the redirect (default 19876)")
    login.add_argument("--redirect-uri", help="exact redirect URI to use (http://127.0.0.1:PORT/PATH)")
    login.add_argument("--no-browser", action="store_true", help="do not open a browser; paste the redirect URL")
    login.add_argument(
        "--wait", type=float, default=300.0, metavar="SECONDS", help="how long to wait for the redirect (default 300)"
    )
    logout = commands.add_parser("logout", help="forget the stored credentials of a server")
    common(logout, True)
    status = commands.add_parser("status", help="show authenticated | expired | not_authenticated")
    common(status, False)
    parser.set_defaults(func=run_auth)
    return parser


def _server_settings(args: argparse.Namespace, name: str) -> Dict[str, Any]:
    """URL and oauth settings for ``name``: --url/options first, else the configuration file."""
    url = getattr(args, "url", None)
    oauth: Dict[str, Any] = {}
    cfg = None
    if not url or getattr(args, "config", None):
        from ..manager.config import find_config, load_config

        path = getattr(args, "config", None) or find_config()
        if path is not None:
            cfg = load_config(path).get(name)
        if cfg is not None and not url:
            url = getattr(cfg, "url", None)
    http = None
    if cfg is not None:
        from ..transports.http.oauth_route import oauth_route_from

        http = oauth_route_from(cfg.client_arguments()[1])  # the configured server's proxies and TLS settings
        if getattr(cfg, "oauth", True) is False:
            from ..errors import ConfigError

            raise ConfigError("OAuth is disabled for %s in the configuration (oauth: false)" % name)
        oauth.update(getattr(cfg, "oauth_settings", None) or {})
    for key in ("client_id", "client_secret", "scope"):
        value = getattr(args, key, None)
        if value:
            oauth[key] = value
    if not url:
        from ..errors import ConfigError

        raise ConfigError("no URL for %s: give --url URL (or define the server in a configuration file)" % name)
    return {"url": url, "oauth": oauth or True, "http": http}


def _manager(args: argparse.Namespace, out: TextIO, **extra: Any) -> Any:
    from ..auth import OAuthManager

    options: Dict[str, Any] = {"store": args.auth_file}
    if getattr(args, "callback_port", None):
        options["callback_port"] = args.callback_port
    if getattr(args, "redirect_uri", None):
        options["redirect_uri"] = args.redirect_uri
    options.update(extra)
    return OAuthManager(**options)


def run_auth(
    args: argparse.Namespace,
    *,
    stdout: Optional[TextIO] = None,
    stdin: Optional[TextIO] = None,
    stderr: Optional[TextIO] = None,
) -> int:
    """Run ``mcpsync auth ACTION``; returns the exit code (errors propagate as MCPError subclasses).

    ``login`` blocks until the login completes or ``--wait`` seconds pass.
    """
    out = stdout or sys.stdout
    action = args.auth_command
    if action == "login":
        return _login(args, out, stdin or sys.stdin, stderr or sys.stderr)
    if action == "logout":
        with _manager(args, out) as manager:
            removed = manager.store.remove(args.name)
        if not removed:  # a typo must not look like a successful logout
            if getattr(args, "json", False):
                _emit(args, out, {"server": args.name, "removed": False}, "")
            err = stderr or sys.stderr
            err.write("mcpsync: no stored credentials for %s (mcpsync auth status lists them)\n" % args.name)
            err.flush()
            return 2
        _emit(args, out, {"server": args.name, "removed": True}, "logged out of %s" % args.name)
        return 0
    return _status(args, out)


def _emit(args: argparse.Namespace, out: TextIO, doc: Any, text: str) -> None:
    if getattr(args, "json", False):
        out.write(json.dumps(doc) + "\n")
    else:
        out.write(text + "\n")
    out.flush()


def _status(args: argparse.Namespace, out: TextIO) -> int:
    with _manager(args, out) as manager:
        names = [args.name] if args.name else sorted(manager.store.all())
        rows = []
        for name in names:
            entry = manager.store.get(name) or {}
            url = getattr(args, "url", None) or entry.get("serverUrl")
            if not url:
                rows.append({"server": name, "status": "not_authenticated", "url": None})
                continue
            manager.add_server(name, url)
            rows.append({"server": name, "status": manager.get_auth_status(name), "url": url})
    if getattr(args, "json", False):
        out.write(json.dumps(rows if not args.name else rows[0]) + "\n")
    elif not rows:
        out.write("no stored credentials\n")
    else:
        for row in rows:
            out.write("%-24s %-18s %s\n" % (row["server"], row["status"], row["url"] or ""))
    out.flush()
    return 0


def _login(args: argparse.Namespace, out: TextIO, stdin: TextIO, err: TextIO) -> int:
    settings = _server_settings(args, args.name)
    state: Dict[str, Any] = {"reader": None}

    def show(name: str, url: str) -> None:
        err.write("Authorize mcpsync for %s in your browser:\n\n  %s\n\n" % (name, _safe(err, url)))
        err.flush()

    def paste_back(name: str, url: str) -> None:
        lead = "Open that URL in a browser." if args.no_browser else "Could not open a browser."
        err.write(
            "%s After approving, paste the URL your browser was redirected to\n"
            "(it starts with %s) or the code, then press Enter:\n" % (lead, manager.redirect_uri)
        )
        err.flush()

        def read() -> None:
            line = stdin.readline()
            if line.strip():
                try:
                    manager.finish_auth(name, line.strip())
                except Exception as exc:  # noqa: BLE001 - reported; the login then times out or completes
                    err.write("could not use the pasted value: %s\n" % exc)
                    err.flush()

        thread = threading.Thread(target=read, name="mcpsync-auth-paste", daemon=True)
        state["reader"] = thread
        thread.start()

    extra: Dict[str, Any] = {"on_authorization_url": show, "on_browser_open_failed": paste_back}
    if args.no_browser:
        extra["open_browser"] = lambda url: False
    manager = _manager(args, out, **extra)
    with manager:
        manager.add_server(args.name, settings["url"], settings["oauth"])
        if settings["http"] is not None:
            manager.use_http(args.name, settings["http"])
        err.write("Redirect URI: %s\n" % manager.redirect_uri)
        err.flush()
        stored_before = manager.store.get(args.name) is not None
        try:
            manager.probe_challenge(args.name)  # the server's 401 may be the only place naming its metadata
            manager.authenticate(args.name, timeout=args.wait)
        except BaseException:
            if not stored_before:
                _forget_failed_login(manager, args.name)
            raise
        finally:
            if state["reader"] is not None:
                state["reader"].join(0.5)  # usually done; else blocked on stdin, a daemon that dies with us
        status = manager.get_auth_status(args.name)
    _emit(
        args,
        out,
        {"server": args.name, "status": status, "url": settings["url"]},
        "logged in to %s (%s)" % (args.name, status),
    )
    return 0


def _forget_failed_login(manager: Any, name: str) -> None:
    """After a login that failed: drop what it stored (a client registration, discovery results) unless it holds
    tokens, so ``auth status`` does not list a server the user never logged in to."""
    try:
        entry = manager.store.get(name)
        if entry is not None and not entry.get("tokens"):
            manager.store.remove(name)
    except Exception:  # noqa: BLE001 - the login's own error is what the user must see
        pass


def _safe(stream: TextIO, text: str) -> str:
    """``text`` with control characters escaped when ``stream`` is a terminal (server-provided URLs)."""
    from .output import escape_controls, is_terminal

    return escape_controls(text) if is_terminal(stream) else text
