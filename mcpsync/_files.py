"""Private files written atomically: the one writer of the warm cache, the registry cache, the user's
configuration files and the credential store.

:func:`write_atomically` writes into a temporary file in the target's own directory (created with ``mode``,
0600 unless told otherwise, never following a symlink) and ``os.replace``-s it over the target, so a reader
sees either the old or the new file, whole. Whatever fails, the temporary file is removed before the
exception leaves (a process killed mid-write can still leave one: the credential store sweeps those, see
:mod:`mcpsync.auth.store`). Blocks for the write (and, with ``durable=True``, for two ``fsync`` calls).
Thread-safe as long as two threads never pass the same ``temp`` name.

Readers never take a lock, so on Windows a reader may hold the target open at the moment of the rename:
there ``os.replace`` raises ``PermissionError`` while any handle to the target is open (Python opens files
without ``FILE_SHARE_DELETE``). :func:`replace` retries the rename with a bounded backoff (5 ms doubling to
100 ms, at most :data:`REPLACE_PATIENCE` seconds in all) until the reader has closed the file; the same code
runs on every platform (on POSIX a rename never waits for readers, so the first attempt succeeds unless the
directory's permissions forbid it, which then fails after that bound). :func:`read_bytes` is the readers'
side: Windows refuses to open a file whose rename-over is pending, for that instant, so it retries too.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from typing import Any, Callable, Dict, Optional, TypeVar, Union

__all__ = [
    "CACHE_DIR_ENV",
    "REPLACE_PATIENCE",
    "URLCache",
    "cache_root",
    "read_bytes",
    "record_number",
    "replace",
    "url_file",
    "user_dir",
    "write_atomically",
]

PathLike = Union[str, "os.PathLike[str]"]

CACHE_DIR_ENV = "MCPSYNC_CACHE_DIR"
"""Environment variable: mcpsync's cache directory, the parent of every cache (``warm/``, ``registry/``)."""


def user_dir(override_env: str, *, windows: str, darwin: str, xdg_env: str, xdg_default: str) -> str:
    """A per-user directory of mcpsync (not created): ``$override_env`` when set, else the platform's, as
    ``platformdirs`` places it: Windows ``%LOCALAPPDATA%\\<windows>`` (local, not roaming), macOS
    ``~/Library/<darwin>``, elsewhere ``$<xdg_env>/mcpsync`` (an absolute one) or ``~/<xdg_default>/mcpsync``.
    Pure computation (reads the environment)."""
    import sys

    env_dir = os.environ.get(override_env)
    if env_dir:
        return os.path.abspath(os.path.expanduser(env_dir))
    home = os.path.expanduser("~")
    if sys.platform.startswith("win"):
        base = os.environ.get("LOCALAPPDATA") or os.path.join(home, "AppData", "Local")
        return os.path.join(base, windows)
    if sys.platform == "darwin":
        return os.path.join(home, "Library", darwin)
    xdg = os.environ.get(xdg_env, "").strip()
    base = xdg if xdg and os.path.isabs(xdg) else os.path.join(home, xdg_default)
    return os.path.join(base, "mcpsync")


def cache_root() -> str:
    """mcpsync's per-user cache directory (not created): ``$MCPSYNC_CACHE_DIR``, else the platform's
    (``$XDG_CACHE_HOME/mcpsync`` or ``~/.cache/mcpsync``; ``~/Library/Caches/mcpsync``;
    ``%LOCALAPPDATA%\\mcpsync\\Cache``). Each cache is a subdirectory: the warm cache ``warm``, the registry
    cache ``registry``. Pure computation (reads the environment)."""
    return user_dir(
        CACHE_DIR_ENV,
        windows=os.path.join("mcpsync", "Cache"),
        darwin=os.path.join("Caches", "mcpsync"),
        xdg_env="XDG_CACHE_HOME",
        xdg_default=".cache",
    )


_T = TypeVar("_T")


def _retry_permission(attempt: Callable[[], _T], patience: float) -> _T:
    """``attempt()``, called again while it raises ``PermissionError`` (a Windows sharing refusal), with a
    backoff of 5 ms doubling to 100 ms. Blocks at most about ``patience`` seconds, then raises the last
    ``PermissionError``; any other exception is raised at once."""
    deadline = time.monotonic() + patience
    delay = 0.005
    while True:
        try:
            return attempt()
        except PermissionError:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise
            time.sleep(min(delay, remaining))
            delay = min(delay * 2, 0.1)


#: How long :func:`replace` keeps retrying a rename refused with ``PermissionError`` (seconds).
REPLACE_PATIENCE = 2.0


def replace(src: PathLike, dst: PathLike, *, patience: float = REPLACE_PATIENCE) -> None:
    """``os.replace(src, dst)``, retried while it raises ``PermissionError`` (a reader holds ``dst`` open on
    Windows), with a backoff of 5 ms doubling to 100 ms. Blocks at most about ``patience`` seconds, then
    raises the last ``PermissionError``; any other ``OSError`` is raised at once."""
    _retry_permission(lambda: os.replace(src, dst), patience)


