"""Token endpoint requests: client authentication and the grants mcpsync uses.

Client authentication methods: ``none``, ``client_secret_basic``, ``client_secret_post``,
``private_key_jwt`` (ES256/RS256, needs ``cryptography``). Grants: authorization code,
refresh token, client credentials, RFC 8693 token exchange (ID token -> ID-JAG at the
identity provider) and RFC 7523 JWT bearer (an ID-JAG, or a workload's own JWT, -> access
token at the authorization server). Token requests may carry DPoP proofs (RFC 9449).

Each function performs one HTTP POST, blocking for at most ``timeout`` seconds, and is
thread-safe. Secrets never appear in messages, reprs or logs.
"""

from __future__ import annotations

import base64
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional, Tuple
from urllib.parse import quote_plus, urlencode

from ..errors import AuthError, ConfigError, OAuthError, TransportError
from ..wire.http_call import answer_json

if TYPE_CHECKING:
    from .dpop import DPoPKey, NonceCache

__all__ = [
    "ClientAuth",
    "noninteractive_grant",
    "token_request",
    "tokens_from_response",
    "GRANT_JWT_BEARER",
    "GRANT_TOKEN_EXCHANGE",
    "TOKEN_TYPE_ID_JAG",
    "TOKEN_TYPE_ID_TOKEN",
]

log = logging.getLogger(__name__)

GRANT_JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
GRANT_TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
TOKEN_TYPE_ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
TOKEN_TYPE_ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
ASSERTION_TYPE_JWT = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
AUTH_METHODS = ("none", "client_secret_basic", "client_secret_post", "private_key_jwt")


@dataclass(frozen=True, eq=False)
class ClientAuth:
    """A client identity at one authorization server and how it authenticates there.

    Attributes:
        client_id: the client id (a CIMD URL for metadata-document clients).
        client_secret: the secret, if any (never shown in repr).
        method: one of ``none``, ``client_secret_basic``, ``client_secret_post``, ``private_key_jwt``.
        private_key: for ``private_key_jwt``: a loaded key, PEM text or a PEM file path.
        signing_alg: ``ES256`` or ``RS256``.
        key_id: optional ``kid`` header of the assertion.
        assertion_audience: the ``aud`` of the assertion (default: the authorization server's issuer).
        source: where it came from: ``config``, ``cimd``, ``stored``, ``registered``.
    """

    client_id: str
    client_secret: Optional[str] = field(default=None, repr=False)
    method: str = "none"
    private_key: Any = field(default=None, repr=False)
    signing_alg: str = field(default="ES256", repr=False)
    key_id: Optional[str] = field(default=None, repr=False)
    assertion_audience: Optional[str] = field(default=None, repr=False)
    source: str = "config"

    def __post_init__(self) -> None:
        method = self.method
        if method not in AUTH_METHODS:
            raise ConfigError(
                "unsupported token endpoint auth method %r (use one of %s)" % (method, ", ".join(AUTH_METHODS))
            )
        if method in ("client_secret_basic", "client_secret_post") and not self.client_secret:
            raise ConfigError("token endpoint auth method %s needs a client secret" % method)
        if method == "private_key_jwt" and self.private_key is None:
            raise ConfigError("token endpoint auth method private_key_jwt needs a private key")

    def apply(self, form: Dict[str, str], headers: Dict[str, str], token_endpoint: str, issuer: Optional[str]) -> None:
        """Add this client's authentication to a token request's ``form`` and ``headers``."""
        if self.method == "client_secret_basic":
            user = quote_plus(self.client_id)
            secret = quote_plus(self.client_secret or "")
            headers["Authorization"] = "Basic " + base64.b64encode(("%s:%s" % (user, secret)).encode("utf-8")).decode(
                "ascii"
            )
            return
        form["client_id"] = self.client_id
        if self.method == "client_secret_post":
            form["client_secret"] = self.client_secret or ""
        elif self.method == "private_key_jwt":
            from ._jwt import client_assertion

            audience = self.assertion_audience or issuer or token_endpoint
            form["client_assertion_type"] = ASSERTION_TYPE_JWT
            form["client_assertion"] = client_assertion(
                self.client_id, audience, self.private_key, self.signing_alg, self.key_id
            )


