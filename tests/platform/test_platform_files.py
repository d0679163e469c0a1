"""Windows file semantics for the credential store, the warm cache and the registry cache, imposed here.

On Windows a rename over a file that a reader holds open raises ``PermissionError``. tests/peers/winsemantics.py
imposes that rule on this machine with real open file handles; a writer must wait for the reader (bounded)
instead of failing, and a reader stopped mid-read (the racy point, held by an event) still sees one whole
version.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any, Callable, Dict, List, Tuple

import pytest

from mcpsync import _files
from mcpsync.auth.store import CredentialStore
from mcpsync.cards.cache import CardCache
from mcpsync.warm.cache import WarmCache
from mcpsync.registry.cache import DiskCache

from tests.peers.winsemantics import WindowsReplace

# (write v, read -> value or None, path of the file) per file kind
Kind = Tuple[Callable[[int], None], Callable[[], Any], str]


def _store(tmp: str) -> Kind:
    store = CredentialStore(os.path.join(tmp, "mcp-auth.json"), lock_timeout=30)

    def write(v: int) -> None:
        store.update("srv", lambda e: e.update(requestedScope="v%d" % v))

    def read() -> Any:
        entry = store.get("srv")
        return entry and entry.get("requestedScope")

    return write, read, store.path


def _warm(tmp: str) -> Kind:
    cache = WarmCache(os.path.join(tmp, "warm"))
    key = WarmCache.key(("srv",))

    def write(v: int) -> None:
        cache.save(key, {"era": "modern", "protocolVersion": "v%d" % v})

    def read() -> Any:
        entry = cache.load(key)
        return entry and entry["protocolVersion"]

    return write, read, str(cache._path(key))  # noqa: SLF001


def _registry(tmp: str) -> Kind:
    cache = DiskCache(os.path.join(tmp, "registry"))
    url = "https://registry.example/v0/servers"

    def write(v: int) -> None:
        cache.put(url, "v%d" % v, None)

    def read() -> Any:
        answer = cache.get(url)
        return answer and answer.body

    return write, read, _files.url_file(cache.directory, url)


def _cards(tmp: str) -> Kind:
    cache = CardCache(os.path.join(tmp, "cards"))
    url = "https://cards.example/.well-known/mcp/server-card.json"

    def write(v: int) -> None:
        cache.put(url, b"v%d" % v, None, "application/json", 60.0)

    def read() -> Any:
        doc = cache.get(url)
        return doc and doc.body.decode()

    return write, read, _files.url_file(cache.directory, url)


KINDS: Dict[str, Callable[[str], Kind]] = {
    "credential-store": _store,
    "warm-cache": _warm,
    "registry-cache": _registry,
    "card-cache": _cards,
}


def _in_thread(fn: Callable[[], Any]) -> Tuple[threading.Thread, Dict[str, Any]]:
    box: Dict[str, Any] = {}

    def run() -> None:
        try:
            box["result"] = fn()
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            box["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, box


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_writer_waits_for_a_reader_that_holds_the_file_open(kind: str, tmp_path: Any, monkeypatch: Any) -> None:
    write, read, path = KINDS[kind](str(tmp_path))
    write(1)
    shim = WindowsReplace(monkeypatch, tmp_path)
    handle = shim.hold(path)  # another process's reader has the file open
    t, box = _in_thread(lambda: write(2))
    assert shim.refused.wait(30), "the writer never tried to rename"
    assert t.is_alive() and "error" not in box  # refused once: it waits rather than fails
    handle.close()
    t.join(30)
    assert not t.is_alive() and "error" not in box, box.get("error")
    assert read() == "v2"
    assert not [n for n in os.listdir(os.path.dirname(path)) if n.endswith(".tmp")]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_reader_stopped_mid_read_sees_one_whole_version_and_the_writer_completes(
    kind: str, tmp_path: Any, monkeypatch: Any
) -> None:
    write, read, path = KINDS[kind](str(tmp_path))
    write(1)
    shim = WindowsReplace(monkeypatch, tmp_path)
    shim.pause_reads_of(path)
    reader, rbox = _in_thread(read)  # the library's own lock-free read, stopped with the file open
    assert shim.reading.wait(30)
    writer, wbox = _in_thread(lambda: write(2))
    assert shim.refused.wait(30)
    shim.release_reads()
    reader.join(30)
    writer.join(30)
    assert "error" not in rbox and "error" not in wbox, (rbox, wbox)
    assert rbox["result"] == "v1"  # the version that was there when it opened the file, whole
    assert read() == "v2"


@pytest.mark.parametrize("kind", ["credential-store", "registry-cache", "card-cache"])
def test_a_reader_that_meets_a_pending_rename_retries_and_reads_the_whole_file(
    kind: str, tmp_path: Any, monkeypatch: Any
) -> None:
    write, read, path = KINDS[kind](str(tmp_path))
    write(1)
    shim = WindowsReplace(monkeypatch, tmp_path)
    shim.rename_pending(path)
    reader, box = _in_thread(read)
    # the rename stays pending until the reader was refused twice (it retried) or gave up
    while not shim.open_refused_twice.wait(0.01) and reader.is_alive():
        pass
    shim.rename_done()
    reader.join(30)
    assert box == {"result": "v1"}


def test_replace_gives_up_after_its_bound_and_raises_other_errors_at_once(tmp_path: Any, monkeypatch: Any) -> None:
    calls: List[float] = []

    def refuse(src: Any, dst: Any) -> None:
        calls.append(time.monotonic())
        raise PermissionError(13, "in use", dst)

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(PermissionError):
        _files.replace(str(tmp_path / "a"), str(tmp_path / "b"), patience=0.05)
    assert len(calls) >= 2  # retried, then gave up

    def missing(src: Any, dst: Any) -> None:
        calls.append(time.monotonic())
        raise FileNotFoundError(2, "no such file", src)

    calls.clear()
    monkeypatch.setattr(os, "replace", missing)
    with pytest.raises(FileNotFoundError):
        _files.replace(str(tmp_path / "a"), str(tmp_path / "b"), patience=5)
    assert len(calls) == 1


def test_write_atomically_leaves_no_temp_file_when_the_reader_never_lets_go(tmp_path: Any, monkeypatch: Any) -> None:
    target = tmp_path / "f.json"
    target.write_bytes(b"old")
    shim = WindowsReplace(monkeypatch, tmp_path)
    monkeypatch.setattr(_files, "REPLACE_PATIENCE", 0.05)
    monkeypatch.setattr(_files.replace, "__defaults__", None)
    monkeypatch.setattr(_files.replace, "__kwdefaults__", {"patience": 0.05})
    with shim.hold(target):
        with pytest.raises(PermissionError):
            _files.write_atomically(target, b"new")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.json"]
