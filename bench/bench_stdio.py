"""mcpsync vs a hand-written floor client vs the official Python SDK, over stdio, in one run.

    .venv/bin/python bench/bench_stdio.py            # full run (~10 min here)
    .venv/bin/python bench/bench_stdio.py --quick    # smaller counts, 5 reps (~3 min)
    .venv/bin/python bench/bench_stdio.py --spawn    # only: 20 servers started one after another / at once

Every client talks to the same raw NDJSON echo server (``python -m mcpsync.example_server.echo``).
Each measurement runs in a fresh worker process (``--worker``), clients interleaved (A B C A B C ...),
``--reps`` repetitions (>= 5), medians; ratios are taken against the floor of the same repetition's
neighbourhood (median over reps). Absolute numbers swing between runs on shared machines: read the ratios.

Clients: floor (bench/floor_client.py, legacy handshake and modern envelope), mcpsync in both eras
(``protocol="legacy"`` / ``"modern"``), and the official SDK ``mcp`` (async ClientSession over its
stdio_client, one asyncio loop; ``initialize`` for legacy, ``discover`` for modern) when installed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SERVER = [sys.executable, "-m", "mcpsync.example_server.echo"]
MB = 1024 * 1024

TARGETS = {
    "latency_median": ("<=", 1.3),
    "latency_p99": ("<=", 1.5),
    "tput_64": (">=", 0.8),
    "big_time": ("<=", 1.5),
    "big_rss": ("<=", 1.2),
    "spawn_serial": ("<=", 1.25),
    "spawn_parallel": ("<=", 1.1),
}

SPAWN_COUNT = 20
#: --spawn clients: the floor (its own session per child, as mcpsync does), mcpsync with its orphan guard
#: (one reaper per host), and mcpsync with the guard off (MCPSYNC_NO_LIFELINE=1): what the guard costs.
SPAWN_CLIENTS = ["floor", "mcpsync", "mcpsync-noguard"]
#: Set to "1" by --no-warmup (the workers inherit it): the first timed server also pays the client's one-time
#: costs (mcpsync's lazy imports), which the warm-up server otherwise takes out of the measurement.
NO_WARMUP_ENV = "MCPSYNC_BENCH_NO_WARMUP"


# ---------------------------------------------------------------------------------------------- workers
# A worker connects one client, runs one task and prints one JSON line.


def _percentile(xs: List[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def _sync_driver(kind: str) -> Any:
    """(connect, call, close) for the thread-based clients."""
    modern = kind.endswith("modern")
    if kind.startswith("floor"):
        sys.path.insert(0, HERE)
        from floor_client import FloorClient

        c = FloorClient(SERVER, modern=modern)
        return c, (lambda msg: c.call_tool("echo", {"message": msg})["content"][0]["text"]), c.close
    import mcpsync

    if kind.startswith("mcpsync64k"):
        # experiment (not a default client): the stdio reader with 64 KiB os.read calls instead of 1 MiB,
        # a stand-in for reading into a preallocated buffer (see bench/README.md, "Where the time goes")
        from mcpsync.transports import stdio as _stdio

        _stdio._READ_SIZE = 1 << 16  # type: ignore[attr-defined]
    options: Dict[str, Any] = {}
    if kind.startswith("mcpsyncotel"):
        # issue 13: tracing on (OpenTelemetry SDK, batch processor, an exporter that drops the spans)
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

        class _Drop(SpanExporter):
            def export(self, spans: Any) -> SpanExportResult:
                return SpanExportResult.SUCCESS

        provider = TracerProvider()
        provider.add_span_processor(BatchSpanProcessor(_Drop()))
        trace.set_tracer_provider(provider)
    elif kind.startswith("mcpsyncctl"):
        # the pipeline on without OpenTelemetry (a pass-through interceptor and a retry policy)
        options = {"middleware": [mcpsync.middleware.Interceptor(), mcpsync.middleware.Retry()]}
    c = mcpsync.connect(SERVER, protocol="modern" if modern else "legacy", name="echo", **options)
    assert c.era == ("modern" if modern else "legacy"), c.era
    return c, (lambda msg: c.call_tool("echo", {"message": msg}).text), c.close


def _threads_tput(call: Callable[[str], str], inflight: int, total: int) -> float:
    per = max(1, total // inflight)
    barrier = threading.Barrier(inflight + 1)
    errors: List[BaseException] = []

    def work() -> None:
        barrier.wait()
        try:
            for _ in range(per):
                call("x")
        except BaseException as exc:  # pragma: no cover
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(inflight)]
    for t in threads:
        t.start()
    barrier.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    dt = time.perf_counter() - t0
    if errors:
        raise errors[0]
    return per * inflight / dt


def worker_sync(kind: str, task: str, n: int, total: int) -> Dict[str, Any]:
    if task == "cold":
        t0 = time.perf_counter()
        _, call, close = _sync_driver(kind)
        assert call("hi") == "hi"
        close()
        return {"in_process": time.perf_counter() - t0}
    _, call, close = _sync_driver(kind)
    try:
        for _ in range(200):
            call("warm")
        if task == "big":
            msg = "x" * (10 * MB)
            call("small")
            t0 = time.perf_counter()
            out = call(msg)
            dt = time.perf_counter() - t0
            assert len(out) == 10 * MB
            del out, msg
            return {"big_time": dt, "big_rss": _peak_rss()}
        lat = []
        for _ in range(n):
            t0 = time.perf_counter()
            call("x")
            lat.append(time.perf_counter() - t0)
        res = {"latency_median": statistics.median(lat), "latency_p99": _percentile(lat, 0.99)}
        for k in (1, 8, 64):
            res["tput_%d" % k] = _threads_tput(call, k, total)
        return res
    finally:
        close()


def worker_spawn(kind: str, task: str) -> Dict[str, Any]:
    """Start SPAWN_COUNT servers (spawn + handshake + one call each), one after another or all at once, and
    hold them all; the time until the last answered. Not counted: one warm-up server started and closed
    before (imports, file cache; mcpsync's reaper exits with it and starts again with the first timed
    server) and the close afterwards."""
    if kind == "mcpsync-noguard":
        os.environ["MCPSYNC_NO_LIFELINE"] = "1"
    if kind == "floor":
        sys.path.insert(0, HERE)
        from floor_client import FloorClient

        def start() -> Any:
            c = FloorClient(SERVER, new_session=True)
            assert c.call_tool("echo", {"message": "hi"})["content"][0]["text"] == "hi"
            return c
    else:
        import mcpsync

        def start() -> Any:
            c = mcpsync.connect(SERVER, protocol="legacy")
            assert c.call_tool("echo", {"message": "hi"}).text == "hi"
            return c

    if os.environ.get(NO_WARMUP_ENV) != "1":
        start().close()  # warm-up, every client alike: lazy imports done, files cached; the guard stops with it
    clients: List[Any] = []
    t0 = time.perf_counter()
    if task == "spawn_serial":
        for _ in range(SPAWN_COUNT):
            clients.append(start())
    else:
        barrier = threading.Barrier(SPAWN_COUNT)

        def one() -> None:
            barrier.wait()
            c = start()
            clients.append(c)

        threads = [threading.Thread(target=one) for _ in range(SPAWN_COUNT)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    dt = time.perf_counter() - t0
    assert len(clients) == SPAWN_COUNT
    for c in clients:
        c.close()
    return {task: dt}


def run_spawn(reps: int) -> int:
    print(
        "mcpsync stdio spawn benchmark: %s, Python %s, %d reps, %d servers per run (spawn, handshake, 1 call)"
        % (time.strftime("%Y-%m-%d %H:%M"), sys.version.split()[0], reps, SPAWN_COUNT)
    )
    print("clients (interleaved, a fresh process per run): %s" % ", ".join(SPAWN_CLIENTS))
    if os.environ.get(NO_WARMUP_ENV) == "1":
        print("no warm-up server: the first timed server pays each client's one-time costs (imports)")
    else:
        print("each worker first starts and closes one warm-up server (not timed): one-time costs left out")
    results: Dict[str, Dict[str, List[float]]] = {c: {} for c in SPAWN_CLIENTS}
    for rep in range(reps):
        for task in ("spawn_serial", "spawn_parallel"):
            order = SPAWN_CLIENTS if rep % 2 == 0 else list(reversed(SPAWN_CLIENTS))
            for kind in order:
                for key, val in run_worker(kind, task, 0, 0).items():
                    results[kind].setdefault(key, []).append(val)
        print("  rep %d/%d done" % (rep + 1, reps), flush=True)
    print()
    print("| %d servers | floor | mcpsync (guard on) | mcpsync (guard off) | target | met? |" % SPAWN_COUNT)
    print("|---|---|---|---|---|---|")
    for task, label in (("spawn_serial", "one after another"), ("spawn_parallel", "all at once")):
        med = {c: statistics.median(results[c][task]) for c in SPAWN_CLIENTS}
        floor = med["floor"]
        ratio = med["mcpsync"] / floor
        op, lim = TARGETS[task]
        print(
            "| %s | %.3f s | %.3f s (%.2fx) | %.3f s (%.2fx) | %s %.2fx floor | %s |"
            % (
                label,
                floor,
                med["mcpsync"],
                ratio,
                med["mcpsync-noguard"],
                med["mcpsync-noguard"] / floor,
                op,
                lim,
                "yes" if ratio <= lim else "NO",
            )
        )
        runs = ", ".join("%.2f" % (a / b) for a, b in zip(results["mcpsync"][task], results["floor"][task]))
        print("|   per-rep ratio (guard on / floor, same rep) | %s |||||" % runs)
    return 0


def worker_sdk(kind: str, task: str, n: int, total: int) -> Dict[str, Any]:
    import asyncio

    t_start = time.perf_counter()
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    modern = kind.endswith("modern")

    async def main() -> Dict[str, Any]:
        params = StdioServerParameters(command=SERVER[0], args=SERVER[1:])
        with open(os.devnull, "w") as devnull:
            async with stdio_client(params, errlog=devnull) as (read, write):
                async with ClientSession(read, write) as session:
                    if modern:
                        await session.discover()
                    else:
                        await session.initialize()

                    async def call(msg: str) -> str:
                        r = await session.call_tool("echo", {"message": msg})
                        return r.content[0].text  # type: ignore[union-attr]

                    if task == "cold":
                        assert await call("hi") == "hi"
                        return {}
                    for _ in range(200):
                        await call("warm")
                    if task == "big":
                        msg = "x" * (10 * MB)
                        await call("small")
                        t0 = time.perf_counter()
                        out = await call(msg)
                        dt = time.perf_counter() - t0
                        assert len(out) == 10 * MB
                        del out, msg
                        return {"big_time": dt}
                    lat = []
                    for _ in range(n):
                        t0 = time.perf_counter()
                        await call("x")
                        lat.append(time.perf_counter() - t0)
                    res = {"latency_median": statistics.median(lat), "latency_p99": _percentile(lat, 0.99)}
                    for k in (1, 8, 64):
                        per = max(1, total // k)

                        async def seq(per: int = per) -> None:
                            for _ in range(per):
                                await call("x")

                        t0 = time.perf_counter()
                        await asyncio.gather(*(seq() for _ in range(k)))
                        res["tput_%d" % k] = per * k / (time.perf_counter() - t0)
                    return res

    res = asyncio.run(main())
    if task == "cold":
        res["in_process"] = time.perf_counter() - t_start
    if task == "big":
        res["big_rss"] = _peak_rss()
    return res


def _peak_rss() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux -> MiB


# ---------------------------------------------------------------------------------------------- driver


def run_worker(kind: str, task: str, n: int, total: int) -> Dict[str, Any]:
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", kind, task, str(n), str(total)]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise RuntimeError("worker %s %s failed:\n%s" % (kind, task, out.stderr.decode("utf-8", "replace")[-3000:]))
    res = json.loads(out.stdout.decode().strip().splitlines()[-1])
    if task == "cold":
        res["cold"] = wall  # whole process: interpreter, imports, spawn, handshake, 1 call, close
    return res


def time_import(stmt: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", stmt], cwd=ROOT, check=True)
    return time.perf_counter() - t0


def sdk_available() -> bool:
    try:
        import importlib.util

        return importlib.util.find_spec("mcp") is not None
    except Exception:
        return False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller counts (still 5 reps)")
    ap.add_argument("--reps", type=int, default=None, help="repetitions (default 7, quick 5; minimum 5)")
    ap.add_argument("--no-sdk", action="store_true", help="leave the official SDK out")
    ap.add_argument(
        "--clients",
        default=None,
        help="comma list (floor-legacy,floor-modern,mcpsync-legacy,"
        "mcpsync-modern,sdk-legacy,sdk-modern; experiment: mcpsync64k-legacy,mcpsync64k-modern; "
        "production controls: mcpsyncotel-legacy/-modern (tracing on), "
        "mcpsyncctl-legacy/-modern (interceptor + retry))",
    )
    ap.add_argument(
        "--spawn", action="store_true", help="only the spawn measurement: %d servers serially and at once" % 20
    )
    ap.add_argument(
        "--no-warmup",
        action="store_true",
        help="with --spawn: no warm-up server before the timed ones (one-time costs such as imports count too)",
    )
    ap.add_argument("--worker", nargs=4, metavar=("KIND", "TASK", "N", "TOTAL"), help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.worker:
        kind, task, n, total = args.worker
        if task.startswith("spawn"):
            print(json.dumps(worker_spawn(kind, task)))
            return 0
        fn = worker_sdk if kind.startswith("sdk") else worker_sync
        print(json.dumps(fn(kind, task, int(n), int(total))))
        return 0

    reps = max(5, args.reps or (5 if args.quick else 7))
    if args.spawn:
        if args.no_warmup:
            os.environ[NO_WARMUP_ENV] = "1"
        return run_spawn(reps)
    n = 500 if args.quick else 2000  # sequential calls for latency
    total = 1280 if args.quick else 6400  # calls per throughput measurement
    clients = ["floor-legacy", "floor-modern", "mcpsync-legacy", "mcpsync-modern"]
    if sdk_available() and not args.no_sdk:
        clients += ["sdk-legacy", "sdk-modern"]
    if args.clients:
        clients = args.clients.split(",")

    print(
        "mcpsync stdio benchmark: %s, Python %s, %d reps, %d sequential calls, %d calls per throughput run"
        % (time.strftime("%Y-%m-%d %H:%M"), sys.version.split()[0], reps, n, total)
    )
    print("clients (interleaved): %s" % ", ".join(clients))
    results: Dict[str, Dict[str, List[float]]] = {c: {} for c in clients}
    imports: Dict[str, List[float]] = {
        "json": [],
        "mcpsync": [],
        "mcpsync.Client": [],
        "opentelemetry.trace": [],
        "mcp.client.session": [],
    }
    import_stmts = {name: "import " + name for name in imports}
    # the client class, and proof that it pulls in no extra: exits non-zero if opentelemetry got imported
    import_stmts["mcpsync.Client"] = (
        "import sys, mcpsync; mcpsync.Client; sys.exit(any(m.startswith('opentelemetry') for m in sys.modules))"
    )
    try:
        import importlib.util

        if importlib.util.find_spec("opentelemetry") is None:
            del imports["opentelemetry.trace"]
    except (ImportError, ValueError):
        del imports["opentelemetry.trace"]
    if not sdk_available():
        del imports["mcp.client.session"]

    for rep in range(reps):
        t_rep = time.perf_counter()
        for task in ("calls", "big", "cold"):
            order = clients if rep % 2 == 0 else list(reversed(clients))
            for kind in order:
                for key, val in run_worker(kind, task, n, total).items():
                    results[kind].setdefault(key, []).append(val)
        order_i = list(imports) if rep % 2 == 0 else list(reversed(list(imports)))
        for name in order_i:
            imports[name].append(time_import(import_stmts[name]))
        print("  rep %d/%d done in %.1fs" % (rep + 1, reps, time.perf_counter() - t_rep), flush=True)

    med = {c: {k: statistics.median(v) for k, v in results[c].items()} for c in clients}
    imp = {k: statistics.median(v) for k, v in imports.items()}
    report(med, imp, clients)
    return 0


def _fmt(key: str, v: float) -> str:
    if key.startswith("latency"):
        return "%.0f us" % (v * 1e6)
    if key.startswith("tput"):
        return "%.1fk/s" % (v / 1000)
    if key == "big_rss":
        return "%.0f MB" % v
    if key in ("big_time", "cold", "in_process"):
        return "%.3f s" % v if v < 1 else "%.2f s" % v
    return "%.3g" % v


ROWS = [
    ("latency_median", "tools/call round trip, median"),
    ("latency_p99", "tools/call round trip, p99"),
    ("tput_1", "calls/s, 1 in flight"),
    ("tput_8", "calls/s, 8 in flight"),
    ("tput_64", "calls/s, 64 in flight"),
    ("big_time", "10 MB echo (warm call), wall"),
    ("big_rss", "10 MB echo, peak RSS of the process"),
    ("cold", "cold: process start..import..spawn..handshake..1 call..close"),
]


def report(med: Dict[str, Dict[str, float]], imp: Dict[str, float], clients: List[str]) -> None:
    print()
    print("Medians; (x) = ratio to the floor of the same era; targets from issue 2 in the last column.")
    header = "| metric | " + " | ".join(clients) + " | mcpsync target | met? |"
    print(header)
    print("|" + "---|" * (len(clients) + 3))
    for key, label in ROWS:
        cells = []
        verdicts = []
        for c in clients:
            v = med[c].get(key)
            if v is None:
                cells.append("-")
                continue
            floor = med.get("floor-" + c.split("-")[-1], {}).get(key)
            ratio = v / floor if floor else None
            cells.append(_fmt(key, v) + (" (%.2fx)" % ratio if ratio and not c.startswith("floor") else ""))
            if c.startswith("mcpsync-") and key in TARGETS and ratio:
                op, lim = TARGETS[key]
                ok = ratio <= lim if op == "<=" else ratio >= lim
                verdicts.append("%s %s" % (c.split("-")[-1], "yes" if ok else "NO (%.2fx)" % ratio))
        target = ("%s %.1fx floor" % TARGETS[key]) if key in TARGETS else ""
        print("| %s | %s | %s | %s |" % (label, " | ".join(cells), target, ", ".join(verdicts)))
    print()
    print("Import, whole process (python -c 'import X'), medians:")
    for name, v in imp.items():
        print("  import %-20s %6.0f ms   (net of 'import json': %5.0f ms)" % (name, v * 1000, (v - imp["json"]) * 1000))
    print("  (opentelemetry.trace: what an app that traces already pays; mcpsync never imports it unless the app did)")
    if "mcp.client.session" in imp:
        ratio = imp["mcpsync"] / imp["mcp.client.session"]
        net = (imp["mcpsync"] - imp["json"]) / max(1e-9, imp["mcp.client.session"] - imp["json"])
        print(
            "  mcpsync / mcp.client.session = %.3f whole process, %.3f net of json; target <= 0.25: %s"
            % (ratio, net, "yes" if ratio <= 0.25 else "NO")
        )


if __name__ == "__main__":
    sys.exit(main())
