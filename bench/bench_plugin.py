"""The pytest plugin's cost per test: function scope (a server process per test) against module and session
scopes and the in-process mode, next to the official SDK's own in-memory client, all testing the same server.

    .venv/bin/python bench/bench_plugin.py              # 10 tests per file, 3 rounds (~5 min here)
    .venv/bin/python bench/bench_plugin.py --tests 20 --rounds 5

The server under test is the official-SDK peer of the test suite (``tests/peers/sdk_server.py``, ``MCPServer``).
Each configuration is a test file of N identical tests (each one ``add(2, 3)``), run by a fresh
``python -m pytest`` process; the cost per test is the sum of the N tests' own times (setup + call + teardown, as
pytest's JUnit XML report records them) divided by N, so a shared server's start and stop are spread over the N
tests and the interpreter's start, imports and collection are left out (they are the same for all). The median
over the rounds is shown, with the ratio to the baseline of the same run (``stdio function``: the plugin as it
was, a new server process for every test). Needs the SDK (``pip install 'mcpsync[interop]'``); nothing here asserts a
time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Dict, List, Tuple

ROOT = Path(__file__).resolve().parent.parent
SDK_SERVER = ROOT / "tests" / "peers" / "sdk_server.py"

HEADER = """
import importlib.util
import sys

import pytest

spec = importlib.util.spec_from_file_location("sdk_peer", %r)
peer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peer)
STDIO = [sys.executable, %r]
""" % (str(SDK_SERVER), str(SDK_SERVER))

PLUGIN_TEST = """
@pytest.mark.mcp_server({target}, era={era!r}, scope={scope!r})
def test_{i}(mcp_client):
    assert mcp_client.call_tool("add", {{"a": 2, "b": 3}}).text == "5"
"""

SDK_TEST = """
@pytest.mark.anyio
async def test_{i}():
    from mcp import Client
    async with Client(peer.server, mode={mode!r}) as client:
        result = await client.call_tool("add", {{"a": 2, "b": 3}})
        assert result.content[0].text == "5"
"""

#: name -> (template, fields)
CONFIGS: Dict[str, Tuple[str, Dict[str, str]]] = {
    "stdio function (before)": (PLUGIN_TEST, {"target": "STDIO", "scope": "function"}),
    "stdio module": (PLUGIN_TEST, {"target": "STDIO", "scope": "module"}),
    "stdio session": (PLUGIN_TEST, {"target": "STDIO", "scope": "session"}),
    "in-process function": (PLUGIN_TEST, {"target": "peer.server", "scope": "function"}),
    "in-process session": (PLUGIN_TEST, {"target": "peer.server", "scope": "session"}),
    "sdk in-memory Client": (SDK_TEST, {}),
}


def source(template: str, fields: Dict[str, str], era: str, count: int) -> str:
    mode = {"legacy": "legacy", "modern": "2026-07-28"}[era]
    tests = "".join(template.format(i=i, era=era, mode=mode, **fields) for i in range(count))
    extra = '\n@pytest.fixture\ndef anyio_backend():\n    return "asyncio"\n' if template is SDK_TEST else ""
    return HEADER + extra + tests


def per_test(path: Path) -> float:
    """The mean time of one test of ``path`` (setup + call + teardown), from pytest's JUnit XML report."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    report = path.with_suffix(".xml")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml", str(report), str(path)]
    done = subprocess.run(cmd, cwd=str(path.parent), env=env, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise SystemExit("%s failed:\n%s%s" % (path.name, done.stdout[-3000:], done.stderr[-2000:]))
    times = [float(case.get("time", "0")) for case in ET.parse(str(report)).iter("testcase")]
    return sum(times) / len(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", type=int, default=10, help="tests per file (default 10)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; the median is shown (default 3)")
    parser.add_argument("--eras", default="legacy,modern")
    args = parser.parse_args()
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise SystemExit("the official SDK is not installed: pip install 'mcpsync[interop]'")
    eras = [e for e in args.eras.split(",") if e]
    results: Dict[Tuple[str, str], List[float]] = {}
    with tempfile.TemporaryDirectory(prefix="mcpsync-bench-plugin-") as tmp:
        for round_no in range(args.rounds):
            order = list(CONFIGS) if round_no % 2 == 0 else list(reversed(CONFIGS))
            for era in eras:
                for name in order:
                    template, fields = CONFIGS[name]
                    path = Path(tmp, "test_many.py")
                    path.write_text(source(template, fields, era, args.tests))
                    cost = per_test(path)
                    results.setdefault((name, era), []).append(cost)
                    print("round %d %-26s %-6s %.3f s/test" % (round_no + 1, name, era, cost), flush=True)
    print()
    print("| configuration | " + " | ".join("%s: s/test (x baseline)" % e for e in eras) + " |")
    print("|---|" + "---|" * len(eras))
    for name in CONFIGS:
        cells = []
        for era in eras:
            value = statistics.median(results[(name, era)])
            base = statistics.median(results[("stdio function (before)", era)])
            cells.append("%.3f (%.2fx)" % (value, value / base if base > 0 else float("nan")))
        print("| %s | %s |" % (name, " | ".join(cells)))


if __name__ == "__main__":
    main()
