"""Arguments keep their JSON types through the argument models every framework adapter validates with: an
``integer`` stays an int, a ``number`` keeps an int an int and a float a float, at any depth (nested objects,
arrays, nullables, unions). Needs pydantic (skipped without it)."""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("pydantic")

from pydantic import ValidationError  # noqa: E402

from mcpsync.integrations.schema_model import argument_model, dump_arguments  # noqa: E402
from mcpsync.manager.adapters import restore_arguments  # noqa: E402

Pair = Tuple[Dict[str, Any], Any]  # (a JSON Schema, a strategy of values it accepts)

LEAVES: Dict[str, Any] = {
    "integer": st.integers(min_value=-(2**70), max_value=2**70),
    "number": st.integers(min_value=-(2**70), max_value=2**70) | st.floats(allow_nan=False, allow_infinity=False),
    "string": st.text(max_size=6),
    "boolean": st.booleans(),
}


def _leaf() -> Any:
    return st.sampled_from(sorted(LEAVES)).map(lambda kind: ({"type": kind}, LEAVES[kind]))


def _obj(children: List[Pair]) -> Pair:
    props = {"p%d" % i: schema for i, (schema, _) in enumerate(children)}
    values = st.fixed_dictionaries({"p%d" % i: strategy for i, (_, strategy) in enumerate(children)})
    return {"type": "object", "properties": props, "required": sorted(props)}, values


def _extend(children: Any) -> Any:
    arrays = children.map(lambda c: ({"type": "array", "items": c[0]}, st.lists(c[1], max_size=3)))
    objects = st.lists(children, min_size=1, max_size=4).map(_obj)
    nullable = _leaf().map(lambda c: ({"type": [c[0]["type"], "null"]}, st.none() | c[1]))
    unions = st.lists(_leaf(), min_size=2, max_size=3, unique_by=lambda c: c[0]["type"]).map(
        lambda cs: ({"anyOf": [c[0] for c in cs]}, st.one_of([c[1] for c in cs]))
    )
    return arrays | objects | nullable | unions


SCHEMAS = st.lists(st.recursive(_leaf(), _extend, max_leaves=8), min_size=1, max_size=5).map(_obj)


def typed(value: Any) -> Any:
    """``value`` with every scalar tagged by its exact type (so 2 and 2.0, 1 and True differ)."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    return (type(value).__name__, value)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_values_reach_the_server_as_the_model_gave_them(data: Any) -> None:
    schema, values = data.draw(SCHEMAS)
    arguments = data.draw(values)
    model = argument_model(schema, "tool")
    sent = restore_arguments(dump_arguments(model, arguments), schema)
    assert typed(sent) == typed(arguments)


def test_the_schema_the_model_sees_keeps_integer_and_number() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "number", "description": "first"},
            "b": {"type": "integer"},
            "c": {"type": "array", "items": {"type": "number"}},
            "d": {"type": ["integer", "null"]},
        },
        "required": ["a", "b"],
    }
    shown = argument_model(schema, "add").model_json_schema()["properties"]
    assert shown["a"] == {"type": "number", "description": "first", "title": "A"}
    assert shown["b"]["type"] == "integer"
    assert shown["c"]["anyOf"][0] == {"type": "array", "items": {"type": "number"}}
    assert {"type": "integer"} in shown["d"]["anyOf"]


@pytest.mark.parametrize(
    "kind, given_value, sent",
    [
        ("integer", 2, 2),
        ("integer", 2.0, 2),  # a whole float is an integer in JSON Schema: sent as one
        ("number", 2, 2),
        ("number", 2.5, 2.5),
        ("number", 2.0, 2.0),
        ("number", 2**80, 2**80),  # no float rounding for a big int
    ],
)
def test_numbers(kind: str, given_value: Any, sent: Any) -> None:
    model = argument_model({"type": "object", "properties": {"x": {"type": kind}}, "required": ["x"]})
    out = dump_arguments(model, {"x": given_value})["x"]
    assert (type(out), out) == (type(sent), sent)


@pytest.mark.parametrize(
    "kind, bad",
    [("integer", 2.5), ("integer", True), ("number", False), ("number", "3"), ("number", float("nan"))],
)
def test_what_json_schema_refuses_is_refused_before_sending(kind: str, bad: Any) -> None:
    model = argument_model({"type": "object", "properties": {"x": {"type": kind}}, "required": ["x"]})
    with pytest.raises(ValidationError):
        dump_arguments(model, {"x": bad})


def test_a_union_of_integer_and_string_keeps_a_string() -> None:
    union = {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    model = argument_model({"type": "object", "properties": {"x": union}})
    assert dump_arguments(model, {"x": "5"}) == {"x": "5"}
    assert typed(dump_arguments(model, {"x": 5})) == {"x": ("int", 5)}
