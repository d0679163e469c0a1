"""stdio front of the example server: framing, the command line and :func:`main`.

``python -m mcpsync.example_server [options]`` runs :func:`main`: over stdio by default, over
Streamable HTTP with ``--http PORT`` (see :mod:`.http`). stdout carries only protocol frames;
logging goes to stderr. See docs/guides/example-server.md for every option.

Building on it (the test suite's misbehaving server does): :func:`build_parser` (add flags),
:func:`server_from_args`, :class:`StdioConnection` (subclass ``send``; hold ``self.lock``, which
is re-entrant, to write extra frames around a message) and :func:`serve` (``observe`` sees every
decoded message before it is handled).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import threading
import time
from typing import Any, BinaryIO, Callable, Dict, NoReturn, Optional, Sequence

from .core import ExampleServer
from .protocol import INVALID_REQUEST, PARSE_ERROR, error_response
from .session import ServerSession

logger = logging.getLogger("mcpsync.example_server")

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class StdioConnection:
    """A thread-safe writer of frames to a binary stream (the process's stdout).

    ``send`` serialises a message and writes it as one frame under ``self.lock`` (an ``RLock``:
    a subclass may hold it around ``super().send(message)`` to write more frames atomically).
    After :meth:`close`, or once a write fails, later writes are dropped.
    """

    def __init__(self, out: BinaryIO, *, framing: str = "newline") -> None:
        self.out = out
        self.framing = framing
        self.lock = threading.RLock()
        self.broken = False

    def frame(self, body: bytes) -> bytes:
        """``body`` framed for the wire (newline-delimited, or with a ``Content-Length`` header)."""
        if self.framing == "content-length":
            return b"Content-Length: %d\r\n\r\n" % len(body) + body
        return body + b"\n"

    def send_raw(self, data: bytes) -> None:
        """Write bytes as they are (no framing)."""
        with self.lock:
            self.write(data)

    def send(self, message: Any) -> None:
        body = _dumps(message).encode("utf-8", "surrogatepass")
        with self.lock:
            self.write(self.frame(body))

    def close(self) -> None:
        """Stop writing (waits for a write in progress): later sends are dropped."""
        with self.lock:
            try:
                self.out.flush()
            except (OSError, ValueError):
                pass
            self.broken = True

    def write(self, data: bytes) -> None:
        """Write and flush ``data`` (call with ``self.lock`` held); a failed write marks the connection broken."""
        if self.broken:
            return
        try:
            self.out.write(data)
            self.out.flush()
        except (OSError, ValueError):
            self.broken = True  # the client went away; the reader will see EOF


def is_response(message: Any) -> bool:
    """True when ``message`` is a JSON-RPC response, or a batch holding one."""
    if isinstance(message, list):
        return any(is_response(m) for m in message)
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
    ping_interval: float = 0.0,
    observe: Optional[Callable[[Any], None]] = None,
) -> int:
    """Serve one stdio connection until EOF on ``stdin``. Returns the exit code (0).

    Blocks until EOF. ``observe`` is called on the reading thread with every decoded message
    (a dict or a list) before it is handled. At EOF the server's listen streams are ended, its
    tasks cancelled, the session closed and ``conn`` closed (later writes are dropped).
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
        if observe is not None:
            observe(message)
        session.handle(message, conn)
    logger.info("stdin closed")
    server.shutdown()
    session.close()
    conn.close()  # no daemon thread may touch stdout during interpreter shutdown
    return 0


def _pinger(session: ServerSession, interval: float) -> None:
    while not session.closed:
        time.sleep(interval)
        if not session.initialized or session.closed:
            continue
        try:
            session.request("ping", None, timeout=max(5.0, interval))
        except Exception as exc:  # noqa: BLE001 - just report it
            logger.warning("ping failed: %s", exc)


#: Test-only misbehaviours that used to be flags of this command; they live in the test suite now.
TEST_ONLY_FLAGS = (
    "--banner",
    "--crash-on-tool-call",
    "--crlf",
    "--cursor-loop",
    "--discover",
    "--exit-after",
    "--garbage",
    "--ignore-client-capabilities",
    "--ignore-sigterm",
    "--junk-ids",
    "--no-exit-on-eof",
    "--out-of-order",
    "--record",
    "--reject-version-once",
    "--send-batch",
    "--slow-start",
    "--spawn-grandchild",
    "--stderr-flood",
    "--version",
)

MISBEHAVING_HELPER = "tests/peers/misbehaving_server.py"


class _Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose error for a test-only flag names the test helper that has it."""

    def error(self, message: str) -> NoReturn:
        for flag in TEST_ONLY_FLAGS:
            if "unrecognized arguments" in message and (" %s" % flag) in message.replace(":", " "):
                message = "%s is a test-only misbehaviour; run the test suite's %s (%s) for it" % (
                    flag,
                    MISBEHAVING_HELPER,
                    message,
                )
                break
        super().error(message)


def build_parser(parser_class: "type[argparse.ArgumentParser]" = _Parser) -> argparse.ArgumentParser:
    """The command line of ``python -m mcpsync.example_server`` (a new parser; add flags to it freely)."""
    p = parser_class(
        prog="python -m mcpsync.example_server",
        description="The mcpsync example MCP server: stdio by default, Streamable HTTP with --http PORT.",
    )
    a = p.add_argument
    a("--era", choices=("auto", "legacy", "modern"), default="auto", help="protocol era(s) served (default auto)")
    a("--http", type=int, default=None, metavar="PORT", help="serve Streamable HTTP on PORT (0: a free port)")
    a("--host", default="127.0.0.1", help="address to listen on with --http (default 127.0.0.1)")
    a("--page-size", type=int, default=0, metavar="N", help='paginate lists N per page (first nextCursor is "")')
    a("--ttl-ms", type=int, default=0, metavar="N", help="ttlMs hint on modern list/read/discover results")
    a("--cache-scope", choices=("public", "private"), default="public", help="cacheScope hint (modern)")
    a("--mrtr-rounds", type=int, default=1, metavar="N", help="input_required rounds before sample/elicit/roots finish")
    a("--refuse-resource-subscriptions", action="store_true", help="listen: honour no resourceSubscriptions")
    a("--strict-init", action="store_true", help="legacy: refuse requests before notifications/initialized")
    a("--no-tasks", action="store_true", help="do not offer tasks (either era)")
    a("--apps", action="store_true", help="offer the MCP Apps counter App (tools with ui:// pages)")
    a("--task-poll-interval-ms", type=int, default=100, metavar="N", help="pollInterval(Ms) advertised for tasks")
    a("--framing", choices=("newline", "content-length"), default="newline", help="stdio output framing")
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


def server_from_args(
    args: argparse.Namespace, factory: Callable[..., ExampleServer] = ExampleServer, **options: Any
) -> ExampleServer:
    """An :class:`ExampleServer` configured by the parsed command line; ``options`` add or override knobs.

    ``factory`` builds it (a subclass of :class:`ExampleServer`, called with ``era=`` and the knobs as keywords).
    """
    knobs: Dict[str, Any] = {
        "page_size": args.page_size,
        "ttl_ms": args.ttl_ms,
        "cache_scope": args.cache_scope,
        "mrtr_rounds": args.mrtr_rounds,
        "refuse_resource_subscriptions": args.refuse_resource_subscriptions,
        "strict_init": args.strict_init,
        "tasks": not args.no_tasks,
        "apps": args.apps,
        "task_poll_interval_ms": args.task_poll_interval_ms,
    }
    knobs.update(options)
    return factory(era=args.era, **knobs)


def setup_logging(args: argparse.Namespace) -> None:
    """Log to stderr at ``--log-level``."""
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, str(args.log_level).upper(), logging.WARNING),
        format="mcpsync-example %(levelname)s %(message)s",
    )


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the example server (stdio, or HTTP with ``--http``) until EOF / a signal. Returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.http is not None and (args.framing != "newline" or args.ping):
        parser.error("--framing and --ping apply to stdio only, not with --http")
    setup_logging(args)
    server = server_from_args(args)
    if args.http is not None:
        from .http import run

        return run(server, args.host, args.http)
    conn = StdioConnection(sys.stdout.buffer, framing=args.framing)
    try:
        return serve(server, sys.stdin.buffer, conn, ping_interval=args.ping)
    except KeyboardInterrupt:
        return 130
