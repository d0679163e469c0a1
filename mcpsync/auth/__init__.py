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

from typing import TYPE_CHECKING as _TYPE_CHECKING

from .._lazy import exports as _exports
from .._lazy import table as _table

if _TYPE_CHECKING:  # the lazy names, for type checkers ("X as X" re-exports each; nothing is imported at run time)
    from ..httpauth import Auth as Auth, AuthRequest as AuthRequest, AuthResponse as AuthResponse
    from ..httpauth import BearerAuth as BearerAuth
    from .backends import open_store as open_store
    from .callback import AuthorizationRequest as AuthorizationRequest, CallbackResult as CallbackResult
    from .config import OAuthConfig as OAuthConfig
    from .discovery import canonical_resource as canonical_resource, parse_www_authenticate as parse_www_authenticate
    from .flow import OAuthManager as OAuthManager
    from .grants import ClientAuth as ClientAuth
    from .oauth_auth import OAuthAuth as OAuthAuth
    from .store import CredentialStore as CredentialStore, default_store_path as default_store_path
    from .store_base import CredentialBackend as CredentialBackend, CredentialStoreBase as CredentialStoreBase
    from .store_keyring import KeyringCredentialStore as KeyringCredentialStore
    from .store_redis import RedisCredentialStore as RedisCredentialStore

_LAZY = _table(
    {
        "..httpauth": ("Auth", "AuthRequest", "AuthResponse", "BearerAuth"),
        ".backends": ("open_store",),
        ".callback": ("AuthorizationRequest", "CallbackResult"),
        ".config": ("OAuthConfig",),
        ".discovery": ("canonical_resource", "parse_www_authenticate"),
        ".flow": ("OAuthManager",),
        ".grants": ("ClientAuth",),
        ".oauth_auth": ("OAuthAuth",),
        ".store": ("CredentialStore", "default_store_path"),
        ".store_base": ("CredentialBackend", "CredentialStoreBase"),
        ".store_keyring": ("KeyringCredentialStore",),
        ".store_redis": ("RedisCredentialStore",),
    }
)
__all__ = sorted(_LAZY)

__getattr__, __dir__ = _exports(__name__, _LAZY, globals())
