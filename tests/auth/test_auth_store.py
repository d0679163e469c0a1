"""The credential store: location, permissions, atomic writes, locking, corruption, bindings."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap

import pytest

from mcpsync.auth.store import CredentialStore, default_store_path
from mcpsync.errors import CredentialStoreError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")


def test_default_location_follows_xdg_and_overrides(tmp_path, monkeypatch):
    monkeypatch.delenv("MCPSYNC_AUTH_FILE", raising=False)
    monkeypatch.delenv("MCPSYNC_DATA_DIR", raising=False)
    if sys.platform.startswith("linux"):
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
        assert default_store_path() == str(tmp_path / "xdg" / "mcpsync" / "mcp-auth.json")
    monkeypatch.setenv("MCPSYNC_DATA_DIR", str(tmp_path / "d"))
    assert default_store_path() == str(tmp_path / "d" / "mcp-auth.json")
    monkeypatch.setenv("MCPSYNC_AUTH_FILE", str(tmp_path / "f.json"))
    assert default_store_path() == str(tmp_path / "f.json")
    assert CredentialStore().path == str(tmp_path / "f.json")
    assert CredentialStore(str(tmp_path / "arg.json")).path == str(tmp_path / "arg.json")


@posix_only
def test_created_0600_in_0700_dir_even_with_permissive_umask(tmp_path):
    path = tmp_path / "sub" / "mcp-auth.json"
    old = os.umask(0)
    try:
        store = CredentialStore(str(path))
        store.update_tokens("s", {"accessToken": "AT"}, "https://x/mcp")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    # no temp file left behind
    assert sorted(p.name for p in path.parent.iterdir() if not p.name.endswith(".lock")) == ["mcp-auth.json"]


def test_operations_and_url_binding(tmp_path):
    store = CredentialStore(str(tmp_path / "a.json"))
    url = "https://mcp.example.com/mcp"
    store.update_tokens("s", {"accessToken": "AT", "refreshToken": "RT", "expiresAt": 5}, url)
    store.update_client_info("s", {"clientId": "cid", "redirectUri": "http://127.0.0.1:1/cb"}, url)
    store.update_code_verifier("s", "v" * 50)
    store.update_oauth_state("s", "st")
    entry = store.get_for_url("s", url)
    assert entry["tokens"]["accessToken"] == "AT"
    assert entry["clientInfo"]["clientId"] == "cid"
    assert entry["codeVerifier"] == "v" * 50 and entry["oauthState"] == "st"
    assert store.get_for_url("s", "https://other.example.com/mcp") is None
    store.clear_code_verifier("s")
    store.clear_oauth_state("s")
    entry = store.get("s")
    assert "codeVerifier" not in entry and "oauthState" not in entry
    # a different URL for the same name drops the old credentials
    store.update_client_info("s", {"clientId": "new"}, "https://other.example.com/mcp")
    entry = store.get("s")
    assert "tokens" not in entry and entry["serverUrl"] == "https://other.example.com/mcp"
    assert store.remove("s") is True and store.get("s") is None
    assert store.remove("s") is False


def test_results_are_copies(tmp_path):
    store = CredentialStore(str(tmp_path / "a.json"))
    store.update_tokens("s", {"accessToken": "AT"}, "u")
    entry = store.get("s")
    entry["tokens"]["accessToken"] = "changed"
    assert store.get("s")["tokens"]["accessToken"] == "AT"


def test_corrupt_file_is_kept_aside_and_reported(tmp_path):
    path = tmp_path / "mcp-auth.json"
    path.write_text("{not json")
    store = CredentialStore(str(path))
    with pytest.raises(CredentialStoreError) as info:
        store.get("s")
    backups = [p for p in tmp_path.iterdir() if ".corrupt-" in p.name]
    assert len(backups) == 1 and backups[0].read_text() == "{not json"
    assert str(backups[0]) in str(info.value)
    # the store works again afterwards
    store.update_tokens("s", {"accessToken": "AT"}, "u")
    assert store.get("s")["tokens"]["accessToken"] == "AT"


def test_failed_update_writes_nothing(tmp_path):
    store = CredentialStore(str(tmp_path / "a.json"))
    store.update_tokens("s", {"accessToken": "AT"}, "u")

    def boom(entry):
        entry["tokens"] = {"accessToken": "half"}
        raise RuntimeError("x")

    with pytest.raises(RuntimeError):
        store.update("s", boom)
    assert store.get("s")["tokens"]["accessToken"] == "AT"


def test_lock_timeout_is_a_store_error_and_reads_never_wait(tmp_path):
    path = str(tmp_path / "a.json")
    store = CredentialStore(path, lock_timeout=0.2)
    store.update_tokens("s", {"accessToken": "AT"}, "u")
    script = textwrap.dedent(
        """
        import sys, filelock
        lock = filelock.FileLock(sys.argv[1] + ".lock")
        lock.acquire()
        print("locked", flush=True)
        sys.stdin.readline()
        lock.release()
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline().strip() == "locked"
        with pytest.raises(CredentialStoreError, match="timed out"):
            store.update_tokens("s", {"accessToken": "new"}, "u")
        assert store.get("s")["tokens"]["accessToken"] == "AT"  # a read needs no lock
    finally:
        proc.stdin.write("\n")
        proc.stdin.close()
        proc.wait(10)
        proc.stdout.close()


_WORKER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[3])
    from mcpsync.auth.store import CredentialStore
    store = CredentialStore(sys.argv[1])
    me = sys.argv[2]
    for i in range(100):
        def bump(entry, i=i):
            entry["count"] = entry.get("count", 0) + 1
            entry.setdefault("seen", []).append("%s-%d" % (me, i))
        store.update("shared", bump)
        store.update("p" + me, lambda e, i=i: e.__setitem__("last", i))
    """
)


@posix_only
def test_eight_processes_hundred_updates_lose_nothing(tmp_path):
    path = str(tmp_path / "mcp-auth.json")
    procs = [subprocess.Popen([sys.executable, "-c", _WORKER, path, str(n), ROOT]) for n in range(8)]
    for proc in procs:
        assert proc.wait(120) == 0
    with open(path) as fh:
        data = json.load(fh)  # valid JSON
    shared = data["servers"]["shared"]
    assert shared["count"] == 800
    assert len(set(shared["seen"])) == 800
    for n in range(8):
        assert data["servers"]["p%d" % n]["last"] == 99
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_callbacks_relay_records(tmp_path):
    store = CredentialStore(str(tmp_path / "a.json"))
    store.update_oauth_state("s", "abc")
    assert store.find_state_owner("abc") == "s"
    assert store.find_state_owner("zzz") is None
    store.record_callback("abc", {"code": "C", "state": "abc", "junk": "x"})
    assert store.take_callback("abc") == {"code": "C", "state": "abc"}
    assert store.take_callback("abc") is None


def test_repr_shows_no_secrets(tmp_path):
    store = CredentialStore(str(tmp_path / "a.json"))
    store.update_tokens("s", {"accessToken": "SECRET-AT"}, "u")
    assert "SECRET" not in repr(store)


def test_nested_locks_of_two_store_objects_do_not_deadlock(tmp_path):
    a = CredentialStore(str(tmp_path / "a.json"), lock_timeout=5)
    b = CredentialStore(str(tmp_path / "a.json"), lock_timeout=5)
    with a.locked():
        b.update_tokens("s", {"accessToken": "AT"}, "u")
        with b.locked():
            assert a.get("s")["tokens"]["accessToken"] == "AT"
