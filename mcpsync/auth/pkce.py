"""PKCE (RFC 7636, S256 only) and ``state`` generation. Pure functions, thread-safe, non-blocking."""

from __future__ import annotations

import base64
import hashlib
import secrets

__all__ = ["make_code_verifier", "code_challenge", "make_state"]

_VERIFIER_BYTES = 48  # 64 base64url characters, inside RFC 7636's 43..128


def make_code_verifier(length: int = 64) -> str:
    """A fresh code verifier of ``length`` unreserved characters (43..128), from :mod:`secrets`."""
    if not 43 <= length <= 128:
        raise ValueError("a PKCE code verifier has 43 to 128 characters")
    raw = base64.urlsafe_b64encode(secrets.token_bytes(96)).decode("ascii").rstrip("=")
    return raw[:length]


def code_challenge(verifier: str) -> str:
    """The S256 challenge of ``verifier``: base64url(SHA-256(verifier)) without padding."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


def make_state() -> str:
    """A fresh ``state`` value: 32 random bytes, hex encoded (64 characters)."""
    return secrets.token_hex(32)
