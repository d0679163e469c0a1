"""Stdio servers die with their host, even when the host is killed with SIGKILL or by the OOM killer.

``close()`` and interpreter exit reap a server's whole process tree; a host that dies without running
any code cannot. This module covers that case with one guard per host process, not one per server.

Linux, macOS and the other POSIX systems (one code path):

* Every server is started in a session (and so a process group) of its own, which its children
  (``npx`` -> ``node``, ``uv run`` -> ``python``, a shell script) inherit.
* One reaper process per host (``mcpsync-reaper``: a few lines of POSIX shell run by ``/bin/sh``,
  ignoring SIGINT/SIGHUP/SIGTERM/SIGPIPE, in a session of its own so no terminal signal meant for the
  host reaches it) is started with the first server and stopped with the last. It reads ``+<pgid>`` /
  ``-<pgid>`` lines from a pipe whose write end only the host holds (close-on-exec, and a forked child
  closes its copy at fork time): each server's group is registered right after its spawn and
  unregistered once ``close()`` reaped it. When the host dies, however it dies, the pipe reaches
  end-of-file; the reaper sends SIGTERM, then after one second SIGKILL, to every group still
  registered, and exits. Nothing here is Linux-only (no ``prctl``): macOS runs exactly this.
* A reaper killed while the host lives (an OOM kill, a too-broad ``pkill``) is replaced when the next server
  starts, and the new one is told every group registered then (the host keeps that set: one number per
  open server).
* The one window it leaves: a host killed between a server's ``fork`` and the registration that
  follows ``Popen``'s return (a few milliseconds, while that one server starts) leaves that server to
  its own devices; it still sees end-of-file on its stdin, on which MCP servers exit.

Windows: each server gets a Job Object of its own, created with ``JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE``
and held only by the host. The server is created suspended (``CREATE_SUSPENDED``), assigned to its job,
then resumed, so every process it starts is in the job from its first instruction. When the host dies
the system closes its handles and kills every job's processes, children of children included;
``close()`` ends the job (``TerminateJobObject``) after the graceful stages, so grandchildren are
reaped even after the direct child exited. (Written against the documented Win32 API with
:mod:`ctypes` and type-checked with ``mypy --platform win32``; no machine of this project's CI runs it.)

Set ``MCPSYNC_NO_LIFELINE=1`` to turn all of this off (no reaper, no job: ``close()`` and interpreter
exit still reap). A host whose reaper cannot start (no ``/bin/sh``) logs a warning and runs its servers
without it.

Thread-safety: every function and method may be called from any thread.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from typing import Any, Optional, Set

from .. import _forks

__all__ = ["Lifeline", "LIFELINE", "POSIX", "WINDOWS", "enabled"]

logger = logging.getLogger(__name__)

WINDOWS = sys.platform == "win32"
POSIX = not WINDOWS

#: The reaper, a POSIX shell script (``/bin/sh``: dash, bash, zsh's sh mode; nothing else is needed, so it also
#: guards frozen applications): "+<pgid>" / "-<pgid>" lines on stdin (anything else, and 0 or 1, ignored); at
#: end-of-file, SIGTERM to every group still registered, up to one second for them to go, then SIGKILL.
REAPER_SCRIPT = r"""
trap '' INT HUP TERM PIPE
groups=" "
while IFS= read -r line; do
  n=${line#?}
  case $n in ''|*[!0-9]*) continue ;; esac
  [ "$n" -gt 1 ] || continue
  case $line in
    +*) groups="$groups$n " ;;
    -*) case $groups in *" $n "*) groups="${groups%%" $n "*} ${groups#*" $n "}" ;; esac ;;
  esac
done
[ "$groups" = " " ] && exit 0
for g in $groups; do kill -s TERM -- "-$g" 2>/dev/null; done
i=0
while [ $i -lt 50 ]; do
  alive=
  for g in $groups; do kill -s 0 -- "-$g" 2>/dev/null && alive=1; done
  [ -z "$alive" ] && break
  sleep 0.02
  i=$((i + 1))
