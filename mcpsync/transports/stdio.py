"""The stdio transport: a server run as a subprocess, JSON-RPC over its stdin/stdout.

One reader thread per connection reads stdout in large chunks (linear time on
multi-megabyte lines), one more drains stderr into a bounded ring buffer so a
chatty server never blocks. Shutdown follows the spec: close stdin, wait, then
SIGTERM and SIGKILL the server's whole process group (Windows: CTRL_BREAK_EVENT when
the host has a console to share, then the end of the server's Job Object); see
:func:`stop_tree`. On Windows a ``.cmd``/``.bat`` server gets no argument ``cmd.exe``
would interpret (:func:`check_batch_arguments`).
"""

from __future__ import annotations

import collections
import io
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Deque, Dict, List, Mapping, Optional, Sequence, cast

from .._threads import join, spawn
from ..errors import (
    ConfigError,
    ConnectError,
    ConnectionClosed,
    MessageTooLarge,
    ServerExited,
    StdoutNotJSONRPC,
)
from ..wire import jsonrpc
from ..wire.drops import DropLog
from ..wire.framing import FrameReader, encode_content_length, guess_id
from . import lifeline
from .base import Transport, TransportSink

__all__ = [
    "CMD_METACHARACTERS",
    "DEFAULT_INHERITED_ENV",
    "DEFAULT_PATHEXT",
    "StdioTransport",
    "check_batch_arguments",
    "command_name",
    "default_environment",
    "find_executable",
    "resolve_command",
]

logger = logging.getLogger(__name__)

WINDOWS = sys.platform == "win32"

#: Variables a child inherits by default (the user's ``env`` is merged over them).
DEFAULT_INHERITED_ENV = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "TMPDIR") + (
    ("PATHEXT", "COMSPEC", "SYSTEMROOT", "TEMP", "TMP", "APPDATA", "USERPROFILE") if WINDOWS else ()
)

_READ_SIZE = 1 << 20
_loads = json.loads
#: Lines that are not JSON-RPC kept for the error of a server that never answered, and their length.
_NOT_RPC_KEPT = 5
_NOT_RPC_CHARS = 200
#: Keys of which a JSON-RPC message has at least one (a JSON log line such as {"level": "info"} has none).
_RPC_KEYS = ("jsonrpc", "id", "method", "result", "error")


def default_environment(
    env: Optional[Mapping[str, str]] = None, inherit_env: bool = False, utf8: bool = True
) -> Dict[str, str]:
    """The environment a server process gets.

    ``env`` is merged over the safe default set (:data:`DEFAULT_INHERITED_ENV`) or,
    with ``inherit_env=True``, over the whole current environment. Children get
    ``PYTHONUTF8=1`` and ``PYTHONIOENCODING=utf-8`` unless set by the user, and ``PYTHONUNBUFFERED=1``
    (unless set): a Python server's stray ``print()`` then reaches the client at once, so an open that
    cannot succeed fails naming it instead of waiting for a line stuck in the server's buffer.
    """
    if inherit_env:
        result = dict(os.environ)
    else:
        result = {k: os.environ[k] for k in DEFAULT_INHERITED_ENV if k in os.environ}
        if WINDOWS:  # variable names are case-insensitive there
            upper = {k.upper(): v for k, v in os.environ.items()}
            result.update({k: upper[k] for k in DEFAULT_INHERITED_ENV if k in upper})
    if env:
        for k, v in env.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise ConfigError("env keys and values must be strings (got %r=%r)" % (k, type(v).__name__))
            result[k] = v
    if utf8:
        result.setdefault("PYTHONUTF8", "1")
        result.setdefault("PYTHONIOENCODING", "utf-8")
        result.setdefault("PYTHONUNBUFFERED", "1")
    return result


#: What Windows runs when PATHEXT is unset (its documented default, the part that matters here).
DEFAULT_PATHEXT = ".COM;.EXE;.BAT;.CMD"

#: Characters ``cmd.exe`` gives a meaning inside a batch file's command line, whatever the quoting.
CMD_METACHARACTERS = '"%!^&|<>\r\n\x00'


def resolve_command(command: str, env: Mapping[str, str]) -> str:
    """Find ``command`` on the child's PATH (PATHEXT on Windows) without a shell.

    On Windows the child's ``PATHEXT`` (else the host's, else :data:`DEFAULT_PATHEXT`) is passed to the
    search explicitly: the process environment is never changed. The current directory is never searched.
    Raises ConnectError naming the command and the PATH searched. Blocks on a few ``stat`` calls.
    """
    path = env.get("PATH", os.environ.get("PATH", os.defpath))
    pathext = None
    if WINDOWS:
        pathext = env.get("PATHEXT") or os.environ.get("PATHEXT") or DEFAULT_PATHEXT
    found = find_executable(command, path, pathext)
    if found:
        return found
    if os.path.dirname(command):
        raise ConnectError("server command %r does not exist or is not executable" % command)
    raise ConnectError("server command %r not found on PATH (searched: %s)" % (command, path))


