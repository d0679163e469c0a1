"""Near-instant reconnects: a second process's `tools/call`, with and without what the first one learned.

    .venv/bin/python bench/bench_warm.py                 # 7 rounds
    .venv/bin/python bench/bench_warm.py --rounds 15

Every measurement is one whole new process (interpreter, imports, connect, one ``tools/call`` of ``echo``,
close), timed from spawn to exit, against the example server behind a real local HTTP server
(``tests/peers/httpserver.py``, which logs every HTTP request it gets), in the 2026-07-28 era (its listings and
discover result carry ``ttlMs`` = 60 s) and in the handshake era (2025-11-25). Clients:

* ``mcpsync call (first)``: ``python -m mcpsync --url URL call echo`` with an empty cache directory;
* ``mcpsync call (second)``: the same command again: the CLI keeps what the first learned
  (``$MCPSYNC_CACHE_DIR``), so it skips the probe (both eras) and ``server/discover`` (2026-07-28);
* ``mcpsync call --no-cache``: the second run without the cache (what every run cost before);
* ``mcpsync library (second)``: ``mcpsync.connect(url, extensions=[WarmCache(DIR)])`` and one call, second run;
* ``official SDK``: ``mcp.Client(url, mode=...)`` (2.3.0), one call; it keeps nothing between processes;
* ``FastMCP``: ``fastmcp.Client(url)`` (fastmcp-slim 4.2.3), one call, when installed.

Printed per era and client: the median wall time, the ratio to ``mcpsync call (first)`` in the same run, and
the HTTP requests the server saw for that process (the same every round; the target is exactly one, the
``tools/call``, for a second mcpsync process in the 2026-07-28 era). Nothing here is a test: no time is asserted.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

LIBRARY = """
import sys, mcpsync
from mcpsync.warm import WarmCache
with mcpsync.connect(sys.argv[1], extensions=[WarmCache(sys.argv[2])]) as c:
    assert c.call_tool("echo", {"message": "hi"}).text == "hi"
"""

SDK = """
import asyncio, sys
from mcp import Client

async def main():
    async with Client(sys.argv[1], mode=sys.argv[2]) as c:
        r = await c.call_tool("echo", {"message": "hi"})
        assert r.content[0].text == "hi"

asyncio.run(main())
"""

FASTMCP = """
import asyncio, sys
from fastmcp import Client

async def main():
    async with Client(sys.argv[1]) as c:
        r = await c.call_tool("echo", {"message": "hi"})
        assert r.content[0].text == "hi"

asyncio.run(main())
"""


def _have(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _clients(url: str, era: str, cache: str) -> List[Tuple[str, List[str], Optional[str]]]:
    """(label, argv, the cache directory to empty first or None)."""
    py = sys.executable
    cli = [py, "-m", "mcpsync", "--url", url, "call", "echo", "--args", '{"message": "hi"}']
    out: List[Tuple[str, List[str], Optional[str]]] = [
        ("mcpsync call (first)", cli, cache),
        ("mcpsync call (second)", cli, None),
        ("mcpsync call --no-cache", cli[:3] + ["--no-cache"] + cli[3:], None),
        ("mcpsync library (second)", [py, "-c", LIBRARY, url, cache + "-lib"], None),
    ]
    if _have("mcp"):
        out.append(("official SDK", [py, "-c", SDK, url, "2026-07-28" if era == "modern" else "legacy"], None))
    if _have("fastmcp"):
        out.append(("FastMCP", [py, "-c", FASTMCP, url], None))
    return out


def _one(srv: "object", argv: List[str], env: Dict[str, str]) -> Tuple[float, List[str]]:
    log = srv.log
    n = len(log)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit("%s failed:\n%s" % (" ".join(argv[:4]), proc.stderr[-2000:]))
    seen = []
    for r in log[n:]:
        what = r.body.get("method") if isinstance(r.body, dict) else ""
        seen.append("%s %s" % (r.method, what) if what else r.method)
    return wall, seen


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    from tests.peers.httpserver import MCPTestServer

    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    print(
        "bench_warm: %d rounds, python %s, %s" % (args.rounds, sys.version.split()[0], time.strftime("%Y-%m-%d %H:%M"))
    )
    print(
        "(official SDK: %s; FastMCP: %s)"
        % ("installed" if _have("mcp") else "not installed", "installed" if _have("fastmcp") else "not installed")
    )
    for era in ("modern", "legacy"):
        base = tempfile.mkdtemp(prefix="mcpsync-bench-warm-")
        cache = os.path.join(base, "cache")
        env["MCPSYNC_CACHE_DIR"] = cache
        times: Dict[str, List[float]] = {}
        requests: Dict[str, List[str]] = {}
        with MCPTestServer(era=era, ttl_ms=60000) as srv:
            clients = _clients(srv.url, era, cache)
            # the library's second run needs a first one to learn from
            _one(srv, clients[3][1], env)
            for rnd in range(args.rounds):
                order = clients if rnd % 2 == 0 else [clients[0], clients[1]] + list(reversed(clients[2:]))
                for label, argv, empty in order:
                    if empty is not None:
                        shutil.rmtree(empty, ignore_errors=True)
                    wall, seen = _one(srv, argv, env)
                    times.setdefault(label, []).append(wall)
                    requests[label] = seen
        shutil.rmtree(base, ignore_errors=True)
        first = statistics.median(times["mcpsync call (first)"])
        print()
        print(
            "## %s era (%s)"
            % ("2026-07-28" if era == "modern" else "handshake", "ttlMs 60 s" if era == "modern" else "2025-11-25")
        )
        print()
        print("| client | wall, median | vs first mcpsync call | HTTP requests the server saw |")
        print("|---|---|---|---|")
        for label, _argv, _empty in clients:
            med = statistics.median(times[label])
            seen = requests[label]
            print("| %s | %.0f ms | %.2fx | %d: %s |" % (label, med * 1000, med / first, len(seen), ", ".join(seen)))
        second = requests["mcpsync call (second)"]
        if era == "modern":
            ok = second == ["POST tools/call"]
            print()
            print(
                "target: a second `mcpsync call` makes exactly one HTTP round trip (the tools/call): %s"
                % ("met" if ok else "NOT met (%s)" % ", ".join(second))
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
