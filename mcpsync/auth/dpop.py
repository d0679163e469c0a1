"""DPoP (RFC 9449): the proof-of-possession key, proofs, and the per-server nonce cache.

A :class:`DPoPKey` is an ES256 (P-256, the default) or RS256 key pair. It is kept with the
server's credentials (the private key as a JWK in the 0600 credential store) so a refreshed
token stays bound to it. Each HTTP request carrying a DPoP-bound token gets a fresh proof:
a JWT with header ``typ: dpop+jwt``, ``alg`` and the public ``jwk``, and claims ``jti``,
``htm``, ``htu`` (the URL without query and fragment), ``iat``, ``ath`` (the access token's
SHA-256, for resource requests) and ``nonce`` when the server demanded one.

Signing needs the optional ``cryptography`` package (``pip install 'mcpsync[jwt]'``),
imported only when a key is made or loaded. Keys never appear in reprs or logs. Every
function here is thread-safe; :class:`NonceCache` locks internally.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import threading
import time
from collections import OrderedDict
from typing import Any, Dict, List, Optional, Set, Tuple
from urllib.parse import urlsplit, urlunsplit

from ..errors import AuthError, ConfigError
from ._jwt import _crypto, _pyjwt, b64url, sign_jwt

__all__ = [
    "DPOP_ALGS",
    "DPoPKey",
    "NonceCache",
    "choose_alg",
    "crypto_available",
    "htu",
    "access_token_hash",
]

DPOP_ALGS = ("ES256", "RS256")
PURPOSE = "DPoP (RFC 9449, sender-constrained tokens)"
_NONCE_RE = re.compile(r"^[\x21\x23-\x5b\x5d-\x7e]{1,512}$")  # RFC 9449: nonce = 1*NQCHAR


def crypto_available() -> bool:
    """Whether the ``jwt`` extra (PyJWT and ``cryptography``) can be imported."""
    try:
        _crypto(PURPOSE)
        _pyjwt(PURPOSE)
    except ConfigError:
        return False
    return True


def choose_alg(supported: Optional[List[str]], preferred: str = "ES256") -> str:
    """The signing algorithm to use given the server's ``dpop_signing_alg_values_supported``.

    ``preferred`` when the server lists nothing or lists it; else the first algorithm mcpsync
    signs that the server lists. Raises :class:`~mcpsync.errors.AuthError` when there is none.
    """
    if preferred not in DPOP_ALGS:
        raise ConfigError("unsupported DPoP signing algorithm %r (use ES256 or RS256)" % preferred)
    if not supported or preferred in supported:
        return preferred
    for alg in DPOP_ALGS:
        if alg in supported:
            return alg
    raise AuthError(
        "the authorization server accepts DPoP proofs signed with %s only; mcpsync signs ES256 or RS256"
        % ", ".join(str(a) for a in supported[:8])
    )


def htu(url: str) -> str:
    """The ``htu`` claim for ``url``: scheme, authority and path; no query, no fragment."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", "", ""))


def access_token_hash(token: str) -> str:
    """The ``ath`` claim: base64url SHA-256 of the access token's ASCII bytes."""
    return b64url(hashlib.sha256(token.encode("ascii", "replace")).digest())


def _b64d(text: Any) -> bytes:
    if not isinstance(text, str):
        raise ValueError("not a string")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _int(text: Any) -> int:
    return int.from_bytes(_b64d(text), "big")


