"""The Redis credential store against a real redis-server (started by the fixture, no persistence).

The fleet test: 8 processes x 3 rounds, all asking for a token at the same moment (held at a
multiprocessing Barrier) from an authorization server that rotates refresh tokens and answers
``invalid_grant`` to a reused one, give exactly one refresh per round and no ``invalid_grant``.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import threading
import time
from typing import Any, Dict, Iterator, List, Tuple

import pytest

from mcpsync.auth import OAuthManager
from mcpsync.errors import ConfigError, CredentialStoreError
from tests.peers.authserver import AuthTestServer
from tests.peers.redisserver import PASSWORD, RedisServer, optional_module, start_redis

optional_module("redis", "redis")
from mcpsync.auth.store_redis import RedisCredentialStore  # noqa: E402

CLIENT_ID = "fleet-client"
OAUTH = {"clientId": CLIENT_ID, "tokenEndpointAuthMethod": "none"}


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    yield from start_redis()


@pytest.fixture
def rstore(redis_server: RedisServer) -> Iterator[RedisCredentialStore]:
    redis_server.flush()
    store = RedisCredentialStore(redis_server.url, lock_lease=30, lock_timeout=30)
    yield store
    store.close()


@pytest.fixture
def authsrv() -> Iterator[AuthTestServer]:
    with AuthTestServer() as server:
        server.add_client(CLIENT_ID, redirect_uris=["http://127.0.0.1:1/cb"], method="none")
        yield server


def seed(srv: AuthTestServer, store: Any, name: str = "fleet", *, expired: bool = True) -> Tuple[str, str]:
    """Store tokens the auth server really issued (expired, so the next use refreshes)."""
    at = srv.issue_access_token(["read"])
    rt = srv.issue_refresh_token(CLIENT_ID, ["read"])

    def fill(e: Dict[str, Any]) -> None:
        e.update(
            serverUrl=srv.server_url,
            issuer=srv.issuer,
            resource=srv.server_url,
            tokenEndpoint=srv.metadata["token_endpoint"],
            tokens={
                "accessToken": at,
                "refreshToken": rt,
                "expiresAt": int(time.time()) + (-10 if expired else 3600),
                "tokenType": "Bearer",
            },
            tokenClient={"clientId": CLIENT_ID, "source": "config", "method": "none"},
        )

    store.update(name, fill)
    return at, rt


def expire(store: Any, name: str = "fleet") -> None:
    def fn(e: Dict[str, Any]) -> None:
        e["tokens"]["expiresAt"] = int(time.time()) - 10

    store.update(name, fn)


def refreshes(srv: AuthTestServer) -> List[str]:
    with srv.lock:
        return [outcome for grant, outcome in srv.token_outcomes if grant == "refresh_token"]


# ---------------------------------------------------------------------- the store itself


def test_entries_callbacks_and_url_binding(rstore: RedisCredentialStore) -> None:
    url = "https://mcp.example.com/mcp"
    rstore.update_tokens("s", {"accessToken": "AT", "refreshToken": "RT", "expiresAt": 5}, url)
    rstore.update_client_info("s", {"clientId": "cid"}, url)
    assert rstore.get_for_url("s", url)["tokens"]["accessToken"] == "AT"
    assert rstore.get_for_url("s", "https://other.example.com/mcp") is None
    entry = rstore.get("s")
    entry["tokens"]["accessToken"] = "changed"  # results are copies
    assert rstore.get("s")["tokens"]["accessToken"] == "AT"
    rstore.update_client_info("s", {"clientId": "new"}, "https://other.example.com/mcp")
    assert "tokens" not in rstore.get("s")  # a new URL for the name drops the old credentials
    rstore.update_oauth_state("t", "st-1")
    assert rstore.find_state_owner("st-1") == "t" and list(rstore.names()) == ["s", "t"]
    rstore.record_callback("st-1", {"code": "C", "state": "st-1", "junk": "x"})
    assert rstore.take_callback("st-1") == {"code": "C", "state": "st-1"}
    assert rstore.take_callback("st-1") is None
    assert rstore.remove("s") is True and rstore.remove("s") is False and rstore.get("s") is None


def test_prefixes_isolate_stores(redis_server: RedisServer, rstore: RedisCredentialStore) -> None:
    other = RedisCredentialStore(redis_server.url, prefix="other*[app]")
    try:
        other.update_tokens("s", {"accessToken": "AT-other"}, "u")
        rstore.update_tokens("s", {"accessToken": "AT-main"}, "u")
        assert other.all() == {"s": other.get("s")} and other.get("s")["tokens"]["accessToken"] == "AT-other"
        assert rstore.get("s")["tokens"]["accessToken"] == "AT-main"
    finally:
        other.close()


def test_secrets_never_in_repr_location_errors_or_logs(
    redis_server: RedisServer, rstore: RedisCredentialStore, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    rstore.update_tokens("s", {"accessToken": "SECRET-AT", "refreshToken": "SECRET-RT"}, "u")
    rstore.get("s")
    with rstore.refresh_lock("s"):
        pass
    with OAuthManager(store=rstore) as oauth:
        oauth.add_server("s", "https://mcp.example.com/mcp")
        manager_repr = repr(oauth)
    for text in (repr(rstore), rstore.location, manager_repr):
        assert PASSWORD not in text and "SECRET" not in text
    assert rstore.location == "redis://127.0.0.1:%d/0#mcpsync" % redis_server.port
    # a wrong password / a dead server: a CredentialStoreError without the password
    for url in (
        "redis://:wrong-%s@127.0.0.1:%d/0" % (PASSWORD, redis_server.port),
        "redis://:%s@127.0.0.1:9/0" % PASSWORD,
    ):
        bad = RedisCredentialStore(url, socket_timeout=2)
        with pytest.raises(CredentialStoreError) as info:
            bad.get("s")
        assert PASSWORD not in str(info.value) and PASSWORD not in repr(bad)
        bad.close()
    assert "SECRET" not in caplog.text and PASSWORD not in caplog.text


def test_configuration_errors() -> None:
    with pytest.raises(ConfigError):
        RedisCredentialStore()
    with pytest.raises(ConfigError):
        RedisCredentialStore("redis://127.0.0.1:1/0", prefix="")
    with pytest.raises(ConfigError):
        RedisCredentialStore("http://not-redis/")


def test_unreadable_value_is_moved_aside_byte_identical(
    rstore: RedisCredentialStore, redis_server: RedisServer
) -> None:
    raw = redis_server.client()
    try:
        junk = b"\xff\xfe not json \x00"
        raw.set("mcpsync:entry:s", junk)
        rstore.update_tokens("good", {"accessToken": "AT"}, "u")
        with pytest.raises(CredentialStoreError) as info:
            rstore.get("s")
        backups = [k for k in raw.keys("mcpsync:corrupt:*")]
        assert len(backups) == 1 and raw.get(backups[0]) == junk
        assert backups[0].decode() in str(info.value)
        assert rstore.get("s") is None  # the entry goes on empty
        assert rstore.get("good")["tokens"]["accessToken"] == "AT"
        # ill-typed content reads as absent, and never raises AttributeError in the OAuth manager
        raw.set("mcpsync:entry:t", json.dumps({"serverUrl": "http://127.0.0.1:9/mcp", "tokens": "a string"}))
        assert rstore.get("t") == {"serverUrl": "http://127.0.0.1:9/mcp"}
        with OAuthManager(store=rstore) as oauth:
            oauth.add_server("t", "http://127.0.0.1:9/mcp")
            assert oauth.has_stored_tokens("t") is False
            assert oauth.get_auth_status("t") == "not_authenticated"
            assert oauth.get_access_token("t") is None
        # update of a corrupt value reports it the same way, then works
        raw.set("mcpsync:entry:u", b"{")
        with pytest.raises(CredentialStoreError, match="corrupt"):
            rstore.update_tokens("u", {"accessToken": "AT-u"}, "u")
        rstore.update_tokens("u", {"accessToken": "AT-u"}, "u")
        assert rstore.get("u")["tokens"]["accessToken"] == "AT-u"
    finally:
        raw.close()


def test_update_is_optimistic_and_loses_nothing(rstore: RedisCredentialStore, redis_server: RedisServer) -> None:
    """A writer held inside its update while another writer commits: the held one re-runs on the new value."""
    rstore.update("n", lambda e: e.__setitem__("count", 0))
    inside = threading.Event()
    release = threading.Event()
    runs: List[int] = []

    def slow(e: Dict[str, Any]) -> None:
        runs.append(e["count"])
        if len(runs) == 1:
            inside.set()
            assert release.wait(30)
        e["count"] += 1

    worker = threading.Thread(target=rstore.update, args=("n", slow))
    worker.start()
    assert inside.wait(30)
    rstore.update("n", lambda e: e.__setitem__("count", e["count"] + 10))  # commits while `slow` is held
    release.set()
    worker.join(30)
    assert runs == [0, 10]  # the first run's write was refused (WATCH), the second saw the new value
    assert rstore.get("n")["count"] == 11

    def bump(e: Dict[str, Any]) -> None:
        e["count"] += 1

    threads = [threading.Thread(target=lambda: [rstore.update("n", bump) for _ in range(25)]) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert rstore.get("n")["count"] == 11 + 200


def _hold_lock_and_crash(url: str, acquired: Any) -> None:
    store = RedisCredentialStore(url, lock_lease=1.0)
    lock = store.refresh_lock("fleet")
    lock.__enter__()
    acquired.set()
    os._exit(0)  # dies holding the lock: never released


def test_a_crashed_holders_lock_expires(redis_server: RedisServer, rstore: RedisCredentialStore) -> None:
    ctx = _mp()
    acquired = ctx.Event()
    proc = ctx.Process(target=_hold_lock_and_crash, args=(redis_server.url, acquired))
    proc.start()
    try:
        assert acquired.wait(60)
        proc.join(60)
        raw = redis_server.client()
        assert raw.exists("mcpsync:lock:fleet")  # still held by the dead process
        raw.close()
        impatient = RedisCredentialStore(redis_server.url, lock_timeout=0)
        with pytest.raises(CredentialStoreError, match="timed out"):
            with impatient.refresh_lock("fleet"):
                pass
        impatient.close()
        with rstore.refresh_lock("fleet"):  # waits out the 1 s lease (bounded by lock_timeout=30)
            pass
    finally:
        proc.join(10)
        proc.close()


def _mp() -> Any:
    """The fork context: children start at once and leave no resource-tracker process behind
    (they only use what they create after the fork)."""
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("needs os.fork")
    return multiprocessing.get_context("fork")


def test_fuzz_arbitrary_values_in_redis(redis_server: RedisServer, rstore: RedisCredentialStore) -> None:
    """hypothesis: any bytes or JSON document stored as an entry: only CredentialStoreError escapes,
    an unreadable value is kept byte-identical, the entry stays usable and the valid one beside it reads."""
    hypothesis = optional_module("hypothesis", "test")
    from hypothesis import strategies as st

    from tests.conftest import fuzz_examples
    from tests.auth.test_auth_store_fuzz import GOOD, junk_entries

    raw = redis_server.client()
    good = dict(GOOD)
    rstore.update("good", lambda e: e.update(good))
    values = st.binary(max_size=200) | junk_entries.map(lambda v: json.dumps(v).encode())

    @hypothesis.settings(deadline=None, max_examples=fuzz_examples(1000, 50))
    @hypothesis.given(values)
    def prop(value: bytes) -> None:
        for key in raw.keys("mcpsync:corrupt:*"):
            raw.delete(key)
        raw.set("mcpsync:entry:junk", value)
        for op in (
            lambda: rstore.get("junk"),
            lambda: rstore.all(),
            lambda: rstore.get_for_url("junk", GOOD["serverUrl"]),
            lambda: rstore.update_client_info("junk", {"clientId": "c"}, GOOD["serverUrl"]),
        ):
            try:
                op()
            except CredentialStoreError:
                pass
        for key in raw.keys("mcpsync:corrupt:*"):
            assert raw.get(key) == value
        rstore.update_tokens("junk", {"accessToken": "AT-fresh"}, GOOD["serverUrl"])
        assert rstore.get("junk")["tokens"] == {"accessToken": "AT-fresh"}
        assert rstore.get("good") == good

    try:
        prop()
    finally:
        raw.close()


# ---------------------------------------------------------------------- OAuth refresh through Redis


def test_refresh_goes_through_redis_and_newer_tokens_are_never_overwritten(
    redis_server: RedisServer, authsrv: AuthTestServer
) -> None:
    """Host A's lease runs out while its token request hangs; host B refreshes; A's late answer loses."""
    authsrv.reject_reused_refresh = False  # let A's late request succeed, to test the write ordering
    store_a = RedisCredentialStore(redis_server.url, lock_lease=1.0, lock_timeout=30)
    store_b = RedisCredentialStore(redis_server.url, lock_lease=30, lock_timeout=30)
    redis_server.flush()
    _at, rt = seed(authsrv, store_a)
    a_inside = threading.Event()
    release_a = threading.Event()
    calls: List[str] = []

    def hook(form: Dict[str, str]) -> None:
        calls.append(form.get("refresh_token", ""))
        if len(calls) == 1:  # A's request: hold it on the server
            a_inside.set()
            assert release_a.wait(30)

    authsrv.token_hook = hook
    results: Dict[str, Any] = {}
    with OAuthManager(store=store_a) as host_a, OAuthManager(store=store_b) as host_b:
        host_a.add_server("fleet", authsrv.server_url, OAUTH)
        host_b.add_server("fleet", authsrv.server_url, OAUTH)
        thread_a = threading.Thread(target=lambda: results.update(a=host_a.get_access_token("fleet")))
        thread_a.start()
        assert a_inside.wait(30)
        results["b"] = host_b.get_access_token("fleet")  # waits for A's lease to run out, then refreshes
        stored_after_b = store_b.get("fleet")["tokens"]
        release_a.set()
        thread_a.join(30)
    assert calls == [rt, rt]  # both refreshed from the same token
    assert stored_after_b["accessToken"] == results["b"]
    final = store_b.get("fleet")["tokens"]
    assert final == stored_after_b  # A's late tokens did not overwrite B's
    assert results["a"] == results["b"]  # A adopts the stored tokens
    store_a.close()
    store_b.close()


def _fleet_worker(url: str, server_url: str, rounds: int, start: Any, done: Any, results: Any) -> None:
    store = RedisCredentialStore(url, lock_lease=30, lock_timeout=60)
    with OAuthManager(store=store, http_timeout=30) as oauth:
        oauth.add_server("fleet", server_url, OAUTH)
        for r in range(rounds):
            start.wait(120)  # the racy point: every process asks for a token at once
            try:
                results.put((os.getpid(), r, oauth.get_access_token("fleet"), None))
            except Exception as exc:  # noqa: BLE001 - reported to the parent
                results.put((os.getpid(), r, None, repr(exc)))
            done.wait(120)
    store.close()


def test_eight_processes_three_rounds_one_refresh_each_no_invalid_grant(
    redis_server: RedisServer, rstore: RedisCredentialStore, authsrv: AuthTestServer
) -> None:
    procs_n, rounds = 8, 3
    seed(authsrv, rstore)
    ctx = _mp()
    start = ctx.Barrier(procs_n + 1)
    done = ctx.Barrier(procs_n + 1)
    results = ctx.Queue()
    procs = [
        ctx.Process(target=_fleet_worker, args=(redis_server.url, authsrv.server_url, rounds, start, done, results))
        for _ in range(procs_n)
    ]
    for p in procs:
        p.start()
    try:
        for r in range(rounds):
            if r:
                expire(rstore)
            before = len(refreshes(authsrv))
            start.wait(120)
            done.wait(300)
            got = [results.get(timeout=60) for _ in range(procs_n)]
            assert [e for *_rest, e in got if e] == []
            stored = rstore.get("fleet")["tokens"]
            assert {token for _pid, _r, token, _e in got} == {stored["accessToken"]}
            this_round = refreshes(authsrv)[before:]
            assert this_round == ["ok"], "round %d: %s" % (r, this_round)
        assert "invalid_grant" not in refreshes(authsrv)
        assert len(refreshes(authsrv)) == rounds
    finally:
        start.abort()  # a failed round must not leave workers waiting
        done.abort()
        for p in procs:
            p.join(60)
            if p.is_alive():
                p.kill()
                p.join(10)
            p.close()
        results.close()
        results.join_thread()


def test_cli_uses_the_store_named_by_the_environment(redis_server: RedisServer, rstore: RedisCredentialStore) -> None:
    import subprocess
    import sys

    rstore.update_tokens("remote", {"accessToken": "SECRET-AT", "expiresAt": 4102444800}, "https://mcp.example.com/mcp")
    env = dict(os.environ, MCPSYNC_AUTH_STORE=redis_server.url)
    out = subprocess.run(
        [sys.executable, "-m", "mcpsync", "auth", "status", "--json"],
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [
        {"server": "remote", "status": "authenticated", "url": "https://mcp.example.com/mcp"}
    ]
    out = subprocess.run(
        [sys.executable, "-m", "mcpsync", "auth", "logout", "remote", "--auth-file", redis_server.url],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 0 and rstore.get("remote") is None, out.stderr
    assert "SECRET" not in out.stdout + out.stderr and PASSWORD not in out.stdout + out.stderr


def test_entries_are_bound_to_server_url_and_issuer(rstore: RedisCredentialStore, authsrv: AuthTestServer) -> None:
    seed(authsrv, rstore, expired=False)
    with OAuthManager(store=rstore) as oauth:
        oauth.add_server("fleet", authsrv.server_url.replace("/mcp", "/other"), OAUTH)
        assert not oauth.has_stored_tokens("fleet")  # another URL under the same name: nothing is sent
        assert oauth.get_access_token("fleet") is None
        oauth.add_server("fleet", authsrv.server_url, OAUTH)
        assert oauth.has_stored_tokens("fleet")
        # the resource now names another authorization server: the old credentials are discarded
        rstore.update("fleet", lambda e: e.update(issuer="https://old-issuer.example"))
        oauth.ensure_client("fleet")
    entry = rstore.get("fleet")
    assert entry["issuer"] == authsrv.issuer and "tokens" not in entry and "tokenClient" not in entry
