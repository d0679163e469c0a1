"""Client registration: pre-registered -> Client ID Metadata Document -> dynamic registration
(RFC 7591, reused while its redirect URI matches) -> :class:`~mcpsync.errors.NeedsClientRegistration`.

Functions block for at most one HTTP request (``timeout`` seconds) and are thread-safe.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..errors import NeedsClientRegistration, RegistrationUnavailable, TransportError
from .config import OAuthConfig
from .discovery import AuthServerMetadata
from .grants import ClientAuth
from ..wire.http_call import answer_json

__all__ = [
    "choose_auth_method",
    "client_from_config",
    "client_from_stored",
    "client_metadata_document",
    "register_client",
    "resolve_client",
]

log = logging.getLogger(__name__)


def client_metadata_document(
    client_id_url: str, redirect_uri: str, *, client_name: str = "mcpsync", client_uri: Optional[str] = None
) -> Dict[str, Any]:
    """The Client ID Metadata Document to publish at ``client_id_url`` (an https URL with a path).

    Serve it as JSON at that URL and configure ``clientMetadataUrl`` with the same URL.
    """
    doc: Dict[str, Any] = {
        "client_id": client_id_url,
        "client_name": client_name,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "application_type": "native",
    }
    if client_uri:
        doc["client_uri"] = client_uri
    return doc


def choose_auth_method(supported: Optional[List[str]], has_secret: bool) -> str:
    """The token endpoint auth method to use given the server's list (None: unknown)."""
    if has_secret:
        if supported is None or "client_secret_basic" in supported:
            return "client_secret_basic"
        if "client_secret_post" in supported:
            return "client_secret_post"
        return "client_secret_basic"
    return "none"


def client_from_config(
    cfg: OAuthConfig, meta: Optional[AuthServerMetadata], *, method: Optional[str] = None
) -> ClientAuth:
    """The pre-registered client of ``cfg`` (which must have a client id).

    ``method`` (the one used when the tokens were obtained) wins over the configured one.
    """
    assert cfg.client_id
    method = method or cfg.token_endpoint_auth_method
    if method is None:
        if cfg.private_key is not None:
            method = "private_key_jwt"
        else:
            method = choose_auth_method(
                meta.token_endpoint_auth_methods_supported if meta else None, bool(cfg.client_secret)
            )
    return ClientAuth(
        cfg.client_id,
        cfg.client_secret,
        method,
        private_key=cfg.private_key,
        signing_alg=cfg.signing_alg,
        key_id=cfg.key_id,
        assertion_audience=cfg.assertion_audience,
        source="config",
    )


def client_from_stored(info: Dict[str, Any], source: str = "stored") -> ClientAuth:
    """A client from a stored ``clientInfo`` entry."""
    secret = info.get("clientSecret") or None
    method = info.get("tokenEndpointAuthMethod") or ("client_secret_basic" if secret else "none")
    if method not in ("none", "client_secret_basic", "client_secret_post"):
        method = "client_secret_basic" if secret else "none"
    return ClientAuth(str(info["clientId"]), secret, method, source=source)


def stored_client_usable(info: Optional[Dict[str, Any]], issuer: str, redirect_uri: str) -> bool:
    """Whether a stored registration can be reused: same issuer, same redirect URI, secret not expired."""
    if not isinstance(info, dict) or not info.get("clientId"):
        return False
    if info.get("issuer") != issuer or info.get("redirectUri") != redirect_uri:
        return False
    expires = info.get("clientSecretExpiresAt")
    if isinstance(expires, (int, float)) and expires > 0 and expires <= time.time() + 60:
        return False
    return True


