"""SKILL.md frontmatter (mcpsync.skills.frontmatter): read as PyYAML reads it, with aliases, duplicate keys refused."""

from __future__ import annotations

import pytest
import yaml

from mcpsync.skills.frontmatter import FrontmatterError, parse_yaml, split_frontmatter


def test_agent_skills_frontmatter() -> None:
    text = """
name: pdf-processing   # the skill's name
description: >-
  Extract text and tables,
  fill forms.
license: 'Apache-2.0'
compatibility: "Needs \\"poppler\\" \\u00e9"
allowed-tools: Bash(git:*) Read
metadata:
  author: example-org
  version: "1.0"
  count: 3
  ratio: 0.5
  enabled: yes
  nothing: ~
tags: [pdf, "forms", 3]
inline: {a: 1, b: two}
steps:
  - first
  - second: 2
    third: 3
  -
    - nested
notes: |
  line one
    indented
  line three
"""
    assert parse_yaml(text) == {
        "name": "pdf-processing",
        "description": "Extract text and tables, fill forms.",
        "license": "Apache-2.0",
        "compatibility": 'Needs "poppler" \u00e9',
        "allowed-tools": "Bash(git:*) Read",
        "metadata": {
            "author": "example-org",
            "version": "1.0",
            "count": 3,
            "ratio": 0.5,
            "enabled": True,
            "nothing": None,
        },
        "tags": ["pdf", "forms", 3],
        "inline": {"a": 1, "b": "two"},
        "steps": ["first", {"second": 2, "third": 3}, ["nested"]],
        "notes": "line one\n  indented\nline three\n",
    }


def test_multi_line_plain_and_quoted_scalars() -> None:
    assert parse_yaml("description: a long\n  description\n\n  with a break\nnext: 1\n") == {
        "description": "a long description\nwith a break",
        "next": 1,
    }
    assert parse_yaml("d: 'it''s\n  folded'\n") == {"d": "it's folded"}


def test_block_scalar_chomping() -> None:
    assert parse_yaml("a: |-\n  x\n\nb: 1\n") == {"a": "x", "b": 1}
    assert parse_yaml("a: |+\n  x\n\nb: 1\n") == {"a": "x\n\n", "b": 1}
    assert parse_yaml("a: >\n  one\n  two\n\n  three\n") == {"a": "one two\nthree\n"}


def test_sequences_at_the_key_indent() -> None:
    assert parse_yaml("items:\n- a\n- b\nnext: x\n") == {"items": ["a", "b"], "next": "x"}


@pytest.mark.parametrize(
    "text",
    [
        "a: true\nb: False\nc: null\nd: 0x1F\ne: 0o17\nf: -1.5e3\ng: .inf\nh: '1'\ni: 1.2.3\n",
        "x: 012\ny: 1_000\nz: yes\nw: off\nv: ~\n",  # YAML 1.1, as the servers' own tools read them
        "a: !!str 1\n",
        "? complex\n: key\n",
        "just a scalar line without a colon\n",
    ],
)
def test_scalars_read_as_pyyaml_reads_them(text: str) -> None:
    assert parse_yaml(text) == yaml.safe_load(text)


def test_dates_stay_strings() -> None:
    """A skill entry's frontmatter is JSON, where a date is a string; PyYAML alone would make a date object."""
    assert parse_yaml("created: 2026-01-02\nat: 2026-01-02 10:00:00\n") == {
        "created": "2026-01-02",
        "at": "2026-01-02 10:00:00",
    }


@pytest.mark.parametrize(
    "text",
    [
        "a: b: c\n",  # YAML says no; a hand-written subset once read it as {'a': 'b: c'}
        "a: &x 1\nb: *x\n",  # anchors and aliases
        "a: 1\na: 2\n",  # duplicate keys
        "a:\n  b: 1\n  b: 2\n",  # nested duplicate keys
        "a: [1, 2\n",
        "a: 'unterminated\n",
        'a: "bad \\q escape"\n',
        "a:\n\tb: 1\n",  # tab indentation
        "a: 1\n---\nb: 2\n",
        "a:\n    b: 1\n  c: 2\n",  # bad dedent
        "? [a, b]\n: 1\n",  # a key that is not a scalar
    ],
)
def test_broken_or_ambiguous_yaml_is_refused(text: str) -> None:
    with pytest.raises(FrontmatterError):
        parse_yaml(text)


def test_split_frontmatter() -> None:
    assert split_frontmatter("---\nname: x\n---\nbody\n") == ("name: x", "body\n")
    assert split_frontmatter("\ufeff---\r\nname: x\r\n---\r\nbody") == ("name: x", "body")
    for bad in ("name: x\n", "---\nname: x\n", ""):
        with pytest.raises(FrontmatterError):
            split_frontmatter(bad)