done
for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done
exit 0
"""

#: The shell that runs the reaper.
REAPER_SHELL = "/bin/sh"


def enabled() -> bool:
    """True unless ``MCPSYNC_NO_LIFELINE`` (set to anything but ``0``) turned the guard off."""
    return os.environ.get("MCPSYNC_NO_LIFELINE", "").strip() in ("", "0")


class Lifeline:
    """The per-process reaper (POSIX): one process and one pipe for every server of this host.

    :meth:`acquire` before starting a server, :meth:`adopt` once it started, :meth:`forget` once its group
    was reaped and :meth:`release` after that (or after it failed to start): the reaper exists exactly
    while at least one server does. On Windows only the count is kept (each server has its own job, see
    :func:`new_job`). Each method blocks only on a pipe write or, in :meth:`release` with the last server,
    on the reaper's exit (about 2 s at most).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._reaper: Optional["subprocess.Popen[bytes]"] = None
        self._groups: Set[int] = set()  # registered now (at most one per open server): told to a new reaper

    @property
    def reaper_pid(self) -> Optional[int]:
        """The reaper's process id while it runs (POSIX), else None."""
        reaper = self._reaper
        return reaper.pid if reaper is not None else None

    def acquire(self) -> None:
        """One more server: start the reaper with the first (POSIX: one ``fork``/``exec`` of ``/bin/sh``)."""
        with self._lock:
            self._users += 1
            if WINDOWS:
                return
            if self._reaper is not None and self._reaper.poll() is not None:  # killed while the host lives
                logger.warning("the mcpsync reaper pid %s died; starting another", self._reaper.pid)
                if self._reaper.stdin is not None:
                    try:
                        self._reaper.stdin.close()
                    except OSError:  # EPIPE: it is gone, which is the point
                        pass
                self._start_locked()
            elif self._users == 1 and self._reaper is None:
                self._start_locked()

    def _start_locked(self) -> None:
        """Start a reaper and tell it every group registered now. Called with the lock held."""
        try:
            self._reaper = subprocess.Popen(  # noqa: S603 - our own interpreter, no shell
                [REAPER_SHELL, "-c", REAPER_SCRIPT, "mcpsync-reaper", str(os.getpid())],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                close_fds=True,
                start_new_session=True,  # no terminal signal meant for the host reaches it
                bufsize=0,
            )
        except OSError as exc:  # servers are then reaped by close() and exit only
            logger.warning("cannot start the mcpsync reaper (%s): a SIGKILLed host may leave its servers", exc)
            self._reaper = None
            return
        if self._groups and self._reaper.stdin is not None:
            try:
                self._reaper.stdin.write(b"".join(b"+%d\n" % g for g in sorted(self._groups)))
            except (OSError, ValueError) as exc:
                logger.warning("the new mcpsync reaper is gone (%s): a SIGKILLed host may leave its servers", exc)

    def release(self) -> None:
        """One server fewer: with the last, let the reaper exit (bounded: ~2 s)."""
        with self._lock:
            if self._users == 0:
                return
            self._users -= 1
            if self._users:
                return
            reaper, self._reaper = self._reaper, None
            self._groups.clear()
        if reaper is None:
            return
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

    def adopt(self, proc: "subprocess.Popen[bytes]") -> None:
        """Register a started server's process group (its pid: it leads its own session) with the reaper."""
        if POSIX:
            self._tell(b"+%d\n" % proc.pid, proc.pid, True)

    def forget(self, pgid: int) -> None:
        """The group ``pgid`` was reaped: the reaper must never signal that number again."""
        if POSIX:
            self._tell(b"-%d\n" % pgid, pgid, False)

    def _tell(self, line: bytes, pgid: int = 0, add: bool = False) -> None:
        with self._lock:
            if pgid:
                (self._groups.add if add else self._groups.discard)(pgid)
            reaper = self._reaper
            if reaper is None or reaper.stdin is None:
                return
            try:
                reaper.stdin.write(line)
            except (OSError, ValueError) as exc:
                logger.warning("the mcpsync reaper is gone (%s): a SIGKILLed host may leave its servers", exc)

    def reset_after_fork(self) -> None:
        """In a forked child: no reaper of its own yet (the parent's stays the parent's)."""
        self._lock = threading.Lock()
        self._users = 0
        self._groups = set()
        reaper, self._reaper = self._reaper, None
        if reaper is not None and reaper.stdin is not None:
            try:  # our copy of the write end would keep the parent's reaper from seeing the parent die
                reaper.stdin.close()  # unbuffered FileIO (bufsize=0): takes no lock a dead thread could hold
            except (OSError, ValueError):
                pass
            reaper.returncode = 0  # never wait for or signal the parent's reaper from here


