"""A credential store in Redis, shared by a fleet of workers on many hosts (``mcpsync[redis]``).

Keys (``prefix`` defaults to ``mcpsync``)::

    <prefix>:entry:<server name>     the entry, JSON (the layout of mcpsync.auth.store)
    <prefix>:lock:<server name>      the refresh lock (a lease: it expires if its holder dies)
    <prefix>:callback:<state>        a relayed OAuth callback, expires after 10 minutes
    <prefix>:corrupt:<name>:<ms>     an unreadable entry, moved aside unchanged

- ``update`` is an optimistic transaction (``WATCH`` / ``MULTI`` / ``EXEC``): the entry is
  read, changed by the caller's function and written only if nobody wrote it meanwhile,
  else the function runs again on the new value. No update is ever lost, across hosts.
- ``refresh_lock`` is redis-py's token-owned lock with a lease of ``lock_lease`` seconds:
  exactly one process of the fleet refreshes a server's tokens at a time, the others wait
  (up to ``lock_timeout``) and then find the new tokens. A holder that crashes stops
  blocking the others when its lease runs out. The OAuth refresh saves its tokens with a
  compare-and-set inside ``update`` (only over the tokens it started from), so even a holder
  whose lease ran out can never overwrite newer tokens with older ones.
- A value that is not UTF-8 JSON is renamed to a ``corrupt`` key byte for byte (atomically,
  only if unchanged) and :class:`~mcpsync.errors.CredentialStoreError` names that key; the
  entry then reads as absent. Ill-typed fields read as absent, as in the file store.
- Every Redis failure (connection refused, timeout, authentication) becomes a
  :class:`~mcpsync.errors.CredentialStoreError`. Secrets (tokens, the Redis password) never
  appear in reprs, ``location``, errors or logs.

Thread-safe, and fork-safe (redis-py reconnects in a forked child): create the store once
and share it between threads; a Celery prefork child may use one inherited from its parent.
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import time
from typing import Any, Callable, Dict, Iterator, Mapping, Optional, Tuple, Type, TypeVar

from .._redis import open_redis
from ..errors import ConfigError, CredentialStoreError
from .store_base import CALLBACK_KEYS, CALLBACK_TTL, CredentialStoreBase, callback_params, clean_callback, clean_entry

__all__ = ["RedisCredentialStore"]

log = logging.getLogger(__name__)

_T = TypeVar("_T")

# Rename a key aside only if it still holds the value we found unreadable.
_QUARANTINE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('RENAME', KEYS[1], KEYS[2])
  return 1
end
return 0
"""
_MAX_ATTEMPTS = 200


def _glob_escape(text: str) -> str:
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)