def find_executable(command: str, path: str, pathext: Optional[str]) -> Optional[str]:
    """``command`` searched in ``path``: POSIX rules when ``pathext`` is None, else Windows rules.

    Windows rules: ``path`` is ``;``-separated, a name without one of ``pathext``'s extensions is tried with
    each of them in order (``npx`` -> ``npx.cmd``), a name that has one is tried as is, and any existing file
    counts (there is no execute bit). A name with a directory part is not searched on PATH. Pure: reads the
    file system only.
    """
    if pathext is None:
        if os.path.dirname(command):
            return command if os.path.isfile(command) and os.access(command, os.X_OK) else None
        import shutil  # here, not at module level: a command with a directory part (sys.executable) needs no search

        return shutil.which(command, path=path)
    exts = [e for e in pathext.split(";") if e.strip()]
    lower = command.lower()
    names = [command] if any(lower.endswith(e.strip().lower()) for e in exts) else []
    names += [command + e.strip().lower() for e in exts]
    if "/" in command or "\\" in command:
        dirs = [""]
    else:
        dirs = [d.strip().strip('"') for d in path.split(";") if d.strip()]
    for d in dirs:
        for name in names:
            candidate = os.path.join(d, name) if d else name
            if os.path.isfile(candidate):
                return candidate
    return None


def is_batch_file(executable: str) -> bool:
    """True for a ``.cmd`` or ``.bat`` file: Windows runs it through ``cmd.exe``.

    Judged as Windows reads the name: trailing dots and spaces are dropped and a ``::$DATA`` suffix names the
    file itself, so ``npx.cmd.`` or ``npx.CMD::$DATA`` is the batch file ``npx.cmd``.
    """
    name = executable.lower()
    while True:
        stripped = name.rstrip(". ")
        if stripped.endswith("::$data"):
            stripped = stripped[: -len("::$data")]
        if stripped == name:
            return name.endswith((".cmd", ".bat"))
        name = stripped


def check_batch_arguments(executable: str, args: Sequence[str], server: Optional[str] = None) -> None:
    """Refuse arguments that ``cmd.exe`` would interpret when ``executable`` is a batch file.

    ``cmd.exe`` parses a batch file's command line by its own rules, not by the quoting ``subprocess`` applies,
    so a registry-supplied argument holding ``&``, ``|``, ``%``... could run another command. Such an argument
    raises :class:`~mcpsync.errors.ConfigError` before anything is started; parentheses are allowed only in an
    argument that gets quoted (one holding a space or a tab). Start the program the batch file wraps directly
    instead (``node path/to/npx-cli.js ...`` rather than ``npx.cmd``).
    """
    if not is_batch_file(executable):
        return
    for i, arg in enumerate(args, 1):
        bad = sorted({c for c in arg if c in CMD_METACHARACTERS})
        if not bad and ("(" in arg or ")" in arg) and not (" " in arg or "\t" in arg):
            bad = sorted({c for c in arg if c in "()"})
        if bad:
            raise ConfigError(
                "argument %d (%r) holds %s, which cmd.exe would interpret: %s is a batch file run through "
                "cmd.exe; start the program it wraps directly (for npx: node with the npx-cli.js script)"
                % (i, arg[:80], " ".join(repr(c) for c in bad), os.path.basename(executable)),
                server=server,
            )


def command_name(command: Sequence[str]) -> str:
    """A display name for a server command: its executable's base name, or for a Python interpreter
    (``sys.executable``, ``python3``, ``pypy3``...) the module after ``-m`` or the script's name.

    ``[sys.executable, "-m", "weather.server"]`` is ``weather.server``, ``["python3", "/srv/notes.py"]``
    is ``notes``, ``["python", "-c", "..."]`` stays ``python``. Pure computation.
    """
    if not command:
        return "server"
    base = os.path.basename(command[0]) or "server"
    if not _is_python(command[0], base):
        return base
    args = list(command[1:])
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-m" and i + 1 < len(args):
            return args[i + 1] or base
        if arg.startswith("-m") and len(arg) > 2:
            return arg[2:]
        if arg in ("-c", "-") or (arg.startswith("-c") and len(arg) > 2):
            return base
        if arg in ("-W", "-X", "--check-hash-based-pycs"):  # options that take the next argument
            i += 2
            continue
        if arg.startswith("-"):
            i += 1
            continue
        script = os.path.basename(arg.rstrip("/\\")) or base
        stem, ext = os.path.splitext(script)
        if stem == "__main__":  # python pkg/__main__.py: the package's name
            parent = os.path.basename(os.path.dirname(arg.rstrip("/\\")))
            return parent or base
        return stem if ext.lower() in (".py", ".pyw", ".pyz") and stem else script
    return base


