"""Single-use resume tokens: the store of used token ids, and :func:`open_seen_store`.

``InputRequired.loads(token, secret, max_age=..., seen=store)`` records the token's one-time id in a
:class:`SeenStore` and refuses a token whose id is already there (:class:`~mcpsync.errors.InputReplayed`). The
store is what makes the guarantee hold across threads, worker processes and hosts, so pick it by deployment:

- :class:`~mcpsync.input.MemorySeenStore`: one process (threads only; a second worker process would not see it);
- :class:`~mcpsync.input.FileSeenStore`: the processes of one host sharing a file, under a file lock;
- :class:`~mcpsync.input.RedisSeenStore`: a fleet of workers on many hosts (``mcpsync[redis]``).

A store keeps an id until its token would expire anyway (``issuedAt + max_age``), then forgets it. A store
that cannot answer (a lock timeout, a damaged file, Redis down, full) raises
:class:`~mcpsync.InputSeenStoreError`: the token is refused rather than risk letting it through twice.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from ..errors import ConfigError

__all__ = ["SeenStore", "open_seen_store"]

_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


@runtime_checkable
class SeenStore(Protocol):
    """Where used token ids are kept. Every method may be called from any thread.

    ``location`` names the store without secrets (``memory``, a file path, ``redis://host:port/db#prefix``).
    """

    location: str

    def claim(self, token_id: str, expires_at: float) -> bool:
        """Record ``token_id`` as used until ``expires_at`` (seconds since the epoch). True when this is its
        first use; False when it was recorded already. Atomic against every thread and process sharing the
        store. Raises :class:`~mcpsync.InputSeenStoreError` when the store cannot answer."""
        ...


def open_seen_store(spec: str) -> SeenStore:
    """The seen store named by ``spec``.

    - ``"memory"``: a :class:`~mcpsync.input.MemorySeenStore` (this process only);
    - ``"redis://..."``, ``"rediss://..."``, ``"unix://..."``: a :class:`~mcpsync.input.RedisSeenStore` with that
      connection URL (needs ``mcpsync[redis]``); a ``#prefix`` fragment sets the key prefix;
    - anything else: the path of a :class:`~mcpsync.input.FileSeenStore`.

    Raises:
        ConfigError: ``spec`` is not a non-empty string, or the Redis URL is invalid.
    """
    if not isinstance(spec, str) or not spec:
        raise ConfigError("a seen store spec must be a non-empty string")
    if spec == "memory":
        from .seen_memory import MemorySeenStore

        return MemorySeenStore()
    if spec.startswith(_REDIS_SCHEMES):
        from .seen_redis import RedisSeenStore

        url, _sep, prefix = spec.partition("#")
        return RedisSeenStore(url, prefix=prefix) if prefix else RedisSeenStore(url)
    from .seen_file import FileSeenStore

    return FileSeenStore(spec)
