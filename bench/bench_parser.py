"""HTTP/1.1 answer parsing: mcpsync's hand-written parser vs http.client vs h11, on typical MCP answers.

Each parser reads a whole answer (status line, headers, body to its end) from bytes already received, as
each is used in a client:

- **wire**: ``mcpsync.transports.http.wire.read_head`` on an ``io.BufferedReader`` (what
  ``sock.makefile("rb")`` gives the engine), then ``Body.read1(1 MiB)`` until the end, joined (what
  ``DirectResponse.read`` does);
- **http.client**: ``http.client.HTTPResponse`` over a socket stand-in whose ``makefile`` gives the same
  kind of reader, ``begin()`` then ``read()`` (one read of the whole body); **http.client read1**: the same,
  the body read as the engine reads one (``read1(1 MiB)`` until the end, joined), since mcpsync streams every
  body (event streams must not wait for a full buffer);
- **h11**: an ``h11.Connection(h11.CLIENT)`` that has sent the request (set up outside the timing, which
  favours h11), fed the bytes in 64 KiB pieces (a ``recv`` each), events pulled until ``EndOfMessage``.

The answers are real ones: heads captured from the official Python SDK's server (FastMCP, uvicorn; JSON
and event-stream answers) and from server-everything (Express, a chunked event stream), a 64 KiB JSON result
and a 1 MiB body. The parsers run interleaved (the order rotates every round); the table shows medians over
the rounds, in microseconds per answer, and ratios to wire. ``--round-trip`` also times real round trips
through mcpsync's engine (``DirectNet``) against a local server process answering the SDK JSON answer, so
the parser's share of a call is measured in the same run. Nothing here asserts a time.

    python bench/bench_parser.py                 # 9 rounds (about a minute)
    python bench/bench_parser.py --rounds 5 --round-trip
"""

from __future__ import annotations

import argparse
import http.client
import io
import os
import platform
import statistics
import subprocess
import sys
import time
from importlib.metadata import version
from typing import Any, Callable, Dict, List, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import h11  # noqa: E402 - test-only dependency (the `test` extra)

from mcpsync.transports.http.wire import read_head  # noqa: E402

# ----------------------------------------------------------------------------- the answers (real heads)

_RESULT = (
    b'{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"The weather in Lisbon is sunny, 21 C, '
    b'wind 12 km/h from the north-west; no rain expected until Thursday."}],"isError":false,'
    b'"structuredContent":{"city":"Lisbon","temp_c":21,"wind_kmh":12,"sky":"sunny"}}}'
)
# the official SDK's server (FastMCP on uvicorn), json_response=True: captured from tests/peers/sdk_http_server.py
SDK_JSON_HEAD = (
    b"HTTP/1.1 200 OK\r\ndate: Tue, 24 Nov 2026 20:29:11 GMT\r\nserver: uvicorn\r\ncontent-type: application/json\r\n"
    b"mcp-session-id: 8d6d47d3baa84adabc13e24e3b292f0c\r\ncontent-length: %d\r\n\r\n"
)
# the same server with event-stream answers
SDK_SSE_HEAD = (
    b"HTTP/1.1 200 OK\r\ndate: Tue, 24 Nov 2026 20:29:17 GMT\r\nserver: uvicorn\r\n"
    b"cache-control: no-cache, no-transform\r\nconnection: keep-alive\r\ncontent-type: text/event-stream\r\n"
    b"mcp-session-id: 6fa1e903820143a99eccada0a184f48d\r\nx-accel-buffering: no\r\nTransfer-Encoding: chunked\r\n\r\n"
)
# server-everything 2.0.0 (Express), streamableHttp: its answers are chunked event streams
EVERYTHING_HEAD = (
    b"HTTP/1.1 200 OK\r\nX-Powered-By: Express\r\nAccess-Control-Allow-Origin: *\r\n"
    b"Access-Control-Expose-Headers: mcp-session-id,last-event-id,mcp-protocol-version\r\n"
    b"cache-control: no-cache, no-transform\r\nconnection: keep-alive\r\ncontent-type: text/event-stream\r\n"
    b"mcp-session-id: 6f82527d-18c9-4a23-ac74-e9b8a89a4724\r\nx-accel-buffering: no\r\n"
    b"Date: Tue, 24 Nov 2026 20:29:05 GMT\r\nTransfer-Encoding: chunked\r\n\r\n"
)


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def answers() -> Dict[str, bytes]:
    big = b'{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"%s"}]}}'
    json64 = big % (b"x" * (64 * 1024 - len(big) + 2))
    mib = os.urandom(1 << 20)
    return {
        "SDK JSON, %d B body" % len(_RESULT): SDK_JSON_HEAD % len(_RESULT) + _RESULT,
        "SDK event stream (chunked)": SDK_SSE_HEAD
        + _chunk(b"event: message\r\ndata: " + _RESULT + b"\r\n\r\n")
        + b"0\r\n\r\n",
        "server-everything event stream": EVERYTHING_HEAD
        + _chunk(b"id: 8a4a1ccd-b67a-4976-b396-e1cf8deed4bc\ndata: \n\n")
        + _chunk(b"event: message\nid: ae753b87-c2b3-4b51-b71a-c7ea66269a48\ndata: " + _RESULT + b"\n\n")
        + b"0\r\n\r\n",
        "64 KiB JSON": SDK_JSON_HEAD % len(json64) + json64,
        "1 MiB body": SDK_JSON_HEAD % len(mib) + mib,
    }


