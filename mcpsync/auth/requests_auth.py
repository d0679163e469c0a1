"""The former home of :class:`~mcpsync.auth.oauth_auth.OAuthAuth` (kept so existing imports work).

``OAuthAuth`` is now an :class:`~mcpsync.httpauth.Auth` flow; it still works as a
``requests`` auth (``requests.get(url, auth=oauth.auth(name))``).
"""

from __future__ import annotations

from .oauth_auth import OAuthAuth

__all__ = ["OAuthAuth"]
