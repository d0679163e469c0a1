"""The credential store protocol, the entry schema every backend enforces, and shared helpers.

:class:`CredentialBackend` is what :class:`~mcpsync.auth.OAuthManager` needs from a store:
seven methods and a ``location``. mcpsync ships three implementations:

- :class:`~mcpsync.auth.CredentialStore`: one 0600 JSON file per user, file-locked (the default);
- :class:`~mcpsync.auth.KeyringCredentialStore`: the operating system's keyring (``mcpsync[keyring]``);
- :class:`~mcpsync.auth.RedisCredentialStore`: a Redis server shared by a fleet of workers
  on many hosts (``mcpsync[redis]``).

An entry is a JSON object per server name (layout in :mod:`mcpsync.auth.store`). Whatever a
backend holds is passed through :func:`clean_entry` before use: a value of the wrong type
reads as absent, so hostile or damaged content never reaches the OAuth code as a surprise.

A backend written by an application may subclass :class:`CredentialStoreBase` to get the
convenience methods (``get_for_url``, ``update_tokens``...) from the seven primitives.
"""

from __future__ import annotations

import abc
import copy
import logging
import math
import time
from types import MappingProxyType
from typing import (
    Any,
    Callable,
    ContextManager,
    Dict,
    Iterator,
    List,
    Mapping,
    Optional,
    Protocol,
    Tuple,
    TypeVar,
    runtime_checkable,
)

__all__ = [
    "CredentialBackend",
    "CredentialStoreBase",
    "clean_entry",
    "entry_for_url",
    "find_state_owner",
]

log = logging.getLogger(__name__)

_T = TypeVar("_T")

CALLBACK_TTL = 600.0
"""Seconds a relayed OAuth callback is kept for the process waiting for it."""


@runtime_checkable
class CredentialBackend(Protocol):
    """What a credential store provides. Every method may be called from any thread.

    ``location`` names the shared store without secrets (a file path, ``keyring:<service>``,
    ``redis://host:port/db/<prefix>``); processes sharing a store see the same string.

    Entries are plain JSON-able dicts keyed by server name; results are copies.
    """

    location: str

    def get(self, name: str) -> Optional[Dict[str, Any]]:
        """The (cleaned) entry of ``name``, or None."""
        ...

    def all(self) -> Dict[str, Dict[str, Any]]:
        """Every (cleaned) entry, by server name."""
        ...

    def update(self, name: str, fn: Callable[[Dict[str, Any]], _T]) -> _T:
        """Atomically apply ``fn(entry)`` (mutating in place) to ``name``'s entry, created empty
        when absent, against every process sharing the store; returns ``fn``'s result.
        ``fn`` may run more than once (optimistic backends retry); if it raises, nothing is written."""
        ...

    def remove(self, name: str) -> bool:
        """Delete the entry of ``name``; whether there was one."""
        ...

    def refresh_lock(self, name: str) -> ContextManager[Any]:
        """An exclusive lock for refreshing ``name``'s tokens, held by one thread of one process
        of every process sharing the store at a time (a lease where a holder can crash)."""
        ...

    def record_callback(self, state: str, params: Mapping[str, str]) -> None:
        """Leave OAuth redirect parameters for the process whose login uses ``state``."""
        ...

    def take_callback(self, state: str) -> Optional[Dict[str, str]]:
        """Remove and return the parameters recorded for ``state``, or None."""
        ...