def _is_python(executable: str, base: str) -> bool:
    if executable == sys.executable:
        return True
    stem = base.lower()
    if stem.endswith(".exe"):
        stem = stem[:-4]
    for prefix in ("pythonw", "python", "pypy"):
        if stem.startswith(prefix):
            rest = stem[len(prefix) :]
            return all(c.isdigit() or c in ".tdmu" for c in rest)
    return False


class StdioTransport(Transport):
    """Run a server as a subprocess and talk JSON-RPC over its stdin/stdout.

    Args:
        command: the command list (``["npx", "-y", "pkg"]``); the executable is
            resolved through the child's PATH, never through a shell.
        cwd: working directory of the server.
        env: variables merged over the safe default set (or over the whole
            environment with ``inherit_env=True``).
        name: display name (default: :func:`command_name`, the executable's base name, or for a Python
            interpreter the script's or module's name).
        stderr: "capture" (default: drained into a ring buffer, a per-server logger
            ``mcpsync.server.<name>`` and ``on_stderr``), "inherit" (the host's stderr,
            when it has a real file descriptor; else capture) or "discard".
        on_stderr: called with each stderr line (a str), on the session's dispatch thread.
        stderr_lines: how many recent stderr lines to keep.
        framing: "newline" (default) or "content-length" for what we write; the reader
            also detects a Content-Length header at the start of the server's output.
        max_message_size: the largest incoming message in bytes (default 64 MiB); a
            larger one fails only the request it answers.
        shutdown_timeout: seconds to wait after closing stdin, and again after SIGTERM.
        stdout_grace: seconds a server that has written lines to stdout that are not JSON-RPC (a banner,
            a log line), and nothing else yet, has to send its first JSON-RPC message; then the connection
            fails with :class:`~mcpsync.errors.StdoutNotJSONRPC` naming those lines, and pending calls (the
            handshake) fail with it. None: wait for the caller's own timeout. Once a JSON-RPC message has
            arrived, such lines are logged (rate-limited) and skipped. A server that exits before its
            first JSON-RPC message fails with :class:`~mcpsync.errors.ServerExited` naming them too.

    Thread-safety: ``send`` may be called from any thread; writes are serialised.
    """

    kind = "stdio"

    def __init__(
        self,
        command: Sequence[str],
        *,
        cwd: Optional[str] = None,
        env: Optional[Mapping[str, str]] = None,
        inherit_env: bool = False,
        name: Optional[str] = None,
        stderr: str = "capture",
        on_stderr: Optional[Callable[[str], Any]] = None,
        stderr_lines: int = 200,
        framing: str = "newline",
        max_message_size: int = 64 * 1024 * 1024,
        shutdown_timeout: float = 2.0,
        stdout_grace: Optional[float] = 3.0,
    ) -> None:
        if isinstance(command, str) or not command or not all(isinstance(c, str) for c in command):
            raise ConfigError("command must be a non-empty list of strings, e.g. ['npx', '-y', 'pkg']")
        if stderr not in ("capture", "inherit", "discard"):
            raise ConfigError("stderr must be 'capture', 'inherit' or 'discard'")
        if framing not in ("newline", "content-length"):
            raise ConfigError("framing must be 'newline' or 'content-length'")
        self.command = list(command)
        self.cwd = cwd
        self.env = default_environment(env, inherit_env)
        if stdout_grace is not None and not stdout_grace >= 0:
            raise ConfigError("stdout_grace must be None or a number of seconds >= 0")
        self.name = name or command_name(self.command)
        self.stderr_mode = stderr
        self.on_stderr = on_stderr
        self.framing = framing
        self.max_message_size = max_message_size
        self.shutdown_timeout = shutdown_timeout
        self.stdout_grace = stdout_grace
        self.process: Optional["subprocess.Popen[bytes]"] = None
        self._stderr_tail: Deque[str] = collections.deque(maxlen=stderr_lines)
        self._stderr_log = logging.getLogger("mcpsync.server.%s" % self.name)
        self._write_lock = threading.Lock()
        self._outq: Deque[bytes] = collections.deque()
        self._sink: Optional[TransportSink] = None
        self._reader: Optional[threading.Thread] = None
        self._stderr_thread: Optional[threading.Thread] = None
        self._closing = False
        self._closed = False
        self._lifeline_pid: Optional[int] = None  # the process whose lifeline ties this server (lifeline.py)
        self._tie_lock = threading.Lock()  # _untie() runs once, from close() or from the reader seeing the exit
        self._job: Any = None  # Windows: the server's own kill-on-close Job Object (lifeline.py)
        self._console = WINDOWS and lifeline.host_has_console()  # CTRL_BREAK_EVENT reaches the server
        self._close_lock = threading.Lock()
        self._drops = DropLog(logger, self.name)
        self._write_cl = framing == "content-length"
        # Until the first JSON-RPC message: the lines that were not JSON-RPC, for the error (see stdout_grace)
        self._answered = False
        self._not_rpc: List[str] = []
        self._not_rpc_count = 0
        self._watch_stop = threading.Event()  # set by the first JSON-RPC message, and by close()
        self._watcher: Optional[threading.Thread] = None
        self._report_lock = threading.Lock()
        self._close_report: Optional[BaseException] = None  # what sink.on_close was called with (at most once)
        self._close_reported = threading.Event()

    def describe(self) -> str:
        return " ".join(self.command)

    @property
    def pid(self) -> Optional[int]:
        """The server's process id (None before start)."""
        return self.process.pid if self.process else None

    @property
    def stderr_tail(self) -> List[str]:
        """The most recent stderr lines (capture mode)."""
        return list(self._stderr_tail)

    # ------------------------------------------------------------------ start

    def start(self, sink: TransportSink) -> None:
        """Spawn the server and start the reader threads. Raises ConnectError."""
        self._sink = sink
        executable = resolve_command(self.command[0], self.env)
        if WINDOWS:  # a .cmd/.bat runs through cmd.exe, which reads its arguments by its own rules
            check_batch_arguments(executable, self.command[1:], server=self.name)
        stderr_target: Any = subprocess.PIPE
        if self.stderr_mode == "discard":
            stderr_target = subprocess.DEVNULL
        elif self.stderr_mode == "inherit":
            try:
                stderr_target = sys.stderr.fileno()
            except (AttributeError, OSError, ValueError):
                stderr_target = subprocess.PIPE  # no real fd (Jupyter, pythonw): capture instead
        kwargs: Dict[str, Any] = {}
        if WINDOWS:
            kwargs["creationflags"] = windows_creationflags(lifeline.host_has_console())
        else:
            kwargs["start_new_session"] = True
        with self._close_lock:  # close() racing start() must see the process (or stop it being spawned)
            if self._closed:
                raise ConnectionClosed("transport closed before it started", server=self.name)
            self._spawn(executable, stderr_target, kwargs)
        logger.debug("[%s] started pid %s: %s", self.name, self.pid, self.describe())

    def _spawn(self, executable: str, stderr_target: Any, kwargs: Dict[str, Any]) -> None:
        argv = [executable] + self.command[1:]
        tied = lifeline.enabled()  # the server dies with this process, even a SIGKILLed one (lifeline.py)
        job: Any = None
        if tied and WINDOWS:
            job = lifeline.new_job()
            if job is not None:  # created suspended: in its job before its first instruction
                kwargs = dict(kwargs, creationflags=kwargs.get("creationflags", 0) | _CREATE_SUSPENDED)
        if tied:
            lifeline.LIFELINE.acquire()
        try:
            self.process = subprocess.Popen(  # noqa: S603 - no shell; argv list
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr_target,
                cwd=self.cwd,
                env=self.env,
                bufsize=0,
                close_fds=True,
                **kwargs,
            )
            if job is not None:
                try:
                    assigned = lifeline.assign_and_resume(job, self.process)
                except OSError:  # still suspended: end it (and its job, below), leave no pipe open
                    _discard(self.process)
                    self.process = None
                    raise
                if not assigned:  # a job holding nothing would make close() end nothing: stop it without one
                    job, unused = None, job
                    lifeline.close_job(unused)
        except BaseException as exc:
            if job is not None:
                lifeline.close_job(job)
            if tied:
                lifeline.LIFELINE.release()
            if isinstance(exc, OSError):
                raise ConnectError("could not start server %r: %s" % (self.describe(), exc), server=self.name) from exc
            raise
        self._job = job
        if tied:
            self._lifeline_pid = os.getpid()
            lifeline.LIFELINE.adopt(self.process)
        _grow_pipe(self.process.stdout)
        self._reader = spawn("mcpsync-stdio-reader:%s" % self.name, self._read_loop)
        if self.process.stderr is not None:
            self._stderr_thread = spawn("mcpsync-stdio-stderr:%s" % self.name, self._stderr_loop)

    # ------------------------------------------------------------------ writing

    def send(self, message: Any) -> None:
        """Write one message (a dict, or a list for a batch answer). Thread-safe."""
        data = jsonrpc.encode(message)
        if self._write_cl:
            data = encode_content_length(data)
        else:
            data += b"\n"
        proc = self.process
        if proc is None or proc.stdin is None or self._closing:
            raise ConnectionClosed("server is not running", server=self.name)
        # Writes are coalesced under load: each sender queues its bytes; whoever holds the write lock
        # writes everything queued in one system call, and re-checks the queue after releasing the
        # lock, so no queued message is ever left behind. Alone, a sender writes its own bytes at once.
        queue = self._outq
        queue.append(data)
        write = proc.stdin.write
        while queue:
            if not self._write_lock.acquire(blocking=False):
                return  # the current writer will pick our bytes up
            try:
                chunks = []
                while queue:
                    chunks.append(queue.popleft())
                out = chunks[0] if len(chunks) == 1 else b"".join(chunks)
                view = memoryview(out)
                while view:
                    n = write(view)
                    if not n:
                        raise OSError("the pipe accepted no bytes")
                    view = view[n:]
            except (BrokenPipeError, ValueError, OSError) as exc:
                raise self._write_failed(exc) from None
            finally:
                self._write_lock.release()

    # ------------------------------------------------------------------ reading

    def _read_loop(self) -> None:
        proc = self.process
        assert proc is not None and proc.stdout is not None
        # A 1 MiB buffered reader: C-level line splitting (cheap for bursts of small replies), large
        # reads for large messages, and no per-read allocation.
        stream = cast(io.BufferedReader, io.open(proc.stdout.fileno(), "rb", buffering=_READ_SIZE, closefd=False))
        error: Optional[BaseException] = None
        try:
            head = stream.peek(16).lstrip()[:15].lower()
            if head.startswith(b"content-length"):
                self._read_content_length(stream)
            else:
                self._read_lines(stream)
        except Exception as exc:  # noqa: BLE001 - the reader reports, never raises
            error = exc
            if not self._closing:
                logger.exception("[%s] stdout reader failed", self.name)
        finally:
            stream.close()
        self._on_eof(error)

    def _read_lines(self, stream: Any) -> None:
        """Newline-delimited frames; a frame over ``max_message_size`` is skipped up to its newline."""
        limit = self.max_message_size + 1
        readline = stream.readline
        on_frame = self._on_frame
        while True:
            line = readline(limit)
            if not line:
                return
            if line[-1:] == b"\n":
                on_frame(line[:-1])
            elif len(line) < limit:
                on_frame(line)  # the last line, without a newline, at EOF
            else:
                self._on_oversize(line[:512])
                line = b""
                while True:  # drop the rest of the oversized frame without holding it
                    rest = readline(1 << 20)
                    if not rest or rest[-1:] == b"\n":
                        break
            del line

    def _read_content_length(self, stream: Any) -> None:
        """``Content-Length:`` framed messages (detected at the start of the stream)."""
        if not self._write_cl:
            logger.info("[%s] server speaks Content-Length framing; switching", self.name)
            self._write_cl = True
        reader = FrameReader(
            self._on_frame, self._on_oversize, self.max_message_size, "content-length", on_resync=self._on_resync
        )
        while True:
            chunk = stream.read1(_READ_SIZE)
            if not chunk:
                return
            reader.feed(chunk)
            del chunk

    def _on_frame(self, line: bytes) -> None:
        if line[-1:] == b"\r":
            line = line[:-1]
        first = line[:1]
        if first not in (b"{", b"["):
            stripped = line.strip()
            if not stripped:
                return
            if stripped[:1] not in (b"{", b"["):
                text = stripped.decode("utf-8", "replace")
                if not self._answered:
                    self._note_not_rpc(text)
                self._drops.drop("non-JSON line on stdout", jsonrpc.truncate(text, 120))
                return
            line = stripped
        try:
            frame = _loads(line)  # bytes straight in: json decodes UTF-8 itself
            if type(frame) is not dict and type(frame) is not list:
                frame = jsonrpc.decode(line)  # raises the descriptive ProtocolError
        except UnicodeDecodeError:
            try:
                frame = jsonrpc.decode(line)  # invalid UTF-8: replaced, never fatal
            except Exception as exc:  # noqa: BLE001
                self._skip(exc, line)
                return
        except Exception as exc:  # noqa: BLE001
            self._skip(exc, line)
            return
        if not self._answered:
            self._first_frames(frame, line)
        del line
        sink = self._sink
        if sink is not None:
            try:
                sink.on_message(frame)
            except Exception as exc:  # noqa: BLE001 - a frame never kills the reader
                self._drops.drop("sink failed on a frame: %s" % type(exc).__name__, jsonrpc.truncate(frame), exc)

    def _skip(self, exc: BaseException, line: bytes) -> None:
        if not self._answered:
            self._note_not_rpc(line.decode("utf-8", "replace"))
        self._drops.drop("undecodable frame", str(exc)[:200])

    # ------------------------------------------------------------------ before the first JSON-RPC message

    def _first_frames(self, frame: Any, line: bytes) -> None:
        """Before the first JSON-RPC message: mark its arrival, or note a JSON value that is not one.

        A JSON value that is no JSON-RPC message (a structured log line) still goes to the sink, which
        drops it; it counts as a line that is not JSON-RPC for the handshake's error.
        """
        if _is_rpc(frame) or (type(frame) is list and frame and all(_is_rpc(item) for item in frame)):
            self._answered = True
            self._watch_stop.set()
            return
        self._note_not_rpc(line.decode("utf-8", "replace"))

    def _note_not_rpc(self, text: str) -> None:
        """Keep the first few lines that were not JSON-RPC; start the stdout_grace watch at the first one."""
        self._not_rpc_count += 1
        text = text.strip()
        if text and len(self._not_rpc) < _NOT_RPC_KEPT:
            self._not_rpc.append(jsonrpc.truncate(text, _NOT_RPC_CHARS))
        if self._watcher is None and self.stdout_grace is not None and not self._closing:
            self._watcher = spawn("mcpsync-stdio-watch:%s" % self.name, self._watch)

    def _watch(self) -> None:
        """Fail the connection when no JSON-RPC message follows the first line that was not one in time."""
        grace = self.stdout_grace
        if self._watch_stop.wait(grace) or self._answered or self._closing:
            return  # answered, closed, or the reader reported the end of stdout (an exit) first
        logger.debug("[%s] no JSON-RPC message within stdout_grace=%ss of a non-JSON-RPC line", self.name, grace)
        self._report_close(
            StdoutNotJSONRPC(
                "the server wrote to stdout lines that are not JSON-RPC and no JSON-RPC message within "
                "stdout_grace=%gs" % (grace or 0),
                stdout_lines=self._not_rpc,
                line_count=self._not_rpc_count,
                stderr_tail=self.stderr_tail,
                server=self.name,
            )
        )

    def _write_failed(self, exc: BaseException) -> BaseException:
        """The error for a write the server's stdin refused.

        Before the first JSON-RPC message, a server that closed its stdin can no longer answer the handshake.
        The reader's report of the end (an exit, or the ``stdout_grace`` watch, naming the lines the server
        wrote that were not JSON-RPC, which may still be on their way) says more than the broken pipe, so this
        waits for that report, at most ``stdout_grace`` and half a second (one second without a grace), and
        returns it. Otherwise a :class:`ConnectionClosed`.
        """
        if not self._answered and not self._closing:
            self._close_reported.wait(self.stdout_grace + 0.5 if self.stdout_grace is not None else 1.0)
            report = self._close_report
            if isinstance(report, (StdoutNotJSONRPC, ServerExited)) or (
                isinstance(report, ConnectionClosed) and self._not_rpc
            ):
                return report
            if not self._not_rpc_count:
                return ConnectionClosed("cannot write to server: %s" % exc, server=self.name)
            return StdoutNotJSONRPC(
                "the server closed its stdin before it sent any JSON-RPC message; it wrote to stdout lines that "
                "are not JSON-RPC",
                stdout_lines=list(self._not_rpc),
                line_count=self._not_rpc_count,
                stderr_tail=self.stderr_tail,
                server=self.name,
            )
        return ConnectionClosed("cannot write to server: %s" % exc, server=self.name)

    def _report_close(self, exc: BaseException) -> None:
        """Tell the sink the connection is over, at most once (the reader's EOF and the watch may race)."""
        with self._report_lock:
            if self._close_report is not None:
                return
            self._close_report = exc
        self._close_reported.set()
        sink = self._sink
        if sink is not None:
            sink.on_close(exc)

    def _on_resync(self, head: bytes) -> None:
        self._drops.drop(
            "Content-Length larger than the frame (another header came first): resynchronised",
            jsonrpc.truncate(head.decode("utf-8", "replace"), 120),
        )

    def _on_oversize(self, head: bytes) -> None:
        rid = guess_id(head)
        logger.warning(
            "[%s] message larger than max_message_size (%d bytes) skipped (id %r)",
            self.name,
            self.max_message_size,
            rid,
        )
        if rid is not None and self._sink is not None:
            self._sink.on_request_error(
                rid,
                MessageTooLarge(
                    "response exceeds max_message_size (%d bytes)" % self.max_message_size, server=self.name
                ),
            )

    def _on_eof(self, error: Optional[BaseException]) -> None:
        if self._closing:
            return
        proc = self.process
        code: Optional[int] = None
        if proc is not None:
            try:
                code = proc.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                code = None
            if code is not None and not _group_alive(proc.pid):
                # nothing is left of the group, and its number may now go to another process group, which
                # the reaper must never signal: untie it now rather than at close() (a child still in the
                # group keeps it tied until close() ends it)
                self._untie(proc)
        join(self._stderr_thread, 0.45)  # the last stderr lines belong in the error (bounded: < 1 s in all)
        self._watch_stop.set()
        lines = [] if self._answered else list(self._not_rpc)
        if code is None:
            exc: BaseException = ConnectionClosed(
                "server closed its stdout"
                + (" (%s)" % error if error else "")
                + (
                    " before it sent any JSON-RPC message; it wrote to stdout lines that are not JSON-RPC, the first:"
                    "\n  " + "\n  ".join(lines)
                    if lines
                    else ""
                ),
                server=self.name,
            )
        else:
            exc = ServerExited(
                "server process exited",
                exit_code=code,
                stderr_tail=self.stderr_tail,
                stdout_lines=lines,
                server=self.name,
            )
        self._report_close(exc)

    def _stderr_loop(self) -> None:
        proc = self.process
        assert proc is not None and proc.stderr is not None
        fd = proc.stderr.fileno()
        partial = b""
        dispatch = getattr(self._sink, "dispatch", None)
        log = self._stderr_log
        try:
            while True:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                if partial:
                    chunk = partial + chunk
                lines = chunk.split(b"\n")
                partial = lines.pop()
                if len(partial) > 65536:  # a huge line with no newline: keep its start only
                    lines.append(partial[:4096])
                    partial = b""
                for raw in lines:
                    self._stderr_line(raw, log, dispatch)
        except Exception:  # noqa: BLE001
            if not self._closing:
                logger.debug("[%s] stderr reader failed", self.name, exc_info=True)
        if partial:
            self._stderr_line(partial, log, dispatch)

    def _stderr_line(self, raw: bytes, log: logging.Logger, dispatch: Any) -> None:
        text = raw[:4096].decode("utf-8", "replace").rstrip("\r")
        self._stderr_tail.append(text)
        if log.isEnabledFor(logging.DEBUG):
            log.debug("%s", text)
        if self.on_stderr is not None and dispatch is not None:
            dispatch(self.on_stderr, text)

    # ------------------------------------------------------------------ closing

    def close(self, timeout: Optional[float] = None) -> None:
        """Stop the server per spec: close stdin, wait, SIGTERM the group, wait, SIGKILL the group.

        Idempotent. Bounded by about ``2 * shutdown_timeout`` plus one second.
        A server that exits on EOF is never signalled.
        """
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
            self._closing = True
        self._watch_stop.set()
        grace = self.shutdown_timeout if timeout is None else min(self.shutdown_timeout, timeout)
        proc = self.process
        if proc is not None:
            # A writer blocked on a full pipe must not stall close(): take the lock with a bound.
            locked = self._write_lock.acquire(timeout=grace)
            try:
                if locked and proc.stdin is not None:
                    proc.stdin.close()
            except OSError:
                pass
            finally:
                if locked:
                    self._write_lock.release()
            self._stop_process(proc, grace)
            try:
                if proc.stdin is not None and not proc.stdin.closed:
                    proc.stdin.close()
            except OSError:
                pass
            self._untie(proc)  # the group is reaped
        join(self._reader, 1.0)
        join(self._stderr_thread, 1.0)
        join(self._watcher, 1.0)
        if proc is not None:
            for f in (proc.stdout, proc.stderr):
                try:
                    if f is not None:
                        f.close()
                except OSError:
                    pass

    def _untie(self, proc: "subprocess.Popen[bytes]") -> None:
        """Unregister the server's group from this process's lifeline, once (never in a forked child)."""
        with self._tie_lock:
            if self._lifeline_pid != os.getpid():
                return
            self._lifeline_pid = None
        lifeline.LIFELINE.forget(proc.pid)
        lifeline.LIFELINE.release()

    def after_fork_in_child(self) -> None:
        """Close the child's copies of the server's pipes; the parent's server keeps running.

        Without this a forked child (a multiprocessing worker) would hold the server's stdin open,
        and the server would not see EOF when the parent closes its client.
        """
        self._closed = self._closing = True
        self._lifeline_pid = None  # the parent's lifeline ties the parent's server, not ours
        self._tie_lock = threading.Lock()
        self._close_lock = threading.Lock()
        self._write_lock = threading.Lock()
        proc = self.process
        if proc is None:
            return
        for f in (proc.stdin, proc.stdout, proc.stderr):
            if f is None:
                continue
            try:
                f.close()  # unbuffered FileIO (bufsize=0): closing takes no lock a dead thread could hold
            except (OSError, ValueError):
                pass
        proc.returncode = 0  # never wait for or signal the parent's child from here

    def _stop_process(self, proc: "subprocess.Popen[bytes]", grace: float) -> None:
        """The stages after stdin was closed: wait, interrupt the whole tree, wait, kill the whole tree.

        POSIX: the tree is the server's process group (SIGTERM, SIGKILL). Windows: the server's Job Object
        (``CTRL_BREAK_EVENT`` to its process group when the host has a console to share, then
        ``TerminateJobObject``); without a job (the lifeline turned off), ``taskkill /T``. ``CTRL_BREAK_EVENT``
        goes only to a server that still runs: once it exited, its pid names no live group leader (the event
        could reach every process of the console, the host included), and the tree is ended at once.
        """
        if WINDOWS:
            job = self._job
            self._job = None
            try:
                if job is not None:
                    stop_tree(
                        proc,
                        grace,
                        alive=lambda: lifeline.job_alive(job),
                        interrupt=lambda: self._console and proc.poll() is None and _ctrl_break(proc.pid),
                        kill=lambda: lifeline.terminate_job(job),
                        name=self.name,
                    )
                else:
                    stop_tree(
                        proc,
                        grace,
                        alive=lambda: proc.poll() is None,
                        interrupt=lambda: self._console and proc.poll() is None and _ctrl_break(proc.pid),
                        kill=lambda: _kill_tree_windows(proc),
                        name=self.name,
                    )
            finally:
                if job is not None:
                    lifeline.close_job(job)
            return
        pgid = proc.pid  # start_new_session=True: the server leads its own process group
        stop_tree(
            proc,
            grace,
            alive=lambda: _group_alive(pgid),
            interrupt=lambda: _killpg(pgid, _SIGTERM),
            kill=lambda: _killpg(pgid, _SIGKILL),
            name=self.name,
        )


