"""A credential store in the operating system's keyring, for desktop tools (``mcpsync[keyring]``).

Uses the `keyring <https://pypi.org/project/keyring/>`_ library (macOS Keychain, Windows
Credential Locker, the freedesktop Secret Service / KWallet...), imported only when this
store is created. Items, all under one service name (default ``mcpsync``)::

    entry:<server name>     the entry, JSON (the layout of mcpsync.auth.store)
    index                   the JSON list of server names (keyrings cannot list their items)
    callbacks               relayed OAuth callbacks, JSON
    corrupt:<item>:<ms>     an unreadable item, kept unchanged

Keyrings have no transactions, so every write and every token refresh holds a file lock in
the user data directory (``keyring-<service>-<hash>.lock``, the same locking as the file
store): processes of one user on one machine never lose an update and refresh one at a time.

A value that is not JSON is copied aside unchanged to a ``corrupt:`` item, deleted, and a
:class:`~mcpsync.errors.CredentialStoreError` names the copy; ill-typed fields read as
absent. Keyring failures (locked keychain, no backend) become CredentialStoreError.
Windows limits one credential to 2560 bytes: very large tokens may not fit there.
Thread-safe. Secrets never appear in reprs or logs.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import logging
import os
import time
from typing import Any, Callable, ContextManager, Dict, Iterator, List, Mapping, Optional, Type, TypeVar

from ..errors import ConfigError, CredentialStoreError
from .store import CredentialStore, user_data_dir
from .store_base import add_callback, CredentialStoreBase, callback_params, clean_callback, clean_entry

__all__ = ["KeyringCredentialStore"]

log = logging.getLogger(__name__)

_T = TypeVar("_T")


def _import_keyring() -> Any:
    try:
        import keyring
    except ImportError as exc:
        raise ConfigError("KeyringCredentialStore needs the 'keyring' package: pip install 'mcpsync[keyring]'") from exc
    return keyring


class KeyringCredentialStore(CredentialStoreBase):
    """OAuth credentials in the OS keyring (see the module docstring).

    Args:
        service: the keyring service name the items are stored under.
        backend: a ``keyring.backend.KeyringBackend`` to use instead of ``keyring.get_keyring()``.
        lock_dir: the directory of the lock file (default: the user data directory).
        lock_timeout: seconds to wait for the lock before
            :class:`~mcpsync.errors.CredentialStoreError`.
    """

    def __init__(
        self,
        service: str = "mcpsync",
        *,
        backend: Any = None,
        lock_dir: Optional[str] = None,
        lock_timeout: float = 60.0,
    ) -> None:
        keyring = _import_keyring()
        if not service or not isinstance(service, str):
            raise ConfigError("the keyring service name must be a non-empty string")
        self.service = service
        self.location = "keyring:%s" % service
        self._backend = backend
        self._keyring = keyring
        self._errors_base: Type[BaseException] = keyring.errors.KeyringError
        tag = "".join(c if c.isalnum() or c in "-_." else "_" for c in service)[:40]
        digest = hashlib.sha256(service.encode("utf-8")).hexdigest()[:12]
        base = os.path.join(lock_dir or user_data_dir(), "keyring-%s-%s" % (tag, digest))
        # Only the lock of this file store is used (its JSON file is never written).
        self._mutex = CredentialStore(base, lock_timeout=lock_timeout)

    def __repr__(self) -> str:
        return "KeyringCredentialStore(%r)" % (self.service,)

    # ------------------------------------------------------------------ raw items

    def _ring(self) -> Any:
        return self._backend if self._backend is not None else self._keyring.get_keyring()

    @contextlib.contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        try:
            yield
        except self._errors_base as exc:
            raise CredentialStoreError("keyring %r: %s failed: %s" % (self.service, what, type(exc).__name__)) from None

    def _item(self, item: str) -> Optional[str]:
        with self._errors("reading"):
            value = self._ring().get_password(self.service, item)
        return value if value is None else str(value)

    def _put(self, item: str, value: Any) -> None:
        try:
            text = json.dumps(value, sort_keys=True, separators=(",", ":"))
        except (ValueError, TypeError, RecursionError) as exc:
            raise CredentialStoreError("cannot serialize a credential entry: %s" % type(exc).__name__) from None
        with self._errors("writing"):
            self._ring().set_password(self.service, item, text)

    def _delete(self, item: str) -> bool:
        try:
            self._ring().delete_password(self.service, item)
        except self._keyring.errors.PasswordDeleteError:
            return False
        except self._errors_base as exc:
            raise CredentialStoreError("keyring %r: deleting failed: %s" % (self.service, type(exc).__name__)) from None
        return True

    def _load(self, item: str) -> Any:
        """The JSON value of ``item`` (None when absent); an unreadable one is kept aside and reported."""
        raw = self._item(item)
        if raw is None:
            return None
        try:
            return json.loads(raw)
        except RecursionError:
            reason = "JSON nested too deeply"
        except ValueError:
            reason = "not valid JSON"
        with self._mutex.locked():
            if self._item(item) != raw:
                raise CredentialStoreError(
                    "keyring %r: item %r was unreadable (%s) and changed meanwhile; try again"
                    % (self.service, item, reason)
                )
            backup = "corrupt:%s:%d" % (item, int(time.time() * 1000))
            with self._errors("keeping an unreadable item"):
                self._ring().set_password(self.service, backup, raw)
            self._delete(item)
        log.error("keyring %r: item %r was unreadable (%s); kept as %r", self.service, item, reason, backup)
        raise CredentialStoreError(
            "keyring %r: item %r was unreadable (%s); it was kept unchanged as %r and starts empty"
            % (self.service, item, reason, backup)
        )

    def _index(self) -> List[str]:
        names = self._load("index")
        if not isinstance(names, list):
            return []
        return [n for n in names if isinstance(n, str)]

    # ------------------------------------------------------------------ the protocol

    def get(self, name: str) -> Optional[Dict[str, Any]]:
        """The entry of ``name`` (a cleaned copy), or None."""
        raw = self._load("entry:" + name)
        return clean_entry(raw) if raw is not None else None

    def all(self) -> Dict[str, Dict[str, Any]]:
        """Every well-typed entry, by server name."""
        out: Dict[str, Dict[str, Any]] = {}
        for name in self._index():
            entry = self.get(name)
            if entry is not None:
                out[name] = entry
        return out

    def update(self, name: str, fn: Callable[[Dict[str, Any]], _T]) -> _T:
        """Atomically (under the lock) apply ``fn(entry)`` to the entry of ``name``."""
        with self._mutex.locked():
            raw = self._load("entry:" + name)
            entry = (clean_entry(raw) if raw is not None else None) or {}
            result = fn(entry)
            self._put("entry:" + name, entry)
            names = self._index()
            if name not in names:
                self._put("index", sorted(names + [name]))
            return copy.deepcopy(result)

    def remove(self, name: str) -> bool:
        """Delete the entry of ``name``; whether there was one."""
        with self._mutex.locked():
            existed = self._delete("entry:" + name)
            names = self._index()
            if name in names:
                self._put("index", [n for n in names if n != name])
            return existed

    def refresh_lock(self, name: str) -> ContextManager[Any]:
        """The store's lock (re-entrant in a thread; one holder among the user's processes)."""
        return self._mutex.locked()

    def record_callback(self, state: str, params: Mapping[str, str]) -> None:
        """Leave the redirect parameters of ``state`` (pruned after 10 minutes)."""
        with self._mutex.locked():
            callbacks = self._callbacks()
            add_callback(callbacks, state, params)
            self._put("callbacks", callbacks)

    def take_callback(self, state: str) -> Optional[Dict[str, str]]:
        """Remove and return the parameters recorded for ``state``, or None."""
        with self._mutex.locked():
            callbacks = self._callbacks()
            if state not in callbacks:
                return None
            record = callbacks.pop(state)
            self._put("callbacks", callbacks)
        return callback_params(record)

    def _callbacks(self) -> Dict[str, Dict[str, Any]]:
        raw = self._load("callbacks")
        out: Dict[str, Dict[str, Any]] = {}
        if isinstance(raw, dict):
            for state, value in raw.items():
                record = clean_callback(value)
                if record is not None:
                    out[state] = record
        return out
