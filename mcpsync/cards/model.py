"""What a Server Card and an AI Catalog say, as read-only records, and the checks that build them.

:func:`parse_card` validates a decoded document against the v1 Server Card schema shipped with mcpsync
(``server-card.v1.schema.json``; ``jsonschema`` is imported on first use) and returns a :class:`ServerCard`;
:func:`parse_catalog` reads an AI Catalog and keeps its Server Card entries (:class:`CatalogEntry`). Both raise
:class:`~.errors.CardInvalid` naming the bad key. Pure computation: safe from any thread.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple

from .errors import CardInvalid

__all__ = [
    "CARD_MEDIA_TYPE",
    "CATALOG_MEDIA_TYPE",
    "CARD_SCHEMA_URL",
    "CardInput",
    "CatalogEntry",
    "Remote",
    "ServerCard",
    "card_schema",
    "parse_card",
    "parse_catalog",
]

#: The media type of a Server Card (the ``Accept`` of a card request, the ``type`` of a catalog entry).
CARD_MEDIA_TYPE = "application/mcp-server-card+json"
#: The media type of an AI Catalog.
CATALOG_MEDIA_TYPE = "application/ai-catalog+json"
#: The ``$schema`` every v1 Server Card names.
CARD_SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"

_SCHEMA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "server-card.v1.schema.json")
#: At most this many catalog entries are read (a larger catalog is refused).
MAX_ENTRIES = 1000


@dataclass(frozen=True)
class CardInput:
    """A header or a URL variable the card describes (its ``KeyValueInput`` / ``Input``)."""

    name: str
    description: str = ""
    required: bool = False
    secret: bool = False
    default: Optional[str] = None
    choices: Tuple[str, ...] = ()
    value: Optional[str] = None


@dataclass(frozen=True)
class Remote:
    """One ``remotes[]`` entry: how to reach the server.

    Attributes:
        type: ``streamable-http`` or ``sse``.
        url: the URL template (``{variables}`` are filled in when connecting).
        headers: the headers it takes (required and secret ones are asked for).
        variables: the URL template's variables.
        supported_protocol_versions: the MCP revisions it speaks (may be empty: unknown).
        raw: the entry as the card gave it.
    """

    type: str
    url: str
    headers: Tuple[CardInput, ...] = ()
    variables: Tuple[CardInput, ...] = ()
    supported_protocol_versions: Tuple[str, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def transport(self) -> str:
        """The client's ``transport=`` for this remote: ``http`` or ``sse``."""
        return "sse" if self.type == "sse" else "http"


@dataclass(frozen=True)
class ServerCard:
    """A validated Server Card.

    Attributes:
        name / version / description / title / website_url: the server's identity (as the card claims it:
            advisory; the live connection's ``serverInfo`` is authoritative).
        remotes: where and how to connect.
        source_url: the URL the card was asked for (the catalog's, for an inline card): the anchor of the
            same-domain rule.
        data: the whole document (``repository``, ``icons``, ``_meta``...).
        etag: the validator it was served with, if any.
    """

    name: str
    version: str
    description: str
    remotes: Tuple[Remote, ...]
    source_url: str = ""
    title: Optional[str] = None
    website_url: Optional[str] = None
    data: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    etag: Optional[str] = None


@dataclass(frozen=True)
class CatalogEntry:
    """An AI Catalog entry whose ``type`` is a Server Card: its ``url`` or its inline ``data``."""

    identifier: str
    url: Optional[str]
    data: Optional[Mapping[str, Any]] = field(default=None, repr=False)
    catalog_url: str = ""


@functools.lru_cache(maxsize=1)
def _validator() -> Any:
    """The compiled validator: built on first use, then reused (read-only afterwards, thread-safe)."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator(card_schema())


def card_schema() -> Dict[str, Any]:
    """The v1 Server Card JSON Schema shipped with mcpsync (a fresh copy)."""
    with open(_SCHEMA_FILE, encoding="utf-8") as fh:
        schema: Dict[str, Any] = json.load(fh)
    return schema


def _path(parts: Any) -> str:
    out = ""
    for p in parts:
        out += "[%d]" % p if isinstance(p, int) else ("." + str(p) if out else str(p))
    return out or "(document)"


def _inputs(items: Any, keyed: bool) -> Tuple[CardInput, ...]:
    found: List[CardInput] = []
    pairs = items.items() if keyed else ((item.get("name", ""), item) for item in items)
    for name, spec in pairs:
        found.append(CardInput(
            name=str(name),
            description=str(spec.get("description") or ""),
            required=bool(spec.get("isRequired", False)),
            secret=bool(spec.get("isSecret", False)),
            default=spec.get("default"),
            choices=tuple(spec.get("choices") or ()),
            value=spec.get("value"),
        ))
    return tuple(found)


def parse_card(document: Any, source_url: str = "", etag: Optional[str] = None) -> ServerCard:
    """``document`` (decoded JSON) as a :class:`ServerCard`; raises :class:`~.errors.CardInvalid`."""
    validator = _validator()
    try:
        errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    except RecursionError:
        raise CardInvalid("the Server Card at %s is nested too deeply" % (source_url or "<inline>"),
                          url=source_url) from None
    if errors:
        first = errors[0]
        raise CardInvalid("the Server Card at %s breaks the v1 schema at %s: %s" % (
            source_url or "<inline>", _path(first.absolute_path), first.message[:300]), url=source_url)
    remotes = tuple(
        Remote(
            type=r["type"],
            url=r["url"],
            headers=_inputs(r.get("headers") or [], keyed=False),
            variables=_inputs(r.get("variables") or {}, keyed=True),
            supported_protocol_versions=tuple(r.get("supportedProtocolVersions") or ()),
            raw=r,
        )
        for r in document.get("remotes") or []
    )
    return ServerCard(
        name=document["name"],
        version=document["version"],
        description=document["description"],
        remotes=remotes,
        source_url=source_url,
        title=document.get("title"),
        website_url=document.get("websiteUrl"),
        data=document,
        etag=etag,
    )


def parse_catalog(document: Any, catalog_url: str = "") -> List[CatalogEntry]:
    """The Server Card entries of an AI Catalog (other artifact types are skipped); raises CardInvalid for a
    document that is not a catalog (an object with an ``entries`` list)."""
    where = catalog_url or "<catalog>"
    if not isinstance(document, dict) or not isinstance(document.get("entries"), list):
        raise CardInvalid("%s is not an AI Catalog (an object with an entries list)" % where, url=catalog_url)
    entries = document["entries"]
    if len(entries) > MAX_ENTRIES:
        raise CardInvalid("%s has %d entries (at most %d are read)" % (where, len(entries), MAX_ENTRIES),
                          url=catalog_url)
    found: List[CatalogEntry] = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or entry.get("type") != CARD_MEDIA_TYPE:
            continue
        identifier, url, data = entry.get("identifier"), entry.get("url"), entry.get("data")
        if not isinstance(identifier, str) or not identifier:
            raise CardInvalid("%s entries[%d].identifier must be a non-empty string" % (where, i), url=catalog_url)
        if (url is None) == (data is None):
            raise CardInvalid("%s entries[%d] must have exactly one of url and data" % (where, i), url=catalog_url)
        if url is not None and not isinstance(url, str):
            raise CardInvalid("%s entries[%d].url must be a string" % (where, i), url=catalog_url)
        if data is not None and not isinstance(data, dict):
            raise CardInvalid("%s entries[%d].data must be a Server Card object" % (where, i), url=catalog_url)
        found.append(CatalogEntry(identifier, url, data, catalog_url))
    return found