def token_request(
    session: Any,
    token_endpoint: str,
    form: Mapping[str, Optional[str]],
    client: Optional[ClientAuth],
    *,
    issuer: Optional[str] = None,
    timeout: float = 30.0,
    protocol_version: Optional[str] = None,
    dpop: Optional["DPoPKey"] = None,
    nonces: Optional["NonceCache"] = None,
) -> Dict[str, Any]:
    """POST ``form`` to ``token_endpoint`` with ``client``'s authentication; the JSON answer.

    With ``dpop`` each attempt carries a fresh ``DPoP`` proof (with the server's last nonce
    from ``nonces``); a ``use_dpop_nonce`` error carrying a ``DPoP-Nonce`` is retried once
    with that nonce (RFC 9449 section 8). Raises :class:`~mcpsync.errors.OAuthError` for an
    OAuth error response (``.error``, ``.description``) and :class:`~mcpsync.errors.AuthError`
    for anything else unusable.
    """
    base = {k: v for k, v in form.items() if v is not None}
    grant = base.get("grant_type", "")
    for attempt in (1, 2):
        status, doc, nonce = _post_token(
            session, token_endpoint, base, client, issuer, timeout, protocol_version, dpop, nonces
        )
        if (
            attempt == 1
            and dpop is not None
            and nonce
            and isinstance(doc, dict)
            and doc.get("error") == "use_dpop_nonce"
        ):
            log.debug("token endpoint %s asked for a DPoP nonce; retrying once with it", token_endpoint)
            continue
        break
    if isinstance(doc, dict) and isinstance(doc.get("error"), str):
        raw_description = doc.get("error_description")
        description = raw_description if isinstance(raw_description, str) else ""
        log.info("token endpoint %s refused the %s grant: %s", token_endpoint, grant, doc["error"])
        raise OAuthError(error=doc["error"], description=description[:500])
    if status != 200 or not isinstance(doc, dict):
        raise AuthError("token request (%s) to %s failed with HTTP %s" % (grant, token_endpoint, status))
    return doc


def _post_token(
    session: Any,
    token_endpoint: str,
    base: Dict[str, str],
    client: Optional[ClientAuth],
    issuer: Optional[str],
    timeout: float,
    protocol_version: Optional[str],
    dpop: Optional["DPoPKey"],
    nonces: Optional["NonceCache"],
) -> Tuple[int, Any, Optional[str]]:
    """One token request (client authentication and DPoP proof made fresh): status, JSON, new nonce."""
    form = dict(base)
    headers = {"Accept": "application/json", "Content-Type": "application/x-www-form-urlencoded"}
    if protocol_version:
        headers["MCP-Protocol-Version"] = protocol_version
    if client is not None:
        client.apply(form, headers, token_endpoint, issuer)
    if dpop is not None:
        headers["DPoP"] = dpop.proof("POST", token_endpoint, nonce=nonces.get(token_endpoint) if nonces else None)
    grant = form.get("grant_type", "")
    try:
        resp = session.request(
            "POST",
            token_endpoint,
            headers=headers,
            body=urlencode(form).encode(),
            timeout=timeout,
            follow_redirects=False,
        )
        status = resp.status
        nonce = resp.headers.get("DPoP-Nonce")
        try:
            doc = answer_json(resp)
        except ValueError:
            doc = None
    except TransportError as exc:
        raise AuthError("token request (%s) to %s failed: %s" % (grant, token_endpoint, type(exc).__name__)) from exc
    if nonce and nonces is not None and not nonces.put(token_endpoint, nonce):
        nonce = None
    return status, doc, nonce


def tokens_from_response(
    doc: Dict[str, Any],
    *,
    previous_refresh_token: Optional[str] = None,
    requested_scope: Optional[str] = None,
    dpop: bool = False,
) -> Dict[str, Any]:
    """Store-shaped tokens (accessToken, refreshToken, expiresAt, scope, tokenType) from a token response.

    A refresh response without ``refresh_token`` keeps ``previous_refresh_token``. ``dpop``:
    the request carried a DPoP proof, so ``token_type`` ``DPoP`` is accepted (tokenType "DPoP").
    """
    access = doc.get("access_token")
    if not isinstance(access, str) or not access:
        raise AuthError("the token response has no access_token")
    token_type = doc.get("token_type")
    kind = token_type.lower() if isinstance(token_type, str) else "bearer"
    if kind == "dpop" and not dpop:
        raise AuthError("the token response has token_type DPoP although no DPoP proof was sent")
    if kind not in ("bearer", "n_a", "dpop"):
        raise AuthError("the token response has token_type %r; only Bearer and DPoP are supported" % token_type)
    if dpop and kind != "dpop":
        log.warning("the authorization server answered a DPoP token request with a %s token", token_type or "Bearer")
    tokens: Dict[str, Any] = {
        "accessToken": access,
        "tokenType": "DPoP" if kind == "dpop" else "Bearer",
        "obtainedAt": int(time.time()),
    }
    refresh = doc.get("refresh_token")
    if isinstance(refresh, str) and refresh:
        tokens["refreshToken"] = refresh
    elif previous_refresh_token:
        tokens["refreshToken"] = previous_refresh_token
    expires_in = doc.get("expires_in")
    if isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool) and expires_in > 0:
        tokens["expiresAt"] = int(time.time() + expires_in)
    elif isinstance(expires_in, str) and expires_in.isdigit():
        tokens["expiresAt"] = int(time.time() + int(expires_in))
    scope = doc.get("scope") if isinstance(doc.get("scope"), str) else requested_scope
    if scope:
        tokens["scope"] = scope
    return tokens


