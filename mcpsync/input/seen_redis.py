"""Used token ids in Redis, shared by a fleet of workers on many hosts: :class:`RedisSeenStore`."""

from __future__ import annotations

import math
import time
from typing import Any, Optional

from .._redis import open_redis
from ..errors import InputSeenStoreError

__all__ = ["RedisSeenStore"]


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
        redis, client, self.location = open_redis(
            "RedisSeenStore", "the seen store", url, client, prefix, socket_timeout
        )
        self._errors = redis.RedisError
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
