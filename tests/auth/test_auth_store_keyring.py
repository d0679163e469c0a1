"""The keyring credential store with a real in-process keyring backend (keyring.set_keyring), and
store selection with open_store / MCPSYNC_AUTH_STORE."""

from __future__ import annotations

import json
import logging
import threading
from typing import Any, Dict, Iterator, Optional, Tuple

import pytest

from mcpsync.auth import CredentialBackend, CredentialStore, OAuthManager, open_store
from mcpsync.errors import ConfigError, CredentialStoreError
from tests.peers.authserver import AuthTestServer
from tests.peers.redisserver import optional_module

keyring = optional_module("keyring", "keyring")
from keyring.backend import KeyringBackend  # noqa: E402
from keyring.errors import KeyringLocked, PasswordDeleteError  # noqa: E402

from mcpsync.auth.store_keyring import KeyringCredentialStore  # noqa: E402


class MemoryKeyring(KeyringBackend):
    """A complete keyring backend keeping passwords in this process (like an unlocked OS keychain)."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.items: Dict[Tuple[str, str], str] = {}
        self.locked = False
        self.guard = threading.Lock()

    def _check(self) -> None:
        if self.locked:
            raise KeyringLocked("the keychain is locked")

    def get_password(self, service: str, username: str) -> Optional[str]:
        self._check()
        with self.guard:
            return self.items.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self._check()
        with self.guard:
            self.items[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self._check()
        with self.guard:
            if (service, username) not in self.items:
                raise PasswordDeleteError("no such item")
            del self.items[(service, username)]


@pytest.fixture
def ring(tmp_path: Any) -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture
def kstore(ring: MemoryKeyring, tmp_path: Any) -> KeyringCredentialStore:
    return KeyringCredentialStore(service="mcpsync-test", lock_dir=str(tmp_path))


def test_entries_index_callbacks_and_url_binding(kstore: KeyringCredentialStore, ring: MemoryKeyring) -> None:
    assert isinstance(kstore, CredentialBackend)
    url = "https://mcp.example.com/mcp"
    kstore.update_tokens("s", {"accessToken": "AT", "refreshToken": "RT"}, url)
    kstore.update_client_info("s", {"clientId": "cid"}, url)
    kstore.update_oauth_state("t", "st-1")
    assert kstore.get_for_url("s", url)["tokens"]["accessToken"] == "AT"
    assert kstore.get_for_url("s", "https://other/mcp") is None
    assert list(kstore.names()) == ["s", "t"] and kstore.find_state_owner("st-1") == "t"
    assert json.loads(ring.items[("mcpsync-test", "index")]) == ["s", "t"]
    kstore.record_callback("st-1", {"code": "C", "junk": "x"})
    assert kstore.take_callback("st-1") == {"code": "C"} and kstore.take_callback("st-1") is None
    assert kstore.remove("s") is True and kstore.remove("s") is False
    assert list(kstore.names()) == ["t"]
    assert "AT" not in repr(kstore) and repr(kstore) == "KeyringCredentialStore('mcpsync-test')"


def test_unreadable_item_is_kept_aside_and_ill_typed_reads_as_absent(
    kstore: KeyringCredentialStore, ring: MemoryKeyring
) -> None:
    ring.items[("mcpsync-test", "entry:s")] = "{not json"
    ring.items[("mcpsync-test", "index")] = json.dumps(["s", "t", 5])
    ring.items[("mcpsync-test", "entry:t")] = json.dumps({"serverUrl": "http://127.0.0.1:9/mcp", "tokens": ["x"]})
    with pytest.raises(CredentialStoreError) as info:
        kstore.get("s")
    kept = [k for (svc, k) in ring.items if k.startswith("corrupt:entry:s:")]
    assert len(kept) == 1 and ring.items[("mcpsync-test", kept[0])] == "{not json"
    assert kept[0] in str(info.value)
    assert kstore.get("s") is None
    assert kstore.all() == {"t": {"serverUrl": "http://127.0.0.1:9/mcp"}}
    with OAuthManager(store=kstore) as oauth:
        oauth.add_server("t", "http://127.0.0.1:9/mcp")
        assert oauth.has_stored_tokens("t") is False
        assert oauth.get_auth_status("t") == "not_authenticated"
        assert oauth.get_access_token("t") is None
    kstore.update_tokens("s", {"accessToken": "AT"}, "u")
    assert kstore.get("s")["tokens"] == {"accessToken": "AT"}


def test_keyring_failures_are_store_errors(kstore: KeyringCredentialStore, ring: MemoryKeyring) -> None:
    ring.locked = True
    with pytest.raises(CredentialStoreError, match="KeyringLocked"):
        kstore.get("s")
    with pytest.raises(CredentialStoreError):
        kstore.update_tokens("s", {"accessToken": "AT"}, "u")
    ring.locked = False
    kstore.update_tokens("s", {"accessToken": "AT"}, "u")


def test_concurrent_updates_lose_nothing(kstore: KeyringCredentialStore) -> None:
    kstore.update("n", lambda e: e.__setitem__("count", 0))
    start = threading.Barrier(8)

    def work() -> None:
        start.wait(30)
        for _ in range(20):
            kstore.update("n", lambda e: e.__setitem__("count", e["count"] + 1))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert kstore.get("n")["count"] == 160


def test_oauth_refresh_through_the_keyring(
    kstore: KeyringCredentialStore, ring: MemoryKeyring, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with AuthTestServer() as srv:
        srv.add_client("kc", redirect_uris=["http://127.0.0.1:1/cb"], method="none")
        at = srv.issue_access_token(["read"])
        rt = srv.issue_refresh_token("kc", ["read"])
        kstore.update(
            "s",
            lambda e: e.update(
                serverUrl=srv.server_url,
                issuer=srv.issuer,
                resource=srv.server_url,
                tokenEndpoint=srv.metadata["token_endpoint"],
                tokens={"accessToken": at, "refreshToken": rt, "expiresAt": 1},
                tokenClient={"clientId": "kc", "source": "config", "method": "none"},
            ),
        )
        start = threading.Barrier(6)
        got = []
        with OAuthManager(store=kstore) as oauth:
            oauth.add_server("s", srv.server_url, {"clientId": "kc", "tokenEndpointAuthMethod": "none"})

            def ask() -> None:
                start.wait(30)
                got.append(oauth.get_access_token("s"))

            threads = [threading.Thread(target=ask) for _ in range(6)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
        outcomes = [o for g, o in srv.token_outcomes if g == "refresh_token"]
    assert outcomes == ["ok"]
    stored = kstore.get("s")["tokens"]
    assert set(got) == {stored["accessToken"]} and stored["refreshToken"] != rt
    assert at not in caplog.text and rt not in caplog.text and stored["accessToken"] not in caplog.text


# ---------------------------------------------------------------------- choosing a store


def test_open_store_and_environment(tmp_path: Any, monkeypatch: pytest.MonkeyPatch, ring: MemoryKeyring) -> None:
    monkeypatch.setenv("MCPSYNC_AUTH_FILE", str(tmp_path / "f.json"))
    monkeypatch.delenv("MCPSYNC_AUTH_STORE", raising=False)
    default = open_store()
    assert isinstance(default, CredentialStore) and default.location == str(tmp_path / "f.json")
    assert open_store(str(tmp_path / "x.json")).location == str(tmp_path / "x.json")
    assert open_store("keyring").location == "keyring:mcpsync"
    assert open_store("keyring:other").location == "keyring:other"
    monkeypatch.setenv("MCPSYNC_AUTH_STORE", "keyring:from-env")
    with OAuthManager() as oauth:
        assert oauth.store.location == "keyring:from-env"
        assert "keyring:from-env" in repr(oauth)
    with pytest.raises(ConfigError):
        open_store(5)  # type: ignore[arg-type]
    pytest.importorskip("redis")
    redis_store = open_store("redis://:pw@127.0.0.1:9/3#app1")
    assert redis_store.location == "redis://127.0.0.1:9/3#app1"
