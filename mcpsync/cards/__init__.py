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

from typing import TYPE_CHECKING as _TYPE_CHECKING

from .._lazy import exports as _exports
from .._lazy import table as _table

if _TYPE_CHECKING:  # the lazy names, for type checkers ("X as X" re-exports each; nothing is imported at run time)
    from .cache import CardCache as CardCache
    from .connection import CardConnection as CardConnection, prepare as prepare, protocol_for as protocol_for
    from .connector import client_for as client_for, connect as connect, discover as discover
    from .connector import load_card as load_card, resolve_card as resolve_card
    from .errors import CardContentTypeError as CardContentTypeError, CardDomainMismatch as CardDomainMismatch
    from .errors import CardError as CardError, CardInvalid as CardInvalid, CardNotFound as CardNotFound
    from .errors import CardRedirectError as CardRedirectError, CardTooLarge as CardTooLarge
    from .errors import CardUnavailable as CardUnavailable, CardUnsafeURL as CardUnsafeURL
    from .fetch import CardFetcher as CardFetcher, catalog_url as catalog_url
    from .install import OutdatedCard as OutdatedCard, install_card as install_card
    from .install import installed_cards as installed_cards, outdated_cards as outdated_cards
    from .install import update_cards as update_cards
    from .model import CARD_MEDIA_TYPE as CARD_MEDIA_TYPE, CARD_SCHEMA_URL as CARD_SCHEMA_URL
    from .model import CATALOG_MEDIA_TYPE as CATALOG_MEDIA_TYPE, CardInput as CardInput, CatalogEntry as CatalogEntry
    from .model import Remote as Remote, ServerCard as ServerCard, card_schema as card_schema
    from .model import parse_card as parse_card, parse_catalog as parse_catalog
    from .safety import URLPolicy as URLPolicy

_LAZY = _table(
    {
        ".cache": ("CardCache",),
        ".connection": ("CardConnection", "prepare", "protocol_for"),
        ".connector": ("client_for", "connect", "discover", "load_card", "resolve_card"),
        ".errors": ("CardContentTypeError", "CardDomainMismatch", "CardError", "CardInvalid", "CardNotFound",
                    "CardRedirectError", "CardTooLarge", "CardUnavailable", "CardUnsafeURL"),
        ".fetch": ("CardFetcher", "catalog_url"),
        ".install": ("OutdatedCard", "install_card", "installed_cards", "outdated_cards", "update_cards"),
        ".model": ("CARD_MEDIA_TYPE", "CARD_SCHEMA_URL", "CATALOG_MEDIA_TYPE", "CardInput", "CatalogEntry", "Remote",
                   "ServerCard", "card_schema", "parse_card", "parse_catalog"),
        ".safety": ("URLPolicy",),
    }
)
__all__ = sorted(_LAZY)

__getattr__, __dir__ = _exports(__name__, _LAZY, globals())
