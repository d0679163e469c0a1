"""``mcpsync search|install|outdated|update|uninstall``: find servers in an MCP Registry and install them.

Wiring (one line in the CLI's parser builder; the main dispatcher calls ``args.func(args, ...)``)::

    from mcpsync.cli.registry import add_registry_parsers
    add_registry_parsers(subparsers)

The registry is ``--registry URL``, else ``$MCPSYNC_REGISTRY_URL``, else the official registry. ``install``
prints the exact command, every argument and the environment variable names before anything is installed
(SEP-1024) and asks for approval on the terminal; without a terminal it installs only with ``--yes``. Inputs
come from ``--input NAME=VALUE`` (repeatable; a repeated name gives a repeated argument several values), then
from the environment for environment-variable inputs, then (on a terminal) from a prompt; secrets are read
without echo and kept in the credential store. ``postInstallInstructions`` are printed, never run.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import IO, Any, Callable, Dict, List, Optional, TextIO, Union, cast

__all__ = ["add_registry_parsers"]


def add_registry_parsers(subparsers: Any) -> None:
    """Add ``search``, ``install``, ``outdated``, ``update`` and ``uninstall`` to ``subparsers``."""

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--registry", default=None, metavar="URL",
                       help="registry base URL (default: $MCPSYNC_REGISTRY_URL, else the official registry)")
        p.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="machine output: JSON")

    def with_config(p: argparse.ArgumentParser) -> None:
        p.add_argument("--config", default=argparse.SUPPRESS, metavar="FILE",
                       help="the configuration file (default: the one mcpsync finds, else "
                            "~/.config/mcpsync/config.json); its format is kept")

    def with_consent(p: argparse.ArgumentParser) -> None:
        p.add_argument("--yes", "-y", action="store_true",
                       help="approve without asking (the command is still printed); needed without a terminal")
        p.add_argument("--input", "-i", dest="inputs", action="append", default=[], metavar="NAME=VALUE",
                       help="answer an input by the name server.json gives it (repeatable)")

    def with_card_allow_local(p: argparse.ArgumentParser) -> None:
        p.add_argument("--allow-local", dest="card_allow_local", action="append", default=[], metavar="HOST",
                       help="for servers installed from a Server Card on a local host: allow it (repeatable)")

    def finish(
        p: argparse.ArgumentParser, func: Callable[..., int], *groups: Callable[[argparse.ArgumentParser], None]
    ) -> None:
        """Add the option groups ``groups`` (after the command's own arguments), then the command's handler."""
        for add_group in groups:
            add_group(p)
        p.set_defaults(func=func)

    p = subparsers.add_parser("search", help="search an MCP Registry", description="Search an MCP Registry for "
                              "servers whose name contains TEXT (latest versions of active servers).")
    p.add_argument("text", metavar="TEXT", nargs="?", default=None)
    p.add_argument("--all", action="store_true", help="include deprecated servers (with their status message)")
    p.add_argument("--limit", type=int, default=50, help="at most this many results (default 50)")
    finish(p, run_search, common)

    p = subparsers.add_parser("install", help="install a server from an MCP Registry into a configuration file",
                              description="Install NAME[@VERSION] from an MCP Registry into a configuration file. "
                              "The exact command is shown and must be approved before anything runs.")
    p.add_argument("spec", metavar="NAME[@VERSION]", nargs="?", default=None)
    p.add_argument("--card", default=None, metavar="URL",
                   help="install the remote a Server Card describes instead of a registry entry (same consent)")
    p.add_argument("--allow-local", dest="card_allow_local", action="append", default=[], metavar="HOST",
                   help="with --card: allow plain http and this local or private host (repeatable; '*': every one)")
    p.add_argument("--as", dest="as_name", default=None, metavar="NAME",
                   help="the name in the configuration (default: the last part of the registry name)")
    p.add_argument("--prefer", choices=("auto", "package", "remote"), default="auto",
                   help="install a local package or the remote (default: a package whose runtime is installed, "
                        "else the remote)")
    p.add_argument("--type", dest="registry_type", default=None, metavar="TYPE",
                   help="use the package of this registryType (npm, pypi, oci, nuget, mcpb)")
    p.add_argument("--replace", action="store_true", help="replace a server of the same name")
    finish(p, run_install, common, with_config, with_consent)

    p = subparsers.add_parser("outdated", help="list registry-installed servers with a newer version",
                              description="List the servers of the configuration installed from a registry "
                              "whose registry has a newer version (or that were deprecated).")
    finish(p, run_outdated, common, with_config, with_card_allow_local)

    p = subparsers.add_parser("update", help="update registry-installed servers to their latest version",
                              description="Update the servers of the configuration installed from a registry to "
                              "their latest version (the new command is shown and must be approved).")
    p.add_argument("names", metavar="NAME", nargs="*", help="only these servers (configuration names)")
    finish(p, run_update, common, with_config, with_consent, with_card_allow_local)

    p = subparsers.add_parser("uninstall", help="remove an installed server and its stored secrets",
                              description="Remove the server NAME from the configuration file and forget the "
                              "secrets mcpsync stored for it.")
    p.add_argument("name", metavar="NAME", help="the server's name in the configuration")
    finish(p, run_uninstall, with_config)


def _inputs(pairs: List[str]) -> Dict[str, Union[str, List[str]]]:
    from .context import UsageError

    out: Dict[str, Union[str, List[str]]] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError("--input expects NAME=VALUE, got %r" % pair)
        if key in out:
            previous = out[key]
            out[key] = (previous if isinstance(previous, list) else [previous]) + [value]
        else:
            out[key] = value
    return out


def _interactive(stdin: IO[str]) -> bool:
    try:
        return stdin.isatty()
    except (AttributeError, ValueError):
        return False


def _terminal_prompt(stdin: IO[str], stderr: IO[str]) -> Any:
    """An input callback that asks on the terminal: secrets with ``getpass`` (never echoed), an empty answer takes
    the default, a repeated argument takes comma-separated values."""
    import getpass

    from .._display import escape_controls

    def ask(request: Any) -> Any:
        prompt = escape_controls(request.prompt(), one_line=True) + ": "
        if request.secret:
            text = getpass.getpass(prompt, stream=cast(TextIO, stderr))
        else:
            stderr.write(prompt)
            stderr.flush()
            text = stdin.readline().rstrip("\r\n")
        if request.repeated and text:
            return [part.strip() for part in text.split(",") if part.strip()]
        return text or None

    return ask


def _callbacks(args: argparse.Namespace, stdin: IO[str], stderr: IO[str]) -> Any:
    from ..registry.inputs import inputs_from

    values = _inputs(args.inputs)
    if _interactive(stdin):
        inputs = inputs_from(values, environ=os.environ, fallback=_terminal_prompt(stdin, stderr))
    else:
        inputs = inputs_from(values, environ=os.environ)

    def approve(request: Any) -> bool:
        stderr.write(request.describe() + "\n")
        if args.yes:
            stderr.write("approved by --yes\n")
            return True
        if not _interactive(stdin):
            stderr.write("not approved: no terminal to ask on (approve with --yes)\n")
            return False
        stderr.write("Install and allow this to run? [y/N] ")
        stderr.flush()
        return stdin.readline().strip().lower() in ("y", "yes")

    return inputs, approve


def _allow_local(args: argparse.Namespace) -> Any:
    allow = list(getattr(args, "card_allow_local", None) or [])
    return True if "*" in allow else allow


def _config(args: argparse.Namespace) -> Optional[str]:
    value = getattr(args, "config", None)
    return str(value) if value else None


def _print_post_install(result: Any, stderr: IO[str]) -> None:
    from .._display import escape_controls

    for item in result.post_install_instructions:
        stderr.write("after installing%s: %s\n" % (" (optional)" if item.get("optional") else "",
                                                    escape_controls(item.get("description", ""), one_line=True)))
        if item.get("command"):
            stderr.write("    (not run by mcpsync) %s\n" % escape_controls(item["command"], one_line=True))
        if item.get("documentation"):
            stderr.write("    see %s\n" % escape_controls(item["documentation"], one_line=True))


def run_search(args: argparse.Namespace, *, stdout: IO[str], stderr: IO[str], stdin: IO[str]) -> int:
    from .._display import escape_controls
    from ..registry.client import RegistryClient

    statuses = ("active", "deprecated") if args.all else ("active",)
    with RegistryClient(args.registry) as client:
        found = client.search(args.text, limit=max(1, args.limit), statuses=statuses)
    if getattr(args, "json", False):
        stdout.write(json.dumps([{"name": e.name, "version": e.version, "description": e.description,
                                  "status": e.status, "statusMessage": e.status_message} for e in found],
                                indent=2) + "\n")
        return 0
    if not found:
        stderr.write("no servers found\n")
        return 0
    width = max(len(e.name) for e in found)
    for e in found:
        line = "%-*s  %-12s  %s" % (width, e.name, e.version, e.description)
        if e.status != "active":
            line += "  [%s%s]" % (e.status, (": " + e.status_message) if e.status_message else "")
        stdout.write(escape_controls(line.rstrip(), one_line=True) + "\n")
    return 0


def run_install(args: argparse.Namespace, *, stdout: IO[str], stderr: IO[str], stdin: IO[str]) -> int:
    from ..registry.errors import ConsentRefused
    from ..registry.installer import install

    if (args.spec is None) == (args.card is None):
        stderr.write("mcpsync: install takes a registry NAME[@VERSION] or --card URL (one of them)\n")
        return 2
    inputs, approve = _callbacks(args, stdin, stderr)
    try:
        if args.card is not None:
            from ..cards.install import install_card

            result = install_card(args.card, config=_config(args), inputs=inputs, approve=approve,
                                  name=args.as_name, replace=args.replace, allow_local=_allow_local(args))
        else:
            result = install(args.spec, config=_config(args), registry=args.registry, inputs=inputs,
                             approve=approve, name=args.as_name, prefer=args.prefer,
                             registry_type=args.registry_type, replace=args.replace)
    except ConsentRefused as exc:
        stderr.write("mcpsync: %s\n" % exc.message)
        return 1
    if getattr(args, "json", False):
        stdout.write(json.dumps({"name": result.config_name, "config": result.config_path,
                                 "server": result.consent.server, "version": result.consent.version,
                                 "command": list(result.consent.command), "url": result.consent.url}) + "\n")
    else:
        stdout.write("installed %s %s as %r in %s\n" % (result.consent.server, result.consent.version,
                                                      result.config_name, result.config_path))
    _print_post_install(result, stderr)
    return 0


def run_outdated(args: argparse.Namespace, *, stdout: IO[str], stderr: IO[str], stdin: IO[str]) -> int:
    from .._display import escape_controls
    from ..registry.installer import outdated

    from ..cards.install import outdated_cards

    items = outdated(_config(args), registry=args.registry)
    card_items = outdated_cards(_config(args), allow_local=_allow_local(args))
    if getattr(args, "json", False):
        stdout.write(json.dumps([{"name": i.config_name, "server": i.registry_name, "installed": i.installed,
                                  "latest": i.latest, "status": i.status, "statusMessage": i.status_message,
                                  "error": i.error} for i in items]
                                + [{"name": c.config_name, "server": c.card_name, "installed": c.installed,
                                    "latest": c.latest, "card": c.card_url, "error": c.error} for c in card_items],
                                indent=2) + "\n")
        return 0
    if not items and not card_items:
        stderr.write("every registry-installed server is up to date\n")
        return 0
    for c in card_items:
        line = "%s  %s  %s -> %s  (card %s)" % (c.config_name, c.card_name, c.installed, c.latest or "?", c.card_url)
        stdout.write(escape_controls(line + ("  (%s)" % c.error if c.error else ""), one_line=True) + "\n")
    for i in items:
        line = "%s  %s  %s -> %s" % (i.config_name, i.registry_name, i.installed, i.latest or "?")
        if i.status != "active":
            line += "  [%s%s]" % (i.status, (": " + i.status_message) if i.status_message else "")
        if i.error:
            line += "  (%s)" % i.error
        stdout.write(escape_controls(line, one_line=True) + "\n")
    return 0


def run_update(args: argparse.Namespace, *, stdout: IO[str], stderr: IO[str], stdin: IO[str]) -> int:
    from ..registry.errors import ConsentRefused
    from ..registry.installer import update

    from ..cards.install import update_cards

    inputs, approve = _callbacks(args, stdin, stderr)
    try:
        results = update(_config(args), args.names or None, registry=args.registry, inputs=inputs, approve=approve)
        results += update_cards(_config(args), args.names or None, inputs=inputs, approve=approve,
                                allow_local=_allow_local(args))
    except ConsentRefused as exc:
        stderr.write("mcpsync: %s\n" % exc.message)
        return 1
    for result in results:
        stdout.write("updated %r to %s %s\n" % (result.config_name, result.consent.server, result.consent.version))
        _print_post_install(result, stderr)
    if not results:
        stderr.write("nothing to update\n")
    return 0


def run_uninstall(args: argparse.Namespace, *, stdout: IO[str], stderr: IO[str], stdin: IO[str]) -> int:
    from ..registry.installer import uninstall

    if not uninstall(_config(args), args.name):
        stderr.write("mcpsync: no server named %r in the configuration\n" % args.name)
        return 2
    stdout.write("removed %r and its stored secrets\n" % args.name)
    return 0