# ----------------------------------------------------------------------------- the parsers


def parse_wire(data: bytes) -> Tuple[int, int]:
    fp = io.BufferedReader(io.BytesIO(data))
    status, _reason, headers, body = read_head(fp, "POST")
    parts = []
    while True:
        chunk = body.read1(1 << 20)
        if not chunk:
            break
        parts.append(chunk)
    headers.get("content-type")
    return status, len(b"".join(parts))


class _Sock:
    __slots__ = ("_data",)

    def __init__(self, data: bytes) -> None:
        self._data = data

    def makefile(self, mode: str) -> Any:
        return io.BufferedReader(io.BytesIO(self._data))


def parse_stdlib(data: bytes) -> Tuple[int, int]:
    resp = http.client.HTTPResponse(_Sock(data), method="POST")  # type: ignore[arg-type]
    resp.begin()
    body = resp.read()
    resp.getheader("content-type")
    return resp.status, len(body)


def parse_stdlib_read1(data: bytes) -> Tuple[int, int]:
    """http.client read as the engine reads a body: ``read1(1 MiB)`` until the end, then joined."""
    resp = http.client.HTTPResponse(_Sock(data), method="POST")  # type: ignore[arg-type]
    resp.begin()
    parts = []
    while True:
        chunk = resp.read1(1 << 20)
        if not chunk:
            break
        parts.append(chunk)
    resp.getheader("content-type")
    return resp.status, len(b"".join(parts))


def h11_ready() -> Any:
    conn = h11.Connection(h11.CLIENT)
    conn.send(
        h11.Request(
            method="POST",
            target="/mcp",
            headers=[("Host", "127.0.0.1"), ("Content-Type", "application/json"), ("Content-Length", "2")],
        )
    )
    conn.send(h11.Data(data=b"{}"))
    conn.send(h11.EndOfMessage())
    return conn


def parse_h11(data: bytes, conn: Any) -> Tuple[int, int]:
    view = memoryview(data)
    parts: List[bytes] = []
    status = 0
    for i in range(0, len(view), 65536):  # as recv(65536) hands it over
        conn.receive_data(view[i : i + 65536])
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                break
            if isinstance(event, h11.Response):
                status = event.status_code
            elif isinstance(event, h11.Data):
                parts.append(event.data)
            elif isinstance(event, h11.EndOfMessage):
                return status, len(b"".join(parts))
    raise RuntimeError("h11 did not finish the answer")


# ----------------------------------------------------------------------------- timing


