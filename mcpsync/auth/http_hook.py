"""The narrow HTTP interface the OAuth requests are sent through (:class:`OAuthHTTPCall`).

The probe of an MCP URL, metadata discovery, dynamic client registration and the token endpoint (with its
DPoP nonce retries) each send one request and read its whole (small) answer. This package never opens a
connection of its own way of choosing: the transports layer implements :class:`OAuthHTTPCall` on the same
urllib3 connections, proxy table and TLS settings as a server's MCP traffic and hands it over through
:meth:`~mcpsync.auth.OAuthManager.use_http` (a remote transport does so for its server, a
:class:`~mcpsync.Manager` for each of its servers). Without one, :class:`~mcpsync.auth.http_direct.DirectHTTP`
(plain urllib3, environment proxies) is used.

Contract of a call: blocks at most about ``timeout`` seconds per wait (connect, each read); returns an
:class:`OAuthAnswer` with the body read whole (at most :data:`MAX_BODY` bytes: more is an error); raises
:class:`~mcpsync.errors.TransportError` (a :class:`~mcpsync.errors.ProxyError` for a proxy's refusal,
including a forward proxy's ``407``) when no answer came, :class:`~mcpsync.errors.ConfigError` for settings it
cannot honour or a request that cannot be written. Implementations are thread-safe.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Optional, Protocol


__all__ = ["MAX_BODY", "OAuthAnswer", "OAuthHTTPCall", "answer_json"]

#: The largest OAuth answer read (metadata documents and token responses are a few kilobytes).
MAX_BODY = 1 << 20


class OAuthAnswer(Protocol):
    """One answer, read whole: ``status``, ``headers`` (looked up case-insensitively), ``body``, ``url``."""

    @property
    def status(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]: ...

    @property
    def body(self) -> bytes: ...

    @property
    def url(self) -> str: ...


class OAuthHTTPCall(Protocol):
    """Sends one OAuth request (see the module docstring for what blocks and what it raises)."""

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
        elsewhere); other requests follow same-origin ones only; False returns the redirect itself."""
        ...

    def close(self) -> None:
        """Close the connections (idempotent; a later request fails)."""
        ...


def answer_json(answer: OAuthAnswer) -> Any:
    """The JSON document of ``answer``; raises ``ValueError`` when its body is not JSON."""
    return json.loads(answer.body.decode("utf-8"))
