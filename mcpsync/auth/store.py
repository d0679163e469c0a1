"""The OAuth credential store: one 0600 JSON file shared by every mcpsync process of a user.

Layout of ``mcp-auth.json``::

    {
      "version": 1,
      "servers": {
        "<server name>": {
          "serverUrl": "https://mcp.example.com/mcp",
          "resource": "https://mcp.example.com/mcp",
          "issuer": "https://auth.example.com",
          "tokenEndpoint": "https://auth.example.com/token",
          "tokens": {"accessToken": "...", "refreshToken": "...", "expiresAt": 1767225600,
                     "scope": "read write", "tokenType": "Bearer"},
          "clientInfo": {"clientId": "...", "clientSecret": "...", "clientIdIssuedAt": 0,
                         "clientSecretExpiresAt": 0, "redirectUri": "http://127.0.0.1:19876/mcp/oauth/callback",
                         "issuer": "https://auth.example.com", "tokenEndpointAuthMethod": "none"},
          "codeVerifier": "...", "oauthState": "...", "authIssuer": "...",
          "requestedScope": "read write", "needsAuth": false
        }
      },
      "callbacks": {"<state>": {"code": "...", "receivedAt": 1767225600}}
    }

Every change is one read-modify-write under an exclusive :class:`filelock.FileLock`
(``mcp-auth.json.lock`` beside the file) held for the whole operation, so concurrent
processes and threads never lose an update. Plain reads (:meth:`CredentialStore.get`,
:meth:`CredentialStore.all`) take no lock: writes are atomic (a temporary file in the
same directory, created 0600 with :func:`os.open`, written, fsync-ed, then renamed over the
store), so a reader sees one whole version. On Windows a rename over a file that a reader
holds open fails with ``PermissionError``; the writer retries it with a bounded backoff
(:func:`mcpsync._files.replace`, at most about 2 s) until the reader is done, the same code on
every platform. A read that fails or finds damage is redone under the lock. The directory is
created 0700.

A writer killed between creating its temporary file and the replace (``kill -9``, OOM)
leaves ``.mcp-auth.json.<pid>.<thread>.tmp`` holding tokens. Such files are stale by
definition once the lock is held (a live writer holds the lock until its replace), so every
write removes them under the lock before writing, and opening a store removes them when the
lock is free at that moment (never waiting for it): no secret outlives the next use.

Damaged content, one rule: a file that cannot be a store (not UTF-8, not JSON, a top level
or ``servers`` that is not an object) is moved aside unchanged, byte for byte, to
``mcp-auth.json.corrupt-<ms>``; the operation that found it logs an error and raises
:class:`~mcpsync.errors.CredentialStoreError` naming the backup; the store then starts
empty. Inside a readable file, an ill-typed entry or field (``tokens`` as a string, an
``expiresAt`` that is not a number...) reads as absent (see
:func:`~mcpsync.auth.store_base.clean_entry`, logged once as a warning without values);
other entries are unaffected, and the ill-typed part is dropped when that entry is next written.

This is the default :class:`~mcpsync.auth.store_base.CredentialBackend`.

Thread-safety: every public method may be called from any thread. Methods block while
another thread or process holds the lock, at most ``lock_timeout`` seconds (default 60),
then raise :class:`~mcpsync.errors.CredentialStoreError`.
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import os
import re
import sys
import threading
import time
from typing import Any, Callable, ContextManager, Dict, Iterator, List, Mapping, Optional

from .._files import read_bytes, replace, user_dir, write_atomically
from ..errors import CredentialStoreError
from .store_base import add_callback, CredentialStoreBase, callback_params, clean_callback, clean_entry

__all__ = ["CredentialStore", "default_store_path", "ENV_AUTH_FILE", "ENV_DATA_DIR"]

log = logging.getLogger(__name__)

ENV_AUTH_FILE = "MCPSYNC_AUTH_FILE"
"""Environment variable: the full path of the credential file."""
ENV_DATA_DIR = "MCPSYNC_DATA_DIR"
"""Environment variable: the directory holding ``mcp-auth.json``."""
FILE_NAME = "mcp-auth.json"


class _PathLock:
    """The in-process side of one store path's lock, shared by every CredentialStore of that path.

    A re-entrant thread lock (cheap in-process exclusion), the file lock (exclusion between
    processes) and a per-thread nesting depth, so nested ``locked()`` sections of any store
    object of the same path in one thread never deadlock on the file lock.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.rlock = threading.RLock()
        self.local = threading.local()
        self.file_lock: Any = None


_PATH_LOCKS: Dict[str, _PathLock] = {}
_PATH_LOCKS_GUARD = threading.Lock()


def _path_lock(path: str) -> _PathLock:
    with _PATH_LOCKS_GUARD:
        lock = _PATH_LOCKS.get(path)
        if lock is None:
            lock = _PATH_LOCKS[path] = _PathLock(path)
        return lock