def register_client(
    session: Any,
    meta: AuthServerMetadata,
    redirect_uri: str,
    *,
    client_name: str,
    client_uri: Optional[str],
    scope: Optional[str] = None,
    timeout: float = 30.0,
    protocol_version: Optional[str] = None,
) -> Dict[str, Any]:
    """Dynamic client registration; returns the ``clientInfo`` to store.

    Raises :class:`~mcpsync.errors.NeedsClientRegistration` when the server refuses (4xx, or an answer
    without a client id), and the retryable :class:`~mcpsync.errors.RegistrationUnavailable` for a
    passing failure (HTTP 5xx or 429, a reset, a timeout): registering a client by hand would not help.
    """
    endpoint = meta.registration_endpoint
    assert endpoint
    method = choose_auth_method(meta.token_endpoint_auth_methods_supported, False)
    if meta.token_endpoint_auth_methods_supported and "none" not in meta.token_endpoint_auth_methods_supported:
        method = choose_auth_method(meta.token_endpoint_auth_methods_supported, True)
    body: Dict[str, Any] = {
        "redirect_uris": [redirect_uri],
        "client_name": client_name,
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
        "application_type": "native",
    }
    if client_uri:
        body["client_uri"] = client_uri
    if scope:
        body["scope"] = scope
    headers = {"Accept": "application/json", "Content-Type": "application/json"}
    if protocol_version:
        headers["MCP-Protocol-Version"] = protocol_version
    try:
        resp = session.request("POST", endpoint, headers=headers, body=json.dumps(body).encode(), timeout=timeout)
        status = resp.status
        retry_after = _retry_after(resp.headers.get("Retry-After"))
        try:
            doc = answer_json(resp)
        except ValueError:
            doc = None
    except TransportError as exc:
        raise RegistrationUnavailable(
            "dynamic client registration at %s failed (%s); this is usually temporary: try again later"
            % (endpoint, type(exc).__name__)
        ) from exc
    if status >= 500 or status == 429:
        raise RegistrationUnavailable(
            "dynamic client registration at %s is unavailable for now (HTTP %d); try again later%s (no need to "
            "register a client by hand)" % (endpoint, status, " (after %gs)" % retry_after if retry_after else ""),
            status_code=status,
            retry_after=retry_after,
        )
    if status not in (200, 201) or not isinstance(doc, dict) or not isinstance(doc.get("client_id"), str):
        reason = ""
        if isinstance(doc, dict) and isinstance(doc.get("error"), str):
            reason = " (%s%s)" % (
                doc["error"],
                ": %s" % doc["error_description"] if doc.get("error_description") else "",
            )
        raise NeedsClientRegistration(
            "dynamic client registration at %s was refused with HTTP %s%s; register a client with redirect URI %s "
            "and configure its client id" % (endpoint, status, reason, redirect_uri),
            redirect_uri=redirect_uri,
        )
    info: Dict[str, Any] = {
        "clientId": doc["client_id"],
        "redirectUri": redirect_uri,
        "issuer": meta.issuer,
        "tokenEndpointAuthMethod": doc.get("token_endpoint_auth_method") or method,
    }
    if isinstance(doc.get("client_secret"), str):
        info["clientSecret"] = doc["client_secret"]
        if info["tokenEndpointAuthMethod"] == "none":
            info["tokenEndpointAuthMethod"] = "client_secret_basic"
    for src, dst in (
        ("client_id_issued_at", "clientIdIssuedAt"),
        ("client_secret_expires_at", "clientSecretExpiresAt"),
    ):
        if isinstance(doc.get(src), (int, float)):
            info[dst] = int(doc[src])
    log.info("registered OAuth client at %s", endpoint)
    return info


def _retry_after(value: Optional[str]) -> Optional[float]:
    """Seconds from a ``Retry-After`` header given in seconds (an HTTP date, junk or a negative: None)."""
    if not value:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if 0 <= seconds < 86400 else None


def known_client_id(
    cfg: OAuthConfig, meta: AuthServerMetadata, stored: Optional[Dict[str, Any]], redirect_uri: str
) -> Optional[str]:
    """The client id :func:`resolve_client` would use when it is known without registering (None when it would
    register one); raises :class:`~mcpsync.errors.NeedsClientRegistration` when none could be obtained.
    No request is made."""
    if cfg.client_id:
        return str(cfg.client_id)
    if cfg.client_metadata_url and meta.client_id_metadata_document_supported:
        return str(cfg.client_metadata_url)
    if stored_client_usable(stored, meta.issuer, redirect_uri):
        assert stored is not None
        return str(stored.get("client_id"))
    if meta.registration_endpoint:
        return None
    raise no_registration_error(meta, redirect_uri)


def no_registration_error(meta: AuthServerMetadata, redirect_uri: str) -> NeedsClientRegistration:
    """The error for an authorization server that offers no way to get a client id."""
    return NeedsClientRegistration(
        "the authorization server %s supports no automatic client registration; register a client with redirect "
        "URI %s and configure its client id (oauth: {clientId: ...})" % (meta.issuer, redirect_uri),
        redirect_uri=redirect_uri,
    )


def resolve_client(
    cfg: OAuthConfig,
    meta: AuthServerMetadata,
    stored: Optional[Dict[str, Any]],
    redirect_uri: str,
    register: Callable[[], Dict[str, Any]],
) -> Tuple[ClientAuth, Optional[Dict[str, Any]]]:
    """The client to use and, when it was just registered, the ``clientInfo`` to store.

    Order: pre-registered (``cfg.client_id``) -> CIMD URL (configured and advertised) ->
    the stored registration (same issuer and redirect URI) -> dynamic registration (``register()``,
    called only when ``meta`` has a registration endpoint; e.g. :func:`register_client` with this
    server's HTTP session) -> :class:`~mcpsync.errors.NeedsClientRegistration` naming ``redirect_uri``.
    """
    if cfg.client_id:
        return client_from_config(cfg, meta), None
    if cfg.client_metadata_url and meta.client_id_metadata_document_supported:
        return ClientAuth(cfg.client_metadata_url, None, "none", source="cimd"), None
    if stored_client_usable(stored, meta.issuer, redirect_uri):
        assert stored is not None
        return client_from_stored(stored), None
    if meta.registration_endpoint:
        info = register()
        return client_from_stored(info, source="registered"), info
    raise no_registration_error(meta, redirect_uri)