def stop_tree(
    proc: "subprocess.Popen[Any]",
    grace: float,
    *,
    alive: Callable[[], bool],
    interrupt: Callable[[], Any],
    kill: Callable[[], Any],
    name: str = "server",
) -> None:
    """Stop a server's process tree once its stdin was closed; the same stages on every platform.

    Wait up to ``grace`` for the server to exit; done when it did and ``alive()`` (anything left of its tree:
    a grandchild outliving its parent counts) is false. Else ``interrupt()`` (SIGTERM to the group; Windows:
    CTRL_BREAK_EVENT; a false result means it could not be sent), wait up to ``grace`` more for the whole
    tree, then ``kill()`` the tree and wait up to one second for the server. Blocks at most about
    ``2 * grace + 1`` seconds plus the callbacks' own time.
    """
    try:
        proc.wait(timeout=grace)
        exited = True
    except subprocess.TimeoutExpired:
        exited = False
    if exited and not alive():
        return
    logger.debug("[%s] interrupting the process tree of pid %s", name, proc.pid)
    if interrupt() is not False:
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if proc.poll() is not None and not alive():
                kill()  # nothing is left: a no-op, unless something started in the last instant
                return
            time.sleep(0.02)
        logger.debug("[%s] killing the process tree of pid %s", name, proc.pid)
    kill()
    try:
        proc.wait(timeout=1.0)
    except subprocess.TimeoutExpired:
        logger.warning("[%s] server pid %s did not exit after it was killed", name, proc.pid)


