"""``mcpsync discover DOMAIN``: list the Server Cards a domain's AI Catalog advertises (docs/guides/cards.md).

Wiring (one line in the CLI's parser builder; the main dispatcher calls ``args.func(args, ...)``)::

    from mcpsync.cli.cards import add_cards_parser
    add_cards_parser(subparsers)

Connecting to one of them is ``mcpsync --card URL ...``; installing it ``mcpsync install --card URL``.
"""

from __future__ import annotations

import argparse
import json
from typing import IO, Any, Dict, List

__all__ = ["add_cards_parser"]


def add_cards_parser(subparsers: Any) -> None:
    """Add ``discover`` to ``subparsers``."""
    p = subparsers.add_parser(
        "discover", help="list the Server Cards of a domain's AI Catalog",
        description="Fetch https://DOMAIN/.well-known/ai-catalog.json (or the catalog URL given), check every "
                    "Server Card it lists and show where each server lives. Connect with `mcpsync --card URL`, "
                    "install with `mcpsync install --card URL`.")
    p.add_argument("domain", metavar="DOMAIN|CATALOG_URL")
    p.add_argument("--identifier", default=None, metavar="ID",
                   help="only the entry with this catalog identifier or card name")
    p.add_argument("--allow-local", dest="discover_allow_local", action="append", default=[], metavar="HOST",
                   help="allow plain http and this local or private host (repeatable; '*': every one)")
    p.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="machine output: JSON")
    p.set_defaults(func=run_discover)


def run_discover(args: argparse.Namespace, *, stdout: IO[str], stderr: IO[str], stdin: IO[str]) -> int:
    from ..cards.connector import discover
    from .._display import escape_controls

    allow = list(args.discover_allow_local or [])
    found = discover(args.domain, identifier=args.identifier, allow_local=True if "*" in allow else allow)
    rows: List[Dict[str, Any]] = [{
        "name": card.name, "version": card.version, "title": card.title, "description": card.description,
        "card": card.source_url,
        "remotes": [{"type": r.type, "url": r.url, "supportedProtocolVersions": list(r.supported_protocol_versions),
                     "headers": [h.name for h in r.headers]} for r in card.remotes],
    } for card in found]
    if getattr(args, "json", False):
        stdout.write(json.dumps(rows, indent=2) + "\n")
        return 0
    for row in rows:
        heading = "%s  %s  %s" % (row["name"], row["version"], row["description"])
        stdout.write(escape_controls(heading, one_line=True) + "\n")
        stdout.write(escape_controls("  card: %s" % row["card"], one_line=True) + "\n")
        for remote in row["remotes"]:
            extra = ", ".join(remote["supportedProtocolVersions"])
            line = "  %s %s%s" % (remote["type"], remote["url"], "  (%s)" % extra if extra else "")
            if remote["headers"]:
                line += "  headers: %s" % ", ".join(remote["headers"])
            stdout.write(escape_controls(line, one_line=True) + "\n")
    return 0