def _batch(name: str, data: bytes, n: int) -> float:
    """Microseconds per answer for ``n`` answers in a row."""
    if name == "h11":
        conns = [h11_ready() for _ in range(n)]  # not timed
        t0 = time.perf_counter()
        for conn in conns:
            parse_h11(data, conn)
        return (time.perf_counter() - t0) / n * 1e6
    fn: Callable[[bytes], Any] = {"wire": parse_wire, "http.client": parse_stdlib}.get(name, parse_stdlib_read1)
    t0 = time.perf_counter()
    for _ in range(n):
        fn(data)
    return (time.perf_counter() - t0) / n * 1e6


PARSERS = ["wire", "http.client", "http.client read1", "h11"]


def measure(rounds: int, scale: float) -> Dict[str, Dict[str, float]]:
    table: Dict[str, Dict[str, List[float]]] = {}
    cases = answers()
    for label, data in cases.items():  # every parser reads the same status and body
        want = parse_wire(data)
        assert parse_stdlib(data) == parse_stdlib_read1(data) == parse_h11(data, h11_ready()) == want, label
    for r in range(rounds):
        order = PARSERS[r % len(PARSERS) :] + PARSERS[: r % len(PARSERS)]
        for label, data in cases.items():
            n = max(5, int(scale * max(30, min(3000, 600_000 // max(1, len(data))))))
            for name in order:
                table.setdefault(label, {}).setdefault(name, []).append(_batch(name, data, n))
    return {label: {name: statistics.median(v) for name, v in row.items()} for label, row in table.items()}


# ----------------------------------------------------------------------------- a round trip through the engine

_SERVER = r"""
import asyncio, sys
ANSWER = bytes.fromhex(sys.argv[1])
async def handle(reader, writer):
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            n = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    n = int(line.split(b":", 1)[1])
            await reader.readexactly(n)
            writer.write(ANSWER)
    except (asyncio.IncompleteReadError, ConnectionError):
        writer.close()
async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()
asyncio.run(main())
"""


def round_trip(calls: int, rounds: int) -> float:
    """Median microseconds of one POST through ``DirectNet`` (the engine every MCP request uses)."""
    from mcpsync.transports.http.engine import DirectNet

    answer = SDK_JSON_HEAD % len(_RESULT) + _RESULT
    proc = subprocess.Popen([sys.executable, "-c", _SERVER, answer.hex()], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        url = "http://127.0.0.1:%d/mcp" % port
        net = DirectNet(url, {"Content-Type": "application/json"}, name="bench")
        body = (
            b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"weather","arguments":{"city":"Lisbon"}}}'
        )
        medians = []
        try:
            for _ in range(rounds):
                times = []
                for _ in range(calls):
                    t0 = time.perf_counter()
                    resp = net.send("POST", url, body, {"Accept": "application/json, text/event-stream"}, (10.0, 10.0))
                    resp.read()
                    resp.close()
                    times.append(time.perf_counter() - t0)
                medians.append(statistics.median(times) * 1e6)
        finally:
            net.close()
        return statistics.median(medians)
    finally:
        proc.terminate()
        proc.wait(10)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--scale", type=float, default=1.0, help="answers per batch, relative to the defaults")
    ap.add_argument("--round-trip", action="store_true", help="also time round trips through the engine")
    args = ap.parse_args()
    print(
        "CPython %s, h11 %s, %s, %d CPUs, %d rounds"
        % (platform.python_version(), version("h11"), platform.machine(), os.cpu_count() or 0, args.rounds)
    )
    results = measure(args.rounds, args.scale)
    print("\n| answer | " + " | ".join(PARSERS) + " |\n|---|" + "---|" * len(PARSERS))
    for label, row in results.items():
        w = row["wire"]
        cells = ["%.1f us" % w] + ["%.1f us (%.2fx)" % (row[name], row[name] / w) for name in PARSERS[1:]]
        print("| %s | %s |" % (label, " | ".join(cells)))
    if args.round_trip:
        rt = round_trip(2000, args.rounds)
        small = next(iter(results.values()))
        print("\nround trip through DirectNet (SDK JSON answer, local server process): %.0f us median" % rt)
        for name in PARSERS:
            print(
                "  %-12s parses it in %5.1f us = %4.1f%% of that round trip"
                % (name, small[name], 100 * small[name] / rt)
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
