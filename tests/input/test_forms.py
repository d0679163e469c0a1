"""Elicitation forms: render_form / parse_form over the spec's schema subset, and hostile schemas."""

from __future__ import annotations

import html.parser
from typing import Any, Dict, List, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mcpsync
from mcpsync.input.forms import check_form_schema, parse_form, render_form

SCHEMA: Dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "description": "Your name", "minLength": 1, "default": "Ada"},
        "email": {"type": "string", "format": "email"},
        "age": {"type": "integer", "title": "Age", "minimum": 0, "maximum": 150},
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "subscribe": {"type": "boolean", "default": True},
        "color": {"type": "string", "enum": ["red", "green"], "enumNames": ["Red", "Green"]},
        "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "maxItems": 2},
    },
    "required": ["name", "age"],
}


class _Fields(html.parser.HTMLParser):
    """What a browser would see: the form's controls and their attributes, and any script element."""

    def __init__(self) -> None:
        super().__init__()
        self.controls: List[Tuple[str, Dict[str, Any]]] = []
        self.scripts = 0

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Any]]) -> None:
        if tag in ("input", "select", "option", "button", "form"):
            self.controls.append((tag, dict(attrs)))
        if tag in ("script", "iframe", "img", "style"):
            self.scripts += 1


def _parse(markup: str) -> _Fields:
    p = _Fields()
    p.feed(markup)
    return p


def test_render_every_kind() -> None:
    markup = render_form(SCHEMA, action="/answer", message="Confirm?", hidden={"token": "t<>"})
    f = _parse(markup)
    by_name = {a.get("name"): (t, a) for t, a in f.controls if a.get("name")}
    assert by_name["token"][1]["value"] == "t<>"  # escaped in the markup, intact for the browser
    assert by_name["f_name"][1]["value"] == "Ada" and "required" in by_name["f_name"][1]
    assert by_name["f_email"][1]["type"] == "email"
    assert by_name["f_age"][1]["type"] == "number" and by_name["f_age"][1]["step"] == "1"
    assert by_name["f_age"][1]["min"] == "0" and by_name["f_age"][1]["max"] == "150"
    assert by_name["f_score"][1]["step"] == "any"
    assert by_name["f_subscribe"][1]["type"] == "checkbox" and "checked" in by_name["f_subscribe"][1]
    assert by_name["f_color"][0] == "select" and by_name["f_size"][0] == "select"
    options = [a.get("value") for t, a in f.controls if t == "option"]
    assert {"red", "green", "s", "l"} <= set(options)
    assert [a["value"] for t, a in f.controls if a.get("name") == "f_tags"] == ["a", "b", "c"]
    assert "Confirm?" in markup and f.scripts == 0


def test_parse_converts_and_validates() -> None:
    form = {"f_name": "Grace", "f_age": "85", "f_score": "0.5", "f_color": "red", "f_tags": ["a", "c"], "x": "y"}
    content, errors = parse_form(SCHEMA, form)
    assert errors == {}
    assert content == {"name": "Grace", "age": 85, "score": 0.5, "subscribe": False, "color": "red", "tags": ["a", "c"]}
    content, errors = parse_form(SCHEMA, {"f_name": "", "f_age": "2.5", "f_email": "nope", "f_tags": ["a", "b", "c"]})
    assert set(errors) >= {"name", "age", "email", "tags"}
    again = render_form(SCHEMA, action="/a", values=content, errors=errors)
    assert again.count('class="mcp-error"') == len(errors)


def test_a_multidict_is_read_with_getlist() -> None:
    from werkzeug.datastructures import MultiDict

    content, errors = parse_form(SCHEMA, MultiDict([("f_name", "A"), ("f_age", "1"), ("f_tags", "a"), ("f_tags", "b")]))
    assert errors == {} and content["tags"] == ["a", "b"]


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"o": {"type": "object"}}},
        {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "integer"}}}},
        {"type": "object", "properties": {"s": {"type": "string", "format": "ipv4"}}},
        {"type": "array"},
        "junk",
        {"type": "object", "properties": []},
        {"type": "object", "required": "name"},
    ],
)
def test_schemas_outside_the_subset_are_refused(schema: Any) -> None:
    with pytest.raises(mcpsync.SchemaValidationError):
        render_form(schema, action="/a")
    with pytest.raises(mcpsync.SchemaValidationError):
        parse_form(schema, {})


