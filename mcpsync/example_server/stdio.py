"""stdio front of the example server: framing, the command line, and misbehaviour modes.

``python -m mcpsync.example_server [options]`` runs :func:`main`. stdout carries
only protocol frames (unless a misbehaviour flag asks otherwise); logging goes
to stderr. See docs/example-server.md for every option.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any, BinaryIO, List, Optional, Sequence

from .core import ExampleServer
from .junk import junk_frames
from .protocol import INVALID_REQUEST, PARSE_ERROR, error_response
from .session import ServerSession
from .tools import write_stderr_bytes

logger = logging.getLogger("mcpsync.example_server")

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

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


class StdioConnection:
    """A thread-safe writer of frames to a binary stream (the process's stdout)."""

    def __init__(
        self,
        out: BinaryIO,
        *,
        framing: str = "newline",
        crlf: bool = False,
        banner: bool = False,
        garbage: bool = False,
        junk_ids: bool = False,
        stderr_flood: int = 0,
        exit_after: int = 0,
    ) -> None:
        self.out = out
        self.framing = framing
        self.crlf = crlf
        self.banner = banner
        self.garbage = garbage
        self.junk_ids = junk_ids
        self.stderr_flood = stderr_flood
        self.exit_after = exit_after
        self.responses = 0
        self.lock = threading.Lock()
        self.broken = False

    def _frame(self, body: bytes) -> bytes:
        if self.framing == "content-length":
            return b"Content-Length: %d\r\n\r\n" % len(body) + body
        if self.crlf:
            return body + b"\r\n\r\n"
        return body + b"\n"

    def send_raw(self, data: bytes) -> None:
        """Write bytes as they are (misbehaviour modes only)."""
        with self.lock:
            self._write(data)

    def send(self, message: Any) -> None:
        body = _dumps(message).encode("utf-8", "surrogatepass")
        is_response = _is_response(message)
        with self.lock:
            if is_response and self.stderr_flood:
                write_stderr_bytes(self.stderr_flood)
            if is_response and self.garbage:
                for junk in GARBAGE_FRAMES:
                    self._write(self._frame(junk))
            if is_response and self.junk_ids:
                real_id = message.get("id") if isinstance(message, dict) else None
                for junk in junk_frames(real_id):
                    self._write(self._frame(junk))
            self._write(self._frame(body))
            if is_response and self.banner:
                self._write(b"banner: a stray print between responses (not JSON)\n")
            if is_response:
                self.responses += 1
                if self.exit_after and self.responses >= self.exit_after:
                    sys.stderr.write("mcpsync-example: exiting after %d responses (--exit-after)\n" % self.responses)
                    sys.stderr.flush()
                    os._exit(0)

    def close(self) -> None:
        """Stop writing (waits for a write in progress): later sends are dropped."""
        with self.lock:
            try:
                self.out.flush()
            except (OSError, ValueError):
                pass
            self.broken = True

    def _write(self, data: bytes) -> None:
        if self.broken:
            return
        try:
            self.out.write(data)
            self.out.flush()
        except (OSError, ValueError):
            self.broken = True  # the client went away; the reader will see EOF


def _is_response(message: Any) -> bool:
    if isinstance(message, list):
        return any(_is_response(m) for m in message)
    return isinstance(message, dict) and "id" in message and ("result" in message or "error" in message)


def read_frames(stream: BinaryIO) -> Any:
    """Yield raw frame bodies (bytes) from ``stream``: newline-delimited, or Content-Length framed.

    Content-Length framing is detected per message from a ``Content-Length:`` header line.
    """
    while True:
        line = stream.readline()
        if not line:
            return
        stripped = line.strip()
        if not stripped:
            continue
        if stripped[:15].lower() == b"content-length:":
            try:
                length = int(stripped[15:].strip())
            except ValueError:
                yield stripped
                continue
            while True:  # skip other headers up to the blank line
                header = stream.readline()
                if not header or not header.strip():
                    break
            body = stream.read(length)
            if len(body) < length:
                return
            yield body
            continue
        yield stripped


def serve(
    server: ExampleServer,
    stdin: BinaryIO,
    conn: StdioConnection,
    *,
    exit_on_eof: bool = True,
    ping_interval: float = 0.0,
    record: Optional[str] = None,
    crash_on_tool_call: bool = False,
) -> int:
    """Serve one stdio connection until EOF. Returns the exit code.

    ``record``: a file to which every request received is appended as a JSON line
    (``{"pid", "method", "tool"}``), so tests can prove what reached the server.
    ``crash_on_tool_call``: exit with code 3 as soon as a ``tools/call`` arrives.
    """
    session = server.new_session(conn)
    if ping_interval > 0:
        threading.Thread(target=_pinger, args=(session, ping_interval), daemon=True, name="example-pinger").start()
    for body in read_frames(stdin):
        try:
            message = json.loads(body.decode("utf-8", "replace"))
        except ValueError:
            conn.send(error_response(None, PARSE_ERROR, "Parse error"))
            continue
        if not isinstance(message, (dict, list)):
            conn.send(error_response(None, INVALID_REQUEST, "Invalid Request"))
            continue
        if record or crash_on_tool_call:
            _observe(message, record, crash_on_tool_call)
        session.handle(message, conn)
    logger.info("stdin closed")
    if not exit_on_eof:
        sys.stderr.write("mcpsync-example: stdin closed; staying alive (--no-exit-on-eof)\n")
        sys.stderr.flush()
        while True:
            time.sleep(3600)
    server.shutdown()
    session.close()
    conn.close()  # no daemon thread may touch stdout during interpreter shutdown
    return 0


def _observe(message: Any, record: Optional[str], crash_on_tool_call: bool) -> None:
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


def _pinger(session: ServerSession, interval: float) -> None:
    while not session.closed:
        time.sleep(interval)
        if not session.initialized or session.closed:
            continue
        try:
            session.request("ping", None, timeout=max(5.0, interval))
        except Exception as exc:  # noqa: BLE001 - just report it
            logger.warning("ping failed: %s", exc)


def _spawn_grandchild() -> None:
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); [time.sleep(1) for _ in range(600)]"
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL)
    sys.stderr.write("mcpsync-example: grandchild pid %d\n" % child.pid)
    sys.stderr.flush()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m mcpsync.example_server", description="The mcpsync example MCP server (stdio)."
    )
    a = p.add_argument
    a("--era", choices=("auto", "legacy", "modern"), default="auto", help="protocol era(s) served (default auto)")
    a("--page-size", type=int, default=0, metavar="N", help='paginate lists N per page (first nextCursor is "")')
    a("--cursor-loop", action="store_true", help="nextCursor is always the same string")
    a("--version", dest="protocol_version", metavar="VERSION", help="answer initialize with this protocol version")
    a(
        "--discover",
        choices=("normal", "method-not-found", "never", "garbage", "error"),
        default=None,
        help="how to answer server/discover",
    )
    a("--reject-version-once", action="store_true", help="answer the first modern request with -32022")
    a("--ttl-ms", type=int, default=0, metavar="N", help="ttlMs hint on modern list/read/discover results")
    a("--cache-scope", choices=("public", "private"), default="public", help="cacheScope hint (modern)")
    a("--mrtr-rounds", type=int, default=1, metavar="N", help="input_required rounds before sample/elicit/roots finish")
    a("--refuse-resource-subscriptions", action="store_true", help="listen: honour no resourceSubscriptions")
    a("--send-batch", action="store_true", help="send server notifications/requests as JSON-RPC batches")
    a("--out-of-order", action="store_true", help="delay each response by a random 0-20 ms")
    a("--strict-init", action="store_true", help="legacy: refuse requests before notifications/initialized")
    a(
        "--ignore-client-capabilities",
        action="store_true",
        help="send sampling/elicitation/roots even when the client did not declare them",
    )
    a("--no-tasks", action="store_true", help="do not offer tasks (either era)")
    a("--apps", action="store_true", help="offer the MCP Apps counter App (tools with ui:// pages)")
    a("--task-poll-interval-ms", type=int, default=100, metavar="N", help="pollInterval(Ms) advertised for tasks")
    a("--framing", choices=("newline", "content-length"), default="newline", help="output framing")
    a("--crlf", action="store_true", help="end frames with \\r\\n and add blank lines")
    a("--banner", action="store_true", help="print non-JSON lines to stdout at start and between responses")
    a("--garbage", action="store_true", help="write invalid JSON-RPC frames before every response")
    a(
        "--junk-ids",
        action="store_true",
        help="before every response, write frames whose ids, progress tokens and requestIds have every JSON type",
    )
    a("--stderr-flood", type=int, default=0, metavar="BYTES", help="write BYTES to stderr at start and per response")
    a("--ignore-sigterm", action="store_true", help="ignore SIGTERM")
    a("--no-exit-on-eof", action="store_true", help="keep running after stdin closes")
    a("--spawn-grandchild", action="store_true", help="start a grandchild that ignores SIGTERM and holds the pipes")
    a("--exit-after", type=int, default=0, metavar="N", help="exit (code 0) right after the Nth response")
    a("--record", metavar="FILE", help="append every request received to FILE as a JSON line (pid, method, tool)")
    a("--crash-on-tool-call", action="store_true", help="exit (code 3) as soon as a tools/call arrives")
    a("--slow-start", type=float, default=0.0, metavar="SECONDS", help="sleep before reading stdin")
    a(
        "--ping",
        type=float,
        nargs="?",
        const=1.0,
        default=0.0,
        metavar="SECONDS",
        help="send ping requests to a legacy client every SECONDS (default 1)",
    )
    a("--log-level", default="WARNING", help="stderr logging level (default WARNING)")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the example server over stdio. Returns the exit code."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, str(args.log_level).upper(), logging.WARNING),
        format="mcpsync-example %(levelname)s %(message)s",
    )
    if args.ignore_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if args.spawn_grandchild:
        _spawn_grandchild()
    server = ExampleServer(
        era=args.era,
        page_size=args.page_size,
        cursor_loop=args.cursor_loop,
        version=args.protocol_version,
        discover=args.discover,
        reject_version_once=args.reject_version_once,
        ttl_ms=args.ttl_ms,
        cache_scope=args.cache_scope,
        mrtr_rounds=args.mrtr_rounds,
        refuse_resource_subscriptions=args.refuse_resource_subscriptions,
        send_batch=args.send_batch,
        out_of_order=args.out_of_order,
        strict_init=args.strict_init,
        ignore_client_capabilities=args.ignore_client_capabilities,
        tasks=not args.no_tasks,
        apps=args.apps,
        task_poll_interval_ms=args.task_poll_interval_ms,
    )
    out = sys.stdout.buffer
    conn = StdioConnection(
        out,
        framing=args.framing,
        crlf=args.crlf,
        banner=args.banner,
        garbage=args.garbage,
        junk_ids=args.junk_ids,
        stderr_flood=args.stderr_flood,
        exit_after=args.exit_after,
    )
    if args.banner:
        conn.send_raw(b"mcpsync-example starting up (this banner line is not JSON)\n")
    if args.stderr_flood:
        write_stderr_bytes(args.stderr_flood)
    if args.slow_start > 0:
        time.sleep(args.slow_start)
    try:
        return serve(
            server,
            sys.stdin.buffer,
            conn,
            exit_on_eof=not args.no_exit_on_eof,
            ping_interval=args.ping,
            record=args.record,
            crash_on_tool_call=args.crash_on_tool_call,
        )
    except KeyboardInterrupt:
        return 130
