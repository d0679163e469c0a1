"""Discovery: ``WWW-Authenticate`` parsing, protected resource metadata (RFC 9728) and
authorization server metadata (RFC 8414 / OpenID Connect Discovery), in the order the
2026-07-28 MCP authorization spec prescribes, with the 2025-03-26 fallbacks.

Every request carries ``MCP-Protocol-Version``. A candidate URL answering any 4xx (or a
200 that is not a JSON object) is skipped for the next one. Functions block for at most
``timeout`` seconds per HTTP request and are thread-safe (they share only the
``requests.Session`` passed in, which is safe for this use).
"""

from __future__ import annotations

import logging
import re
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import urlsplit, urlunsplit

from ..errors import AuthError

__all__ = [
    "AuthServerMetadata",
    "ProtectedResourceMetadata",
    "Discovery",
    "authorization_server_metadata_urls",
    "canonical_resource",
    "parse_www_authenticate",
    "protected_resource_metadata_urls",
    "resource_matches",
]

log = logging.getLogger(__name__)

DEFAULT_PROTOCOL_VERSION = "2026-07-28"
_PARAM_RE = re.compile(r'\s*([A-Za-z0-9_.\-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*,?')


def probe_challenge(
    url: str, headers: Optional[Dict[str, str]] = None, *, timeout: float = 10.0, session: Any = None
) -> Optional[Dict[str, str]]:
    """The parsed ``WWW-Authenticate`` challenge an MCP server at ``url`` answers an unauthenticated request with
    (it names the protected-resource metadata, which a server may advertise nowhere else), or None when it
    answers no 401 challenge or cannot be reached (logged at debug level). One POST, bounded by ``timeout``."""
    import requests

    body = {"jsonrpc": "2.0", "id": 0, "method": "ping"}
    sent = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    sent.update(headers or {})
    try:
        with (session or requests).post(url, json=body, headers=sent, timeout=timeout, stream=True) as resp:
            challenge = resp.headers.get("WWW-Authenticate") if resp.status_code == 401 else None
    except requests.RequestException as exc:
        log.debug("probing %s for an OAuth challenge failed: %s", url, exc)
        return None
    return parse_www_authenticate(challenge) if challenge else None


def parse_www_authenticate(header: Optional[str]) -> Dict[str, str]:
    """The parameters of the Bearer challenge in a ``WWW-Authenticate`` header.

    Returns e.g. ``{"resource_metadata": ..., "scope": ..., "error": ..., "error_description": ...}``;
    ``{}`` when there is no header. Quoted values are unescaped. When several schemes are
    present, the ``Bearer`` one is used.
    """
    if not header:
        return {}
    text = header.strip()
    match = re.search(r"(?i)(?:^|,\s*)bearer(?:\s+|$)", text)
    if match:
        text = text[match.end() :]
    elif re.match(r"^[A-Za-z][A-Za-z0-9_\-]*\s+[A-Za-z0-9_.\-]+\s*=", text):
        text = text.split(None, 1)[1]
    params: Dict[str, str] = {}
    pos = 0
    while pos < len(text):
        m = _PARAM_RE.match(text, pos)
        if not m or m.end() == pos:
            break
        key = m.group(1).lower()
        if m.group(2) is not None:
            value = re.sub(r"\\(.)", r"\1", m.group(2))
        else:
            value = m.group(3) or ""
        # A following scheme name ("Basic realm=...") ends the Bearer challenge.
        params.setdefault(key, value)
        pos = m.end()
        rest = text[pos:].lstrip()
        if re.match(r"^[A-Za-z][A-Za-z0-9_\-]*\s+[A-Za-z0-9_.\-]+\s*=", rest):
            break
    return params


def canonical_resource(url: str) -> str:
    """The canonical URI of an MCP server (RFC 8707 ``resource``).

    Lower-case scheme and host, default port dropped, no fragment, and no trailing slash
    on an empty path; everything else (path, query, a trailing slash on a path) is kept.
    """
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = "[%s]" % host
    port = parts.port
    if port is not None and not ((scheme == "https" and port == 443) or (scheme == "http" and port == 80)):
        host = "%s:%d" % (host, port)
    if parts.username:
        raise AuthError("a server URL must not contain credentials")
    path = parts.path
    if path == "/":
        path = ""
    return urlunsplit((scheme, host, path, parts.query, ""))


def resource_matches(resource: str, server_url: str) -> bool:
    """Whether a protected resource's ``resource`` identifies ``server_url``.

    True when both are equal once canonical, or when ``resource`` has the same origin
    and its path is a whole-segment prefix of the server URL's path.
    """
    try:
        a = urlsplit(canonical_resource(resource))
        b = urlsplit(canonical_resource(server_url))
    except (AuthError, ValueError):
        return False
    if (a.scheme, a.netloc) != (b.scheme, b.netloc):
        return False
    if a.path == b.path and a.query == b.query:
        return True
    if a.query:
        return False
    prefix = a.path.rstrip("/")
    return b.path == prefix or b.path.startswith(prefix + "/")


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "", "", ""))