# ---------------------------------------------------------------------------------------------- Windows jobs


def new_job() -> Any:
    """A Job Object that kills its processes when its last handle closes, or None (logged) when the system
    refuses one. Windows only (None elsewhere)."""
    if sys.platform == "win32":
        return _new_kill_on_close_job()
    return None


def assign_and_resume(job: Any, proc: "subprocess.Popen[bytes]") -> bool:
    """Put a server created with ``CREATE_SUSPENDED`` in ``job``, then let it run; True when it is in the job.

    Raises ``OSError`` when it cannot be resumed (the caller kills it). A refused assignment is logged and the
    server runs unprotected (False): the caller must then let the empty job go and stop the server without it.
    """
    assigned = False
    if sys.platform == "win32":
        k = _kernel32()
        handle = int(getattr(proc, "_handle", 0) or 0)
        assigned = bool(job is not None and handle and k.AssignProcessToJobObject(job, handle))
        if not assigned:
            logger.warning(
                "cannot put server pid %s in a job object (error %s): it may outlive a killed host",
                proc.pid,
                _last_error(),
            )
        _resume_process(proc.pid)
    return assigned


def job_alive(job: Any) -> bool:
    """True while any process of ``job`` runs (the direct child, or one it started). Windows only."""
    if sys.platform == "win32":
        info = _BASIC_ACCOUNTING()
        if not _kernel32().QueryInformationJobObject(
            job, _JOB_OBJECT_BASIC_ACCOUNTING_INFORMATION_CLASS, ctypes.byref(info), ctypes.sizeof(info), None
        ):
            return False
        return int(info.ActiveProcesses) > 0
    return False


def terminate_job(job: Any) -> None:
    """End every process of ``job`` at once (exit code 1). Windows only."""
    if sys.platform == "win32":
        if not _kernel32().TerminateJobObject(job, 1):
            logger.debug("TerminateJobObject failed (error %s)", _last_error())


def close_job(job: Any) -> None:
    """Close the host's handle of ``job`` (which kills whatever it still holds). Windows only."""
    if sys.platform == "win32":
        _kernel32().CloseHandle(job)


def host_has_console() -> bool:
    """True when this process has a console a server can share (so ``CTRL_BREAK_EVENT`` reaches it)."""
    if sys.platform == "win32":
        return bool(_kernel32().GetConsoleWindow())
    return False


