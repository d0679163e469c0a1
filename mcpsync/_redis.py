"""Opening the Redis client of a shared store (the credential store, the seen-token store): :func:`open_redis`.

Both stores take a redis-py URL or a ready client, a key prefix and a socket timeout, and show where they keep
their keys as ``location`` (``scheme://host:port/db#prefix``): never the password, the user or the query. No
I/O happens here (redis-py connects on the first command); ``redis`` is imported only when a store is made.
"""

from __future__ import annotations

import contextlib
from typing import Any, Dict, Optional, Tuple
from urllib.parse import urlsplit

from .errors import ConfigError

__all__ = ["open_redis", "redis_location"]


def redis_location(prefix: str, url: Optional[str] = None, client: Any = None) -> str:
    """``scheme://host:port/db#prefix`` of ``url`` (without user, password or query), else of ``client``'s
    connection settings (``?`` for what it does not say); ``unix://path#prefix`` for a Unix socket."""
    if url is not None:
        parts = urlsplit(url)
        if parts.scheme == "unix":
            return "unix://%s#%s" % (parts.path, prefix)
        host = parts.hostname or "localhost"
        try:
            port = parts.port or 6379
        except ValueError:
            port = 6379
        host = "[%s]" % host if ":" in host else host
        return "%s://%s:%d%s#%s" % (parts.scheme, host, port, parts.path or "/0", prefix)
    kwargs: Dict[str, Any] = {}
    with contextlib.suppress(Exception):
        kwargs = dict(client.connection_pool.connection_kwargs)
    if kwargs.get("path"):
        return "unix://%s#%s" % (kwargs["path"], prefix)
    return "redis://%s:%s/%s#%s" % (kwargs.get("host", "?"), kwargs.get("port", "?"), kwargs.get("db", 0), prefix)


def open_redis(
    store: str, purpose: str, url: Optional[str], client: Any, prefix: str, socket_timeout: float
) -> Tuple[Any, Any, str]:
    """``(the redis module, the client, its location)`` for the store class named ``store`` (in messages),
    keeping ``purpose`` ("the credential store"): ``client`` as given, else a client of ``url`` with
    ``socket_timeout`` seconds per command and connection attempt. Raises :class:`~mcpsync.errors.ConfigError`
    when redis-py is missing, unless exactly one of ``url`` and ``client`` is given, for an empty ``prefix``
    and for a URL redis-py refuses (the URL is not repeated: it may hold a password)."""
    try:
        import redis
    except ImportError as exc:
        raise ConfigError("%s needs the 'redis' package: pip install 'mcpsync[redis]'" % store) from exc
    if (url is None) == (client is None):
        raise ConfigError("%s needs exactly one of url= or client=" % store)
    if not prefix or not isinstance(prefix, str):
        raise ConfigError("the Redis key prefix must be a non-empty string")
    if url is not None:  # exactly one of the two: no client given
        try:
            client = redis.Redis.from_url(url, socket_timeout=socket_timeout, socket_connect_timeout=socket_timeout)
        except ValueError as exc:
            raise ConfigError("invalid Redis URL for %s (%s)" % (purpose, type(exc).__name__)) from None
    return redis, client, redis_location(prefix, url, client)
