"""Hypothesis over hostile AI Catalogs and Server Cards served by a real local host (tests/peers/cardserver.py).

Whatever a host answers -- any JSON, a valid card bent at one place, any remote URL or template with any
default, any Content-Type, status or redirect -- fetching gives a checked ServerCard or a CardError, nothing
else; a card is cached only when it passed every check; preparing a connection from a card that passed gives a
URL the policy accepts or an MCPError (a missing or bad input, an unsafe URL, a foreign domain).
"""

from __future__ import annotations

import json
import os
import tempfile

import pytest

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import mcpsync.cards as cards
from mcpsync.errors import MCPError

from tests.peers.cardserver import CARD_TYPE, SCHEMA, CardServer
from tests.conftest import fuzz_examples

FUZZ = settings(deadline=None, max_examples=fuzz_examples(400, 60),
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def resolver(host):
    """Deterministic DNS for the property: names with "internal" are private, every other one public."""
    return ["10.1.2.3"] if "internal" in host else ["93.184.216.34"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
hosts = st.sampled_from(["127.0.0.1", "localhost", "10.0.0.5", "192.168.1.1", "169.254.169.254", "[::1]",
                         "[fe80::1]", "[::ffff:127.0.0.1]", "0.0.0.0", "example.com", "mcp.example.com",
                         "internal.example.com", "bank.example.net", "com", "100.64.0.1"])
urls = st.one_of(
    st.sampled_from(["http://127.0.0.1:9/mcp", "http://127.0.0.1:9/{u}", "{base}/mcp", "https://example.com/mcp"]),
    st.builds(lambda scheme, host, path: "%s://%s%s" % (scheme, host, path),
              st.sampled_from(["http", "https", "file", "ftp", "javascript", "HTTPS", "data"]), hosts,
              st.sampled_from(["/mcp", "", "/../etc", "/mcp?x=1#f", ":99999/mcp", "@evil.com/"])),
    st.builds(lambda var, rest: "{%s}%s" % (var, rest), st.sampled_from(["base", "u", "x_1"]),
              st.sampled_from(["/mcp", "", "x"])),
    st.text(max_size=40),
)
inputs_spec = st.fixed_dictionaries({}, optional={
    "isRequired": st.booleans(), "isSecret": st.booleans(), "default": urls | st.text(max_size=10),
    "choices": st.lists(st.text(max_size=5), max_size=3), "format": st.sampled_from(["string", "number", "x"]),
})
headers = st.lists(st.fixed_dictionaries({"name": st.sampled_from(["X-Key", "Authorization", "Host", "mcp-session-id",
                                                                   "X Bad", "", "Cookie"])},
                                         optional={"isRequired": st.booleans(), "isSecret": st.booleans(),
                                                   "value": st.text(max_size=12), "default": st.text(max_size=6)}),
                   max_size=3)
remotes = st.fixed_dictionaries(
    {"type": st.sampled_from(["streamable-http", "sse", "stdio"]), "url": urls},
    optional={"headers": headers, "variables": st.dictionaries(st.sampled_from(["base", "u", "x_1"]), inputs_spec,
                                                                max_size=2),
              "supportedProtocolVersions": st.lists(st.sampled_from(["2026-07-28", "2025-11-25", "2099-01-01", ""]),
                                                    max_size=3)},
)
cards_docs = st.fixed_dictionaries(
    {"$schema": st.sampled_from([SCHEMA, SCHEMA.replace("v1", "v2"), ""]),
     "name": st.sampled_from(["io.example/w", "bad", "a/b/c", "x" * 300]),
     "version": st.sampled_from(["1.0.0", ""]), "description": st.sampled_from(["d", "", "x" * 200])},
    optional={"remotes": st.lists(remotes, max_size=3), "_meta": json_values, "title": json_values},
)


@pytest.fixture(scope="module")
def host():
    """One host for every example of a property (each example replaces the routes it uses)."""
    with CardServer() as server:
        yield server


valid_identity = st.fixed_dictionaries(
    {"$schema": st.just(SCHEMA), "name": st.just("io.example/w"), "version": st.just("1.0.0"),
     "description": st.just("d"), "remotes": st.lists(remotes, min_size=1, max_size=2)})
answers = st.sampled_from(["", "200-json", "200-card", "html", "junk", "500", "304", "redirect-self", "redirect-file"])


@FUZZ
@given(document=st.one_of(valid_identity, valid_identity, cards_docs, json_values),
       ctype=st.sampled_from([CARD_TYPE, "application/json", "text/html", ""]),
       answer=answers, inputs=st.dictionaries(st.sampled_from(["base", "u", "X-Key", "Authorization"]), urls,
                                              max_size=3))
def test_hostile_cards_give_a_checked_card_or_a_card_error(host, document, ctype, answer, inputs):
    with tempfile.TemporaryDirectory() as cache_dir:
        body = json.dumps(document).encode() if answer != "junk" else b"\x00{" + json.dumps(document).encode()
        host.route("/card", body, content_type=ctype if answer not in ("html", "200-card") else (
            "text/html" if answer == "html" else CARD_TYPE), status=500 if answer == "500" else 200)
        if answer == "304":
            host.route("/card", body, content_type=CARD_TYPE, etag=None)
        if answer == "redirect-self":
            host.redirect("/card", "/card")
        if answer == "redirect-file":
            host.redirect("/card", "file:///etc/passwd")
        fetcher = cards.CardFetcher(allow_local=["127.0.0.1"], resolver=resolver, cache=cache_dir)
        try:
            card = fetcher.fetch_card(host.url("/card"))
        except cards.CardError:
            assert os.listdir(cache_dir) == [], "a refused card was cached"
            return
        finally:
            fetcher.close()
        assert isinstance(card, cards.ServerCard)
        event("card accepted")
        assert len([n for n in os.listdir(cache_dir) if n.endswith(".json")]) <= 1
        for remote in card.remotes:
            if "{" not in remote.url:
                fetcher.policy.check_remote(remote.url, card.source_url)
        try:
            prepared = cards.prepare(card, inputs=inputs, policy=fetcher.policy)
        except MCPError:
            return
        event("connection prepared")
        fetcher.policy.check_remote(prepared.url, card.source_url)
        assert prepared.url.lower().startswith(("http://127.0.0.1", "https://"))
        assert all("\n" not in v and "\r" not in v for v in prepared.headers.values())


catalog_entries = st.lists(st.fixed_dictionaries(
    {"identifier": st.sampled_from(["urn:air:x:mcp:a", "", 5]),
     "type": st.sampled_from([CARD_TYPE, "application/a2a-agent-card+json", None])},
    optional={"url": urls | st.just("/card"), "data": cards_docs | json_values}), max_size=4)


@FUZZ
@given(entries=catalog_entries | json_values, ctype=st.sampled_from(["application/ai-catalog+json", "text/plain"]))
def test_hostile_catalogs_give_checked_cards_or_a_card_error(host, entries, ctype):
    with tempfile.TemporaryDirectory() as cache_dir:
        host.route("/card", {"$schema": SCHEMA, "name": "io.example/w", "version": "1", "description": "d"})
        doc = {"specVersion": "1.0", "entries": entries} if isinstance(entries, list) else entries
        host.route("/.well-known/ai-catalog.json", doc, content_type=ctype)
        try:
            found = cards.discover(host.base, allow_local=["127.0.0.1"], resolver=resolver, cache=cache_dir)
        except cards.CardError:
            return
        assert found and all(isinstance(card, cards.ServerCard) for card in found)
