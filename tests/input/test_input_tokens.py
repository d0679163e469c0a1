"""Signed InputRequired tokens: forged, expired, future-dated and replayed tokens are refused, each with its own
error, and a single-use token works once across threads, worker processes (a shared file) and hosts (Redis).

The paused calls come from the bundled example server (2026-07-28); the stores are real: a file under a real
file lock shared by real subprocesses, and a real redis-server (tests/peers/redisserver.py).
"""

from __future__ import annotations

import base64
import json
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator, List

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mcpsync
from mcpsync.input.deferred import InputRequired

from tests.conftest import server_cmd
from tests.peers.redisserver import RedisServer, start_redis

SECRET = "test-secret-not-a-credential"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def paused() -> InputRequired:
    """A real paused call: the example server's elicit tool asked for a form."""
    with mcpsync.connect(server_cmd("--era", "modern"), name="shop", extensions=[mcpsync.input.DeferInput()]) as c:
        with pytest.raises(mcpsync.input.InputRequired) as info:
            c.call_tool("elicit", {"message": "Confirm the order?"})
    return info.value


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    yield from start_redis()


def _body(token: str) -> Any:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def _resign(body: Any, secret: str = SECRET) -> str:
    """A token as someone holding ``secret`` would sign ``body`` (to build future-dated or id-less tokens)."""
    import hashlib
    import hmac

    payload = base64.urlsafe_b64encode(json.dumps(body).encode()).rstrip(b"=")
    sig = base64.urlsafe_b64encode(hmac.new(secret.encode(), payload, hashlib.sha256).digest()).rstrip(b"=")
    return "mcpsync-ir1.%s.%s" % (payload.decode(), sig.decode())


# --------------------------------------------------------------------------- forged, expired, future-dated


def test_each_dumps_mints_a_token_with_its_own_one_time_id(paused: InputRequired) -> None:
    a, b = paused.dumps(SECRET), paused.dumps(SECRET)
    assert a != b and _body(a)["once"] != _body(b)["once"]
    assert InputRequired.loads(a, SECRET).to_dict() == paused.to_dict()


def test_a_forged_token_is_reported_as_forged_not_as_expired(paused: InputRequired) -> None:
    token = paused.dumps(SECRET)
    for bad in (
        InputRequired.loads.__name__,  # not a token at all
        token.replace("mcpsync-ir1", "mcpsync-ir2"),
        paused.dumps("another secret"),
        token + "x",
        token[:-1],
        token.split(".")[0] + "." + token.split(".")[1] + ".!!" + token.split(".")[2],  # b64 decoding skips junk
    ):
        with pytest.raises(mcpsync.errors.InputForged) as info:
            InputRequired.loads(bad, SECRET, max_age=600)
        assert not isinstance(info.value, mcpsync.errors.InputTokenExpired)
        assert isinstance(info.value, mcpsync.errors.InputTokenError) and isinstance(info.value, mcpsync.ConfigError)
    with pytest.raises(mcpsync.errors.InputForged):
        InputRequired.loads(None, SECRET)  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_byte_change_is_refused_as_forged(paused: InputRequired, data: st.DataObject) -> None:
    token = paused.dumps(SECRET)
    kind = data.draw(st.sampled_from(["replace", "insert", "delete"]), label="kind")
    at = data.draw(st.integers(0, len(token) - (0 if kind == "insert" else 1)), label="at")
    if kind == "delete":
        changed = token[:at] + token[at + 1 :]
    else:
        char = data.draw(st.characters(min_codepoint=1, max_codepoint=0x2FF), label="char")
        if kind == "replace":
            if char == token[at]:
                char = "A" if token[at] != "A" else "B"
            changed = token[:at] + char + token[at + 1 :]
        else:
            changed = token[:at] + char + token[at:]
    assert changed != token
    with pytest.raises(mcpsync.errors.InputForged):
        InputRequired.loads(changed, SECRET, max_age=600)


def test_old_and_future_dated_tokens_fail_max_age(paused: InputRequired) -> None:
    with pytest.raises(mcpsync.errors.InputTokenExpired, match="older"):
        InputRequired.loads(paused.dumps(SECRET), SECRET, max_age=-1)
    body = _body(paused.dumps(SECRET))
    body["issuedAt"] = time.time() + 3600  # a token dated in the future would otherwise live for ever
    future = _resign(body)
    with pytest.raises(mcpsync.errors.InputTokenExpired, match="future"):
        InputRequired.loads(future, SECRET, max_age=600)
    body["issuedAt"] = time.time() + 2  # within the leeway for clock differences between hosts
    assert InputRequired.loads(_resign(body), SECRET, max_age=600).issued_at == body["issuedAt"]
    with pytest.raises(mcpsync.errors.InputTokenExpired):
        InputRequired.loads(_resign(body), SECRET, max_age=600, leeway=0)