def protected_resource_metadata_urls(server_url: str, resource_metadata: Optional[str] = None) -> List[str]:
    """Candidate URLs of the protected resource metadata, in the order to try them."""
    parts = urlsplit(server_url)
    origin = _origin(server_url)
    urls: List[str] = []
    if resource_metadata:
        urls.append(resource_metadata)
    path = parts.path.rstrip("/")
    if path:
        urls.append(origin + "/.well-known/oauth-protected-resource" + path)
    urls.append(origin + "/.well-known/oauth-protected-resource")
    seen: List[str] = []
    for url in urls:
        if url not in seen:
            seen.append(url)
    return seen


def authorization_server_metadata_urls(issuer: str) -> List[str]:
    """Candidate URLs of the authorization server metadata for ``issuer``, in the spec's order."""
    parts = urlsplit(issuer)
    origin = _origin(issuer)
    path = parts.path.rstrip("/")
    if not path:
        return [origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"]
    return [
        origin + "/.well-known/oauth-authorization-server" + path,
        origin + "/.well-known/openid-configuration" + path,
        origin + path + "/.well-known/openid-configuration",
    ]


class ProtectedResourceMetadata:
    """An RFC 9728 document. Attributes: ``resource``, ``authorization_servers``,
    ``scopes_supported``, ``url`` (where it was found) and ``raw`` (the whole dict)."""

    def __init__(self, raw: Dict[str, Any], url: str) -> None:
        self.raw = raw
        self.url = url
        self.resource: Optional[str] = raw.get("resource") if isinstance(raw.get("resource"), str) else None
        servers = raw.get("authorization_servers")
        self.authorization_servers: List[str] = (
            [s for s in servers if isinstance(s, str)] if isinstance(servers, list) else []
        )
        scopes = raw.get("scopes_supported")
        self.scopes_supported: List[str] = [s for s in scopes if isinstance(s, str)] if isinstance(scopes, list) else []

    def __repr__(self) -> str:
        return "ProtectedResourceMetadata(resource=%r, authorization_servers=%r)" % (
            self.resource,
            self.authorization_servers,
        )


class AuthServerMetadata:
    """Authorization server metadata (RFC 8414 or OpenID Connect), or the 2025-03-26 defaults.

    Attributes:
        issuer: the issuer (for the default endpoints: the server's origin).
        raw: the metadata document (``{}`` for the defaults).
        url: where it was found (None for the defaults).
        legacy: True when found by the 2025-03-26 fallbacks (no protected resource metadata).
        defaults: True when no document exists and ``/authorize`` ``/token`` ``/register`` are assumed.
    """

    def __init__(
        self, issuer: str, raw: Dict[str, Any], url: Optional[str], *, legacy: bool = False, defaults: bool = False
    ) -> None:
        self.issuer = issuer
        self.raw = raw
        self.url = url
        self.legacy = legacy
        self.defaults = defaults

    def __repr__(self) -> str:
        return "AuthServerMetadata(issuer=%r, legacy=%r, defaults=%r)" % (self.issuer, self.legacy, self.defaults)

    def _str(self, key: str) -> Optional[str]:
        value = self.raw.get(key)
        return value if isinstance(value, str) and value else None

    def _list(self, key: str) -> Optional[List[str]]:
        value = self.raw.get(key)
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else None

    @property
    def authorization_endpoint(self) -> Optional[str]:
        """The authorization endpoint URL."""
        return self._str("authorization_endpoint")

    @property
    def token_endpoint(self) -> Optional[str]:
        """The token endpoint URL."""
        return self._str("token_endpoint")

    @property
    def registration_endpoint(self) -> Optional[str]:
        """The dynamic client registration endpoint URL, if any."""
        return self._str("registration_endpoint")

    @property
    def scopes_supported(self) -> List[str]:
        """``scopes_supported`` (empty when absent)."""
        return self._list("scopes_supported") or []

    @property
    def code_challenge_methods_supported(self) -> Optional[List[str]]:
        """``code_challenge_methods_supported``, or None when absent."""
        if self.defaults:
            return ["S256"]  # 2025-03-26 servers without metadata: PKCE S256 is mandatory there
        return self._list("code_challenge_methods_supported")

    @property
    def token_endpoint_auth_methods_supported(self) -> Optional[List[str]]:
        """``token_endpoint_auth_methods_supported``, or None when absent."""
        return self._list("token_endpoint_auth_methods_supported")

    @property
    def grant_types_supported(self) -> Optional[List[str]]:
        """``grant_types_supported``, or None when absent."""
        return self._list("grant_types_supported")

    @property
    def client_id_metadata_document_supported(self) -> bool:
        """Whether the server accepts Client ID Metadata Document URLs as client ids."""
        return self.raw.get("client_id_metadata_document_supported") is True

    @property
    def iss_parameter_supported(self) -> bool:
        """``authorization_response_iss_parameter_supported`` (RFC 9207)."""
        return self.raw.get("authorization_response_iss_parameter_supported") is True


class Discovery:
    """Runs discovery requests through a ``requests.Session``.

    Args:
        session: the session to use (not closed here).
        protocol_version: the ``MCP-Protocol-Version`` header value.
        timeout: seconds per HTTP request.
    """

    def __init__(
        self, session: Any, *, protocol_version: str = DEFAULT_PROTOCOL_VERSION, timeout: float = 30.0
    ) -> None:
        self.session = session
        self.protocol_version = protocol_version
        self.timeout = timeout

    def _get_json(self, url: str) -> Tuple[int, Optional[Dict[str, Any]]]:
        import requests

        headers = {"Accept": "application/json", "MCP-Protocol-Version": self.protocol_version}
        try:
            with self.session.get(url, headers=headers, timeout=self.timeout, allow_redirects=True) as resp:
                status = resp.status_code
                if status != 200:
                    return status, None
                try:
                    doc = resp.json()
                except ValueError:
                    return status, None
        except requests.RequestException as exc:
            raise AuthError("discovery request to %s failed: %s" % (url, type(exc).__name__)) from exc
        return status, doc if isinstance(doc, dict) else None

    def _fetch(self, url: str) -> Optional[Dict[str, Any]]:
        status, doc = self._get_json(url)
        if doc is not None:
            return doc
        if 400 <= status < 500 or status == 200:
            log.debug("discovery: %s answered %s, trying the next candidate", url, status)
            return None
        raise AuthError("discovery request to %s failed with HTTP %s" % (url, status))

    def protected_resource(
        self, server_url: str, resource_metadata: Optional[str] = None
    ) -> Optional[ProtectedResourceMetadata]:
        """The protected resource metadata of ``server_url``, or None when none exists.

        Raises :class:`~mcpsync.errors.AuthError` when the document's ``resource`` does not
        identify ``server_url`` (before any authorization request is made).
        """
        for url in protected_resource_metadata_urls(server_url, resource_metadata):
            doc = self._fetch(url)
            if doc is None:
                continue
            prm = ProtectedResourceMetadata(doc, url)
            if not prm.resource or not resource_matches(prm.resource, server_url):
                raise AuthError(
                    "the protected resource metadata at %s is for resource %r, not for %s; refusing to authorize "
                    "(check the server URL)" % (url, prm.resource, canonical_resource(server_url))
                )
            if not prm.authorization_servers:
                raise AuthError("the protected resource metadata at %s names no authorization server" % url)
            return prm
        return None

    def authorization_server(self, issuer: str) -> Optional[AuthServerMetadata]:
        """The metadata of ``issuer`` (whose ``issuer`` member equals it exactly), or None."""
        for url in authorization_server_metadata_urls(issuer):
            doc = self._fetch(url)
            if doc is None:
                continue
            if doc.get("issuer") != issuer:
                log.debug("discovery: %s has issuer %r, expected %r; skipped", url, doc.get("issuer"), issuer)
                continue
            return AuthServerMetadata(issuer, doc, url)
        return None

    def legacy_authorization_server(self, server_url: str) -> AuthServerMetadata:
        """The 2025-03-26 fallbacks: the server origin's RFC 8414 document, else default endpoints."""
        origin = _origin(server_url)
        url = origin + "/.well-known/oauth-authorization-server"
        doc = self._fetch(url)
        if doc is not None:
            named = doc.get("issuer")
            issuer = named if isinstance(named, str) else origin
            return AuthServerMetadata(issuer, doc, url, legacy=True)
        raw = {
            "issuer": origin,
            "authorization_endpoint": origin + "/authorize",
            "token_endpoint": origin + "/token",
            "registration_endpoint": origin + "/register",
        }
        return AuthServerMetadata(origin, raw, None, legacy=True, defaults=True)

    def discover(
        self, server_url: str, challenge: Optional[Dict[str, str]] = None, *, preferred_issuer: Optional[str] = None
    ) -> Tuple[Optional[ProtectedResourceMetadata], AuthServerMetadata]:
        """Protected resource metadata (or None) and the authorization server to use.

        ``preferred_issuer`` picks among several authorization servers (else the first
        whose metadata is found). Raises :class:`~mcpsync.errors.AuthError` when nothing
        usable is found.
        """
        prm = self.protected_resource(server_url, (challenge or {}).get("resource_metadata"))
        if prm is None:
            return None, self.legacy_authorization_server(server_url)
        issuers = list(prm.authorization_servers)
        if preferred_issuer in issuers:
            issuers.remove(preferred_issuer)
            issuers.insert(0, preferred_issuer)
        for issuer in issuers:
            meta = self.authorization_server(issuer)
            if meta is not None:
                return prm, meta
        raise AuthError(
            "no authorization server metadata found for %s (tried RFC 8414 and OpenID Connect discovery)"
            % ", ".join(issuers)
        )
