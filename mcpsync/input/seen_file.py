"""Used token ids in a file shared by the processes of one host: :class:`FileSeenStore`."""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any, Dict, Union

from .._files import write_atomically
from .._trust import untrusted_reason
from ..errors import InputSeenStoreError

__all__ = ["FileSeenStore"]

_VERSION = 1


class FileSeenStore:
    """Used token ids in one JSON file, shared by every process of the host that opens the same path.

    Each ``claim`` is one read-modify-write under an exclusive :class:`filelock.FileLock` (``<path>.lock``):
    it reads the file, drops the expired ids, adds the new one and replaces the file atomically and durably
    (``fsync``), so an id once claimed is seen by every later claim, in any process, even after a crash.
    Blocks up to ``lock_timeout`` seconds for the lock, then raises :class:`~mcpsync.InputSeenStoreError`.

    The file is private (mode 0600, its directory 0700 when created). A file that is damaged, owned by
    another user or writable by its group or others is refused (:class:`~mcpsync.InputSeenStoreError`), never
    reset: starting empty would let every recorded token through again. At most ``maxsize`` unexpired ids
    are kept; past that, tokens are refused (use :class:`~mcpsync.input.RedisSeenStore` for heavy traffic: every
    claim rewrites the whole file). Thread- and process-safe.
    """

    def __init__(
        self, path: Union[str, "os.PathLike[str]"], *, lock_timeout: float = 10.0, maxsize: int = 50_000
    ) -> None:
        self.path = os.path.abspath(os.fspath(path))
        self.location = self.path
        self.lock_timeout = float(lock_timeout)
        self.maxsize = int(maxsize)
        self._thread_lock = threading.Lock()
        self._file_lock: Any = None

    def _lock(self) -> Any:
        if self._file_lock is None:
            import filelock

            self._file_lock = filelock.FileLock(self.path + ".lock", mode=0o600)
        return self._file_lock

    def _read(self) -> Dict[str, float]:
        try:
            with open(self.path, "rb") as fh:
                problem = untrusted_reason(os.fstat(fh.fileno()))
                if problem is not None:
                    raise InputSeenStoreError("refusing the seen store %s: %s" % (self.path, problem))
                raw = fh.read()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise InputSeenStoreError("cannot read the seen store %s: %s" % (self.path, exc)) from None
        try:
            doc = json.loads(raw)
            seen = doc["seen"] if isinstance(doc, dict) and doc.get("v") == _VERSION else None
            if not isinstance(seen, dict) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in seen.values()
            ):
                raise ValueError("not a version %d seen store" % _VERSION)
        except (ValueError, KeyError, RecursionError, UnicodeDecodeError) as exc:
            raise InputSeenStoreError(
                "the seen store %s is damaged (%s); it is left as is: move it away to start empty"
                % (self.path, type(exc).__name__)
            ) from None
        return {str(k): float(v) for k, v in seen.items()}

    def claim(self, token_id: str, expires_at: float) -> bool:
        """See :meth:`mcpsync.input.SeenStore.claim`."""
        import filelock

        with self._thread_lock:
            try:
                os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
                lock = self._lock()
                lock.acquire(timeout=self.lock_timeout, poll_interval=0.01)
            except filelock.Timeout:
                raise InputSeenStoreError(
                    "timed out after %ss waiting for the seen store lock %s.lock" % (self.lock_timeout, self.path)
                ) from None
            except OSError as exc:
                raise InputSeenStoreError("cannot lock the seen store %s: %s" % (self.path, exc)) from None
            try:
                now = time.time()
                seen = {k: v for k, v in self._read().items() if v > now}
                if token_id in seen:
                    return False
                if len(seen) >= self.maxsize:
                    raise InputSeenStoreError(
                        "the seen store %s holds %d unexpired token ids (its maxsize); refusing the token"
                        % (self.path, self.maxsize)
                    )
                seen[token_id] = float(expires_at)
                data = json.dumps({"v": _VERSION, "seen": seen}, separators=(",", ":")).encode("utf-8")
                try:
                    write_atomically(self.path, data, durable=True)
                except OSError as exc:
                    raise InputSeenStoreError("cannot write the seen store %s: %s" % (self.path, exc)) from None
                return True
            finally:
                lock.release()

    def __repr__(self) -> str:
        return "FileSeenStore(%r)" % (self.path,)
