"""One HTTP request whose small answer is read whole: the interface the OAuth requests are sent through.

The probe of an MCP URL, metadata discovery, dynamic client registration and the token endpoint (with its
DPoP nonce retries) each send one request and read its whole (small) answer. The auth package never opens a
connection of its own way of choosing: the transports layer implements :class:`OAuthHTTPCall` on the same
urllib3 connections, proxy table and TLS settings as a server's MCP traffic
(:class:`~mcpsync.transports.http.oauth_route.OAuthNet`) and hands it over through
:meth:`~mcpsync.auth.OAuthManager.use_http` (a remote transport does so for its server, a
:class:`~mcpsync.Manager` for each of its servers). Without one,
:class:`~mcpsync.auth.http_direct.DirectHTTP` (plain urllib3, environment proxies) is used. Both are
:class:`OAuthHTTPCall` subclasses: this module holds what they share (the answer type, the redirects followed
across origins, the size limit), and it sits below both the transports and the auth package, which never
import each other.

Contract of a call: blocks at most about ``timeout`` seconds per wait (connect, each read); returns an
:class:`OAuthAnswer` with the body read whole (at most :data:`MAX_BODY` bytes: more is an error); raises
:class:`~mcpsync.errors.TransportError` (a :class:`~mcpsync.errors.ProxyError` for a proxy's refusal,
including a forward proxy's ``407``) when no answer came, :class:`~mcpsync.errors.ConfigError` for settings it
cannot honour or a request that cannot be written. Implementations are thread-safe.
"""

from __future__ import annotations

import abc
import json
from dataclasses import dataclass
from typing import Any, Mapping, Optional
from urllib.parse import urljoin, urlsplit

from ..errors import TransportError

__all__ = ["MAX_BODY", "MAX_REDIRECTS", "OAuthAnswer", "OAuthHTTPCall", "answer_json"]

#: The largest OAuth answer read (metadata documents and token responses are a few kilobytes).
MAX_BODY = 1 << 20
#: The most redirects one request follows.
MAX_REDIRECTS = 5
_REDIRECTS = (301, 302, 303, 307, 308)


@dataclass(frozen=True, repr=False)
class OAuthAnswer:
    """One answer, read whole: ``status``, ``headers`` (looked up case-insensitively), ``body``, ``url`` (where
    it came from, after the redirects followed). Its ``repr`` shows the status only (a token answer's body
    holds credentials)."""

    status: int
    headers: Mapping[str, str]
    body: bytes
    url: str

    def __repr__(self) -> str:
        return "<OAuthAnswer [%d]>" % self.status


class OAuthHTTPCall(abc.ABC):
    """Sends one OAuth request (see the module docstring for what blocks and what it raises).

    A subclass sends one request in :meth:`exchange` (following same-origin redirects itself when it can) and
    closes its connections in :meth:`close`; :meth:`request` follows a ``GET``'s redirects to other origins and
    enforces :data:`MAX_BODY`.
    """

    def request(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str],
        body: Optional[bytes] = None,
        timeout: float = 30.0,
        follow_redirects: bool = True,
    ) -> OAuthAnswer:
        """``follow_redirects``: a ``GET`` follows redirects to any origin (discovery documents may live
        elsewhere; no credential is sent there); False returns the redirect itself."""
        for _ in range(MAX_REDIRECTS + 1):
            answer = self.exchange(method, url, headers, body, timeout, follow_redirects)
            if len(answer.body) > MAX_BODY:
                raise TransportError("the answer of %s is larger than %d bytes" % (_where(url), MAX_BODY))
            location = answer.headers.get("Location")
            if not (follow_redirects and method == "GET" and answer.status in _REDIRECTS and location):
                return answer
            url = urljoin(answer.url, location)
        raise TransportError("more than %d redirects from %s" % (MAX_REDIRECTS, _where(url)))

    @abc.abstractmethod
    def exchange(
        self, method: str, url: str, headers: Mapping[str, str], body: Optional[bytes], timeout: float, follow: bool
    ) -> OAuthAnswer:
        """Send one request and read at most ``MAX_BODY + 1`` bytes of its answer (``follow``: same-origin
        redirects may be followed on the way). Blocks and raises as :meth:`request` says."""

    @abc.abstractmethod
    def close(self) -> None:
        """Close the connections (idempotent; a later request fails)."""


def answer_json(answer: OAuthAnswer) -> Any:
    """The JSON document of ``answer``; raises ``ValueError`` when its body is not JSON."""
    return json.loads(answer.body.decode("utf-8"))


def _where(url: str) -> str:
    """``scheme://host`` of ``url`` (no path, query or credentials), for errors."""
    parts = urlsplit(url)
    return "%s://%s" % (parts.scheme, parts.hostname or "")