def noninteractive_grant(
    session: Any,
    cfg: Any,
    issuer: str,
    token_endpoint: str,
    client: Optional[ClientAuth],
    resource: str,
    scope: Optional[str],
    *,
    timeout: float = 30.0,
    dpop: Optional["DPoPKey"] = None,
    nonces: Optional["NonceCache"] = None,
) -> Dict[str, Any]:
    """Run the grant configured in ``cfg`` (an :class:`~mcpsync.auth.OAuthConfig`); the token response.

    ``client_credentials``: one request at the token endpoint. ``jwt_bearer`` (workload identity
    federation): one RFC 7523 request whose ``assertion`` is the JWT ``cfg.assertion`` returns.
    ``enterprise``: an RFC 8693 token exchange of the ID token for an ID-JAG at the identity
    provider, then an RFC 7523 JWT bearer grant with it at the authorization server (two
    requests). ``dpop``/``nonces`` apply to the authorization server's token endpoint only.
    """
    kwargs: Dict[str, Any] = {"issuer": issuer, "timeout": timeout, "dpop": dpop, "nonces": nonces}
    if cfg.grant == "client_credentials":
        form: Dict[str, Optional[str]] = {"grant_type": "client_credentials", "scope": scope, "resource": resource}
        return token_request(session, token_endpoint, form, client, **kwargs)
    if cfg.grant == "jwt_bearer":
        form = {"grant_type": GRANT_JWT_BEARER, "assertion": _assertion(cfg), "scope": scope, "resource": resource}
        return token_request(session, token_endpoint, form, client, **kwargs)
    if cfg.grant != "enterprise":
        raise ConfigError("grant %r is not a non-interactive grant" % cfg.grant)
    id_token = cfg.id_token() if callable(cfg.id_token) else cfg.id_token
    idp_client = ClientAuth(
        cfg.idp_client_id or "",
        cfg.idp_client_secret,
        cfg.idp_auth_method or ("client_secret_basic" if cfg.idp_client_secret else "none"),
        source="config",
    )
    exchange: Dict[str, Optional[str]] = {
        "grant_type": GRANT_TOKEN_EXCHANGE,
        "requested_token_type": TOKEN_TYPE_ID_JAG,
        "audience": issuer,
        "resource": resource,
        "scope": scope,
        "subject_token": id_token,
        "subject_token_type": TOKEN_TYPE_ID_TOKEN,
    }
    jag_doc = token_request(session, cfg.idp_token_endpoint or "", exchange, idp_client, timeout=timeout)
    jag = jag_doc.get("access_token")
    issued = jag_doc.get("issued_token_type")
    if not isinstance(jag, str) or (issued is not None and issued != TOKEN_TYPE_ID_JAG):
        raise AuthError("the identity provider did not return an ID-JAG")
    form = {"grant_type": GRANT_JWT_BEARER, "assertion": jag, "scope": scope, "resource": resource}
    return token_request(session, token_endpoint, form, client, **kwargs)


def _assertion(cfg: Any) -> str:
    """The workload's JWT: ``cfg.assertion_file`` read, or ``cfg.assertion`` (called when callable), per request."""
    source = cfg.assertion
    if getattr(cfg, "assertion_file", None):
        import os

        path = os.path.expanduser(cfg.assertion_file)
        try:
            with open(path, encoding="utf-8") as fh:
                source = fh.read().strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise AuthError(
                "cannot read the workload identity assertion file %s: %s" % (path, type(exc).__name__)
            ) from exc
    if callable(source):
        try:
            value = source()
        except Exception as exc:  # noqa: BLE001 - any failure of the application's callable
            raise AuthError("the workload identity assertion callable failed: %s" % type(exc).__name__) from exc
    else:
        value = source
    if not isinstance(value, str) or value.count(".") != 2:
        raise AuthError("the workload identity assertion is not a compact JWT (header.payload.signature)")
    return value
