"""Used token ids in Redis, shared by a fleet of workers on many hosts: :class:`RedisSeenStore`."""

from __future__ import annotations

import math
import time
from typing import Any, Optional

from ..errors import ConfigError, InputSeenStoreError

__all__ = ["RedisSeenStore"]


def _location(url: str, prefix: str) -> str:
    """``scheme://host:port/db#prefix``: the URL without user, password or query (never a secret)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme == "unix":
        return "unix://%s#%s" % (parts.path, prefix)
    host = parts.hostname or "localhost"
    try:
        port = parts.port or 6379
    except ValueError:
        port = 6379
    return "%s://%s:%d%s#%s" % (parts.scheme, "[%s]" % host if ":" in host else host, port, parts.path or "/0", prefix)


class RedisSeenStore:
    """Used token ids as Redis keys ``<prefix>:seen:<id>``, each expiring with its token (``mcpsync[redis]``).

    ``claim`` is one ``SET key 1 NX PX <ms>``: atomic on the server, so exactly one claim of an id wins,
    whichever process or host makes it. Every Redis failure (connection refused, timeout, authentication)
    becomes :class:`~mcpsync.InputSeenStoreError` and the token is refused. Blocks for one round trip (at
    most ``socket_timeout`` seconds). The password never appears in ``location``, reprs, errors or logs.
    Thread-safe, and fork-safe (redis-py reconnects in a forked child).

    Args:
        url: a redis-py connection URL (``redis://[:password@]host:port/db``, ``rediss://``, ``unix://``);
            or pass ``client``.
        client: a ready ``redis.Redis`` instead of ``url``.
        prefix: the key prefix, to share one Redis between applications.
        socket_timeout: seconds per command and connection attempt (``url`` only).
    """

    def __init__(
        self,
        url: Optional[str] = None,
        *,
        client: Any = None,
        prefix: str = "mcpsync",
        socket_timeout: float = 10.0,
    ) -> None:
        try:
            import redis
        except ImportError as exc:
            raise ConfigError("RedisSeenStore needs the 'redis' package: pip install 'mcpsync[redis]'") from exc
        if (url is None) == (client is None):
            raise ConfigError("RedisSeenStore needs exactly one of url= or client=")
        if not prefix or not isinstance(prefix, str):
            raise ConfigError("the Redis key prefix must be a non-empty string")
        self._errors = redis.RedisError
        if client is None:
            assert url is not None
            try:
                client = redis.Redis.from_url(url, socket_timeout=socket_timeout, socket_connect_timeout=socket_timeout)
            except ValueError as exc:
                raise ConfigError("invalid Redis URL for the seen store (%s)" % type(exc).__name__) from None
            self.location = _location(url, prefix)
        else:
            kwargs = getattr(getattr(client, "connection_pool", None), "connection_kwargs", {}) or {}
            self.location = "redis://%s:%s/%s#%s" % (
                kwargs.get("host", "?"),
                kwargs.get("port", "?"),
                kwargs.get("db", 0),
                prefix,
            )
        self._redis = client
        self.prefix = prefix

    def claim(self, token_id: str, expires_at: float) -> bool:
        """See :meth:`mcpsync.input.SeenStore.claim`."""
        ms = max(1000, int(math.ceil((expires_at - time.time()) * 1000)))
        try:
            won = self._redis.set("%s:seen:%s" % (self.prefix, token_id), b"1", nx=True, px=ms)
        except self._errors as exc:
            raise InputSeenStoreError(
                "seen store %s: SET failed: %s: %s" % (self.location, type(exc).__name__, exc)
            ) from None
        return bool(won)

    def close(self) -> None:
        """Close the connection pool (the store reconnects if used again)."""
        try:
            self._redis.close()
        except self._errors:
            pass

    def __repr__(self) -> str:
        return "RedisSeenStore(%r)" % (self.location,)
