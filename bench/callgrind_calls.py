"""Instructions per ``call_tool`` over Streamable HTTP, counted by ``valgrind --tool=callgrind`` (load-independent).

Usage::

    .venv/bin/python bench/callgrind_calls.py              # modern and legacy, 50 and 350 calls each
    .venv/bin/python bench/callgrind_calls.py --eras modern --few 50 --many 250
    .venv/bin/python bench/callgrind_calls.py --rows urllib3,mcpsync --eras modern   # bench_http.py's rows

With ``--rows`` the clients are ``bench_http.py``'s (``floor``, ``urllib3``, ``mcpsync``...) against its instant
server's ``application/json`` answers (``http-json-<era>``), each calling ``echo``: the same work as the round-trip
rows of that bench, without the machine's noise.

The bundled example server runs in its own process (``python -m mcpsync.example_server --http 0``, not counted).
For each era the client process runs twice under callgrind, once with ``--few`` calls and once with ``--many``
calls after the same connect; the difference of the two instruction totals divided by the difference of the call
counts is the cost of one call, with start-up, import, handshake and close subtracted out. One thread, one
connection; needs ``valgrind`` on PATH. Takes about a minute per era.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from typing import List, Optional


def client(url: str, era: str, calls: int) -> None:
    import mcpsync
    from mcpsync.client import ClientOptions, HTTPOptions

    c = mcpsync.connect(
        url,
        http=HTTPOptions(transport="http"),
        options=ClientOptions(validate_output=False),
        protocol=era,
        timeout=120,
    )
    try:
        for _ in range(3):  # warm caches (tool list, lazy imports) before the counted calls
            c.call_tool("echo", {"message": "warm"})
        for _ in range(calls):
            c.call_tool("echo", {"message": "hello"})
    finally:
        c.close()


def bench_row(row: str, url: str, era: str, calls: int) -> None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bench_http

    config = "http-json-" + era
    c = bench_http.sync_client(row, url, config)
    try:
        for _ in range(3):
            c.call("echo", {"message": "warm"})
        for _ in range(calls):
            c.call("echo", {"message": "hello"})
    finally:
        c.close()


def count(url: str, era: str, calls: int, row: Optional[str] = None) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--callgrind-out-file=" + out,
                sys.executable,
                os.path.abspath(__file__),
                "--client",
                url,
                era,
                str(calls),
                *(["--row", row] if row else []),
            ],
            check=True,
            env=dict(os.environ, PYTHONHASHSEED="0"),  # one string hashing for every run: less run-to-run spread
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        with open(out) as f:
            for line in f:
                m = re.match(r"(?:summary|totals): (\d+)", line)
                if m:
                    return int(m.group(1))
    raise RuntimeError("no instruction total in the callgrind output")


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--eras", default="modern,legacy")
    p.add_argument("--few", type=int, default=50)
    p.add_argument("--many", type=int, default=350)
    p.add_argument("--rows", help="bench_http.py client rows (comma-separated) against its instant JSON server")
    p.add_argument("--client", nargs=3, metavar=("URL", "ERA", "CALLS"), help=argparse.SUPPRESS)
    p.add_argument("--row", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.client:
        if args.row:
            bench_row(args.row, args.client[0], args.client[1], int(args.client[2]))
        else:
            client(args.client[0], args.client[1], int(args.client[2]))
        return 0
    if args.rows:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import bench_http

        bench_server = bench_http.Server()
        try:
            for era in args.eras.split(","):
                url = bench_http.url_for(bench_server.port, "http-json-" + era)
                for row in args.rows.split(","):
                    per = (count(url, era, args.many, row) - count(url, era, args.few, row)) / (args.many - args.few)
                    print("%-7s %-8s %8.1fK instructions per call" % (era, row, per / 1000.0), flush=True)
        finally:
            bench_server.close()
        return 0
    server = subprocess.Popen(
        [sys.executable, "-m", "mcpsync.example_server", "--http", "0"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stderr is not None
        line = server.stderr.readline()
        m = re.search(r"at (http://\S+)", line)
        if not m:
            raise RuntimeError("no URL from the example server: %r" % line)
        url = m.group(1)
        for era in args.eras.split(","):
            few = count(url, era, args.few)
            many = count(url, era, args.many)
            per = (many - few) / (args.many - args.few)
            print("%-7s %8.1fK instructions per call_tool" % (era, per / 1000.0))
            sys.stdout.flush()
    finally:
        server.terminate()
        server.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
