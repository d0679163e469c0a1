"""Stdio servers die with their host, even when the host is killed with SIGKILL or by the OOM killer.

``close()`` and interpreter exit reap a server's whole process group; a host that dies without running
any code cannot. This module covers that case.

Linux:

* **The direct child** gets ``PR_SET_PDEATHSIG(SIGKILL)`` before it executes the server: the command is
  started through a tiny exec wrapper (``python -I -S -c``, the standard library only) that calls
  ``prctl`` through :mod:`ctypes`, then checks ``getppid()`` against the host's pid (if the host died
  between the fork and the ``prctl``, the signal would never come: the wrapper exits instead of running
  an orphan), then ``execv``-s the server in place (same pid, same pipes, same exit status). No
  ``preexec_fn``: it is not safe in a process with threads.
* The death signal fires when the *thread* that forked the child ends, not the process. So every server
  is forked by one long-lived thread, ``mcpsync-lifeline``, that lives while any server it started runs
  (and only then: it stops with the last one, so nothing is left behind after ``close()``).
* **Grandchildren** (``npx`` -> ``node``, ``uv run`` -> ``python``, a shell script) are not the host's
  children and get no death signal. A reaper process (``mcpsync-reaper``, in a session of its own,
  started with the first server and stopped with the last) holds the read end of a pipe from the host
  and the list of the servers' process groups. When the host dies the pipe reaches end-of-file and the
  reaper sends SIGTERM, then after one second SIGKILL, to every group still registered. Groups are
  registered right after the spawn and unregistered once ``close()`` reaped them.

Windows: every server is assigned to one Job Object per host process created with
``JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE``; when the host dies, the system closes its handle and kills
every process in the job, children of children included. (Written against the documented Win32 API
with :mod:`ctypes`; it cannot run in this project's CI, which is Linux only.)

Elsewhere (macOS, the BSDs) nothing is added: ``close()`` and interpreter exit still reap the group.

Set ``MCPSYNC_NO_LIFELINE=1`` to turn all of this off (a host whose ``sys.executable`` cannot run
Python code, such as some frozen or embedded applications, gets it off automatically).

Thread-safety: every function may be called from any thread.
"""

from __future__ import annotations

import concurrent.futures
import logging
import os
import queue
import subprocess
import sys
import threading
from typing import Any, Callable, List, Optional, Tuple, TypeVar

from .. import _forks
from .._threads import join, spawn

__all__ = ["Lifeline", "LIFELINE", "enabled", "pdeathsig_argv"]

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

LINUX = sys.platform.startswith("linux")
WINDOWS = sys.platform == "win32"

#: The exec wrapper: argv = [host pid, "--", executable, args...]. Standard library only, no site.
_WRAPPER = r"""
import ctypes, os, signal, sys
expected = int(sys.argv[1])
argv = sys.argv[3:]
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
except Exception:
    pass
if os.getppid() != expected:  # the host died before prctl took effect: never run as an orphan
    os._exit(1)
try:
    os.execv(argv[0], argv)
except OSError as exc:
    sys.stderr.write("mcpsync: cannot execute %s: %s\n" % (argv[0], exc))
    os._exit(127)
"""

#: The reaper: "+<pgid>" / "-<pgid>" lines on stdin; at end-of-file, SIGTERM then SIGKILL what is left.
_REAPER = r"""
import os, signal, sys, time
for s in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM, signal.SIGPIPE):
    signal.signal(s, signal.SIG_IGN)
groups = set()
for line in sys.stdin.buffer:
    line = line.strip()
    try:
        pgid = int(line[1:])
    except ValueError:
        continue
    if line[:1] == b"+":
        groups.add(pgid)
    elif line[:1] == b"-":
        groups.discard(pgid)

def alive(g):
    try:
        os.killpg(g, 0)
        return True
    except OSError:
        return False

def signal_all(sig):
    for g in groups:
        try:
            os.killpg(g, sig)
        except OSError:
            pass

if groups:
    signal_all(signal.SIGTERM)
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline and any(alive(g) for g in groups):
        time.sleep(0.02)
    signal_all(signal.SIGKILL)
"""


def enabled() -> bool:
    """True when servers are tied to this process's life here (Linux or Windows, not turned off)."""
    if os.environ.get("MCPSYNC_NO_LIFELINE", "").strip() not in ("", "0"):
        return False
    if WINDOWS:
        return True
    return LINUX and _python_usable()


def _python_usable() -> bool:
    exe = sys.executable
    return bool(exe) and not getattr(sys, "frozen", False) and os.path.isfile(exe) and os.access(exe, os.X_OK)


