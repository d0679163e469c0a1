"""Hypothesis suites for the Skills extension's boundaries: skill entries from the server, SKILL.md
frontmatter (the YAML subset parser), and a real server answering skills/list with arbitrary entries."""

from __future__ import annotations

import datetime
import json
import math
import re
from typing import Any

import pytest
import yaml

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import mcpsync  # noqa: E402
from mcpsync.skills.frontmatter import FrontmatterError, parse_yaml, split_frontmatter  # noqa: E402
from mcpsync.skills import list_skills, load_skill  # noqa: E402
from mcpsync.skills.skills import Skill, _same  # noqa: E402

from tests.conftest import fuzz_examples, write_atomic  # noqa: E402
from tests.skills.test_skills import SKILL_URI, SkillServer, entry, open_client  # noqa: E402

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=fuzz_examples(500))
@given(json_values)
def test_skill_entries_either_parse_or_raise_skill_verification_error(value: Any) -> None:
    for candidate in (
        value,
        {"uri": SKILL_URI, "frontmatter": value, "resources": value},
        dict(entry(), resources=value),
    ):
        try:
            skill = Skill.from_dict(candidate)
        except mcpsync.SkillVerificationError as exc:
            assert exc.reason == "entry"
        else:
            assert skill.uri.endswith("/SKILL.md") and skill.name


def _has_date(value: Any) -> bool:
    if isinstance(value, (datetime.date, datetime.datetime)):
        return True
    if isinstance(value, dict):
        return any(_has_date(k) or _has_date(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_date(v) for v in value)
    return False


yaml_like = st.text(alphabet=st.sampled_from(list("ab01:-# \n'\"[]{},&*!|>?.~_xyn")), max_size=80)


@settings(max_examples=fuzz_examples(3000))
@given(st.text(max_size=300) | yaml_like)
def test_the_yaml_parser_raises_only_frontmatter_error_and_agrees_with_pyyaml(text: str) -> None:
    """Differential: whatever parse_yaml reads, PyYAML's safe loader reads the same; what PyYAML refuses, so does it."""
    try:
        ours = parse_yaml(text)
    except FrontmatterError:
        ours = FrontmatterError
    try:
        theirs = yaml.safe_load(text)
    except (yaml.YAMLError, ValueError, TypeError, RecursionError):
        theirs = FrontmatterError
    if ours is not FrontmatterError:
        if not _has_date(theirs):  # dates stay strings on purpose
            assert repr(ours) == repr(theirs), text  # repr: NaN equals itself
    elif theirs is not FrontmatterError:
        # refused on purpose: an alias, a duplicate or unhashable key, or the text PyYAML only reads with
        # anchors (checked by the composer, before construction)
        assert "&" in text or "*" in text or ":" in text or "?" in text, text
    try:
        split_frontmatter(text)
    except FrontmatterError:
        pass


keys = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_-0123456789", min_size=1, max_size=10).filter(
    lambda k: k[0].isalpha()
)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**12), max_value=10**12)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | st.text(max_size=30)
)
documents = st.recursive(
    st.dictionaries(keys, scalars, min_size=1, max_size=5),
    lambda inner: st.dictionaries(keys, inner | scalars | st.lists(scalars, max_size=3), min_size=1, max_size=4),
    max_leaves=15,
)


def emit(value: Any, indent: int = 0) -> str:
    """Render a document as block YAML (strings double-quoted, which YAML reads like JSON)."""
    pad = " " * indent
    out = []
    for plain_key, v in value.items():
        key = json.dumps(plain_key)  # a plain `yes`, `null` or `0x1` key would be read as a bool, None or int
        if isinstance(v, dict):
            out.append("%s%s:\n%s" % (pad, key, emit(v, indent + 2)))
        elif isinstance(v, list):
            if not v:
                out.append("%s%s: []\n" % (pad, key))
            else:
                out.append("%s%s:\n%s" % (pad, key, "".join("%s  - %s\n" % (pad, scalar(x)) for x in v)))
        else:
            out.append("%s%s: %s\n" % (pad, key, scalar(v)))
    return "".join(out)


def scalar(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ".inf"
    if isinstance(v, int):
        return str(v)
    # JSON's escapes are YAML's, but for a character outside the BMP: YAML spells it \\UXXXXXXXX, where JSON
    # writes a surrogate pair that PyYAML reads as two lone surrogates
    return re.sub(
        r"\\u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})",
        lambda m: "\\U%08x" % (0x10000 + ((int(m.group(1), 16) - 0xD800) << 10) + int(m.group(2), 16) - 0xDC00),
        json.dumps(v),
    )


@settings(max_examples=fuzz_examples(800))
@given(documents)
def test_block_yaml_round_trips(doc: Any) -> None:
    text = emit(doc)
    assert _same(parse_yaml(text), doc), text
    header, body = split_frontmatter("---\n" + text + "---\nbody")
    assert _same(parse_yaml(header), doc) and body == "body"


def test_a_real_server_sending_arbitrary_entries(tmp_path: Any) -> None:
    """No exception but the typed ones escapes, the connection stays usable, valid entries still work."""
    server = SkillServer(tmp_path)
    with open_client(server) as client:

        @settings(max_examples=fuzz_examples(100, 30))
        @given(st.lists(json_values, max_size=4))
        def run(junk: Any) -> None:
            with open(server.config_path, encoding="utf-8") as f:
                config = json.load(f)
            config["skills"] = junk + [entry()]
            write_atomic(server.config_path, json.dumps(config))  # the server re-reads it on every line
            skills = list_skills(client)
            assert SKILL_URI in [s.uri for s in skills]
            valid = [s for s in skills if s.uri == SKILL_URI and s.frontmatter == entry()["frontmatter"]]
            assert load_skill(client, valid[0]).name == "pdf-processing"

        run()
