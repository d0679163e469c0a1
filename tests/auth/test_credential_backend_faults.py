"""Issue 18 defect 5: a frozen credential backend is a CredentialStoreError, never a server timeout.

A real redis-server holds the OAuth tokens of a real MCP server (tests/peers/httpserver.py behind the
local authorization server). The Redis process is SIGSTOPped (frozen, its socket open: every
command times out) and SIGCONTed in teardown.
"""

from __future__ import annotations

import os
import signal
import time
from typing import Any, Dict, Iterator

import pytest

import mcpsync
from mcpsync.auth import OAuthManager
from mcpsync.errors import CredentialStoreError, RequestTimeout
from tests.peers.authserver import AuthTestServer
from tests.peers.httpserver import MCPTestServer
from tests.peers.redisserver import RedisServer, optional_module, start_redis
from tests.manager.test_manager_http import _mcp_behind

optional_module("redis", "redis")
from mcpsync.auth.store_redis import RedisCredentialStore  # noqa: E402

CLIENT_ID = "frozen-client"


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    yield from start_redis()


@pytest.fixture
def frozen(redis_server: RedisServer) -> Iterator[Any]:
    """A function that freezes the Redis server (SIGSTOP); it is thawed (SIGCONT) in teardown, whatever happens."""
    proc = redis_server.proc
    assert proc is not None
    stopped = []

    def freeze() -> None:
        os.kill(proc.pid, signal.SIGSTOP)
        stopped.append(True)

    try:
        yield freeze
    finally:
        if stopped:
            os.kill(proc.pid, signal.SIGCONT)


def _seed(auth: AuthTestServer, store: RedisCredentialStore, name: str, url: str) -> None:
    at = auth.issue_access_token(["read"])
    rt = auth.issue_refresh_token(CLIENT_ID, ["read"])

    def fill(e: Dict[str, Any]) -> None:
        e.update(
            serverUrl=url,
            issuer=auth.issuer,
            resource=url,
            tokenEndpoint=auth.metadata["token_endpoint"],
            tokens={"accessToken": at, "refreshToken": rt, "expiresAt": int(time.time()) + 3600, "tokenType": "Bearer"},
            tokenClient={"clientId": CLIENT_ID, "source": "config", "method": "none"},
        )

    store.update(name, fill)


@pytest.mark.parametrize("how", ["blocking", "async"])
@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_frozen_redis_is_a_credential_store_error_not_a_request_timeout(
    era: str, how: str, redis_server: RedisServer, frozen: Any, monkeypatch: Any
) -> None:
    redis_server.flush()
    # every call reads the store (an OAuthAuth otherwise reuses the token it read for TOKEN_REUSE_SECONDS)
    monkeypatch.setattr("mcpsync.auth.oauth_auth.TOKEN_REUSE_SECONDS", 0.0)
    with AuthTestServer() as auth, MCPTestServer() as mcp:
        auth.add_client(CLIENT_ID, redirect_uris=["http://127.0.0.1:1/cb"], method="none")
        _mcp_behind(auth, mcp, monkeypatch)
        store = RedisCredentialStore(redis_server.url, socket_timeout=1.0, lock_timeout=5)
        try:
            _seed(auth, store, "box", mcp.url)
            with OAuthManager(store=store) as oauth:
                oauth.add_server("box", mcp.url, {"clientId": CLIENT_ID, "tokenEndpointAuthMethod": "none"})
                with mcpsync.Client(mcp.url, auth=oauth.auth("box"), protocol=era, timeout=60) as client:
                    assert client.call_tool("echo", {"message": "hi"}).text == "hi"
                    frozen()  # Redis stops answering; its socket stays open
                    with pytest.raises(CredentialStoreError) as info:
                        if how == "blocking":
                            client.call_tool("echo", {"message": "again"})
                        else:  # the same error settles the handle, within the store's socket timeout
                            client.call_tool_async("echo", {"message": "again"}).result(30)
                    assert not isinstance(info.value, RequestTimeout)
                    assert "redis-pw" not in str(info.value)
        finally:
            store.close()