def pdeathsig_argv(argv: List[str]) -> List[str]:
    """``argv`` (an absolute executable first) run through the PR_SET_PDEATHSIG exec wrapper."""
    return [sys.executable, "-I", "-S", "-c", _WRAPPER, str(os.getpid()), "--"] + list(argv)


class Lifeline:
    """The per-process machinery: the spawning thread and the reaper (Linux), the Job Object (Windows).

    :meth:`acquire` before starting a server and :meth:`release` after it was reaped (or failed to
    start): the thread and the reaper exist exactly while at least one server does. Their queue holds
    at most one entry per thread waiting in :meth:`spawn` (each waits for its own spawn).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._jobs: "queue.SimpleQueue[Optional[Tuple[Callable[[], Any], concurrent.futures.Future[Any]]]]" = (
            queue.SimpleQueue()
        )
        self._thread: Optional[threading.Thread] = None
        self._reaper: Optional["subprocess.Popen[bytes]"] = None
        self._job: Any = None  # Windows: the Job Object handle (never closed: the system closes it at exit)
        self._pid = os.getpid()

    # ------------------------------------------------------------------ reference counting

    def acquire(self) -> None:
        """One more server: start the spawning thread and the reaper with the first (Linux)."""
        with self._lock:
            self._users += 1
            if self._users > 1 or not LINUX:
                return
            self._jobs = queue.SimpleQueue()
            self._thread = spawn("mcpsync-lifeline", self._run, self._jobs)
            try:
                self._reaper = subprocess.Popen(  # noqa: S603 - our own interpreter, no shell
                    [sys.executable, "-I", "-S", "-c", _REAPER, "mcpsync-reaper", str(os.getpid())],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    close_fds=True,
                    start_new_session=True,  # no terminal signal meant for the host reaches it
                    bufsize=0,
                )
            except OSError as exc:  # grandchildren are then reaped by close() and exit only
                logger.warning("cannot start the mcpsync reaper (%s): a SIGKILLed host may leave grandchildren", exc)
                self._reaper = None

    def release(self) -> None:
        """One server fewer: with the last, stop the thread and let the reaper exit (bounded: ~2 s)."""
        with self._lock:
            if self._users == 0:
                return
            self._users -= 1
            if self._users or not LINUX:
                return
            thread, self._thread = self._thread, None
            reaper, self._reaper = self._reaper, None
            self._jobs.put(None)
        if thread is not None:
            join(thread, 2.0)
        if reaper is not None:
            try:
                if reaper.stdin is not None:
                    reaper.stdin.close()  # end-of-file with nothing registered: it exits at once
                reaper.wait(2.0)
            except (OSError, subprocess.TimeoutExpired):
                reaper.kill()
                try:
                    reaper.wait(1.0)
                except subprocess.TimeoutExpired:
                    pass

    # ------------------------------------------------------------------ spawning

    def spawn(self, start: Callable[[], _T]) -> _T:
        """Run ``start()`` (which forks the server) on the lifeline thread and return its result.

        Blocks while it runs; re-raises what it raised. Without the thread (not Linux) it runs here.
        """
        with self._lock:
            thread, jobs = self._thread, self._jobs
        if thread is None or threading.current_thread() is thread:
            return start()
        future: "concurrent.futures.Future[Any]" = concurrent.futures.Future()
        jobs.put((start, future))
        result: _T = future.result()
        return result

    @staticmethod
    def _run(jobs: "queue.SimpleQueue[Optional[Tuple[Callable[[], Any], concurrent.futures.Future[Any]]]]") -> None:
        while True:
            item = jobs.get()
            if item is None:
                return
            fn, future = item
            try:
                future.set_result(fn())
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                future.set_exception(exc)

    # ------------------------------------------------------------------ after the spawn

    def adopt(self, proc: "subprocess.Popen[bytes]") -> None:
        """Tie a started server to this process: register its group with the reaper, or its job (Windows)."""
        if WINDOWS:
            self._assign_job(proc)
            return
        self._tell(b"+%d\n" % proc.pid)

    def forget(self, pgid: int) -> None:
        """The group ``pgid`` was reaped: the reaper must never signal that number again."""
        if not WINDOWS:
            self._tell(b"-%d\n" % pgid)

    def _tell(self, line: bytes) -> None:
        with self._lock:
            reaper = self._reaper
            if reaper is None or reaper.stdin is None:
                return
            try:
                reaper.stdin.write(line)
            except (OSError, ValueError) as exc:
                logger.warning("the mcpsync reaper is gone (%s): a SIGKILLed host may leave grandchildren", exc)

    def _assign_job(self, proc: "subprocess.Popen[bytes]") -> None:
        if sys.platform == "win32":  # the Win32 calls exist (and are type-checked) on Windows only
            handle = getattr(proc, "_handle", None)
            if handle is None:
                return
            with self._lock:
                if self._job is None:
                    self._job = _new_kill_on_close_job()
                job = self._job
            if job and not _kernel32().AssignProcessToJobObject(job, int(handle)):
                logger.warning(
                    "cannot put server pid %s in the host's job object (error %s): it may outlive a killed host",
                    proc.pid,
                    _last_error(),
                )

    # ------------------------------------------------------------------ fork

    def reset_after_fork(self) -> None:
        """In a forked child: no thread, no reaper of its own yet (the parent's stay the parent's)."""
        self._lock = threading.Lock()
        self._users = 0
        self._thread = None
        self._jobs = queue.SimpleQueue()
        reaper, self._reaper = self._reaper, None
        if reaper is not None and reaper.stdin is not None:
            try:  # our copy of the write end would keep the parent's reaper from seeing the parent die
                reaper.stdin.close()  # unbuffered FileIO (bufsize=0): takes no lock a dead thread could hold
            except (OSError, ValueError):
                pass
            reaper.returncode = 0  # never wait for or signal the parent's reaper from here
        self._pid = os.getpid()


if sys.platform == "win32":  # pragma: no cover - Windows only; see the module docstring
    import ctypes
    from ctypes import wintypes

    _JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS = 9
    _JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000

    class _IO_COUNTERS(ctypes.Structure):  # noqa: N801 - the Win32 name
        _fields_ = [
            ("ReadOperationCount", ctypes.c_ulonglong),
            ("WriteOperationCount", ctypes.c_ulonglong),
            ("OtherOperationCount", ctypes.c_ulonglong),
            ("ReadTransferCount", ctypes.c_ulonglong),
            ("WriteTransferCount", ctypes.c_ulonglong),
            ("OtherTransferCount", ctypes.c_ulonglong),
        ]

    class _BASIC_LIMIT(ctypes.Structure):  # noqa: N801 - JOBOBJECT_BASIC_LIMIT_INFORMATION
        _fields_ = [
            ("PerProcessUserTimeLimit", ctypes.c_longlong),
            ("PerJobUserTimeLimit", ctypes.c_longlong),
            ("LimitFlags", wintypes.DWORD),
            ("MinimumWorkingSetSize", ctypes.c_size_t),
            ("MaximumWorkingSetSize", ctypes.c_size_t),
            ("ActiveProcessLimit", wintypes.DWORD),
            ("Affinity", ctypes.c_size_t),
            ("PriorityClass", wintypes.DWORD),
            ("SchedulingClass", wintypes.DWORD),
        ]

    class _EXTENDED_LIMIT(ctypes.Structure):  # noqa: N801 - JOBOBJECT_EXTENDED_LIMIT_INFORMATION
        _fields_ = [
            ("BasicLimitInformation", _BASIC_LIMIT),
            ("IoInfo", _IO_COUNTERS),
            ("ProcessMemoryLimit", ctypes.c_size_t),
            ("JobMemoryLimit", ctypes.c_size_t),
            ("PeakProcessMemoryUsed", ctypes.c_size_t),
            ("PeakJobMemoryUsed", ctypes.c_size_t),
        ]

    def _kernel32() -> Any:
        k = ctypes.WinDLL("kernel32", use_last_error=True)
        k.CreateJobObjectW.restype = wintypes.HANDLE
        k.CreateJobObjectW.argtypes = [ctypes.c_void_p, wintypes.LPCWSTR]
        k.SetInformationJobObject.restype = wintypes.BOOL
        k.SetInformationJobObject.argtypes = [wintypes.HANDLE, ctypes.c_int, ctypes.c_void_p, wintypes.DWORD]
        k.AssignProcessToJobObject.restype = wintypes.BOOL
        k.AssignProcessToJobObject.argtypes = [wintypes.HANDLE, wintypes.HANDLE]
        return k

    def _last_error() -> int:
        return ctypes.get_last_error()

    def _new_kill_on_close_job() -> Any:
        """A Job Object whose processes are all killed when its last handle closes (the host's death)."""
        k = _kernel32()
        job = k.CreateJobObjectW(None, None)
        if not job:
            logger.warning("CreateJobObjectW failed (error %s): servers may outlive a killed host", _last_error())
            return None
        info = _EXTENDED_LIMIT()
        info.BasicLimitInformation.LimitFlags = _JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
        if not k.SetInformationJobObject(
            job, _JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS, ctypes.byref(info), ctypes.sizeof(info)
        ):
            logger.warning("SetInformationJobObject failed (error %s)", _last_error())
            return None
        return job


#: The process-wide lifeline every :class:`~mcpsync.transports.stdio.StdioTransport` uses.
LIFELINE = Lifeline()
_forks.after_fork_in_child(LIFELINE.reset_after_fork)