_text = st.text(max_size=30)
_prop = st.one_of(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["string", "number", "integer", "boolean"])},
        optional={"title": _text, "description": _text, "default": _text | st.integers()},
    ),
    st.fixed_dictionaries(
        {"type": st.just("string"), "enum": st.lists(_text, min_size=1, max_size=4)},
        optional={"enumNames": st.lists(_text, max_size=4)},
    ),
    st.dictionaries(_text, st.none() | _text | st.integers(), max_size=3),
    st.none() | _text,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    props=st.dictionaries(_text, _prop, max_size=5),
    required=st.lists(_text, max_size=3) | _text,
    data=st.dictionaries(_text, _text | st.lists(_text, max_size=3), max_size=6),
)
def test_hostile_schema_and_form_data(props: Dict[str, Any], required: Any, data: Dict[str, Any]) -> None:
    """Any schema a server sends and anything a browser posts: rendered and parsed, or refused with
    SchemaValidationError; never another exception, never live markup from the server's strings."""
    schema = {"type": "object", "properties": props, "required": required}
    try:
        markup = render_form(schema, action="/a", message="<script>alert(1)</script>")
    except mcpsync.SchemaValidationError:
        with pytest.raises(mcpsync.SchemaValidationError):
            check_form_schema(schema)
        return
    assert _parse(markup).scripts == 0
    content, errors = parse_form(schema, {"f_" + k: v for k, v in data.items()})
    assert set(content) <= set(props)
    if not errors:
        from mcpsync.input.forms import validate_content

        assert validate_content(schema, content) == {}


@pytest.mark.parametrize(
    "fmt,good,bad",
    [
        ("email", "ada@example.org", "ada@"),
        ("uri", "https://example.org/x", "no scheme"),
        ("date", "2026-11-24", "2026-13-01"),
        ("date-time", "2026-11-24T10:00:00Z", "2026-11-24T10:00"),
    ],
)
def test_the_four_formats_are_checked(fmt: str, good: str, bad: str) -> None:
    schema = {"type": "object", "properties": {"v": {"type": "string", "format": fmt}}}
    assert parse_form(schema, {"f_v": good}) == ({"v": good}, {})
    assert "v" in parse_form(schema, {"f_v": bad})[1]


def test_every_failed_field_is_reported_at_once_in_the_forms_order() -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "Ada"},
            "email": {"type": "string", "format": "email"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number"},
            "city": {"type": "string"},
        },
        "required": ["name", "age", "city", "email"],
    }
    content, errors = parse_form(schema, {"f_age": "ten", "f_score": "lots"})
    # every missing required field, and both conversions, in the form's order
    assert list(errors) == ["name", "email", "age", "score", "city"]
    assert errors["name"] == errors["email"] == errors["city"] == "required"
    assert errors["age"] == "not a whole number" and errors["score"] == "not a number"
    assert content == {}
    # shown again: a required field that failed is empty, not refilled with the schema's default
    markup = render_form(schema, action="/a", values=content, errors=errors)
    fields = {a.get("name"): a for _t, a in _parse(markup).controls}
    assert fields["f_age"]["value"] == "" and fields["f_name"]["value"] == ""
    # a field that did not fail still shows its default
    markup = render_form(schema, action="/a", errors={"city": "required"})
    fields = {a.get("name"): a for _t, a in _parse(markup).controls}
    assert fields["f_age"]["value"] == "30" and fields["f_name"]["value"] == "Ada"
    _content, errors = parse_form(schema, {"f_age": "2.5", "f_name": "x", "f_city": "y", "f_email": "a@b.c"})
    assert errors == {"age": "not a whole number"}
