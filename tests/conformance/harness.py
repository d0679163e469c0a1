"""Run the official MCP conformance harness against mcpsync's conformance client, one scenario at a time.

Used by ``.ci/conformance`` (which installs Node 22 and the pinned harness versions first)::

    python tests/conformance/harness.py --node NODE --harness 0.1.16=DIR --harness 0.2.0-alpha.12=DIR \
        --client "PYTHON tests/conformance/client.py" [--scenario NAME ...] [--runs N] [--out DIR]

For every harness version it lists the client scenarios (``conformance list --client``) and runs each
one on its own (``conformance client --scenario NAME``). A scenario passes when all of these hold:

- the harness's verdict is a pass (exit code 0: no failed check, no warning, no client timeout, the
  client exited 0 unless the scenario allows an error exit);
- its ``checks.json`` holds at least one SUCCESS check and none that is a FAILURE or WARNING (a run
  whose checks were all skipped or informational verified nothing);
- the guard: the harness's mock servers received at least one HTTP request from the client. A few
  scenarios pass a client that does nothing; ``request_log.cjs`` (preloaded into the harness) logs
  every request any harness server receives, and an empty log fails the scenario.

A baseline file (``--expected-failures``, default ``tests/conformance/expected-failures.txt``) lists
scenarios known to fail, one per line as ``SCENARIO`` or ``VERSION SCENARIO`` with a ``# reason``: such a
failure is reported as XFAIL and does not fail the run, but a listed scenario that passes fails the run
(the entry is stale and must be removed), so the list only ever shrinks.

``--wire both`` also runs each scenario that applies to both protocol wires (2025-11-25 and
2026-07-28) a second time at the wire it did not run at by default (``--spec-version``), as the
harness's requirement sets do. Prints one table and, last, the line ``conformance: N passed, M failed``.
Exit status 0 only when every run passed. ``--budget`` bounds the whole run (default 1500 s): scenarios
not started within it fail as unrun. Uses only the standard library.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
REQUEST_LOG_JS = HERE / "request_log.cjs"
MODERN_WIRE = "2026-07-28"
LEGACY_WIRE = "2025-11-25"
#: seconds the harness gives the client (its --timeout, in ms below); the whole run is killed later.
CLIENT_TIMEOUT = 30
HARD_TIMEOUT = 120
_LIST_LINE = re.compile(r"^\s+-\s+(\S+)(?:\s+\[([^\]]*)\])?\s*$")


@dataclass
class Scenario:
    name: str
    tags: List[str]

    def default_wire(self) -> str:
        # The harness's own rule: a scenario introduced in 2026-07-28 runs there, others at 2025-11-25.
        dated = [t for t in self.tags if re.match(r"^\d{4}-\d{2}-\d{2}$", t)]
        if dated and min(dated) == MODERN_WIRE:
            return MODERN_WIRE
        return LEGACY_WIRE

    def other_wire(self) -> Optional[str]:
        """The second wire this scenario applies to, if any (2025-11-25 <-> 2026-07-28)."""
        default = self.default_wire()
        if default == LEGACY_WIRE and MODERN_WIRE in self.tags:
            return MODERN_WIRE
        return None


@dataclass
class Outcome:
    version: str
    scenario: str
    wire: str
    passed: bool
    expected_failure: bool = False
    second_wire: bool = False
    checks_passed: int = 0
    checks_total: int = 0
    requests: int = 0
    seconds: float = 0.0
    reasons: List[str] = field(default_factory=list)
    result_dir: str = ""


def list_scenarios(node: str, harness: Path) -> List[Scenario]:
    out = subprocess.run(
        [node, str(harness), "list", "--client"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        universal_newlines=True,
        timeout=60,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit("conformance list --client failed:\n" + out.stdout)
    scenarios = []
    for line in out.stdout.splitlines():
        m = _LIST_LINE.match(line)
        if m:
            tags = [t.strip() for t in (m.group(2) or "").split(",") if t.strip()]
            scenarios.append(Scenario(m.group(1), tags))
    if not scenarios:
        raise SystemExit("conformance list --client printed no scenarios:\n" + out.stdout)
    return scenarios


def _read_checks(out_dir: Path) -> Tuple[Optional[list], str]:
    found = sorted(out_dir.rglob("checks.json"))
    if not found:
        return None, ""
    try:
        with open(found[-1], encoding="utf-8") as f:
            checks = json.load(f)
    except (OSError, ValueError) as exc:
        return None, "unreadable checks.json: %s" % exc
    return (checks if isinstance(checks, list) else None), str(found[-1].parent)


def _count_requests(log: Path) -> int:
    try:
        with open(log, encoding="utf-8") as f:
            return sum(1 for line in f if line.strip())
    except OSError:
        return 0


def run_one(
    node: str,
    harness: Path,
    version: str,
    scenario: Scenario,
    wire: Optional[str],
    client_cmd: str,
    out_root: Path,
    verbose: bool,
) -> Outcome:
    safe = scenario.name.replace("/", "_")
    tag = "%s-%s%s" % (version, safe, "" if wire is None else "-" + wire)
    out_dir = out_root / tag
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    log = out_dir / "requests.jsonl"
    env = dict(os.environ)
    env["MCPSYNC_CONFORMANCE_REQUEST_LOG"] = str(log)
    cmd = [
        node,
        "--require",
        str(REQUEST_LOG_JS),
        str(harness),
        "client",
        "--command",
        client_cmd,
        "--scenario",
        scenario.name,
        "--timeout",
        str(CLIENT_TIMEOUT * 1000),
        "-o",
        str(out_dir / "results"),
    ]
    if wire is not None:
        cmd += ["--spec-version", wire]
    started = time.monotonic()
    try:
        proc = subprocess.run(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            universal_newlines=True,
            env=env,
            timeout=HARD_TIMEOUT,
            check=False,
        )
        output, rc = proc.stdout, proc.returncode
    except subprocess.TimeoutExpired as exc:
        raw = exc.output or ""
        output = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        rc = -1
    seconds = time.monotonic() - started
    (out_dir / "harness-output.txt").write_text(output, encoding="utf-8")
    shown_wire = wire or scenario.default_wire()
    result = Outcome(version, scenario.name, shown_wire, False, seconds=seconds, result_dir=str(out_dir))
    checks, _ = _read_checks(out_dir / "results")
    if rc == -1:
        result.reasons.append("harness did not finish within %ss" % HARD_TIMEOUT)
    elif rc != 0:
        result.reasons.append("harness verdict: failed (exit %d)" % rc)
    if checks is None:
        result.reasons.append("no checks.json")
    else:
        result.checks_total = len(checks)
        result.checks_passed = sum(1 for c in checks if c.get("status") == "SUCCESS")
        bad = [c for c in checks if c.get("status") in ("FAILURE", "WARNING")]
        for c in bad:
            msg = c.get("errorMessage") or c.get("description") or ""
            result.reasons.append("%s %s: %s" % (c.get("status"), c.get("id"), str(msg)[:300]))
        if not checks:
            result.reasons.append("the harness recorded no check at all")
        elif result.checks_passed == 0:
            result.reasons.append("no check succeeded (all skipped or informational): nothing was verified")
    if "CLIENT TIMED OUT" in output or "Client timed out" in output:
        result.reasons.append("client timed out")
    result.requests = _count_requests(log)
    if result.requests == 0:
        result.reasons.append("guard: the mock server received no request from the client")
    result.passed = not result.reasons
    if verbose or not result.passed:
        print("---- %s %s (wire %s): %s" % (version, scenario.name, shown_wire, "PASS" if result.passed else "FAIL"))
        for r in result.reasons:
            print("     " + r)
        if not result.passed:
            print("     output: %s" % (out_dir / "harness-output.txt"))
        sys.stdout.flush()
    return result


def load_expected_failures(path: Optional[Path]) -> Dict[Tuple[str, str], str]:
    """``{(version or "*", scenario): reason}`` from a baseline file (missing file: empty)."""
    out: Dict[Tuple[str, str], str] = {}
    if path is None or not path.is_file():
        return out
    for line in path.read_text(encoding="utf-8").splitlines():
        entry, _, reason = line.partition("#")
        words = entry.split()
        if not words:
            continue
        key = (words[0], words[1]) if len(words) == 2 else ("*", words[0])
        out[key] = reason.strip()
    return out


def _expected(baseline: Dict[Tuple[str, str], str], o: Outcome) -> bool:
    return (o.version, o.scenario) in baseline or ("*", o.scenario) in baseline


def verdict(o: Outcome) -> str:
    if o.expected_failure:
        return "XPASS" if o.passed else "XFAIL"
    return "PASS" if o.passed else "FAIL"


def print_table(outcomes: Sequence[Outcome]) -> None:
    width = max([len(o.scenario) for o in outcomes] + [8])
    head = "%-15s %-*s %-10s %-6s %-7s %-8s %s" % (
        "harness",
        width,
        "scenario",
        "wire",
        "result",
        "checks",
        "requests",
        "secs",
    )
    print(head)
    print("-" * len(head))
    for o in outcomes:
        print(
            "%-15s %-*s %-10s %-6s %-7s %-8d %.1f"
            % (
                o.version,
                width,
                o.scenario,
                o.wire,
                verdict(o),
                "%d/%d" % (o.checks_passed, o.checks_total),
                o.requests,
                o.seconds,
            )
        )


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--node", required=True, help="a Node.js >= 22 binary")
    p.add_argument(
        "--harness",
        action="append",
        required=True,
        metavar="VERSION=DIR",
        help="an installed harness prefix (repeatable)",
    )
    p.add_argument("--client", required=True, help="the client command (no spaces inside its parts)")
    p.add_argument("--scenario", action="append", default=[], help="run only these scenarios (repeatable)")
    p.add_argument("--runs", type=int, default=1, help="full runs in a row (default 1)")
    p.add_argument("--wire", choices=("default", "both"), default="default")
    p.add_argument("--out", default="", help="directory for results (default: a temporary one)")
    p.add_argument(
        "--expected-failures", default=str(HERE / "expected-failures.txt"), help="baseline of known failures"
    )
    p.add_argument(
        "--budget",
        type=float,
        default=1500.0,
        help="seconds for the whole run; scenarios past it fail unrun (default 1500)",
    )
    p.add_argument("--verbose", action="store_true")
    args = p.parse_args(argv)

    out_root = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="mcpsync-conformance-"))
    out_root.mkdir(parents=True, exist_ok=True)
    harnesses: List[Tuple[str, Path]] = []
    for spec in args.harness:
        version, _, prefix = spec.partition("=")
        js = Path(prefix) / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
        if not js.is_file():
            raise SystemExit("no conformance harness at %s" % js)
        harnesses.append((version, js))

    baseline = load_expected_failures(Path(args.expected_failures) if args.expected_failures else None)
    started = time.monotonic()
    all_outcomes: List[Outcome] = []
    run_summaries: List[Dict[str, object]] = []
    for run in range(1, args.runs + 1):
        outcomes: List[Outcome] = []
        for version, js in harnesses:
            scenarios = list_scenarios(args.node, js)
            if args.scenario:
                scenarios = [s for s in scenarios if s.name in args.scenario]
            print(
                "== run %d/%d: conformance %s, %d client scenarios, one at a time"
                % (run, args.runs, version, len(scenarios))
            )
            sys.stdout.flush()
            for sc in scenarios:
                wires: List[Optional[str]] = [None]
                other = sc.other_wire() if args.wire == "both" else None
                if other is not None:
                    wires.append(other)
                for wire in wires:
                    if time.monotonic() - started > args.budget:
                        o = Outcome(version, sc.name, wire or sc.default_wire(), False)
                        o.reasons.append("not run: the time budget of %.0f s was used up" % args.budget)
                    else:
                        o = run_one(
                            args.node, js, version, sc, wire, args.client, out_root / ("run%d" % run), args.verbose
                        )
                    o.expected_failure = _expected(baseline, o)
                    o.second_wire = wire is not None
                    outcomes.append(o)
        print()
        print_table(outcomes)
        per_version = {}
        for version, _ in harnesses:
            mine = [o for o in outcomes if o.version == version and not o.second_wire]
            extra = [o for o in outcomes if o.version == version and o.second_wire]
            per_version[version] = "%d/%d" % (sum(o.passed for o in mine), len(mine))
            if extra:
                per_version[version] += " (+%d/%d at their second wire)" % (sum(o.passed for o in extra), len(extra))
        print("run %d: %s" % (run, ", ".join("%s %s" % kv for kv in per_version.items())))
        print()
        run_summaries.append({"run": run, "passed": per_version})
        all_outcomes.extend(outcomes)

    with open(out_root / "summary.json", "w", encoding="utf-8") as f:
        json.dump({"runs": run_summaries, "outcomes": [o.__dict__ for o in all_outcomes]}, f, indent=2)
    failed = [o for o in all_outcomes if not o.passed and not o.expected_failure]
    xfailed = [o for o in all_outcomes if not o.passed and o.expected_failure]
    stale = [o for o in all_outcomes if o.passed and o.expected_failure]
    if xfailed:
        print("Expected failures (%s):" % args.expected_failures)
        for o in xfailed:
            print("  XFAIL %s %s (wire %s): %s" % (o.version, o.scenario, o.wire, "; ".join(o.reasons)))
    if stale:
        print("Stale baseline entries (these now pass: remove them from %s):" % args.expected_failures)
        for o in stale:
            print("  XPASS %s %s (wire %s)" % (o.version, o.scenario, o.wire))
    if failed:
        print("FAILED scenarios:")
        for o in failed:
            print("  %s %s (wire %s): %s" % (o.version, o.scenario, o.wire, "; ".join(o.reasons)))
    print("results in %s" % out_root)
    bad = len(failed) + len(stale)
    print("expected failures (xfail): %d" % len(xfailed))
    print(
        "conformance: %d passed, %d failed" % (sum(1 for o in all_outcomes if o.passed and not o.expected_failure), bad)
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
