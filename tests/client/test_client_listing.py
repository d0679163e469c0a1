"""The typed listing methods (tools, prompts, resources, resource templates; all items or one page) are one
generic implementation: each returns, page by page, exactly the items the server sent for its method, built
into its type, in both eras, against the bundled example server paginating one item a page."""

from __future__ import annotations

import pathlib
import sys
from typing import Any, Dict, List, Optional, Tuple

import pytest

import mcpsync
from mcpsync.types import Prompt, Resource, ResourceTemplate, Tool
from tests.conftest import server_cmd

#: (typed method, its page method, the protocol method, the result's list of items, the item type)
FAMILIES: List[Tuple[str, str, str, str, type]] = [
    ("list_tools", "list_tools_page", "tools/list", "tools", Tool),
    ("list_prompts", "list_prompts_page", "prompts/list", "prompts", Prompt),
    ("list_resources", "list_resources_page", "resources/list", "resources", Resource),
    ("list_resource_templates", "list_resource_templates_page", "resources/templates/list", "resourceTemplates",
     ResourceTemplate),
]  # fmt: skip


def _wire_pages(client: mcpsync.Client, method: str, key: str) -> List[Tuple[List[Dict[str, Any]], Optional[str]]]:
    """Every page of ``method`` as the server sends it (items, next cursor), through the raw request API."""
    pages = []
    cursor: Optional[str] = None
    while True:
        result = client.request(method, None if cursor is None else {"cursor": cursor})
        cursor = result.get("nextCursor")
        pages.append((result[key], cursor))
        if cursor is None:
            return pages


@pytest.mark.parametrize("family", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_each_typed_listing_returns_the_servers_pages(era: str, family: Tuple[str, str, str, str, type]) -> None:
    every, one_page, method, key, kind = family
    with mcpsync.connect(server_cmd("--era", era, "--page-size", "1", "--ttl-ms", "60000")) as client:
        wire = _wire_pages(client, method, key)
        for cache in ("bypass", "refresh", "use"):  # asked afresh, asked and cached, then from the cache
            pages = []
            cursor: Optional[str] = None
            while True:
                page = getattr(client, one_page)(cursor, cache=cache)
                assert all(type(item) is kind for item in page.items)
                pages.append(([item.raw for item in page.items], page.next_cursor))
                if page.next_cursor is None:
                    break
                cursor = page.next_cursor
            assert pages == wire, cache
            items = getattr(client, every)(cache=cache)
            assert all(type(item) is kind for item in items)
            assert [item.raw for item in items] == [raw for page_items, _ in wire for raw in page_items], cache
        assert len(wire) > 1 or key == "resourceTemplates"  # a real walk over cursors (the first one is "")


def test_a_listing_or_feature_the_server_did_not_declare_is_a_capability_error() -> None:
    """A server declaring tools, resources (without ``subscribe``) and logging, but no prompts."""
    peer = [sys.executable, str(pathlib.Path(__file__).resolve().parent.parent / "peers" / "escapeserver.py")]
    with mcpsync.connect(peer) as client:
        for call in (client.list_prompts, client.list_prompts_page):
            with pytest.raises(mcpsync.CapabilityError) as info:
                call()
            assert "did not declare the 'prompts' capability needed by prompts/list" in str(info.value)
            assert info.value.method == "prompts/list"
        with pytest.raises(mcpsync.CapabilityError) as info:
            client.subscribe_resource("file:///x")
        assert "does not support resources.subscribe (needed by resources/subscribe)" in str(info.value)
        assert len(client.list_tools()) == 2  # a declared listing goes through
