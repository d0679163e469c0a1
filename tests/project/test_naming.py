"""Exposed tool names: sanitising, {server}_{tool}, collisions, the 64-character limit, routing."""

from __future__ import annotations

import random

import pytest

from mcpsync.manager.naming import MAX_NAME_LENGTH, NAME_PATTERN, NameTable, qualified_name, sanitize, stable_suffix


def test_sanitize_replaces_everything_outside_the_provider_alphabet():
    assert sanitize("git.hub/search v2") == "git_hub_search_v2"
    assert sanitize("ok-name_1") == "ok-name_1"
    assert sanitize("héllo") == "h_llo"
    assert sanitize("") == "_"


def test_qualified_name_joins_server_and_tool():
    assert qualified_name("github", "search") == "github_search"
    assert qualified_name("my server", "tool.name") == "my_server_tool_name"


def test_two_servers_with_the_same_tool_get_distinct_names_that_route_back():
    table = NameTable([("a", "search"), ("b", "search")])
    assert table.name_for("a", "search") == "a_search"
    assert table.name_for("b", "search") == "b_search"
    assert table["a_search"] == ("a", "search")
    assert table["b_search"] == ("b", "search")


def test_routing_never_splits_on_the_separator():
    # "a_b" + "c" and "a" + "b_c" both join to "a_b_c": the table keeps them apart.
    table = NameTable([("a_b", "c"), ("a", "b_c")])
    names = {table.name_for("a_b", "c"), table.name_for("a", "b_c")}
    assert len(names) == 2
    for name in names:
        server, tool = table[name]
        assert table.name_for(server, tool) == name
    # The smaller pair keeps the plain name, deterministically.
    assert table.name_for("a", "b_c") == "a_b_c"
    assert table.name_for("a_b", "c") == "a_b_c_" + stable_suffix("a_b", "c")


def test_sanitisation_collisions_prefer_the_untouched_name():
    table = NameTable([("srv", "get.item"), ("srv", "get_item")])
    assert table.name_for("srv", "get_item") == "srv_get_item"
    other = table.name_for("srv", "get.item")
    assert other != "srv_get_item" and other.startswith("srv_get_item_")
    assert table[other] == ("srv", "get.item")


def test_collision_resolution_does_not_depend_on_input_order():
    pairs = [("a", "x.y"), ("a", "x_y"), ("a", "x y"), ("a_x", "y"), ("b", "z")]
    first = {p: NameTable(pairs).name_for(*p) for p in pairs}
    for seed in range(5):
        shuffled = list(pairs)
        random.Random(seed).shuffle(shuffled)
        table = NameTable(shuffled)
        assert {p: table.name_for(*p) for p in pairs} == first
    assert len(set(first.values())) == len(pairs)


def test_long_names_are_capped_with_a_stable_hash_suffix():
    server = "s" * 40
    tool_a = "t" * 40 + "_alpha"
    tool_b = "t" * 40 + "_beta"
    a = qualified_name(server, tool_a)
    b = qualified_name(server, tool_b)
    assert len(a) == len(b) == MAX_NAME_LENGTH
    assert a != b  # the shared prefix would collide; the suffix keeps them apart
    assert a == qualified_name(server, tool_a)  # stable
    assert a.endswith("_" + stable_suffix(server, tool_a))
    table = NameTable([(server, tool_a), (server, tool_b)])
    assert table[a] == (server, tool_a) and table[b] == (server, tool_b)


def test_every_name_matches_the_provider_pattern():
    rng = random.Random(7)
    alphabet = "abcXYZ019_-. /:éü@$"
    pairs = [
        (
            "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 50))),
            "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 90))),
        )
        for _ in range(300)
    ]
    table = NameTable(pairs)
    assert len(table) == len(set(pairs))
    for name in table:
        assert NAME_PATTERN.match(name), name
    for pair in set(pairs):
        assert table[table.name_for(*pair)] == pair


def test_unprefixed_table_and_helpers():
    table = NameTable([("a", "x.y"), ("b", "x.y")], prefix=False)
    assert sorted(table) == sorted([table.name_for("a", "x.y"), table.name_for("b", "x.y")])
    assert table.name_for("a", "x.y") == "x_y"
    assert table.resolve("nope") is None
    assert table.names_for_server("b") == [table.name_for("b", "x.y")]
    with pytest.raises(KeyError):
        table.name_for("c", "x.y")
    with pytest.raises(ValueError):
        qualified_name("a", "b", max_length=5)
