"""examples/celery_worker.py runs: a real Celery worker (prefork pool, 2 children) with its broker and
result backend on a real redis-server, calling tools of a real MCP server behind OAuth, its tokens
shared through the Redis credential store. The children start together with an expired access
token: exactly one refresh reaches the authorization server (which rotates refresh tokens) and
no invalid_grant."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.peers import httpserver
from tests.peers.authserver import AuthTestServer
from tests.peers.httpserver import MCPTestServer
from tests.peers.redisserver import RedisServer, _unavailable, start_redis

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
CLIENT_ID = "celery-client"

try:
    import celery  # noqa: F401
except ImportError:
    celery = None


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    if celery is None:
        _unavailable("celery is not installed (it is in the test extra)")
    yield from start_redis()


def _protect(mcp: MCPTestServer, auth: AuthTestServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The MCP server accepts only unexpired access tokens that ``auth`` issued."""
    auth.prm["resource"] = mcp.url
    challenge = 'Bearer resource_metadata="%s%s"' % (auth.base, auth.prm_header_path)
    original = httpserver._Handler._auth_ok

    def auth_ok(handler: Any, msg: Any) -> bool:
        token = handler.headers.get("Authorization", "")[len("Bearer ") :]
        with auth.lock:
            info = auth.access_tokens.get(token)
        if info is None or (info["exp"] is not None and info["exp"] < time.time()):
            handler.reply(401, b'{"error":"unauthorized"}', headers={"WWW-Authenticate": challenge})
            return False
        return bool(original(handler, msg))

    monkeypatch.setattr(httpserver._Handler, "_auth_ok", auth_ok)


def _load_example() -> Any:
    spec = importlib.util.spec_from_file_location("celery_worker_example", EXAMPLES / "celery_worker.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.timeout(300)
def test_celery_prefork_workers_share_oauth_tokens_through_redis(
    redis_server: RedisServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpsync.auth import RedisCredentialStore

    redis_server.flush()
    with AuthTestServer() as auth, MCPTestServer() as mcp:
        _protect(mcp, auth, monkeypatch)
        auth.add_client(CLIENT_ID, redirect_uris=["http://127.0.0.1:1/cb"], method="none")
        # A login happened earlier (any host); its access token has expired since.
        expired = auth.issue_access_token(["read"], expires_in=-60)  # already expired, whatever the timing
        refresh = auth.issue_refresh_token(CLIENT_ID, ["read"], resource=mcp.url)
        store = RedisCredentialStore(redis_server.url_for(0))
        store.update(
            "demo",
            lambda e: e.update(
                serverUrl=mcp.url,
                issuer=auth.issuer,
                resource=mcp.url,
                tokenEndpoint=auth.metadata["token_endpoint"],
                tokens={"accessToken": expired, "refreshToken": refresh, "expiresAt": int(time.time()) - 60},
                tokenClient={"clientId": CLIENT_ID, "source": "config", "method": "none"},
            ),
        )
        config = tmp_path / "mcp.json"
        config.write_text(
            json.dumps(
                {
                    "mcp": {
                        "demo": {
                            "type": "remote",
                            "url": mcp.url,
                            "oauth": {"clientId": CLIENT_ID},
                        }
                    }
                }
            )
        )
        env = dict(
            os.environ,
            MCPSYNC_REDIS_URL=redis_server.url_for(0),
            CELERY_BROKER_URL=redis_server.url_for(1),
            CELERY_RESULT_BACKEND=redis_server.url_for(2),
            MCPSYNC_CONFIG=str(config),
            PYTHONPATH=os.pathsep.join([str(EXAMPLES), str(ROOT), os.environ.get("PYTHONPATH", "")]),
        )
        for key, value in env.items():
            if key.startswith(("MCPSYNC_", "CELERY_")):
                monkeypatch.setenv(key, value)
        log_path = tmp_path / "worker.log"
        with open(log_path, "wb") as log_file:
            worker = subprocess.Popen(
                [
                    sys.executable, "-m", "celery", "-A", "celery_worker", "worker",
                    "--pool", "prefork", "--concurrency", "2", "--loglevel", "INFO",
                    "--without-mingle", "--without-gossip", "--without-heartbeat", "-n", "mcpsync-test@%h",
                ],
                cwd=str(EXAMPLES), env=env, stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT,
            )  # fmt: skip
        example = _load_example()  # the task client, in this process
        try:
            pending = [example.call_tool.delay("demo_echo", {"message": "job %d" % i}) for i in range(8)]
            results = [p.get(timeout=120) for p in pending]
            tools = example.list_tools.delay().get(timeout=60)
        except BaseException:
            print(log_path.read_text(errors="replace")[-5000:])
            raise
        finally:
            example.app.close()
            worker.terminate()  # warm shutdown: the children close their managers
            try:
                worker.wait(60)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait(10)
            store.close()
        assert [r["text"] for r in results] == ["job %d" % i for i in range(8)]
        assert not any(r["is_error"] for r in results)
        assert "demo_echo" in tools
        refreshes = [outcome for grant, outcome in auth.token_outcomes if grant == "refresh_token"]
        assert refreshes == ["ok"], refreshes  # one refresh for the whole fleet, no invalid_grant
        stored = RedisCredentialStore(redis_server.url_for(0))
        assert stored.get("demo")["tokens"]["refreshToken"] != refresh  # rotated, and saved once
        stored.close()