def _enc(value: int, size: Optional[int] = None) -> str:
    length = size if size is not None else max(1, (value.bit_length() + 7) // 8)
    return b64url(value.to_bytes(length, "big"))


class DPoPKey:
    """A DPoP key pair. Build with :meth:`generate` or :meth:`from_jwk`; never shown in reprs.

    Attributes:
        alg: ``ES256`` or ``RS256``.
        public_jwk: the public key as a JWK (what each proof's header carries).
        thumbprint: its RFC 7638 SHA-256 thumbprint (``cnf.jkt`` of bound tokens).
    """

    __slots__ = ("alg", "_key", "public_jwk", "thumbprint", "_private_jwk")

    def __init__(self, key: Any, alg: str) -> None:
        _, _, ec, _, rsa, _ = _crypto(PURPOSE)
        if alg == "ES256":
            if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp256r1":
                raise ConfigError("an ES256 DPoP key must be a P-256 elliptic curve key")
            pub = key.public_key().public_numbers()
            public: Dict[str, str] = {"kty": "EC", "crv": "P-256", "x": _enc(pub.x, 32), "y": _enc(pub.y, 32)}
            private = dict(public, d=_enc(key.private_numbers().private_value, 32))
            members: Tuple[str, ...] = ("crv", "kty", "x", "y")
        elif alg == "RS256":
            if not isinstance(key, rsa.RSAPrivateKey):
                raise ConfigError("an RS256 DPoP key must be an RSA key")
            numbers = key.private_numbers()
            public = {"kty": "RSA", "n": _enc(numbers.public_numbers.n), "e": _enc(numbers.public_numbers.e)}
            private = dict(
                public,
                d=_enc(numbers.d),
                p=_enc(numbers.p),
                q=_enc(numbers.q),
                dp=_enc(numbers.dmp1),
                dq=_enc(numbers.dmq1),
                qi=_enc(numbers.iqmp),
            )
            members = ("e", "kty", "n")
        else:
            raise ConfigError("unsupported DPoP signing algorithm %r (use ES256 or RS256)" % alg)
        self.alg = alg
        self._key = key
        self.public_jwk = public
        self._private_jwk = private
        canonical = json.dumps({m: public[m] for m in members}, separators=(",", ":"), sort_keys=True)
        self.thumbprint = b64url(hashlib.sha256(canonical.encode("ascii")).digest())

    def __repr__(self) -> str:
        return "DPoPKey(alg=%r, thumbprint=%r)" % (self.alg, self.thumbprint)

    @classmethod
    def generate(cls, alg: str = "ES256") -> "DPoPKey":
        """A new random key pair for ``alg`` (RS256: 2048-bit RSA)."""
        _, _, ec, _, rsa, _ = _crypto(PURPOSE)
        if alg == "ES256":
            return cls(ec.generate_private_key(ec.SECP256R1()), alg)
        if alg == "RS256":
            return cls(rsa.generate_private_key(public_exponent=65537, key_size=2048), alg)
        raise ConfigError("unsupported DPoP signing algorithm %r (use ES256 or RS256)" % alg)

    @classmethod
    def from_jwk(cls, jwk: Any) -> "DPoPKey":
        """Load a key saved with :meth:`to_jwk`. Raises :class:`~mcpsync.errors.ConfigError` when unusable."""
        _, _, ec, _, rsa, _ = _crypto(PURPOSE)
        if not isinstance(jwk, dict):
            raise ConfigError("a stored DPoP key is not a JWK object")
        alg = jwk.get("alg")
        try:
            if alg == "ES256" and jwk.get("kty") == "EC" and jwk.get("crv") == "P-256":
                public = ec.EllipticCurvePublicNumbers(_int(jwk["x"]), _int(jwk["y"]), ec.SECP256R1())
                key: Any = ec.EllipticCurvePrivateNumbers(_int(jwk["d"]), public).private_key()
            elif alg == "RS256" and jwk.get("kty") == "RSA":
                pub = rsa.RSAPublicNumbers(_int(jwk["e"]), _int(jwk["n"]))
                key = rsa.RSAPrivateNumbers(
                    _int(jwk["p"]),
                    _int(jwk["q"]),
                    _int(jwk["d"]),
                    _int(jwk["dp"]),
                    _int(jwk["dq"]),
                    _int(jwk["qi"]),
                    pub,
                ).private_key()
            else:
                raise ValueError("unsupported key type")
        except (KeyError, ValueError, TypeError) as exc:
            raise ConfigError("a stored DPoP key is not a usable %s JWK" % (alg or "private")) from exc
        return cls(key, str(alg))

    def to_jwk(self) -> Dict[str, str]:
        """The private key as a JWK (with ``alg``), for the credential store only."""
        return dict(self._private_jwk, alg=self.alg)

    def proof(self, method: str, url: str, *, access_token: Optional[str] = None, nonce: Optional[str] = None) -> str:
        """A fresh DPoP proof for one HTTP request (new ``jti`` every call)."""
        claims: Dict[str, Any] = {
            "jti": secrets.token_urlsafe(16),
            "htm": method.upper(),
            "htu": htu(url),
            "iat": int(time.time()),
        }
        if access_token is not None:
            claims["ath"] = access_token_hash(access_token)
        if nonce:
            claims["nonce"] = nonce
        header = {"typ": "dpop+jwt", "jwk": self.public_jwk}
        return sign_jwt(claims, self._key, self.alg, header=header, purpose=PURPOSE)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return "%s://%s" % (parts.scheme.lower(), parts.netloc.lower())


class NonceCache:
    """The last ``DPoP-Nonce`` each server (by origin) supplied. Thread-safe; bounded."""

    def __init__(self, limit: int = 256) -> None:
        self._lock = threading.Lock()
        self._limit = limit
        self._nonces: "OrderedDict[str, str]" = OrderedDict()

    def get(self, url: str) -> Optional[str]:
        """The nonce to send to ``url``'s server, if it gave one."""
        with self._lock:
            return self._nonces.get(_origin(url))

    def put(self, url: str, nonce: Optional[str]) -> bool:
        """Remember ``nonce`` for ``url``'s server; False (ignored) when it is not a valid nonce."""
        if not isinstance(nonce, str) or not _NONCE_RE.match(nonce):
            return False
        key = _origin(url)
        with self._lock:
            self._nonces[key] = nonce
            self._nonces.move_to_end(key)
            while len(self._nonces) > self._limit:
                self._nonces.popitem(last=False)
        return True


class DPoPState:
    """The DPoP side of an :class:`~mcpsync.auth.OAuthManager`: per-server keys, nonces, bound tokens.

    Keys live in the credential store entry (``dpopKey``, a private JWK) so a refreshed token
    stays bound to the same key in every process; loaded keys are cached here. Thread-safe.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.nonces = NonceCache()  # from authorization servers (token endpoints)
        self.rs_nonces = NonceCache()  # from resource servers (RFC 9449 sections 8 and 9 keep them apart)
        self._keys: Dict[str, DPoPKey] = {}  # JWK "d" -> loaded key
        self._bound: "OrderedDict[str, DPoPKey]" = OrderedDict()  # access token -> its key
        self._challenged: Set[str] = set()  # server names whose 401 challenge was DPoP-only

    def note_challenge(self, name: str) -> None:
        """Server ``name`` challenged with the DPoP scheme and not Bearer: it requires DPoP."""
        with self._lock:
            self._challenged.add(name)

    def wants(self, name: str, cfg: Any, advertised: Optional[List[str]]) -> Optional[str]:
        """The algorithm to use for ``name``'s next tokens, or None for Bearer tokens.

        Raises :class:`~mcpsync.errors.ConfigError` naming ``mcpsync[jwt]`` when DPoP is
        required (configured, or demanded by the server's challenge) but ``cryptography``
        is missing; when the server merely offers DPoP, Bearer tokens are used instead.
        """
        if cfg.dpop is False:
            return None
        with self._lock:
            challenged = name in self._challenged
        if not (cfg.dpop or challenged or advertised):
            return None
        if not crypto_available():
            if cfg.dpop or challenged:
                raise ConfigError(
                    "server %s requires DPoP (RFC 9449) proofs, which need the 'cryptography' package: "
                    "pip install 'mcpsync[jwt]'" % name,
                    server=name,
                )
            return None
        return choose_alg(advertised, cfg.dpop_alg)

    def _load(self, jwk: Any) -> DPoPKey:
        d = jwk.get("d") if isinstance(jwk, dict) else None
        with self._lock:
            key = self._keys.get(d) if isinstance(d, str) else None
        if key is None:
            key = DPoPKey.from_jwk(jwk)
            with self._lock:
                self._keys[str(d)] = key
        return key

    def key_for(self, name: str, alg: str, store: Any) -> DPoPKey:
        """The key of ``name`` for ``alg``: the stored one, else a new one saved in the store entry."""
        jwk = (store.get(name) or {}).get("dpopKey")
        if isinstance(jwk, dict) and jwk.get("alg") == alg:
            try:
                return self._load(jwk)
            except ConfigError:
                if not crypto_available():
                    raise
        fresh = DPoPKey.generate(alg)
        chosen: List[Any] = []

        def keep(e: Dict[str, Any]) -> None:  # idempotent: a store may run it more than once
            chosen.clear()
            current = e.get("dpopKey")
            if isinstance(current, dict) and current.get("alg") == alg and current is not jwk and current != jwk:
                chosen.append(current)  # another process stored one meanwhile: share it
                return
            e["dpopKey"] = fresh.to_jwk()
            chosen.append(None)

        store.update(name, keep)
        return fresh if chosen[0] is None else self._load(chosen[0])

    def stored_key(self, entry: Dict[str, Any]) -> Optional[DPoPKey]:
        """The key stored in a credential ``entry``, or None when there is none."""
        jwk = entry.get("dpopKey")
        return self._load(jwk) if isinstance(jwk, dict) else None

    def note(self, tokens: Dict[str, Any], key: Optional[DPoPKey]) -> None:
        """Remember that ``tokens``' access token is bound to ``key`` (when it is a DPoP token)."""
        token = tokens.get("accessToken")
        if key is None or tokens.get("tokenType") != "DPoP" or not isinstance(token, str):
            return
        with self._lock:
            self._bound[token] = key
            self._bound.move_to_end(token)
            while len(self._bound) > 256:
                self._bound.popitem(last=False)

    def note_entry(self, entry: Dict[str, Any]) -> None:
        """:meth:`note` for tokens read from a store entry (loading its key on first sight)."""
        tokens = entry.get("tokens") or {}
        if tokens.get("tokenType") != "DPoP":
            return
        with self._lock:
            if tokens.get("accessToken") in self._bound:
                return
        key = self.stored_key(entry)
        if key is None:
            raise AuthError("a DPoP-bound access token is stored without its DPoP key; log in again")
        self.note(tokens, key)

    def headers(self, token: str, method: str, url: str) -> Dict[str, str]:
        """``Authorization`` (and, for a DPoP-bound token, a fresh ``DPoP`` proof) for one request."""
        with self._lock:
            key = self._bound.get(token)
        if key is None:
            return {"Authorization": "Bearer " + token}
        proof = key.proof(method, url, access_token=token, nonce=self.rs_nonces.get(url))
        return {"Authorization": "DPoP " + token, "DPoP": proof}
