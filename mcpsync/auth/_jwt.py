"""JWT signing (ES256 and RS256) for private_key_jwt client assertions and DPoP proofs, through PyJWT.

Needs the optional ``jwt`` extra (PyJWT with ``cryptography``), imported only when a JWT is actually
signed. mcpsync checks the key against the algorithm (a P-256 key for ES256, an RSA key for RS256) and
builds the header; PyJWT encodes and signs. Pure functions, thread-safe, non-blocking.
"""

from __future__ import annotations

import base64
import os
import secrets
import time
from typing import Any, Dict, Optional, Union

from ..errors import ConfigError

__all__ = ["b64url", "sign_jwt", "client_assertion", "load_private_key"]

SUPPORTED_ALGS = ("ES256", "RS256")


def b64url(data: bytes) -> str:
    """base64url without padding."""
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _pyjwt(purpose: str) -> Any:
    try:
        import jwt
    except ImportError as exc:
        raise ConfigError("%s needs PyJWT: pip install 'mcpsync[jwt]'" % purpose) from exc
    return jwt


def _crypto(purpose: str = "private_key_jwt") -> Any:
    try:
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa, utils
    except ImportError as exc:
        raise ConfigError("%s needs the 'cryptography' package: pip install 'mcpsync[jwt]'" % purpose) from exc
    return hashes, serialization, ec, padding, rsa, utils


def load_private_key(pem: Union[str, bytes], password: Optional[bytes] = None) -> Any:
    """Load a PEM private key given as PEM text/bytes or as the path of a PEM file."""
    _, serialization, _, _, _, _ = _crypto()
    if isinstance(pem, str) and "-----BEGIN" not in pem:
        path = os.path.expanduser(pem)
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise ConfigError("cannot read the private key file %s: %s" % (path, exc.strerror)) from exc
    else:
        data = pem.encode("ascii") if isinstance(pem, str) else pem
    try:
        return serialization.load_pem_private_key(data, password=password)
    except (ValueError, TypeError) as exc:
        raise ConfigError("the private key is not a usable PEM private key") from exc


def sign_jwt(
    claims: Dict[str, Any],
    key: Any,
    alg: str = "ES256",
    kid: Optional[str] = None,
    *,
    header: Optional[Dict[str, Any]] = None,
    purpose: str = "private_key_jwt",
) -> str:
    """A compact JWS of ``claims`` signed with ``key`` (a loaded key or PEM text/path).

    ``header`` adds (or overrides, e.g. ``typ``) protected header members; ``purpose`` names
    the feature in the error raised when ``cryptography`` is missing.
    """
    _, _, ec, _, rsa, _ = _crypto(purpose)
    jwt = _pyjwt(purpose)
    if alg not in SUPPORTED_ALGS:
        raise ConfigError("unsupported JWT signing algorithm %r (use ES256 or RS256)" % alg)
    if isinstance(key, (str, bytes)):
        key = load_private_key(key)
    if alg == "ES256" and not (isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name == "secp256r1"):
        raise ConfigError("ES256 needs a P-256 elliptic curve private key")
    if alg == "RS256" and not isinstance(key, rsa.RSAPrivateKey):
        raise ConfigError("RS256 needs an RSA private key")
    head: Dict[str, Any] = {"typ": "JWT"}
    if kid:
        head["kid"] = kid
    if header:
        head.update(header)
    token: str = jwt.encode(claims, key, algorithm=alg, headers=head)
    return token


def client_assertion(
    client_id: str, audience: str, key: Any, alg: str = "ES256", kid: Optional[str] = None, lifetime: int = 300
) -> str:
    """An RFC 7523 client assertion: iss = sub = ``client_id``, ``aud``, fresh ``jti``, short ``exp``."""
    now = int(time.time())
    claims = {
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": now,
        "exp": now + lifetime,
        "jti": secrets.token_urlsafe(24),
    }
    return sign_jwt(claims, key, alg, kid)
