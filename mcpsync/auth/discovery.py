"""Discovery: ``WWW-Authenticate`` parsing, protected resource metadata (RFC 9728) and
authorization server metadata (RFC 8414 / OpenID Connect Discovery), in the order the
2026-07-28 MCP authorization spec prescribes, with the 2025-03-26 fallbacks.

Every request carries ``MCP-Protocol-Version``. A candidate URL answering any 4xx (or a
200 that is not a JSON object) is skipped for the next one. Functions block for at most
``timeout`` seconds per HTTP request and are thread-safe (they share only the
:class:`~mcpsync.wire.http_call.OAuthHTTPCall` passed in, which is thread-safe).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import urlsplit, urlunsplit

from ..errors import AuthError, TransportError
from .http_direct import DirectHTTP
from ..wire.http_call import OAuthHTTPCall, answer_json

__all__ = [
    "AuthServerMetadata",
    "ProtectedResourceMetadata",
    "Discovery",
    "authorization_server_metadata_urls",
    "canonical_resource",
    "challenge_for",
    "parse_challenges",
    "parse_www_authenticate",
    "preferred_challenge",
    "protected_resource_metadata_urls",
    "resource_matches",
    "same_origin",
]

log = logging.getLogger(__name__)

DEFAULT_PROTOCOL_VERSION = "2026-07-28"
_TOKEN_RE = re.compile(r"[A-Za-z0-9!#$%&'*+\-.^_`|~]+")
_TOKEN68_RE = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_BARE_RE = re.compile(r"[^\s,]*")
_MAX_HEADER = 16384


def parse_challenges(header: Optional[str]) -> List[Tuple[str, Dict[str, str]]]:
    """Every challenge in a ``WWW-Authenticate`` header: ``[(scheme, params), ...]`` in order.

    RFC 9110 section 11.6.1 syntax, read leniently: parameter names are lower-cased, quoted
    values unescaped, the first of a repeated parameter wins, a token68 credential is kept
    as ``params["token68"]``, and unparseable bytes are skipped. Never raises; reads at most
    the first 16 KiB of the header.
    """
    if not header or not isinstance(header, str):
        return []
    text = header[:_MAX_HEADER]
    n = len(text)
    out: List[Tuple[str, Dict[str, str]]] = []
    current: Optional[Dict[str, str]] = None
    pos = 0
    while pos < n:
        ch = text[pos]
        if ch in " \t,":
            pos += 1
            continue
        m = _TOKEN_RE.match(text, pos)
        if m is None:
            pos += 1  # junk: skip it
            continue
        name = m.group()
        j = m.end()
        while j < n and text[j] in " \t":
            j += 1
        if current is not None and j < n and text[j] == "=" and not _token68_here(text, pos):
            value, pos = _param_value(text, j + 1)
            current.setdefault(name.lower(), value)
            continue
        current = {}
        out.append((name, current))
        pos = j
        if _token68_here(text, pos) or not _is_param_start(text, pos):
            t68 = _TOKEN68_RE.match(text, pos)
            if t68 is not None and _ends_item(text, t68.end()):
                current["token68"] = t68.group()
                pos = t68.end()
    return out


def _ends_item(text: str, pos: int) -> bool:
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    return pos >= len(text) or text[pos] == ","


def _is_param_start(text: str, pos: int) -> bool:
    m = _TOKEN_RE.match(text, pos)
    if m is None:
        return False
    j = m.end()
    while j < len(text) and text[j] in " \t":
        j += 1
    return j < len(text) and text[j] == "="


def _token68_here(text: str, pos: int) -> bool:
    """Whether a token68 ending in '=' padding (``abc==``) starts at ``pos`` (not ``name=value``)."""
    m = _TOKEN68_RE.match(text, pos)
    if m is None or not m.group().endswith("=") or not _ends_item(text, m.end()):
        return False
    rest = m.end()
    while rest < len(text) and text[rest] in " \t,":
        rest += 1
    return not _is_param_start(text, rest)  # "a=, b=1" is two parameters, "abc==, Basic" a token68


def _param_value(text: str, pos: int) -> Tuple[str, int]:
    n = len(text)
    while pos < n and text[pos] in " \t":
        pos += 1
    if pos < n and text[pos] == '"':
        pos += 1
        chars: List[str] = []
        while pos < n and text[pos] != '"':
            if text[pos] == "\\" and pos + 1 < n:
                pos += 1
            chars.append(text[pos])
            pos += 1
        return "".join(chars), min(pos + 1, n)
    m = _BARE_RE.match(text, pos)  # lenient: any run up to whitespace or comma (unquoted URLs)
    assert m is not None
    return m.group(), m.end()


def probe_challenge(
    url: str,
    headers: Optional[Dict[str, str]] = None,
    *,
    timeout: float = 10.0,
    session: Optional[OAuthHTTPCall] = None,
) -> Optional[Dict[str, str]]:
    """The parsed ``WWW-Authenticate`` challenge an MCP server at ``url`` answers an unauthenticated request with
    (it names the protected-resource metadata, which a server may advertise nowhere else), or None when it
    answers no 401 challenge or cannot be reached (logged at debug level). One POST through ``session`` (a
    :class:`~mcpsync.auth.http_direct.DirectHTTP` when None), bounded by ``timeout``."""
    body = b'{"jsonrpc": "2.0", "id": 0, "method": "ping"}'
    sent = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    sent.update(headers or {})
    caller: OAuthHTTPCall = session if session is not None else DirectHTTP()
    own = caller if session is None else None
    try:
        resp = caller.request("POST", url, headers=sent, body=body, timeout=timeout)
        challenge = resp.headers.get("WWW-Authenticate") if resp.status == 401 else None
    except TransportError as exc:
        log.debug("probing %s for an OAuth challenge failed: %s", url, type(exc).__name__)
        return None
    finally:
        if own is not None:
            own.close()
    return parse_www_authenticate(challenge) if challenge else None


def parse_www_authenticate(header: Optional[str]) -> Dict[str, str]:
    """The parameters of the Bearer challenge in a ``WWW-Authenticate`` header.

    Returns e.g. ``{"resource_metadata": ..., "scope": ..., "error": ..., "error_description": ...}``;
    ``{}`` when there is no header. Quoted values are unescaped. When several schemes are
    present, the ``Bearer`` one is used, else the ``DPoP`` one, else the first. Never raises.
    """
    return preferred_challenge(parse_challenges(header))


def preferred_challenge(challenges: List[Tuple[str, Dict[str, str]]]) -> Dict[str, str]:
    """The parameters of the Bearer challenge, else the DPoP one, else the first (``{}`` if none)."""
    for wanted in ("bearer", "dpop"):
        for scheme, params in challenges:
            if scheme.lower() == wanted:
                return {k: v for k, v in params.items() if k != "token68"}
    return {k: v for k, v in challenges[0][1].items() if k != "token68"} if challenges else {}


def challenge_for(header: Optional[str], scheme: str) -> Optional[Dict[str, str]]:
    """The parameters of the first ``scheme`` challenge (case-insensitive), or None."""
    for name, params in parse_challenges(header):
        if name.lower() == scheme.lower():
            return params
    return None


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


def same_origin(a: str, b: str) -> bool:
    """Whether two URLs share scheme, host and port (case-insensitive, default ports folded)."""
    try:
        pa, pb = urlsplit(canonical_resource(a)), urlsplit(canonical_resource(b))
    except (AuthError, ValueError):
        return False
    return bool(pa.scheme) and bool(pa.netloc) and (pa.scheme, pa.netloc) == (pb.scheme, pb.netloc)


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


@dataclass(frozen=True, eq=False)
class AuthServerMetadata:
    """Authorization server metadata (RFC 8414 or OpenID Connect), or the 2025-03-26 defaults.

    Attributes:
        issuer: the issuer (for the default endpoints: the server's origin).
        raw: the metadata document (``{}`` for the defaults).
        url: where it was found (None for the defaults).
        legacy: True when found by the 2025-03-26 fallbacks (no protected resource metadata).
        defaults: True when no document exists and ``/authorize`` ``/token`` ``/register`` are assumed.
    """

    issuer: str
    raw: Dict[str, Any] = field(repr=False)
    url: Optional[str] = field(repr=False)
    legacy: bool = False
    defaults: bool = False

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
    def dpop_signing_alg_values_supported(self) -> Optional[List[str]]:
        """``dpop_signing_alg_values_supported`` (RFC 9449), or None when the server does not list DPoP."""
        values = self._list("dpop_signing_alg_values_supported")
        return values if values else None

    @property
    def iss_parameter_supported(self) -> bool:
        """``authorization_response_iss_parameter_supported`` (RFC 9207)."""
        return self.raw.get("authorization_response_iss_parameter_supported") is True


class Discovery:
    """Runs discovery requests through an :class:`~mcpsync.wire.http_call.OAuthHTTPCall`.

    Args:
        session: the HTTP to send with (not closed here).
        protocol_version: the ``MCP-Protocol-Version`` header value.
        timeout: seconds per HTTP request.
    """

    def __init__(
        self, session: OAuthHTTPCall, *, protocol_version: str = DEFAULT_PROTOCOL_VERSION, timeout: float = 30.0
    ) -> None:
        self.session = session
        self.protocol_version = protocol_version
        self.timeout = timeout

    def _get_json(self, url: str) -> Tuple[int, Optional[Dict[str, Any]]]:
        headers = {"Accept": "application/json", "MCP-Protocol-Version": self.protocol_version}
        try:
            resp = self.session.request("GET", url, headers=headers, timeout=self.timeout, follow_redirects=True)
            status = resp.status
            if status != 200:
                return status, None
            try:
                doc = answer_json(resp)
            except ValueError:
                return status, None
        except TransportError as exc:
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
            issuer = doc.get("issuer")
            if issuer is None:
                issuer = origin
            # RFC 8414 section 3.3: the issuer must identify where the document came from. An
            # issuer with a path on this origin (``https://host/oauth``) is accepted; another
            # origin is not, and the login stops rather than trusting the document's endpoints.
            if not isinstance(issuer, str) or not same_origin(issuer, origin):
                raise AuthError(
                    "the authorization server metadata at %s names issuer %r, which is not on %s; refusing to use it "
                    "(RFC 8414 section 3.3)" % (url, issuer, origin)
                )
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
        if preferred_issuer is not None and preferred_issuer in issuers:
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
