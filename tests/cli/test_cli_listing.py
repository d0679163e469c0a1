"""The listing commands' shared output rule (``Cli.listing``): JSON with --json, ``(no WHAT)`` when empty,
else an aligned table; exit code 0 in every case."""

from __future__ import annotations

import argparse
import io
import json

from mcpsync.cli.context import Cli


def _cli(as_json: bool) -> "tuple[Cli, io.StringIO]":
    stdout = io.StringIO()
    return Cli(argparse.Namespace(json=as_json), None, stdout, io.StringIO(), io.StringIO()), stdout


def test_listing_prints_none_when_empty() -> None:
    cli, stdout = _cli(False)
    assert cli.listing([], "tools", lambda: {"tools": []}, lambda: []) == 0
    assert stdout.getvalue() == "(no tools)\n"


def test_listing_prints_rows() -> None:
    cli, stdout = _cli(False)
    assert cli.listing(["a"], "tools", lambda: {}, lambda: [("echo", "message", "Echoes")]) == 0
    assert stdout.getvalue().split() == ["echo", "message", "Echoes"]


def test_listing_json_even_when_empty() -> None:
    cli, stdout = _cli(True)
    assert cli.listing([], "prompts", lambda: {"prompts": []}, lambda: []) == 0
    assert json.loads(stdout.getvalue()) == {"prompts": []}
