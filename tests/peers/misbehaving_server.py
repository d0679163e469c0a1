"""The bundled example server over stdio, plus the test-only misbehaviours (a hostile peer for the client's tests).

Run it as ``python tests/peers/misbehaving_server.py [flags]`` (``conftest.misbehaving_cmd(*flags)``); every flag of
``python -m mcpsync.example_server`` works here too. It builds on the package through its documented hooks
(``stdio.build_parser``, ``stdio.server_from_args``, ``stdio.StdioConnection``, ``stdio.serve`` and the
``ExampleServer`` knobs), so the protocol behaviour is the package's own; the protocol misbehaviours live in
``misbehaving_example.MisbehavingExampleServer``, the framing ones in this file.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from typing import Any, BinaryIO, List, Optional, Sequence

from mcpsync.example_server import stdio
from mcpsync.example_server.tools import write_stderr_bytes

try:
    from .junk import junk_frames
    from .misbehaving_example import MisbehavingExampleServer
except ImportError:  # run as a script: this folder is sys.path[0]
    from junk import junk_frames  # type: ignore[no-redef]
    from misbehaving_example import MisbehavingExampleServer  # type: ignore[no-redef]

#: Frames written before every response with ``--garbage``.
GARBAGE_FRAMES: List[bytes] = [
    b'{"jsonrpc":"1.0","id":"garbage-1","result":{}}',  # wrong jsonrpc version
    b'{"jsonrpc":"2.0","id":null,"result":{}}',  # id null on a result
    b'{"jsonrpc":"2.0","id":"garbage-2","result":{},"error":{"code":-32603,"message":"both"}}',  # both members
    b'{"jsonrpc":"2.0","id":"garbage-3","error":{"code":"oops","message":"non-integer code"}}',
    b'{"jsonrpc":"2.0","id":987654321,"result":{"unknown":true}}',  # response to an unknown id
    b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"bad \xff\xfe utf-8"}}',
    b"\xff\xfe\xfd not utf-8 at all \xc3\x28",
]


class MisbehavingConnection(stdio.StdioConnection):
    """The package's stdio connection, writing junk around responses as the flags ask."""

    def __init__(self, out: BinaryIO, args: argparse.Namespace) -> None:
        super().__init__(out, framing=args.framing)
        self.args = args
        self.responses = 0

    def frame(self, body: bytes) -> bytes:
        if self.args.crlf and self.framing == "newline":
            return body + b"\r\n\r\n"
        return super().frame(body)

    def send(self, message: Any) -> None:
        args = self.args
        if not stdio.is_response(message):
            super().send(message)
            return
        with self.lock:
            if args.stderr_flood:
                write_stderr_bytes(args.stderr_flood)
            if args.garbage:
                for junk in GARBAGE_FRAMES:
                    self.write(self.frame(junk))
            if args.junk_ids:
                for junk in junk_frames(message.get("id") if isinstance(message, dict) else None):
                    self.write(self.frame(junk))
            super().send(message)
            if args.banner:
                self.write(b"banner: a stray print between responses (not JSON)\n")
            self.responses += 1
            if args.exit_after and self.responses >= args.exit_after:
                sys.stderr.write("mcpsync-example: exiting after %d responses (--exit-after)\n" % self.responses)
                sys.stderr.flush()
                os._exit(0)


