"""Server Cards (the ``io.modelcontextprotocol/server-card`` extension): find a remote MCP server through its
domain's AI Catalog or its card URL, check the card, and connect to it or install it.

Importing this package is cheap (no urllib3, no jsonschema: the names below load their module on first use)::

    import mcpsync.cards as cards

    found = cards.discover("example.com")             # https://example.com/.well-known/ai-catalog.json
    names = [(card.name, card.version) for card in found]

    with cards.connect("https://example.com/mcp/server-card", inputs={"X-API-Key": key}) as client:
        tools = client.list_tools()

    cards.install_card("https://example.com/mcp/server-card", config="~/.cursor/mcp.json",
                       approve=lambda request: ask_user(request.describe()))

Also ``mcpsync.cards.client_for(url, ...)``, ``mcpsync --card URL tools``, ``mcpsync install --card URL`` and
``{"card": URL}`` in a Manager configuration. See docs/guides/cards.md.
"""

from __future__ import annotations

from types import MappingProxyType as _MappingProxyType
from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from .cache import CardCache
    from .connector import client_for, connect, discover, load_card, resolve_card
    from .connection import CardConnection, prepare, protocol_for
    from .errors import (
        CardContentTypeError,
        CardDomainMismatch,
        CardError,
        CardInvalid,
        CardNotFound,
        CardRedirectError,
        CardTooLarge,
        CardUnavailable,
        CardUnsafeURL,
    )
    from .fetch import CardFetcher, catalog_url
    from .install import OutdatedCard, install_card, installed_cards, outdated_cards, update_cards
    from .model import (
        CARD_MEDIA_TYPE,
        CARD_SCHEMA_URL,
        CATALOG_MEDIA_TYPE,
        CardInput,
        CatalogEntry,
        Remote,
        ServerCard,
        card_schema,
        parse_card,
        parse_catalog,
    )
    from .safety import URLPolicy

__all__ = [
    "CARD_MEDIA_TYPE",
    "CARD_SCHEMA_URL",
    "CATALOG_MEDIA_TYPE",
    "CardCache",
    "CardConnection",
    "CardContentTypeError",
    "CardDomainMismatch",
    "CardError",
    "CardFetcher",
    "CardInput",
    "CardInvalid",
    "CardNotFound",
    "CardRedirectError",
    "CardTooLarge",
    "CardUnavailable",
    "CardUnsafeURL",
    "CatalogEntry",
    "OutdatedCard",
    "Remote",
    "ServerCard",
    "URLPolicy",
    "card_schema",
    "catalog_url",
    "client_for",
    "connect",
    "discover",
    "install_card",
    "installed_cards",
    "load_card",
    "outdated_cards",
    "parse_card",
    "parse_catalog",
    "prepare",
    "protocol_for",
    "resolve_card",
    "update_cards",
]

_LAZY = _MappingProxyType({
    "CardCache": ".cache",
    "client_for": ".connector",
    "connect": ".connector",
    "discover": ".connector",
    "load_card": ".connector",
    "resolve_card": ".connector",
    "CardConnection": ".connection",
    "prepare": ".connection",
    "protocol_for": ".connection",
    "CardContentTypeError": ".errors",
    "CardDomainMismatch": ".errors",
    "CardError": ".errors",
    "CardInvalid": ".errors",
    "CardNotFound": ".errors",
    "CardRedirectError": ".errors",
    "CardTooLarge": ".errors",
    "CardUnavailable": ".errors",
    "CardUnsafeURL": ".errors",
    "CardFetcher": ".fetch",
    "catalog_url": ".fetch",
    "install_card": ".install",
    "installed_cards": ".install",
    "outdated_cards": ".install",
    "update_cards": ".install",
    "OutdatedCard": ".install",
    "CARD_MEDIA_TYPE": ".model",
    "CARD_SCHEMA_URL": ".model",
    "CATALOG_MEDIA_TYPE": ".model",
    "CardInput": ".model",
    "CatalogEntry": ".model",
    "Remote": ".model",
    "ServerCard": ".model",
    "card_schema": ".model",
    "parse_card": ".model",
    "parse_catalog": ".model",
    "URLPolicy": ".safety",
})

__getattr__, __dir__ = exports(__name__, _LAZY, globals())
