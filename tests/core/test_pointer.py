"""mcpsync._pointer: the one JSON Pointer walk the schema converters share (RFC 6901 fragments)."""

from __future__ import annotations

from typing import Any, List

from hypothesis import given
from hypothesis import strategies as st

from mcpsync._pointer import resolve_pointer

_keys = st.text(min_size=0, max_size=6)


def _escape(part: str) -> str:
    return part.replace("~", "~0").replace("/", "~1")


def test_objects_arrays_and_escapes() -> None:
    doc = {"$defs": {"a/b": {"c~d": [10, {"x": 1}]}}}
    assert resolve_pointer(doc, "#") is doc
    assert resolve_pointer(doc, "#/$defs/a~1b/c~0d/1/x") == 1
    assert resolve_pointer(doc, "#/$defs/a~1b/c~0d/0") == 10
    for missing in ("#/$defs/nope", "#/$defs/a~1b/c~0d/2", "#/$defs/a~1b/c~0d/-1", "other.json#/a", "a"):
        assert resolve_pointer(doc, missing) is None


@given(st.lists(_keys, min_size=1, max_size=4), st.integers())
def test_every_built_path_resolves_to_what_was_put_there(path: List[str], leaf: int) -> None:
    doc: Any = leaf
    for part in reversed(path):
        doc = {part: doc}
    assert resolve_pointer(doc, "#/" + "/".join(_escape(p) for p in path)) == leaf