def _ctrl_break(pid: int) -> bool:
    """Send CTRL_BREAK_EVENT to the process group ``pid`` (Windows); False when it cannot be sent."""
    if sys.platform == "win32":
        try:
            os.kill(pid, signal.CTRL_BREAK_EVENT)
            return True
        except OSError:
            return False
    return False


def windows_creationflags(host_console: bool) -> int:
    """Creation flags of a server on Windows: its own process group (CTRL_BREAK_EVENT can reach it); no console
    window of its own when the host has none to share (a GUI host); the host's console otherwise, so that the
    graceful CTRL_BREAK_EVENT stage works (a console is shared only by processes attached to it)."""
    flags = _CREATE_NEW_PROCESS_GROUP
    if not host_console:
        flags |= _CREATE_NO_WINDOW
    return flags


_CREATE_NEW_PROCESS_GROUP = 0x00000200
_CREATE_NO_WINDOW = 0x08000000
_CREATE_SUSPENDED = 0x00000004
_SIGTERM = int(getattr(signal, "SIGTERM", 15))
_SIGKILL = int(getattr(signal, "SIGKILL", 9))


def _is_rpc(frame: Any) -> bool:
    """A JSON-RPC message has at least one of its keys (a JSON log line such as {"level": "info"} has none)."""
    return type(frame) is dict and any(k in frame for k in _RPC_KEYS)


