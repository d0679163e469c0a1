"""Secrets of installed servers (API keys, tokens a ``server.json`` marks ``isSecret``) in the credential store.

A configuration file never holds such a value; it holds a reference ``${secret:SERVER/NAME}``, which the
configuration loader (:func:`mcpsync.manager.config.interpolate`) resolves when the configuration is read,
from the store named by ``$MCPSYNC_AUTH_STORE`` (default: the user's credential file; also the OS keyring or
Redis, see :func:`~mcpsync.auth.open_store`). The value lives in that server's store entry under
``secrets`` -> ``NAME``, beside its OAuth tokens, with the same protection (a 0600 file, the keyring...).

Every function may be called from any thread; each blocks on one store operation.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional

from ..errors import ConfigError
from .store_base import CredentialBackend

__all__ = ["delete_secrets", "read_secret", "resolve_secret_reference", "store_secrets"]

_KEY = "secrets"


def _split(ref: str) -> "tuple[str, str]":
    server, sep, name = ref.partition("/")
    if not sep or not server or not name:
        raise ConfigError("a secret reference looks like ${secret:SERVER/NAME}, not ${secret:%s}" % ref)
    return server, name


def _open(store: Optional[CredentialBackend]) -> CredentialBackend:
    if store is not None:
        return store
    from .backends import open_store

    return open_store()


def store_secrets(values: Mapping[str, str], store: Optional[CredentialBackend] = None) -> None:
    """Store ``values`` (``SERVER/NAME`` -> secret), one atomic update per server."""
    by_server: Dict[str, Dict[str, str]] = {}
    for ref, value in values.items():
        server, name = _split(ref)
        by_server.setdefault(server, {})[name] = value
    backend = _open(store)
    for server, secrets in by_server.items():

        def fn(entry: Dict[str, Any], secrets: Dict[str, str] = secrets) -> None:
            current = entry.get(_KEY)
            merged = dict(current) if isinstance(current, dict) else {}
            merged.update(secrets)
            entry[_KEY] = merged

        backend.update(server, fn)


def read_secret(ref: str, store: Optional[CredentialBackend] = None) -> Optional[str]:
    """The secret ``SERVER/NAME``, or None when it is not stored."""
    server, name = _split(ref)
    entry = _open(store).get(server) or {}
    secrets = entry.get(_KEY)
    value = secrets.get(name) if isinstance(secrets, dict) else None
    return value if isinstance(value, str) else None


def delete_secrets(server: str, store: Optional[CredentialBackend] = None) -> None:
    """Forget every secret of ``server`` (its OAuth credentials stay). An entry left empty is removed, and a
    server without secrets leaves the store untouched (no empty ``"server": {}`` entry behind)."""
    backend = _open(store)
    entry = backend.get(server)
    if not entry or _KEY not in entry:
        return

    def fn(entry: Dict[str, Any]) -> bool:
        entry.pop(_KEY, None)
        return not entry

    if backend.update(server, fn):
        # Empty now: remove it, unless another process stored something for this server in between.
        if not backend.get(server):
            backend.remove(server)


def resolve_secret_reference(ref: str) -> str:
    """The value for ``${secret:REF}`` in a configuration; ConfigError when it is not stored (naming the
    reference, never a value)."""
    from ..errors import CredentialStoreError

    try:
        value = read_secret(ref)
    except CredentialStoreError as exc:
        raise ConfigError("cannot read the secret %s: %s" % (ref, exc.message)) from None
    if value is None:
        raise ConfigError(
            "the secret %s is not in the credential store (install the server again, or set it with "
            "mcpsync install)" % ref
        )
    return value
