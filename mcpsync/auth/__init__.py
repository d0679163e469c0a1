"""OAuth for remote MCP servers: discovery, registration, PKCE, the loopback callback
server, the credential stores (file, OS keyring, Redis), refresh, and non-interactive grants.

Importing this package is cheap: it imports neither requests nor filelock; the names
below load their module on first use. Typical use::

    from mcpsync.auth import OAuthManager

    oauth = OAuthManager()
    oauth.add_server("linear", "https://mcp.linear.app/mcp")
    oauth.authenticate("linear")                    # browser login, blocks until approved
    auth = oauth.auth("linear")                     # an mcpsync.httpauth.Auth for the HTTP transport

See docs/guides/oauth.md.
"""

from __future__ import annotations

from types import MappingProxyType as _MappingProxyType
from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:  # what the lazy names below are, for type checkers (nothing is imported at run time)
    from ..httpauth import Auth, AuthRequest, AuthResponse, BearerAuth
    from .backends import open_store
    from .callback import AuthorizationRequest, CallbackResult
    from .config import OAuthConfig
    from .discovery import canonical_resource, parse_www_authenticate
    from .flow import OAuthManager
    from .grants import ClientAuth
    from .oauth_auth import OAuthAuth
    from .store import CredentialStore, default_store_path
    from .store_base import CredentialBackend, CredentialStoreBase
    from .store_keyring import KeyringCredentialStore
    from .store_redis import RedisCredentialStore

__all__ = [
    "Auth",
    "AuthRequest",
    "AuthResponse",
    "AuthorizationRequest",
    "BearerAuth",
    "CallbackResult",
    "ClientAuth",
    "CredentialBackend",
    "CredentialStore",
    "CredentialStoreBase",
    "KeyringCredentialStore",
    "OAuthAuth",
    "OAuthConfig",
    "OAuthManager",
    "RedisCredentialStore",
    "canonical_resource",
    "default_store_path",
    "open_store",
    "parse_www_authenticate",
]

_LAZY = _MappingProxyType({
    "AuthorizationRequest": ".callback",
    "OAuthManager": ".flow",
    "Auth": "..httpauth",
    "AuthRequest": "..httpauth",
    "AuthResponse": "..httpauth",
    "BearerAuth": "..httpauth",
    "CallbackResult": ".callback",
    "ClientAuth": ".grants",
    "CredentialStore": ".store",
    "CredentialBackend": ".store_base",
    "CredentialStoreBase": ".store_base",
    "open_store": ".backends",
    "KeyringCredentialStore": ".store_keyring",
    "RedisCredentialStore": ".store_redis",
    "default_store_path": ".store",
    "OAuthAuth": ".oauth_auth",
    "OAuthConfig": ".config",
    "canonical_resource": ".discovery",
    "parse_www_authenticate": ".discovery",
})


__getattr__, __dir__ = exports(__name__, _LAZY, globals())