def test_a_single_use_token_needs_max_age_and_a_one_time_id(paused: InputRequired) -> None:
    store = mcpsync.input.MemorySeenStore()
    with pytest.raises(mcpsync.ConfigError, match="max_age"):
        InputRequired.loads(paused.dumps(SECRET), SECRET, seen=store)
    body = _body(paused.dumps(SECRET))
    del body["once"]
    with pytest.raises(mcpsync.errors.InputTokenError, match="one-time id"):
        InputRequired.loads(_resign(body), SECRET, max_age=600, seen=store)


# --------------------------------------------------------------------------- single use


def test_memory_store_lets_one_of_many_racing_threads_through(paused: InputRequired) -> None:
    token = paused.dumps(SECRET)
    store = mcpsync.input.open_seen_store("memory")
    barrier = threading.Barrier(8)
    outcomes: List[str] = []
    lock = threading.Lock()

    def use() -> None:
        barrier.wait(10)  # every thread reaches the claim together
        try:
            InputRequired.loads(token, SECRET, max_age=600, seen=store)
            outcome = "ok"
        except mcpsync.errors.InputReplayed:
            outcome = "replayed"
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=use, name="test-claim-%d" % i) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(outcomes) == ["ok"] + ["replayed"] * 7
    # another token of the same question is another token: it works once too
    InputRequired.loads(paused.dumps(SECRET), SECRET, max_age=600, seen=store)


def test_memory_store_is_bounded_and_refuses_rather_than_forget() -> None:
    store = mcpsync.input.MemorySeenStore(maxsize=2)
    assert store.claim("a" * 20, time.time() + 60) and store.claim("b" * 20, time.time() + 60)
    with pytest.raises(mcpsync.InputSeenStoreError):
        store.claim("c" * 20, time.time() + 60)
    assert not store.claim("a" * 20, time.time() + 60)  # still remembered
    store2 = mcpsync.input.MemorySeenStore(maxsize=1)
    assert store2.claim("d" * 20, time.time() - 1)
    assert store2.claim("e" * 20, time.time() + 60)  # the expired id made room


_CLAIM = (
    "import sys, mcpsync\n"
    "store = mcpsync.input.open_seen_store(sys.argv[1])\n"
    "token = sys.stdin.read()\n"
    "try:\n"
    "    mcpsync.input.InputRequired.loads(token, %r, max_age=600, seen=store)\n"
    "    print('ok')\n"
    "except mcpsync.errors.InputReplayed:\n"
    "    print('replayed')\n" % SECRET
)


def _claim_in_processes(spec: str, token: str, count: int) -> List[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _CLAIM, spec],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(count)
    ]
    out = []
    for p in procs:
        stdout, stderr = p.communicate(token, timeout=120)
        assert p.returncode == 0, stderr
        out.append(stdout.strip())
    return sorted(out)


def test_file_store_holds_across_worker_processes(paused: InputRequired, tmp_path: Path) -> None:
    path = tmp_path / "state" / "seen.json"
    token = paused.dumps(SECRET)
    assert _claim_in_processes(str(path), token, 4) == ["ok", "replayed", "replayed", "replayed"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    # this process's own store over the same file sees it too
    with pytest.raises(mcpsync.errors.InputReplayed):
        InputRequired.loads(token, SECRET, max_age=600, seen=mcpsync.input.FileSeenStore(path))
    assert token not in path.read_text()  # ids only, never the token


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX owners and modes")
def test_file_store_refuses_a_damaged_or_untrusted_file(paused: InputRequired, tmp_path: Path) -> None:
    path = tmp_path / "seen.json"
    store = mcpsync.input.FileSeenStore(path)
    assert store.claim("x" * 20, time.time() + 60)
    path.chmod(0o622)  # writable by others: someone could have emptied it
    with pytest.raises(mcpsync.InputSeenStoreError, match="writable"):
        InputRequired.loads(paused.dumps(SECRET), SECRET, max_age=600, seen=store)
    path.chmod(0o600)
    path.write_text("{not json")
    with pytest.raises(mcpsync.InputSeenStoreError, match="damaged"):
        store.claim("y" * 20, time.time() + 60)
    assert path.read_text() == "{not json"  # left as is, never reset


def test_redis_store_holds_across_worker_processes(paused: InputRequired, redis_server: RedisServer) -> None:
    spec = redis_server.url + "#tokens"
    token = paused.dumps(SECRET)
    assert _claim_in_processes(spec, token, 4) == ["ok", "replayed", "replayed", "replayed"]
    store = mcpsync.input.open_seen_store(spec)
    assert isinstance(store, mcpsync.input.RedisSeenStore) and "redis-pw" not in repr(store) + store.location
    with pytest.raises(mcpsync.errors.InputReplayed):
        InputRequired.loads(token, SECRET, max_age=600, seen=store)
    client = redis_server.client()
    try:
        (key,) = client.keys("tokens:seen:*")
        ttl = client.pttl(key)
        assert 0 < ttl <= 605 * 1000  # forgotten once the token has expired anyway
    finally:
        client.close()
    store.close()


def test_redis_store_down_refuses_the_token(paused: InputRequired) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    store = mcpsync.input.RedisSeenStore("redis://:pw-NEVER-LOGGED@127.0.0.1:%d/0" % port, socket_timeout=2)
    with pytest.raises(mcpsync.InputSeenStoreError) as info:
        InputRequired.loads(paused.dumps(SECRET), SECRET, max_age=600, seen=store)
    assert "NEVER-LOGGED" not in str(info.value)


# --------------------------------------------------------------------------- the Flask example, two worker processes

_WORKER = r"""
import importlib.util, signal, sys, threading
from werkzeug.serving import make_server

spec = importlib.util.spec_from_file_location("flask_input_example", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
app = module.create_app(target=sys.argv[2], secret=sys.argv[3], seen=sys.argv[4])
server = make_server("127.0.0.1", 0, app, threaded=True)
signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown, name="stop").start())
print(server.server_port, flush=True)
server.serve_forever()
app.extensions["mcpsync"].close()
"""


class _Worker:
    """One worker process of the example app (its own interpreter, its own MCP client)."""

    def __init__(self, mcp_url: str, seen: str) -> None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(ROOT / "examples" / "flask_input.py"), mcp_url, SECRET, seen],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.strip().isdigit(), self.proc.stderr.read() if self.proc.stderr else line
        self.url = "http://127.0.0.1:%d" % int(line)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:  # pragma: no cover - a hung worker
            self.proc.kill()
            self.proc.communicate(timeout=10)
        assert self.proc.returncode == 0