def build_parser() -> argparse.ArgumentParser:
    p = stdio.build_parser(argparse.ArgumentParser)
    p.prog = "tests/peers/misbehaving_server.py"
    a = p.add_argument
    a("--cursor-loop", action="store_true", help='nextCursor is always "loop"')
    a("--version", dest="protocol_version", metavar="VERSION", help="answer initialize with this protocol version")
    a("--discover", choices=("normal", "method-not-found", "never", "garbage", "error"), help="server/discover")
    a("--reject-version-once", action="store_true", help="answer the first modern request with -32022")
    a("--send-batch", action="store_true", help="send server notifications/requests as JSON-RPC batches")
    a("--out-of-order", action="store_true", help="delay each response by a random 0-20 ms")
    a("--ignore-client-capabilities", action="store_true", help="send sampling/elicitation/roots regardless")
    a("--ask-before-reading", action="store_true", help="prompts/get and resources/read first answer input_required")
    a("--crlf", action="store_true", help="end frames with \\r\\n and add blank lines")
    a("--banner", action="store_true", help="print non-JSON lines to stdout at start and between responses")
    a("--garbage", action="store_true", help="write invalid JSON-RPC frames before every response")
    a("--junk-ids", action="store_true", help="before every response, frames whose ids have every JSON type")
    a("--stderr-flood", type=int, default=0, metavar="BYTES", help="write BYTES to stderr at start and per response")
    a("--ignore-sigterm", action="store_true", help="ignore SIGTERM")
    a("--no-exit-on-eof", action="store_true", help="keep running after stdin closes")
    a("--spawn-grandchild", action="store_true", help="start a grandchild that ignores SIGTERM and holds the pipes")
    a("--exit-after", type=int, default=0, metavar="N", help="exit (code 0) right after the Nth response")
    a("--record", metavar="FILE", help="append every request received to FILE as a JSON line (pid, method, tool)")
    a("--crash-on-tool-call", action="store_true", help="exit (code 3) as soon as a tools/call arrives")
    a("--slow-start", type=float, default=0.0, metavar="SECONDS", help="sleep before reading stdin")
    return p


def _observer(record: Optional[str], crash_on_tool_call: bool) -> Any:
    def observe(message: Any) -> None:
        for m in message if isinstance(message, list) else [message]:
            if not isinstance(m, dict) or not isinstance(m.get("method"), str) or "id" not in m:
                continue
            raw_params = m.get("params")
            params = raw_params if isinstance(raw_params, dict) else {}
            tool = params.get("name") if m["method"] == "tools/call" else None
            if record:
                with open(record, "a", encoding="utf-8") as f:
                    f.write(json.dumps({"pid": os.getpid(), "method": m["method"], "tool": tool}) + "\n")
            if crash_on_tool_call and m["method"] == "tools/call":
                sys.stderr.write("mcpsync-example: crashing on tools/call (--crash-on-tool-call)\n")
                sys.stderr.flush()
                os._exit(3)

    return observe


def _spawn_grandchild() -> None:
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); [time.sleep(1) for _ in range(600)]"
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL)
    sys.stderr.write("mcpsync-example: grandchild pid %d\n" % child.pid)
    sys.stderr.flush()


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    stdio.setup_logging(args)
    if args.ignore_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if args.spawn_grandchild:
        _spawn_grandchild()
    server = stdio.server_from_args(
        args,
        MisbehavingExampleServer,
        cursor_loop=args.cursor_loop,
        version=args.protocol_version,
        discover=args.discover,
        reject_version_once=args.reject_version_once,
        send_batch=args.send_batch,
        out_of_order=args.out_of_order,
        ignore_client_capabilities=args.ignore_client_capabilities,
        ask_before_reading=args.ask_before_reading,
    )
    if args.http is not None:
        from mcpsync.example_server.http import run

        return run(server, args.host, args.http)
    conn = MisbehavingConnection(sys.stdout.buffer, args)
    if args.banner:
        conn.send_raw(b"mcpsync-example starting up (this banner line is not JSON)\n")
    if args.stderr_flood:
        write_stderr_bytes(args.stderr_flood)
    if args.slow_start > 0:
        time.sleep(args.slow_start)
    observe = _observer(args.record, args.crash_on_tool_call) if args.record or args.crash_on_tool_call else None
    try:
        code = stdio.serve(server, sys.stdin.buffer, conn, ping_interval=args.ping, observe=observe)
    except KeyboardInterrupt:
        return 130
    if args.no_exit_on_eof:
        sys.stderr.write("mcpsync-example: stdin closed; staying alive (--no-exit-on-eof)\n")
        sys.stderr.flush()
        while True:
            time.sleep(3600)
    return code


if __name__ == "__main__":
    exit_code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(exit_code)  # no waiting for daemon tool threads (they may hold the stdout/stderr locks)
