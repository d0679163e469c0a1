"""Windows file semantics imposed on this machine, for tests: a rename over a file that is open fails.

On Windows, ``os.replace(src, dst)`` raises ``PermissionError`` while any handle to ``dst`` is open (CPython
opens files without ``FILE_SHARE_DELETE``). :class:`WindowsReplace` gives a test exactly that rule, driven by
real open file handles: it wraps ``builtins.open`` so every file opened under ``root`` is tracked until it is
closed, and ``os.replace`` refuses (``PermissionError``, errno 13) while the target is tracked as open.

``rename_pending(path)`` refuses new opens of ``path`` (``PermissionError``, as Windows does while a rename
over it is pending) until ``rename_done()``; ``open_refused`` is set when one was refused.
``hold(path)`` opens a real handle the way another process's reader would; ``pause_reads_of(path)`` makes the
next read of ``path`` through ``open()`` (the library's own reader) stop at the racy point, with the file open,
until ``release_reads()``: ``reading`` is set when a reader stopped there, ``refused`` when a rename was
refused. Events, never sleeps.
"""

from __future__ import annotations

import builtins
import os
import threading
from typing import Any, Dict, List, Optional


def _key(path: Any) -> str:
    return os.path.normcase(os.path.abspath(os.fspath(path)))


class _Tracked:
    """A real file object, tracked as open until closed."""

    def __init__(self, shim: "WindowsReplace", fh: Any, key: str) -> None:
        self._shim, self._fh, self._key = shim, fh, key

    def _gate(self) -> None:
        self._shim._maybe_pause(self._key)

    def read(self, *args: Any) -> Any:
        self._gate()
        return self._fh.read(*args)

    def close(self) -> None:
        try:
            self._fh.close()
        finally:
            self._shim._closed(self._key)

    def __enter__(self) -> "_Tracked":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __iter__(self) -> Any:
        self._gate()
        return iter(self._fh)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fh, name)


class WindowsReplace:
    def __init__(self, monkeypatch: Any, root: Any) -> None:
        self.root = _key(root)
        self.open_count: Dict[str, int] = {}
        self.refused = threading.Event()
        self.reading = threading.Event()
        self.refusals: List[str] = []
        self._lock = threading.Lock()
        self._pause: Optional[str] = None
        self._pending: Optional[str] = None  # a rename over this file is pending: new opens are refused
        self.open_refused = threading.Event()
        self.open_refused_twice = threading.Event()
        self.open_refusals = 0
        self._gate = threading.Event()
        self._real_open = builtins.open
        self._real_replace = os.replace
        monkeypatch.setattr(builtins, "open", self._open)
        monkeypatch.setattr(os, "replace", self._replace)

    # -- the rule
    def _open(self, file: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(file, int) and self._pending is not None and _key(file) == self._pending:
            with self._lock:
                self.open_refusals += 1
                if self.open_refusals >= 2:
                    self.open_refused_twice.set()
            self.open_refused.set()
            raise PermissionError(13, "Access is denied (delete pending)", os.fspath(file))
        fh = self._real_open(file, *args, **kwargs)
        if isinstance(file, int):
            return fh
        key = _key(file)
        if not key.startswith(self.root):
            return fh
        with self._lock:
            self.open_count[key] = self.open_count.get(key, 0) + 1
        return _Tracked(self, fh, key)

    def _closed(self, key: str) -> None:
        with self._lock:
            n = self.open_count.get(key, 0) - 1
            if n > 0:
                self.open_count[key] = n
            else:
                self.open_count.pop(key, None)

    def _replace(self, src: Any, dst: Any, **kwargs: Any) -> None:
        key = _key(dst)
        with self._lock:
            busy = self.open_count.get(key, 0) > 0
            if busy:
                self.refusals.append(key)
        if busy:
            self.refused.set()
            raise PermissionError(13, "The process cannot access the file because it is being used", os.fspath(dst))
        self._real_replace(src, dst, **kwargs)

    # -- test controls
    def hold(self, path: Any) -> Any:
        """A real read handle on ``path``, as another process's reader holds one (close it to let go)."""
        return self._open(path, "rb")

    def rename_pending(self, path: Any) -> None:
        """Until :meth:`rename_done`, opening ``path`` fails as it does on Windows while a rename over it is
        pending (the old file is delete-pending)."""
        self._pending = _key(path)

    def rename_done(self) -> None:
        self._pending = None

    def pause_reads_of(self, path: Any) -> None:
        self._pause = _key(path)
        self._gate.clear()

    def release_reads(self) -> None:
        self._gate.set()

    def _maybe_pause(self, key: str) -> None:
        if self._pause == key:
            self._pause = None  # once
            self.reading.set()
            assert self._gate.wait(30), "the test never released the paused reader"