def _killpg(pgid: int, sig: int) -> None:
    if sys.platform != "win32":
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError, OSError):
            pass


def _group_alive(pgid: int) -> bool:
    if sys.platform == "win32":
        return False
    try:
        os.killpg(pgid, 0)
        return True
    except (ProcessLookupError, PermissionError, OSError):
        return False


def _kill_tree_windows(proc: "subprocess.Popen[bytes]") -> None:
    try:
        subprocess.run(  # noqa: S603,S607
            ["taskkill", "/T", "/F", "/PID", str(proc.pid)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        proc.kill()
    try:
        proc.wait(timeout=2.0)
    except subprocess.TimeoutExpired:
        pass


def _discard(proc: "subprocess.Popen[bytes]") -> None:
    """Kill a server that never ran (bounded wait) and close the host's ends of its pipes."""
    proc.kill()
    try:
        proc.wait(5.0)
    except subprocess.TimeoutExpired:
        logger.warning("server pid %s did not exit after it was killed", proc.pid)
    for f in (proc.stdin, proc.stdout, proc.stderr):
        try:
            if f is not None:
                f.close()
        except OSError:
            pass


def _grow_pipe(f: Any) -> None:
    """Ask Linux for a 1 MiB pipe buffer: fewer reads for large messages (best effort)."""
    if not sys.platform.startswith("linux") or f is None:
        return
    try:
        import fcntl

        fcntl.fcntl(f.fileno(), 1031, 1 << 20)  # F_SETPIPE_SZ
    except (OSError, ImportError, ValueError):
        pass
