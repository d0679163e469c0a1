"""The one terminal escaper (mcpsync._display.escape_controls) the CLI and the installers' consent text use."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from mcpsync._display import escape_controls


def _safe_char(ch: str) -> bool:
    return ch.isprintable() or unicodedata.category(ch) == "Zs"


def test_what_acts_on_a_terminal_or_hides_text_is_shown_escaped() -> None:
    assert escape_controls("\x1b[2J\x1b]0;t\x07\r\x7f\x85") == "\\x1b[2J\\x1b]0;t\\x07\\r\\x7f\\x85"
    assert escape_controls("evil\u202etxt.exe \u2066x\u2069") == "evil\\u202etxt.exe \\u2066x\\u2069"
    assert escape_controls("a\u200bb\ufeffc\u2028d") == "a\\u200bb\\ufeffc\\u2028d"  # zero-width, BOM, separator


def test_letters_spaces_newlines_and_tabs_are_kept_unless_one_line() -> None:
    text = "a\tb\nc é 日本 🙂 no\u00a0break\u3000wide"
    assert escape_controls(text) == text
    assert escape_controls(text, one_line=True) == "a\\tb\\nc é 日本 🙂 no\u00a0break\u3000wide"
    assert escape_controls(42) == "42" and escape_controls(None, one_line=True) == "None"


@settings(max_examples=300, deadline=None)
@given(st.text(), st.booleans())
def test_escaped_text_is_safe_and_loses_nothing(text: str, one_line: bool) -> None:
    shown = escape_controls(text, one_line=one_line)
    kept = "" if one_line else "\n\t"
    assert all(_safe_char(ch) or ch in kept for ch in shown)
    # every character is either kept or replaced by its Python escape, so decoding gives the text back
    if all(_safe_char(ch) or ch in kept for ch in text):
        assert shown == text
    else:
        unsafe = [ch for ch in text if not (_safe_char(ch) or ch in kept)]
        assert all(ch.encode("unicode_escape").decode("ascii") in shown for ch in unsafe)
    assert shown.count("\n") == (0 if one_line else text.count("\n"))