def user_data_dir() -> str:
    """The per-user data directory for mcpsync (not created): ``$MCPSYNC_DATA_DIR``, else the platform's.

    The conventions of ``platformdirs.user_data_dir("mcpsync", appauthor=False)``, without the dependency:
    Linux/BSD ``$XDG_DATA_HOME/mcpsync`` (an absolute ``XDG_DATA_HOME``) or ``~/.local/share/mcpsync``;
    macOS ``~/Library/Application Support/mcpsync``; Windows ``%LOCALAPPDATA%\\mcpsync`` (local, not roaming:
    credentials stay on the machine that obtained them).
    """
    return user_dir(ENV_DATA_DIR, windows="mcpsync", darwin=os.path.join("Application Support", "mcpsync"),
                    xdg_env="XDG_DATA_HOME", xdg_default=os.path.join(".local", "share"))


def _roaming_store_path() -> Optional[str]:
    """Where releases before 0.2 kept the credential file on Windows (``%APPDATA%``, roaming)."""
    if not sys.platform.startswith("win") or os.environ.get(ENV_DATA_DIR):
        return None
    base = os.environ.get("APPDATA") or os.path.join(os.path.expanduser("~"), "AppData", "Roaming")
    return os.path.join(base, "mcpsync", FILE_NAME)


def default_store_path() -> str:
    """The credential file path: ``$MCPSYNC_AUTH_FILE``, else ``<user data dir>/mcp-auth.json`` (on Windows, a file
    an earlier release left in the roaming ``%APPDATA%\\mcpsync`` keeps being used until it is moved)."""
    env_file = os.environ.get(ENV_AUTH_FILE)
    if env_file:
        return os.path.abspath(os.path.expanduser(env_file))
    path = os.path.join(user_data_dir(), FILE_NAME)
    old = _roaming_store_path()
    if old is not None and not os.path.exists(path) and os.path.exists(old):
        return old
    return path


_TEMP_MIDDLE = re.compile(r"\A\d+\.\d+\Z")  # <pid>.<thread id> in a writer's temp file name


def _empty() -> Dict[str, Any]:
    return {"version": 1, "servers": {}, "callbacks": {}}


def _parse_document(raw: bytes) -> Dict[str, Any]:
    """The store document from the file's bytes; ValueError when it is not one.

    Not UTF-8, not JSON (or nested too deeply to parse), a top level that is not an object,
    or ``servers`` that is not an object make the whole file unreadable. Inside, entries are
    kept as they are (they are cleaned when read) and ill-typed callback records are dropped.
    """
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError("not UTF-8 text: %s" % exc.reason) from None
    if not text.strip():
        return _empty()
    try:
        data = json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    except ValueError as exc:
        raise ValueError("not valid JSON: %s" % exc) from None
    if not isinstance(data, dict):
        raise ValueError("the top level is not a JSON object")
    if "servers" not in data:
        # A flat {name: entry} file (OpenCode's shape) is adopted as is.
        data = {"version": 1, "servers": {k: v for k, v in data.items() if isinstance(v, dict)}}
    if not isinstance(data.get("servers"), dict):
        raise ValueError("'servers' is not a JSON object")
    callbacks = data.get("callbacks")
    cleaned: Dict[str, Any] = {}
    if isinstance(callbacks, dict):
        for state, record in callbacks.items():
            good = clean_callback(record)
            if good is not None:
                cleaned[state] = good
    data["callbacks"] = cleaned
    return data