def read_bytes(path: PathLike, limit: int = -1, *, patience: float = 0.5) -> bytes:
    """The content of ``path`` (at most ``limit`` bytes when ``limit >= 0``), retried while opening it raises
    ``PermissionError``: on Windows a file being renamed over (delete pending) refuses new readers for that
    instant. Blocks at most about ``patience`` seconds, then raises; ``FileNotFoundError`` and any other
    ``OSError`` are raised at once."""

    def read() -> bytes:
        with open(path, "rb") as fh:
            return fh.read(limit)

    return _retry_permission(read, patience)


def write_atomically(
    path: PathLike,
    data: bytes,
    *,
    mode: int = 0o600,
    durable: bool = False,
    temp: Optional[PathLike] = None,
) -> None:
    """Replace ``path`` with ``data`` in one step. Raises ``OSError`` (the target is then unchanged).

    The rename waits (bounded, see :func:`replace`) while a reader holds ``path`` open on Windows.

    Args:
        path: the file to write; its directory must exist.
        data: the whole new content.
        mode: the permission bits of the new file (0600 by default: these files hold private state).
        durable: ``fsync`` the file before the rename and the directory after it (survives a power cut).
        temp: the temporary file's path (same directory), for callers that sweep stale ones by name; by
            default a fresh unique name ``.<name>.<random>.tmp``.
    """
    target = os.fspath(path)
    directory = os.path.dirname(target) or "."
    if temp is None:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(target) + ".", suffix=".tmp")
    else:
        tmp = os.fspath(temp)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(tmp, flags, mode)
    try:
        try:
            if hasattr(os, "fchmod"):
                os.fchmod(fd, mode)  # mkstemp's 0600 or an existing temp file's bits: the asked mode either way
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable and hasattr(os, "O_DIRECTORY"):
        with contextlib.suppress(OSError):
            dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)


def url_file(directory: str, url: str) -> str:
    """The file of a cache keyed by URL: ``<directory>/<sha256 of the URL>.json``."""
    import hashlib

    return os.path.join(directory, hashlib.sha256(url.encode("utf-8")).hexdigest() + ".json")


def record_number(value: Any) -> Optional[float]:
    """A number field of a cached record as a float: None unless it is a JSON number (an int or a float; not a
    bool, not NaN), so a damaged record reads as absent."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value:
        return float(value)
    return None


class URLCache:
    """A cache directory of small JSON objects keyed by URL, one file each (see :func:`url_file`): what the
    registry cache and the card cache share; each stores and checks its own fields. Thread- and process-safe:
    readers see the old or the new file, whole; concurrent writers of one URL race harmlessly (the last complete
    write wins). Blocks on small file I/O only. ``_read`` and ``_write`` are for the subclass (the public surface is
    ``directory`` and :meth:`clear`).

    Args:
        directory: where the files are (created, 0700, by the first write).
        max_size: a file larger than this (bytes) reads as absent, so a damaged cache cannot exhaust memory.
    """

    def __init__(self, directory: str, max_size: int) -> None:
        self.directory = directory
        self._max_size = max_size

    def __repr__(self) -> str:
        return "%s(%r)" % (type(self).__name__, self.directory)

    def _read(self, url: str) -> "Optional[Dict[str, Any]]":
        """The JSON object held for ``url``, or None: absent, too large, unreadable, not JSON, not an object, or
        another URL's (its ``"url"`` is not ``url``; logged at DEBUG: a cache never fails its caller). The caller
        checks the object's other fields. Blocks on one small read (retried as :func:`read_bytes` does)."""
        import json
        import logging

        path = url_file(self.directory, url)
        try:
            if os.path.getsize(path) > self._max_size:
                return None
            raw = json.loads(read_bytes(path).decode("utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
            logging.getLogger(__name__).debug("cache file %s unreadable: ignored", path)
            return None
        return raw if isinstance(raw, dict) and raw.get("url") == url else None

    def _write(self, url: str, record: "Dict[str, Any]") -> None:
        """Store ``record`` (with ``"url": url``) as the object of ``url``, creating the directory (0700) when
        needed; the file is replaced atomically (:func:`write_atomically`). Raises OSError (and ValueError for a
        record that is not JSON): a cache logs it and goes on. Blocks on one small write."""
        import json

        os.makedirs(self.directory, mode=0o700, exist_ok=True)
        write_atomically(url_file(self.directory, url), json.dumps(dict(record, url=url)).encode("utf-8"))

    def clear(self) -> int:
        """Delete every cached answer (every ``.json`` file); returns how many files were removed. A file that
        cannot be removed is left; a missing directory removes nothing."""
        try:
            names = os.listdir(self.directory)
        except OSError:
            return 0
        removed = 0
        for name in names:
            if name.endswith(".json"):
                try:
                    os.unlink(os.path.join(self.directory, name))
                    removed += 1
                except OSError:
                    pass
        return removed
