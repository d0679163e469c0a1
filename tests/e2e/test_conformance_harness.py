"""tests/conformance/harness.py (the runner behind .ci/conformance): its verdicts and its guard, driven by a
stand-in for the Node harness (a Python script that answers `list --client` and writes a checks.json as the
real harness does), so the rules are tested without Node: the harness's exit code counts, a scenario whose mock
servers received no request fails, a scenario where no check succeeded fails, the baseline turns a failure into
an expected one and a stale entry into a failure."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, List

import pytest

from tests.conformance import harness

FAKE = textwrap.dedent(
    """
    import json, os, sys, pathlib
    args = sys.argv[1:]
    if args[:2] == ["--require", args[1]]:
        args = args[2:]
    args = args[1:]  # the harness script path
    plan = json.loads(os.environ["FAKE_PLAN"])
    if args[:2] == ["list", "--client"]:
        print("Client scenarios (test against a client):")
        for name, tags in plan["scenarios"]:
            print("  - %s [%s]" % (name, tags))
        sys.exit(0)
    scenario = args[args.index("--scenario") + 1]
    out = pathlib.Path(args[args.index("-o") + 1]) / (scenario + "-2026")
    out.mkdir(parents=True)
    mine = plan["runs"][scenario]
    (out / "checks.json").write_text(json.dumps([{"id": "c%d" % i, "status": s} for i, s in enumerate(mine["checks"])]))
    log = os.environ.get("MCPSYNC_CONFORMANCE_REQUEST_LOG")
    if log and mine["requests"]:
        with open(log, "a") as f:
            for _ in range(mine["requests"]):
                f.write(json.dumps({"method": "POST", "url": "/mcp"}) + "\\n")
    if "--spec-version" in args:
        (out / "wire.txt").write_text(args[args.index("--spec-version") + 1])
    sys.exit(mine["rc"])
    """
)


def run(tmp_path: Path, monkeypatch: Any, plan: Dict[str, Any], *extra: str) -> List[Dict[str, Any]]:
    fake = tmp_path / "fake_node.py"
    fake.write_text(FAKE)
    node = tmp_path / "node"
    node.write_text('#!/bin/sh\nexec %s %s "$@"\n' % (sys.executable, fake))
    node.chmod(0o755)
    prefix = tmp_path / "h"
    js = prefix / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    js.parent.mkdir(parents=True)
    js.write_text("")
    monkeypatch.setenv("FAKE_PLAN", json.dumps(plan))
    out = tmp_path / "out"
    code = harness.main(
        ["--node", str(node), "--harness", "9.9=%s" % prefix, "--client", "true", "--out", str(out), *extra]
    )
    with open(out / "summary.json") as f:
        summary = json.load(f)
    outcomes: List[Dict[str, Any]] = summary["outcomes"]
    for o in outcomes:
        o["exit"] = code
    return outcomes


def by_name(outcomes: List[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    return {o["scenario"]: o for o in outcomes}


def test_verdicts_and_the_guard(tmp_path: Path, monkeypatch: Any, capsys: Any) -> None:
    plan = {
        "scenarios": [
            ["good", "2025-11-25"],
            ["silent", "extension"],
            ["skipped", "extension"],
            ["bad", "2025-11-25"],
            ["exit", "2026-07-28"],
        ],
        "runs": {
            "good": {"checks": ["SUCCESS", "INFO"], "requests": 3, "rc": 0},
            "silent": {"checks": ["SUCCESS"], "requests": 0, "rc": 0},  # harness passes, nothing reached the mock
            "skipped": {"checks": ["SKIPPED"], "requests": 2, "rc": 0},  # nothing was verified
            "bad": {"checks": ["SUCCESS", "FAILURE"], "requests": 2, "rc": 1},
            "exit": {"checks": ["SUCCESS"], "requests": 1, "rc": 1},  # the harness's verdict alone
        },
    }
    outcomes = by_name(run(tmp_path, monkeypatch, plan))
    assert outcomes["good"]["passed"] and outcomes["good"]["requests"] == 3
    assert not outcomes["silent"]["passed"]
    assert any("no request" in r for r in outcomes["silent"]["reasons"])
    assert not outcomes["skipped"]["passed"]
    assert any("no check succeeded" in r for r in outcomes["skipped"]["reasons"])
    assert not outcomes["bad"]["passed"] and not outcomes["exit"]["passed"]
    assert outcomes["exit"]["wire"] == "2026-07-28" and outcomes["good"]["wire"] == "2025-11-25"
    assert outcomes["good"]["exit"] == 1
    out = capsys.readouterr().out
    assert out.rstrip().splitlines()[-1] == "conformance: 1 passed, 4 failed"


def test_all_passing_exits_zero_and_both_wires(tmp_path: Path, monkeypatch: Any) -> None:
    plan = {
        "scenarios": [["both", "2025-11-25,2026-07-28"], ["modern", "2026-07-28"]],
        "runs": {
            "both": {"checks": ["SUCCESS"], "requests": 1, "rc": 0},
            "modern": {"checks": ["SUCCESS"], "requests": 1, "rc": 0},
        },
    }
    outcomes = run(tmp_path, monkeypatch, plan, "--wire", "both", "--runs", "2")
    assert all(o["passed"] for o in outcomes) and outcomes[0]["exit"] == 0
    wires = sorted((o["scenario"], o["wire"]) for o in outcomes)
    # each run: "both" at 2025-11-25 and again at 2026-07-28; "modern" only at its own wire
    assert wires == sorted([("both", "2025-11-25"), ("both", "2026-07-28"), ("modern", "2026-07-28")] * 2)


def test_expected_failures_and_stale_entries(tmp_path: Path, monkeypatch: Any) -> None:
    baseline = tmp_path / "baseline.txt"
    baseline.write_text("# known\nflaky   # reason\n9.9 fixed  # was broken\nother-version-only 1.0 x\n")
    plan = {
        "scenarios": [["flaky", "extension"], ["fixed", "extension"]],
        "runs": {
            "flaky": {"checks": ["FAILURE"], "requests": 1, "rc": 1},
            "fixed": {"checks": ["SUCCESS"], "requests": 1, "rc": 0},
        },
    }
    outcomes = by_name(run(tmp_path, monkeypatch, plan, "--expected-failures", str(baseline)))
    assert outcomes["flaky"]["expected_failure"] and not outcomes["flaky"]["passed"]
    assert outcomes["fixed"]["expected_failure"] and outcomes["fixed"]["passed"]
    assert outcomes["fixed"]["exit"] == 1  # the stale entry fails the run
    baseline.write_text("flaky\n")
    again = tmp_path / "again"
    again.mkdir()
    outcomes = by_name(run(again, monkeypatch, plan, "--expected-failures", str(baseline)))
    assert not outcomes["fixed"]["expected_failure"] and outcomes["flaky"]["exit"] == 0


def test_default_wire_follows_the_harness_rule() -> None:
    assert harness.Scenario("a", ["2025-06-18", "2025-11-25", "2026-07-28"]).default_wire() == "2025-11-25"
    assert harness.Scenario("a", ["2025-06-18", "2025-11-25", "2026-07-28"]).other_wire() == "2026-07-28"
    assert harness.Scenario("b", ["2026-07-28"]).default_wire() == "2026-07-28"
    assert harness.Scenario("b", ["2026-07-28"]).other_wire() is None
    assert harness.Scenario("c", ["extension"]).default_wire() == "2025-11-25"
    assert harness.Scenario("d", ["draft"]).other_wire() is None


@pytest.mark.skipif(not os.path.exists(harness.REQUEST_LOG_JS), reason="request_log.cjs missing")
def test_the_request_log_preload_exists_and_is_commonjs() -> None:
    text = Path(harness.REQUEST_LOG_JS).read_text()
    assert "require('http')" in text and "MCPSYNC_CONFORMANCE_REQUEST_LOG" in text


def test_the_time_budget_fails_what_it_could_not_run(tmp_path: Path, monkeypatch: Any) -> None:
    plan = {
        "scenarios": [["one", "extension"], ["two", "extension"]],
        "runs": {name: {"checks": ["SUCCESS"], "requests": 1, "rc": 0} for name in ("one", "two")},
    }
    outcomes = by_name(run(tmp_path, monkeypatch, plan, "--budget", "0"))
    assert not outcomes["one"]["passed"] and not outcomes["two"]["passed"]
    assert "time budget" in outcomes["two"]["reasons"][0] and outcomes["two"]["exit"] == 1