def _hidden(html_text: str, name: str) -> str:
    import html
    import re

    m = re.search(r'<input type="hidden" name="%s" value="([^"]*)">' % name, html_text)
    assert m, html_text
    return html.unescape(m.group(1))


def test_the_example_refuses_a_form_posted_again_to_another_worker_file(tmp_path: Path) -> None:
    _post_twice_to_two_workers(str(tmp_path / "seen.json"))


def test_the_example_refuses_a_form_posted_again_to_another_worker_redis(redis_server: RedisServer) -> None:
    _post_twice_to_two_workers(redis_server.url + "#forms")


def _post_twice_to_two_workers(seen: str) -> None:
    """Two worker processes of examples/flask_input.py share ``seen``; a form is posted to one, then the same
    form (its token) again to the other and to the first: refused both times, and the call completes once."""
    pytest.importorskip("flask")
    import requests

    from tests.peers.httpserver import MCPTestServer

    with MCPTestServer(era="modern") as mcp:
        workers = [_Worker(mcp.url, seen), _Worker(mcp.url, seen)]
        try:
            asked = requests.post(workers[0].url + "/order", data={"count": "2"}, timeout=60)
            assert asked.status_code == 200 and "Confirm your order of 2 book(s)" in asked.text
            form = {"token": _hidden(asked.text, "token"), "key": _hidden(asked.text, "key"), "_action": "accept"}
            first = requests.post(workers[0].url + "/answer", data=dict(form, f_name="Ada", f_age="36"), timeout=60)
            assert first.status_code == 200 and "Ada" in first.text
            # the same token, another answer, another worker process: refused before anything is sent
            second = requests.post(workers[1].url + "/answer", data=dict(form, f_name="Eve", f_age="36"), timeout=60)
            assert second.status_code == 409 and "<title>Already answered</title>" in second.text
            # and a third time to the first worker
            third = requests.post(workers[0].url + "/answer", data=dict(form, f_name="Eve", f_age="36"), timeout=60)
            assert third.status_code == 409
            # a forged token is reported as forged by either worker
            forged = dict(form, token=form["token"][:-2] + ("AA" if not form["token"].endswith("AA") else "BB"))
            assert "<title>Forged</title>" in requests.post(workers[1].url + "/answer", data=forged, timeout=60).text
        finally:
            for w in workers:
                w.stop()
        resumed = [r for r in mcp.records(rpc="tools/call") if "inputResponses" in (r.body.get("params") or {})]
        assert len(resumed) == 1 and "Ada" in json.dumps(resumed[0].body)


def test_file_store_lets_one_of_many_racing_threads_through(paused: InputRequired, tmp_path: Path) -> None:
    """Each thread has its own FileSeenStore over the same path (as separate workers would): the file lock,
    not a shared in-process lock, decides."""
    token = paused.dumps(SECRET)
    path = tmp_path / "seen.json"
    barrier = threading.Barrier(6)
    outcomes: List[str] = []
    lock = threading.Lock()

    def use() -> None:
        store = mcpsync.input.FileSeenStore(path)
        barrier.wait(10)
        try:
            InputRequired.loads(token, SECRET, max_age=600, seen=store)
            outcome = "ok"
        except mcpsync.errors.InputReplayed:
            outcome = "replayed"
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=use, name="test-file-claim-%d" % i) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(outcomes) == ["ok"] + ["replayed"] * 5
