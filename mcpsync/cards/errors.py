"""The errors of Server Card discovery. Every one is an :class:`~mcpsync.errors.MCPError`; each carries the
``url`` it concerns. Whenever one is raised, nothing was cached, stored or written."""

from __future__ import annotations

from typing import Any

from ..errors import MCPError

__all__ = [
    "CardContentTypeError",
    "CardDomainMismatch",
    "CardError",
    "CardInvalid",
    "CardNotFound",
    "CardRedirectError",
    "CardTooLarge",
    "CardUnavailable",
    "CardUnsafeURL",
]


class CardError(MCPError):
    """Anything that went wrong fetching, checking or using an AI Catalog or a Server Card."""

    def __init__(self, message: str = "", *, url: str = "", **context: Any) -> None:
        super().__init__(message, **context)
        self.url = url


class CardUnavailable(CardError):
    """The catalog or card could not be fetched: no connection, a timeout, or an error status (``.status``)."""

    def __init__(self, message: str = "", *, url: str = "", status: int = 0, **context: Any) -> None:
        super().__init__(message, url=url, **context)
        self.status = status


class CardNotFound(CardError):
    """The catalog has no Server Card entry (or none of the asked identifier or name)."""


class CardInvalid(CardError):
    """Not JSON, or JSON that breaks the v1 Server Card schema or the AI Catalog's shape; the message says
    where (``remotes[0].url``)."""


class CardContentTypeError(CardError):
    """The answer's ``Content-Type`` is not a Server Card's (``application/mcp-server-card+json``) or an AI
    Catalog's (``application/ai-catalog+json``), nor ``application/json``."""


class CardTooLarge(CardError):
    """The answer is larger than the allowed size (1 MiB unless told otherwise); the rest was not read."""


class CardRedirectError(CardError):
    """A redirect loop, too many redirects, or a redirect without a usable ``Location``."""


class CardUnsafeURL(CardError):
    """A URL that mcpsync will not fetch or connect to: not ``https`` (plain ``http`` only for hosts allowed with
    ``allow_local``), ``file://`` and every other scheme, credentials in the URL, or a loopback, private,
    link-local or otherwise non-public address (unless that host is allowed with ``allow_local``)."""


class CardDomainMismatch(CardError):
    """The card's remote lives on another domain than the one the card was served from (``allow_other_domains``
    accepts it)."""
