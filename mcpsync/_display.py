"""Text from a peer made safe to show on a terminal: :func:`escape_controls`.

A server, a registry entry or a card chooses the names, descriptions and results mcpsync shows. Written raw, an
``ESC[2J`` would clear the user's screen, an ``ESC]0;...BEL`` retitle the window, a carriage return overwrite
what came before on the line, and a right-to-left override (U+202E) or a zero-width character make a line
read as something else than what it is. Both the CLI and the consent text of the installers use this one
function. Pure and thread-safe.
"""

from __future__ import annotations

import unicodedata

__all__ = ["escape_controls"]


def _shown(ch: str) -> str:
    if unicodedata.category(ch) == "Zs":  # a visible space (no-break, thin, ideographic...): harmless
        return ch
    return ch.encode("unicode_escape").decode("ascii")


def _escape_line(line: str) -> str:
    return "".join(ch if ch.isprintable() or ch == "\t" else _shown(ch) for ch in line)


def escape_controls(text: object, *, one_line: bool = False) -> str:
    """``str(text)`` with every character that acts on a terminal or hides text shown as a visible escape.

    Escaped: C0 and C1 controls (ESC, CR, BEL, DEL, CSI...), bidirectional overrides and isolates, zero-width
    and other format characters, line and paragraph separators, and anything else Python does not count as
    printable, except spaces, which are shown as they are. ``ESC`` becomes ``\\x1b``, U+202E ``\\u202e``.
    Newlines and tabs are kept, unless ``one_line`` is True (a table row, a consent line): then they are
    escaped too (``\\n``, ``\\t``). Letters of every script and emoji pass unchanged. Costs one C-speed pass
    over text with nothing to escape, and one per line of multi-line text.
    """
    value = str(text)
    if value.isprintable():
        return value
    if one_line:
        return "".join(ch if ch.isprintable() else _shown(ch) for ch in value)
    return "\n".join(line if line.isprintable() else _escape_line(line) for line in value.split("\n"))
