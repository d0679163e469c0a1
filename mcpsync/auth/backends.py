"""Choose a credential store from a string: :func:`open_store`.

Kept apart from the stores so that naming one (``"redis://..."``) imports only that backend.
"""

from __future__ import annotations

import os
from typing import Optional

from ..errors import ConfigError
from .store_base import CredentialBackend

__all__ = ["open_store", "is_file_spec", "ENV_AUTH_STORE"]

ENV_AUTH_STORE = "MCPSYNC_AUTH_STORE"
"""Environment variable: the credential store for :func:`open_store` (None) to use."""


_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def is_file_spec(spec: str) -> bool:
    """Whether the store spec ``spec`` names a file (not the keyring or Redis)."""
    return not (spec == "keyring" or spec.startswith("keyring:") or spec.startswith(_REDIS_SCHEMES))


def open_store(spec: Optional[str] = None) -> CredentialBackend:
    """The credential store named by ``spec``.

    - ``None``: ``$MCPSYNC_AUTH_STORE`` when set (any form below), else the default file store;
    - ``"keyring"`` or ``"keyring:<service>"``: :class:`~mcpsync.auth.KeyringCredentialStore`
      (needs ``mcpsync[keyring]``);
    - ``"redis://..."``, ``"rediss://..."``, ``"unix://..."``: :class:`~mcpsync.auth.RedisCredentialStore`
      with that connection URL (needs ``mcpsync[redis]``); a ``#prefix`` fragment sets the key prefix;
    - anything else: the path of a :class:`~mcpsync.auth.CredentialStore` file.
    """
    if spec is None:
        spec = os.environ.get(ENV_AUTH_STORE) or None
    if spec is None:
        from .store import CredentialStore

        return CredentialStore()
    if not isinstance(spec, str):
        raise ConfigError("a credential store spec must be a string, not %s" % type(spec).__name__)
    if is_file_spec(spec):
        from .store import CredentialStore

        return CredentialStore(spec)
    if spec == "keyring" or spec.startswith("keyring:"):
        from .store_keyring import KeyringCredentialStore

        service = spec.partition(":")[2]
        return KeyringCredentialStore(service=service) if service else KeyringCredentialStore()
    from .store_redis import RedisCredentialStore

    url, _sep, prefix = spec.partition("#")
    return RedisCredentialStore(url, prefix=prefix) if prefix else RedisCredentialStore(url)