class RedisCredentialStore(CredentialStoreBase):
    """OAuth credentials in Redis, for many processes on many hosts (see the module docstring).

    Args:
        url: a redis-py connection URL (``redis://[:password@]host:port/db``, ``rediss://...``
            for TLS, ``unix:///path/to/socket``); or pass ``client``.
        client: a ready ``redis.Redis`` (e.g. with Sentinel or custom TLS) instead of ``url``.
        prefix: the key prefix, to share one Redis between applications.
        lock_lease: seconds a refresh lock lives unless released; longer than one token
            request (the OAuth manager's ``http_timeout``), short enough to recover from a crash.
        lock_timeout: seconds to wait for the refresh lock before
            :class:`~mcpsync.errors.CredentialStoreError`.
        socket_timeout: seconds per Redis command and connection attempt (``url`` only).
    """

    def __init__(
        self,
        url: Optional[str] = None,
        *,
        client: Any = None,
        prefix: str = "mcpsync",
        lock_lease: float = 60.0,
        lock_timeout: float = 90.0,
        socket_timeout: float = 10.0,
    ) -> None:
        if lock_lease <= 0 or lock_timeout < 0:
            raise ConfigError("lock_lease must be positive and lock_timeout not negative")
        redis, client, self.location = open_redis(
            "RedisCredentialStore", "the credential store", url, client, prefix, socket_timeout
        )
        if getattr(client, "connection_pool", None) is not None and client.connection_pool.connection_kwargs.get(
            "decode_responses"
        ):
            raise ConfigError("RedisCredentialStore needs a client with decode_responses=False (raw bytes)")
        self._errors_base: Tuple[Type[BaseException], ...] = (redis.RedisError,)
        self._watch_error: Type[BaseException] = redis.WatchError
        self._lock_error: Type[BaseException] = redis.exceptions.LockError
        self._redis = client
        self.prefix = prefix
        self.lock_lease = float(lock_lease)
        self.lock_timeout = float(lock_timeout)
        self._quarantine = client.register_script(_QUARANTINE)

    def __repr__(self) -> str:
        return "RedisCredentialStore(%r)" % (self.location,)

    def close(self) -> None:
        """Close the connection pool (the store reconnects if used again)."""
        with contextlib.suppress(Exception):
            self._redis.close()

    # ------------------------------------------------------------------ keys and coding

    def _key(self, kind: str, name: str) -> str:
        return "%s:%s:%s" % (self.prefix, kind, name)

    @contextlib.contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        try:
            yield
        except self._errors_base as exc:
            # redis-py messages name the host and the problem, never the password.
            raise CredentialStoreError(
                "credential store %s: %s failed: %s: %s" % (self.location, what, type(exc).__name__, exc)
            ) from None

    def _decode(self, key: str, raw: Any) -> Any:
        """The JSON value of ``raw``; an unreadable value is renamed aside and reported."""
        if raw is None:
            return None
        data = bytes(raw)
        try:
            return json.loads(data.decode("utf-8"))
        except RecursionError:
            reason = "JSON nested too deeply"
        except UnicodeDecodeError:
            reason = "not UTF-8 text"
        except ValueError:
            reason = "not valid JSON"
        backup = "%s:corrupt:%s:%d" % (self.prefix, key[len(self.prefix) + 1 :], int(time.time() * 1000))
        with self._errors("moving an unreadable value aside"):
            moved = self._quarantine(keys=[key, backup], args=[data])
        if not moved:
            raise CredentialStoreError(
                "credential store %s: the value of %r was unreadable (%s) and changed meanwhile; try again"
                % (self.location, key, reason)
            )
        log.error(
            "credential store %s: the value of %r was unreadable (%s); moved to %r", self.location, key, reason, backup
        )
        raise CredentialStoreError(
            "credential store %s: the value of %r was unreadable (%s); it was kept unchanged as %r and the "
            "entry starts empty" % (self.location, key, reason, backup)
        )

    @staticmethod
    def _encode(value: Any) -> bytes:
        try:
            return json.dumps(value, sort_keys=True, separators=(",", ":")).encode("utf-8")
        except (ValueError, TypeError, RecursionError) as exc:
            raise CredentialStoreError("cannot serialize a credential entry: %s" % type(exc).__name__) from None

    # ------------------------------------------------------------------ the protocol

    def get(self, name: str) -> Optional[Dict[str, Any]]:
        """The entry of ``name`` (a cleaned copy), or None."""
        key = self._key("entry", name)
        with self._errors("GET"):
            raw = self._redis.get(key)
        return clean_entry(self._decode(key, raw)) if raw is not None else None

    def all(self) -> Dict[str, Dict[str, Any]]:
        """Every well-typed entry, by server name."""
        start = len(self.prefix) + len(":entry:")
        with self._errors("SCAN"):
            keys = sorted(self._redis.scan_iter(match=_glob_escape(self._key("entry", "")) + "*", count=500))
            values = self._redis.mget(keys) if keys else []
        out: Dict[str, Dict[str, Any]] = {}
        for key, raw in zip(keys, values):
            text = key.decode("utf-8", "surrogateescape") if isinstance(key, bytes) else str(key)
            if raw is None:
                continue
            entry = clean_entry(self._decode(text, raw))
            if entry is not None:
                out[text[start:]] = entry
        return out

    def update(self, name: str, fn: Callable[[Dict[str, Any]], _T]) -> _T:
        """Atomically apply ``fn(entry)`` with WATCH/MULTI; ``fn`` runs again if another writer won."""
        key = self._key("entry", name)
        with self._errors("update"), self._redis.pipeline(transaction=True) as pipe:
            for _attempt in range(_MAX_ATTEMPTS):
                try:
                    pipe.watch(key)
                    raw = pipe.get(key)
                    entry = (clean_entry(self._decode(key, raw)) if raw is not None else None) or {}
                    result = fn(entry)
                    payload = self._encode(entry)
                    pipe.multi()
                    pipe.set(key, payload)
                    pipe.execute()
                    return copy.deepcopy(result)
                except self._watch_error:
                    continue
                finally:
                    pipe.reset()
        raise CredentialStoreError(
            "credential store %s: the entry of %r kept changing; gave up after %d attempts"
            % (self.location, name, _MAX_ATTEMPTS)
        )

    def remove(self, name: str) -> bool:
        """Delete the entry of ``name``; whether there was one."""
        with self._errors("DEL"):
            return bool(self._redis.delete(self._key("entry", name)))

    @contextlib.contextmanager
    def refresh_lock(self, name: str) -> Iterator[None]:
        """The fleet-wide refresh lock of ``name``: a lease of ``lock_lease`` seconds.

        Blocks up to ``lock_timeout`` seconds, then raises CredentialStoreError.
        """
        with self._errors("creating the refresh lock"):
            lock = self._redis.lock(
                self._key("lock", name),
                timeout=self.lock_lease,
                sleep=0.02,
                blocking=True,
                blocking_timeout=self.lock_timeout,
                thread_local=False,
            )
        with self._errors("acquiring the refresh lock"):
            acquired = lock.acquire()
        if not acquired:
            raise CredentialStoreError(
                "credential store %s: timed out after %ss waiting for the refresh lock of %r"
                % (self.location, self.lock_timeout, name)
            )
        try:
            yield
        finally:
            try:
                lock.release()
            except self._lock_error:
                log.warning(
                    "credential store %s: the refresh lock of %r expired before it was released; raise lock_lease "
                    "above the token request time",
                    self.location,
                    name,
                )
            except self._errors_base:
                log.warning("credential store %s: could not release the refresh lock of %r", self.location, name)

    def record_callback(self, state: str, params: Mapping[str, str]) -> None:
        """Leave the redirect parameters of ``state`` (kept 10 minutes)."""
        record: Dict[str, Any] = {k: v for k, v in params.items() if k in CALLBACK_KEYS}
        record["receivedAt"] = time.time()
        with self._errors("SET"):
            self._redis.set(self._key("callback", state), self._encode(record), ex=int(CALLBACK_TTL))

    def take_callback(self, state: str) -> Optional[Dict[str, str]]:
        """Remove and return the parameters recorded for ``state``, or None."""
        key = self._key("callback", state)
        with self._errors("GET/DEL"), self._redis.pipeline(transaction=True) as pipe:
            pipe.get(key)
            pipe.delete(key)
            raw, _deleted = pipe.execute()
        if raw is None:
            return None
        try:
            record = clean_callback(json.loads(bytes(raw).decode("utf-8")))
        except (ValueError, RecursionError):
            record = None
        return callback_params(record) if record is not None else None
