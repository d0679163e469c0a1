"""What a CLI command sees of one command-line run: :class:`CliContext`, plus :class:`UsageError`.

The run itself is :class:`mcpsync.cli.app.Cli`; the command modules (:mod:`.commands`, :mod:`.demo`)
depend only on this module, so nothing in the CLI imports back up into :mod:`.app`.
"""

from __future__ import annotations

import argparse
import sys
from typing import IO, Any, Dict, List, Protocol, Sequence

from .output import Console

__all__ = ["EXAMPLE_SERVER", "CliContext", "UsageError"]

#: The command that runs the bundled example server (``mcpsync demo``).
EXAMPLE_SERVER: List[str] = [sys.executable, "-m", "mcpsync.example_server"]


class UsageError(Exception):
    """A command-line mistake: printed without a traceback, exit code 2."""


class CliContext(Protocol):
    """One command-line run as a command sees it: the parsed options and the output streams."""

    args: argparse.Namespace
    stdout: IO[str]
    err: Console
    json: bool
    verbose: int
    in_flight: bool

    def print(self, text: str = "") -> None:
        """Write a line to stdout."""

    def emit_json(self, value: Any) -> None:
        """Write one JSON document to stdout."""

    def rows(self, rows: Sequence[Sequence[str]], indent: str = "") -> None:
        """Print an aligned table, clipped to the terminal's width."""

    def on_stderr(self, line: str) -> None:
        """Show one line of the server's stderr."""

    def client_options(self) -> Dict[str, Any]:
        """Keyword arguments for :class:`mcpsync.Client` from the options."""