if sys.platform == "win32":  # pragma: no cover - Windows only; see the module docstring
    import ctypes
    from ctypes import wintypes

    _JOB_OBJECT_BASIC_ACCOUNTING_INFORMATION_CLASS = 1
    _JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS = 9
    _JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000
    _TH32CS_SNAPTHREAD = 0x00000004
    _THREAD_SUSPEND_RESUME = 0x0002
    _INVALID_HANDLE_VALUE = ctypes.c_void_p(-1).value

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

    class _BASIC_ACCOUNTING(ctypes.Structure):  # noqa: N801 - JOBOBJECT_BASIC_ACCOUNTING_INFORMATION
        _fields_ = [
            ("TotalUserTime", ctypes.c_longlong),
            ("TotalKernelTime", ctypes.c_longlong),
            ("ThisPeriodTotalUserTime", ctypes.c_longlong),
            ("ThisPeriodTotalKernelTime", ctypes.c_longlong),
            ("TotalPageFaultCount", wintypes.DWORD),
            ("TotalProcesses", wintypes.DWORD),
            ("ActiveProcesses", wintypes.DWORD),
            ("TotalTerminatedProcesses", wintypes.DWORD),
        ]

    class _THREADENTRY32(ctypes.Structure):  # noqa: N801 - THREADENTRY32
        _fields_ = [
            ("dwSize", wintypes.DWORD),
            ("cntUsage", wintypes.DWORD),
            ("th32ThreadID", wintypes.DWORD),
            ("th32OwnerProcessID", wintypes.DWORD),
            ("tpBasePri", wintypes.LONG),
            ("tpDeltaPri", wintypes.LONG),
            ("dwFlags", wintypes.DWORD),
        ]

    def _kernel32() -> Any:
        k = ctypes.WinDLL("kernel32", use_last_error=True)
        k.CreateJobObjectW.restype = wintypes.HANDLE
        k.CreateJobObjectW.argtypes = [ctypes.c_void_p, wintypes.LPCWSTR]
        k.SetInformationJobObject.restype = wintypes.BOOL
        k.SetInformationJobObject.argtypes = [wintypes.HANDLE, ctypes.c_int, ctypes.c_void_p, wintypes.DWORD]
        k.QueryInformationJobObject.restype = wintypes.BOOL
        k.QueryInformationJobObject.argtypes = [
            wintypes.HANDLE,
            ctypes.c_int,
            ctypes.c_void_p,
            wintypes.DWORD,
            ctypes.POINTER(wintypes.DWORD),
        ]
        k.AssignProcessToJobObject.restype = wintypes.BOOL
        k.AssignProcessToJobObject.argtypes = [wintypes.HANDLE, wintypes.HANDLE]
        k.TerminateJobObject.restype = wintypes.BOOL
        k.TerminateJobObject.argtypes = [wintypes.HANDLE, wintypes.UINT]
        k.CloseHandle.restype = wintypes.BOOL
        k.CloseHandle.argtypes = [wintypes.HANDLE]
        k.GetConsoleWindow.restype = wintypes.HWND
        k.GetConsoleWindow.argtypes = []
        k.CreateToolhelp32Snapshot.restype = wintypes.HANDLE
        k.CreateToolhelp32Snapshot.argtypes = [wintypes.DWORD, wintypes.DWORD]
        k.Thread32First.restype = wintypes.BOOL
        k.Thread32First.argtypes = [wintypes.HANDLE, ctypes.POINTER(_THREADENTRY32)]
        k.Thread32Next.restype = wintypes.BOOL
        k.Thread32Next.argtypes = [wintypes.HANDLE, ctypes.POINTER(_THREADENTRY32)]
        k.OpenThread.restype = wintypes.HANDLE
        k.OpenThread.argtypes = [wintypes.DWORD, wintypes.BOOL, wintypes.DWORD]
        k.ResumeThread.restype = wintypes.DWORD
        k.ResumeThread.argtypes = [wintypes.HANDLE]
        return k

    def _last_error() -> int:
        return ctypes.get_last_error()

    def _new_kill_on_close_job() -> Any:
        """A Job Object whose processes are all killed when its last handle closes (the host's death)."""
        k = _kernel32()
        job = k.CreateJobObjectW(None, None)
        if not job:
            logger.warning("CreateJobObjectW failed (error %s): a server may outlive a killed host", _last_error())
            return None
        info = _EXTENDED_LIMIT()
        info.BasicLimitInformation.LimitFlags = _JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
        if not k.SetInformationJobObject(
            job, _JOB_OBJECT_EXTENDED_LIMIT_INFORMATION_CLASS, ctypes.byref(info), ctypes.sizeof(info)
        ):
            logger.warning("SetInformationJobObject failed (error %s)", _last_error())
            k.CloseHandle(job)
            return None
        return job

    def _resume_process(pid: int) -> None:
        """Resume every thread of ``pid`` (a process created suspended has one). Raises OSError."""
        k = _kernel32()
        snap = k.CreateToolhelp32Snapshot(_TH32CS_SNAPTHREAD, 0)
        if not snap or snap == _INVALID_HANDLE_VALUE:
            raise ctypes.WinError(_last_error())
        resumed = 0
        try:
            entry = _THREADENTRY32()
            entry.dwSize = ctypes.sizeof(entry)
            more = k.Thread32First(snap, ctypes.byref(entry))
            while more:
                if entry.th32OwnerProcessID == pid:
                    thread = k.OpenThread(_THREAD_SUSPEND_RESUME, False, entry.th32ThreadID)
                    if not thread:
                        raise ctypes.WinError(_last_error())
                    try:
                        if k.ResumeThread(thread) == 0xFFFFFFFF:
                            raise ctypes.WinError(_last_error())
                        resumed += 1
                    finally:
                        k.CloseHandle(thread)
                more = k.Thread32Next(snap, ctypes.byref(entry))
        finally:
            k.CloseHandle(snap)
        if not resumed:
            raise OSError("no thread of process %d to resume" % pid)


#: The process-wide lifeline every :class:`~mcpsync.transports.stdio.StdioTransport` uses.
LIFELINE = Lifeline()
_forks.after_fork_in_child(LIFELINE.reset_after_fork)
