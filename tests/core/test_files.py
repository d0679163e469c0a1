"""mcpsync._files.write_atomically: the one writer of the package's private files."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from mcpsync._files import record_number, url_file, write_atomically


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.skipif(os.name == "nt", reason="POSIX permission bits")
def test_a_new_file_is_private_and_whole(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    write_atomically(target, b'{"a": 1}')
    assert target.read_bytes() == b'{"a": 1}' and _mode(target) == 0o600
    write_atomically(target, b"x" * 100_000, durable=True)
    assert target.read_bytes() == b"x" * 100_000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]  # no temp file left


@pytest.mark.skipif(os.name == "nt", reason="POSIX permission bits")
def test_the_asked_mode_is_applied_even_to_a_named_temp_file_that_exists(tmp_path: Path) -> None:
    target, temp = tmp_path / "config.json", tmp_path / ".config.json.1.tmp"
    temp.write_bytes(b"stale secret")
    os.chmod(temp, 0o666)
    write_atomically(target, b"{}", mode=0o640, temp=temp)
    assert target.read_bytes() == b"{}" and _mode(target) == 0o640 and not temp.exists()


def test_a_failed_replace_leaves_the_target_unchanged_and_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "a-directory"
    target.mkdir()
    (target / "keep").write_text("kept")
    with pytest.raises(OSError):
        write_atomically(target, b"secret")  # os.replace cannot put a file over a non-empty directory
    assert (target / "keep").read_text() == "kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-directory"]


@pytest.mark.skipif(not hasattr(os, "O_NOFOLLOW"), reason="O_NOFOLLOW")
def test_a_named_temp_file_that_is_a_symlink_is_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("untouched")
    temp = tmp_path / ".t.tmp"
    temp.symlink_to(victim)
    with pytest.raises(OSError):
        write_atomically(tmp_path / "t", b"secret", temp=temp)
    assert victim.read_text() == "untouched" and not (tmp_path / "t").exists()


def test_url_keyed_caches_clear_their_entries_only(tmp_path: Any) -> None:
    """The Server Card and registry caches share one clear(): every entry goes, other files stay."""
    from mcpsync.cards.cache import CardCache
    from mcpsync.registry.cache import DiskCache

    for cache in (CardCache(str(tmp_path / "cards")), DiskCache(str(tmp_path / "registry"))):
        assert cache.clear() == 0  # no directory yet
        for url in ("https://a.example/x", "https://b.example/y"):
            os.makedirs(cache.directory, exist_ok=True)
            with open(url_file(cache.directory, url), "w") as fh:
                fh.write("{}")
        keep = os.path.join(cache.directory, "notes.txt")
        with open(keep, "w") as fh:
            fh.write("x")
        assert cache.clear() == 2
        assert os.listdir(cache.directory) == ["notes.txt"]


def test_the_cache_root_follows_platformdirs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """cache_root() (the shared user_dir() with the cache conventions) is where platformdirs puts caches."""
    pytest.importorskip("platformdirs")
    import sys

    from platformdirs.macos import MacOS
    from platformdirs.unix import Unix

    from mcpsync._files import cache_root

    monkeypatch.delenv("MCPSYNC_CACHE_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    for xdg in ("", str(tmp_path / "xdg")):
        monkeypatch.setenv("XDG_CACHE_HOME", xdg)
        monkeypatch.setattr(sys, "platform", "linux")
        assert cache_root() == Unix(appname="mcpsync", appauthor=False).user_cache_dir
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setattr(sys, "platform", "darwin")
    assert cache_root() == MacOS(appname="mcpsync", appauthor=False).user_cache_dir
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "Local"))
    assert cache_root() == os.path.join(str(tmp_path / "Local"), "mcpsync", "Cache")
    monkeypatch.setenv("MCPSYNC_CACHE_DIR", "~/elsewhere")
    assert cache_root() == str(tmp_path / "elsewhere")


@pytest.mark.parametrize(
    "value, expected",
    [(3, 3.0), (2.5, 2.5), (0, 0.0), (-1, -1.0), (True, None), (False, None), (float("nan"), None), ("3", None),
     (None, None), ([1], None)],
)
def test_record_number_takes_only_json_numbers(value: Any, expected: Any) -> None:
    """A cached record's number field: an int or float becomes a float; a bool, NaN or anything else is None
    (the record reads as damaged, so absent)."""
    got = record_number(value)
    assert got == expected and (got is None or type(got) is float)