# ---------------------------------------------------------------------- the entry schema


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _is_num(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _is_opt_str(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _is_jwk(value: Any) -> bool:
    """A (private) JWK as DPoP stores it: string members only, with ``kty``."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("kty"), str)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
    )


_Fields = Mapping[str, Callable[[Any], bool]]

_TOKENS: _Fields = MappingProxyType({
    "accessToken": _is_str,
    "refreshToken": _is_str,
    "expiresAt": _is_num,
    "obtainedAt": _is_num,
    "scope": _is_str,
    "tokenType": _is_str,
})
_CLIENT_INFO: _Fields = MappingProxyType({
    "clientId": _is_str,
    "clientSecret": _is_str,
    "clientIdIssuedAt": _is_num,
    "clientSecretExpiresAt": _is_num,
    "redirectUri": _is_str,
    "issuer": _is_str,
    "tokenEndpointAuthMethod": _is_str,
})
_TOKEN_CLIENT: _Fields = MappingProxyType({"clientId": _is_str, "source": _is_str, "method": _is_opt_str})
_PENDING: _Fields = MappingProxyType({
    "issuer": _is_str,
    "tokenEndpoint": _is_str,
    "redirectUri": _is_str,
    "resource": _is_str,
    "scope": _is_opt_str,
    "issRequired": _is_bool,
    "clientId": _is_str,
    "clientSource": _is_opt_str,
    "clientMethod": _is_opt_str,
    "dpopAlg": _is_opt_str,
})
# name -> (fields, keys that must be present for the object to count)
_OBJECTS: Mapping[str, Tuple[_Fields, Tuple[str, ...]]] = MappingProxyType({
    "tokens": (_TOKENS, ("accessToken",)),
    "clientInfo": (_CLIENT_INFO, ("clientId",)),
    "tokenClient": (_TOKEN_CLIENT, ()),
    "pendingAuth": (_PENDING, ("tokenEndpoint", "redirectUri", "resource", "clientId")),
})
_SCALARS: _Fields = MappingProxyType({
    "serverUrl": _is_str,
    "resource": _is_str,
    "issuer": _is_str,
    "tokenEndpoint": _is_str,
    "codeVerifier": _is_str,
    "oauthState": _is_str,
    "authIssuer": _is_str,
    "requestedScope": _is_str,
    "needsAuth": _is_bool,
    "dpopKey": _is_jwk,
})
_MAX_DEPTH = 16


def _plain(value: Any, depth: int = 0) -> bool:
    """JSON data no deeper than _MAX_DEPTH with finite numbers (safe to copy and re-serialize)."""
    if value is None or isinstance(value, (str, bool)):
        return True
    if isinstance(value, (int, float)):
        return _is_num(value)
    if depth >= _MAX_DEPTH:
        return False
    if isinstance(value, list):
        return all(_plain(item, depth + 1) for item in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v, depth + 1) for k, v in value.items())
    return False


def _clean_object(value: Any, fields: _Fields, required: Tuple[str, ...], dropped: List[str], label: str) -> Any:
    if not isinstance(value, dict):
        dropped.append(label)
        return None
    out: Dict[str, Any] = {}
    for key, item in value.items():
        check = fields.get(key)
        if check is not None:
            if check(item):
                out[key] = item
            else:
                dropped.append("%s.%s" % (label, key))
        elif isinstance(key, str) and _plain(item, 2):
            out[key] = copy.deepcopy(item)
        else:
            dropped.append("%s.%s" % (label, key))
    if any(key not in out for key in required):
        dropped.append(label)
        return None
    return out


def clean_entry(raw: Any, dropped: Optional[List[str]] = None) -> Optional[Dict[str, Any]]:
    """A well-typed deep copy of a stored entry, or None when ``raw`` is not an object.

    Known fields of the wrong type (``tokens`` as a string, ``expiresAt`` as a list, an
    infinite number...) are left out, so they read as absent; a ``tokens`` without an
    ``accessToken`` string, a ``clientInfo`` without ``clientId``, a ``pendingAuth`` without
    its endpoint and redirect URI count as absent too. Other keys are kept when they are
    plain JSON. The names of the dropped fields (never their values) are appended to ``dropped``.
    """
    sink: List[str] = [] if dropped is None else dropped
    if not isinstance(raw, dict):
        sink.append("<entry>")
        return None
    out: Dict[str, Any] = {}
    for key, value in raw.items():
        if not isinstance(key, str):
            sink.append("<key>")
            continue
        if key in _OBJECTS:
            fields, required = _OBJECTS[key]
            cleaned = _clean_object(value, fields, required, sink, key)
            if cleaned is not None:
                out[key] = cleaned
        elif key in _SCALARS:
            if _SCALARS[key](value):
                out[key] = copy.deepcopy(value)
            else:
                sink.append(key)
        elif _plain(value, 1):
            out[key] = copy.deepcopy(value)
        else:
            sink.append(key)
    return out


def clean_callback(raw: Any) -> Optional[Dict[str, Any]]:
    """A relayed callback record with string parameters and a numeric ``receivedAt``, or None."""
    if not isinstance(raw, dict):
        return None
    record: Dict[str, Any] = {k: v for k, v in raw.items() if isinstance(k, str) and isinstance(v, str)}
    received = raw.get("receivedAt")
    record["receivedAt"] = received if _is_num(received) else 0
    return record


def callback_params(record: Mapping[str, Any]) -> Dict[str, str]:
    """The parameters of a recorded callback (without ``receivedAt``)."""
    return {k: str(v) for k, v in record.items() if k != "receivedAt"}


CALLBACK_KEYS = ("code", "state", "iss", "error", "error_description")
#: At most this many relayed redirects are kept (the oldest go first).
MAX_CALLBACKS = 100


def add_callback(callbacks: Dict[str, Any], state: str, params: Mapping[str, str]) -> None:
    """Record the redirect parameters of ``state`` in ``callbacks`` (in place): entries older than
    :data:`CALLBACK_TTL` are pruned, and the oldest go while more than :data:`MAX_CALLBACKS` would be kept."""
    now = time.time()
    for key in [k for k, v in callbacks.items() if now - v["receivedAt"] > CALLBACK_TTL]:
        callbacks.pop(key, None)
    while len(callbacks) >= MAX_CALLBACKS:
        callbacks.pop(min(callbacks, key=lambda k: callbacks[k]["receivedAt"]))
    record: Dict[str, Any] = {k: v for k, v in params.items() if k in CALLBACK_KEYS}
    record["receivedAt"] = now
    callbacks[state] = record


def entry_for_url(store: CredentialBackend, name: str, server_url: str) -> Optional[Dict[str, Any]]:
    """``name``'s entry (cleaned) only when it was stored for ``server_url``, else None.

    An entry without a recorded URL is not returned either: credentials are never sent to
    a server they were not obtained for.
    """
    entry = clean_entry(store.get(name))
    if entry is None or entry.get("serverUrl") != server_url:
        return None
    return entry


def find_state_owner(store: CredentialBackend, state: str) -> Optional[str]:
    """The server name whose login in progress uses ``state``, or None."""
    if not state:
        return None
    for name, entry in store.all().items():
        if isinstance(entry, dict) and entry.get("oauthState") == state:
            return name
    return None


# ---------------------------------------------------------------------- convenience methods

_URL_BOUND = ("tokens", "clientInfo", "issuer", "tokenEndpoint", "resource", "needsAuth", "tokenClient")


class CredentialStoreBase(abc.ABC):
    """Convenience methods over the :class:`CredentialBackend` primitives (an abstract base class).

    Subclasses implement the abstract ``get``, ``all`` and ``update`` (a subclass missing one cannot be
    instantiated), and provide the rest of :class:`CredentialBackend`: ``remove``, ``refresh_lock``,
    ``record_callback``, ``take_callback`` and ``location``.
    """

    location: str = ""

    @abc.abstractmethod
    def get(self, name: str) -> Optional[Dict[str, Any]]:
        """The entry stored for ``name`` (a copy), or None."""

    @abc.abstractmethod
    def all(self) -> Dict[str, Dict[str, Any]]:
        """Every entry, by server name (copies)."""

    @abc.abstractmethod
    def update(self, name: str, fn: Callable[[Dict[str, Any]], _T]) -> _T:
        """Apply ``fn`` to the entry of ``name`` (created empty if missing) atomically; return its result."""

    def get_for_url(self, name: str, server_url: str) -> Optional[Dict[str, Any]]:
        """The entry for ``name`` only when it was stored for ``server_url`` (else None)."""
        return entry_for_url(self, name, server_url)  # type: ignore[arg-type]

    def names(self) -> Iterator[str]:
        """The server names with an entry, sorted."""
        return iter(sorted(self.all()))

    def find_state_owner(self, state: str) -> Optional[str]:
        """The server name whose login in progress uses ``state``, or None."""
        return find_state_owner(self, state)  # type: ignore[arg-type]

    def _set(self, name: str, key: str, value: Any, server_url: Optional[str]) -> None:
        def fn(entry: Dict[str, Any]) -> None:
            if server_url is not None:
                if entry.get("serverUrl") not in (None, server_url):
                    # Another server now uses this name: its old credentials must go.
                    for stale in _URL_BOUND:
                        entry.pop(stale, None)
                entry["serverUrl"] = server_url
            if value is None:
                entry.pop(key, None)
            else:
                entry[key] = copy.deepcopy(value)

        self.update(name, fn)

    def update_tokens(self, name: str, tokens: Dict[str, Any], server_url: Optional[str] = None) -> None:
        """Store ``tokens`` (accessToken, refreshToken, expiresAt, scope) and clear ``needsAuth``."""

        def fn(entry: Dict[str, Any]) -> None:
            if server_url is not None:
                if entry.get("serverUrl") not in (None, server_url):
                    entry.pop("clientInfo", None)
                entry["serverUrl"] = server_url
            entry["tokens"] = copy.deepcopy(tokens)
            entry.pop("needsAuth", None)

        self.update(name, fn)

    def update_client_info(self, name: str, client_info: Dict[str, Any], server_url: Optional[str] = None) -> None:
        """Store the client registration (clientId, clientSecret, redirectUri, issuer...)."""
        self._set(name, "clientInfo", client_info, server_url)

    def update_code_verifier(self, name: str, code_verifier: str) -> None:
        """Store the PKCE verifier of the login in progress."""
        self._set(name, "codeVerifier", code_verifier, None)

    def update_oauth_state(self, name: str, oauth_state: str) -> None:
        """Store the ``state`` of the login in progress."""
        self._set(name, "oauthState", oauth_state, None)

    def clear_code_verifier(self, name: str) -> None:
        """Forget the PKCE verifier."""
        self._set(name, "codeVerifier", None, None)

    def clear_oauth_state(self, name: str) -> None:
        """Forget the login ``state``."""
        self._set(name, "oauthState", None, None)

    def clear_tokens(self, name: str) -> None:
        """Forget the tokens of ``name`` (keeps the client registration)."""
        self._set(name, "tokens", None, None)

    def clear_client_info(self, name: str) -> None:
        """Forget the client registration of ``name``."""
        self._set(name, "clientInfo", None, None)