class CredentialStore(CredentialStoreBase):
    """File-locked, atomically written JSON store of OAuth credentials, keyed by server name.

    Args:
        path: the file to use; default :func:`default_store_path`.
        lock_timeout: seconds to wait for the file lock before raising
            :class:`~mcpsync.errors.CredentialStoreError`.

    Entries are plain dicts (see the module docstring); the methods return deep copies,
    so callers can never alter the store by mutating a result.
    """

    def __init__(self, path: Optional[str] = None, *, lock_timeout: float = 60.0) -> None:
        self.path = os.path.abspath(os.path.expanduser(path)) if path else default_store_path()
        self.lock_timeout = lock_timeout
        self.location = self.path
        self._lock = _path_lock(self.path)
        self._warned: Dict[Any, None] = {}  # keys already warned about (bounded; guarded by _warned_guard)
        self._warned_guard = threading.Lock()
        self._sweep_on_open()

    def __repr__(self) -> str:
        return "CredentialStore(%r)" % (self.path,)

    def _warn_once(self, key: Any) -> bool:
        """True the first time this store sees ``key`` (bounded memory)."""
        with self._warned_guard:
            if key in self._warned:
                return False
            if len(self._warned) >= 256:
                self._warned.pop(next(iter(self._warned)))
            self._warned[key] = None
            return True

    # ------------------------------------------------------------------ locking and I/O

    def _ensure_dir(self) -> None:
        directory = os.path.dirname(self.path)
        try:
            os.makedirs(directory, mode=0o700, exist_ok=True)
        except OSError as exc:
            raise CredentialStoreError("cannot create the credential directory %s: %s" % (directory, exc)) from exc

    def _get_file_lock(self) -> Any:
        # Called with the path's rlock held.
        if self._lock.file_lock is None:
            try:
                import filelock
            except ImportError as exc:  # pragma: no cover - a declared dependency
                raise CredentialStoreError("the credential store needs the 'filelock' package") from exc
            # poll_interval goes to acquire(): the constructor takes it only from filelock 3.15 on
            self._lock.file_lock = filelock.FileLock(self.path + ".lock", mode=0o600)
        return self._lock.file_lock

    @contextlib.contextmanager
    def locked(self) -> Iterator["CredentialStore"]:
        """Hold the store's exclusive lock (re-entrant within one thread) for a multi-step operation.

        Blocks up to ``lock_timeout`` seconds; other processes and threads wait meanwhile.
        Use it to keep read -> network request -> write atomic, as token refresh does.
        """
        local = self._lock.local
        depth = getattr(local, "depth", 0)
        if depth:
            local.depth = depth + 1
            try:
                yield self
            finally:
                local.depth -= 1
            return
        if not self._lock.rlock.acquire(timeout=self.lock_timeout if self.lock_timeout >= 0 else -1):
            raise CredentialStoreError("timed out after %ss waiting for the credential store lock" % self.lock_timeout)
        try:
            self._ensure_dir()
            lock = self._get_file_lock()
            try:
                import filelock

                lock.acquire(timeout=self.lock_timeout, poll_interval=0.01)
            except filelock.Timeout as exc:
                raise CredentialStoreError(
                    "timed out after %ss waiting for the credential store lock %s.lock" % (self.lock_timeout, self.path)
                ) from exc
            except OSError as exc:
                raise CredentialStoreError("cannot lock the credential store %s: %s" % (self.path, exc)) from exc
            local.depth = 1
            try:
                yield self
            finally:
                local.depth = 0
                lock.release()
        finally:
            self._lock.rlock.release()

    def _read(self) -> Dict[str, Any]:
        """The whole document, read under the lock. Unreadable content is moved aside (see the module doc)."""
        try:
            raw = read_bytes(self.path)  # retried while a rename over it is pending (Windows)
        except FileNotFoundError:
            return _empty()
        except OSError as exc:
            raise CredentialStoreError("cannot read the credential store %s: %s" % (self.path, exc)) from exc
        try:
            return _parse_document(raw)
        except ValueError as exc:
            reason = str(exc)
        backup = "%s.corrupt-%d" % (self.path, int(time.time() * 1000))
        try:
            replace(self.path, backup)  # a lock-free reader may hold it open (Windows): bounded retry
        except OSError as move_exc:
            raise CredentialStoreError(
                "the credential store %s is unreadable (%s) and could not be moved aside: %s"
                % (self.path, reason, move_exc)
            ) from None
        log.error("credential store %s was unreadable (%s); moved to %s", self.path, reason, backup)
        raise CredentialStoreError(
            "the credential store %s was unreadable (%s); it was kept unchanged as %s and the store starts "
            "empty" % (self.path, reason, backup)
        )

    def _stale_temps(self) -> List[str]:
        """Temporary files of this store's writers (``.<name>.<pid>.<thread>.tmp``) present now."""
        directory, base = os.path.split(self.path)
        prefix = "." + base + "."
        try:
            names = os.listdir(directory)
        except OSError:
            return []
        return [
            os.path.join(directory, n)
            for n in names
            if n.startswith(prefix) and n.endswith(".tmp") and _TEMP_MIDDLE.match(n[len(prefix) : -4])
        ]

    def _sweep_temps(self) -> None:
        """Remove the temporary files of writers that died mid-write. Call with the lock held."""
        removed = 0
        for tmp in self._stale_temps():
            try:
                os.unlink(tmp)
                removed += 1
            except FileNotFoundError:
                pass
            except OSError as exc:
                log.warning("cannot remove a stale credential temp file %s: %s", tmp, exc)
        if removed:
            log.info("removed %d temporary file(s) a killed writer left beside %s", removed, self.path)

    def _sweep_on_open(self) -> None:
        """Sweep stale temp files when there are any and the lock is free right now; never waits, never raises."""
        if not self._stale_temps():
            return
        if not self._lock.rlock.acquire(blocking=False):
            return
        try:
            lock = self._get_file_lock()
            import filelock

            try:
                lock.acquire(timeout=0)
            except filelock.Timeout:
                return  # a writer is at work (its temp file is live); the next write sweeps
            try:
                self._sweep_temps()
            finally:
                lock.release()
        except Exception as exc:  # noqa: BLE001 - opening a store never fails for this
            log.debug("could not sweep stale temp files of %s: %s", self.path, exc)
        finally:
            self._lock.rlock.release()

    def _write(self, data: Dict[str, Any]) -> None:
        self._sweep_temps()  # under the lock: no live writer can own one of them
        directory = os.path.dirname(self.path)
        tmp = os.path.join(
            directory, ".%s.%d.%d.tmp" % (os.path.basename(self.path), os.getpid(), threading.get_ident())
        )
        try:
            payload = json.dumps(data, indent=2, sort_keys=True).encode("utf-8")
        except (ValueError, TypeError, RecursionError) as exc:
            raise CredentialStoreError("cannot serialize the credential store %s: %s" % (self.path, exc)) from None
        try:
            write_atomically(self.path, payload, durable=True, temp=tmp)
        except OSError as exc:
            raise CredentialStoreError("cannot write the credential store %s: %s" % (self.path, exc)) from exc

    def _modify(self, fn: Callable[[Dict[str, Any]], Any]) -> Any:
        with self.locked():
            data = self._read()
            result = fn(data)
            self._write(data)
            return copy.deepcopy(result)

    # ------------------------------------------------------------------ entries

    def _snapshot(self) -> Dict[str, Any]:
        """The current content, read without the lock: writes are atomic replaces, so a reader
        always sees one complete version. A file that does not parse is handled under the lock."""
        if getattr(self._lock.local, "depth", 0):
            return self._read()
        try:
            return _parse_document(read_bytes(self.path))
        except FileNotFoundError:
            return _empty()
        except (OSError, ValueError):
            pass
        with self.locked():
            return self._read()

    def _clean(self, name: str, raw: Any) -> Optional[Dict[str, Any]]:
        dropped: List[str] = []
        entry = clean_entry(raw, dropped)
        if dropped and raw is not None and self._warn_once((name, tuple(sorted(set(dropped))))):
            log.warning(
                "credential store %s: ill-typed content of %r read as absent: %s",
                self.path,
                name,
                ", ".join(sorted(set(dropped))[:20]),
            )
        return entry

    def all(self) -> Dict[str, Dict[str, Any]]:
        """Every well-typed entry, by server name (copies). Never waits for the lock unless the file is damaged."""
        out: Dict[str, Dict[str, Any]] = {}
        for name, raw in self._snapshot()["servers"].items():
            entry = self._clean(name, raw)
            if entry is not None:
                out[name] = entry
        return out

    def get(self, name: str) -> Optional[Dict[str, Any]]:
        """The entry for ``name`` (a cleaned copy), or None. Never waits for the lock unless the file is damaged.

        Inside :meth:`locked` it reads the file afresh as of now (what a refresh must do).
        """
        return self._clean(name, self._snapshot()["servers"].get(name))

    def update(self, name: str, fn: Callable[[Dict[str, Any]], Any]) -> Any:
        """Atomically apply ``fn(entry)`` to the entry of ``name`` (created empty when absent).

        ``fn`` mutates the dict in place and may return a value, which is returned (copied).
        If ``fn`` raises, nothing is written.
        """

        def apply(data: Dict[str, Any]) -> Any:
            entry = self._clean(name, data["servers"].get(name)) or {}
            result = fn(entry)
            data["servers"][name] = entry
            return result

        return self._modify(apply)

    def remove(self, name: str) -> bool:
        """Delete the whole entry of ``name``; returns whether there was one."""

        def fn(data: Dict[str, Any]) -> bool:
            return data["servers"].pop(name, None) is not None

        return bool(self._modify(fn))

    def refresh_lock(self, name: str) -> ContextManager[Any]:
        """The store's exclusive lock (:meth:`locked`): one refresh at a time across processes."""
        return self.locked()

    # ------------------------------------------------------------------ relayed callbacks

    def record_callback(self, state: str, params: Mapping[str, str]) -> None:
        """Leave the callback parameters of ``state`` for the process waiting for them.

        Used by the callback server of one process on behalf of another (shared port).
        Entries older than 10 minutes are pruned.
        """

        def fn(data: Dict[str, Any]) -> None:
            callbacks = data["callbacks"]
            add_callback(callbacks, state, params)

        self._modify(fn)

    def take_callback(self, state: str) -> Optional[Dict[str, str]]:
        """Remove and return the callback parameters recorded for ``state``, or None."""

        with self.locked():
            data = self._read()
            if state not in data["callbacks"]:
                return None
            result = data["callbacks"].pop(state)
            self._write(data)
        return callback_params(result)
