"""YAML frontmatter of a ``SKILL.md`` (Agent Skills), parsed without a YAML library.

:func:`split_frontmatter` separates the ``---`` delimited header from the body; :func:`parse_yaml`
reads the YAML subset skill frontmatter uses: block mappings and sequences (nested by indentation),
plain, single- and double-quoted scalars (plain ones may continue on more-indented lines), literal
``|`` and folded ``>`` block scalars with ``-``/``+`` chomping, flow sequences and mappings
(``[a, b]``, ``{k: v}``), comments, and YAML 1.2 core-schema resolution of plain scalars (null, booleans,
integers, floats). Anything else (anchors, aliases, tags, complex keys, duplicate keys, several
documents) raises :class:`FrontmatterError`: a host that cannot read a skill's frontmatter must not
load the skill.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

__all__ = ["FrontmatterError", "parse_yaml", "split_frontmatter"]


class FrontmatterError(ValueError):
    """The frontmatter is missing or not in the supported YAML subset."""


_INT = re.compile(r"^[-+]?[0-9]+$")
_OCT = re.compile(r"^0o[0-7]+$")
_HEX = re.compile(r"^0x[0-9a-fA-F]+$")
_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_KEY = re.compile(
    r"^((?:\"(?:[^\"\\]|\\.)*\")|(?:'(?:[^']|'')*')|[^\s#'\"{}\[\],&*!|>%@`?-][^:#]*?|-[^\s:#][^:#]*?)\s*:(?:\s+|$)"
)


def split_frontmatter(text: str) -> Tuple[str, str]:
    """``(frontmatter_yaml, body)`` of a document that starts with a ``---`` line."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r").rstrip() != "---":
        raise FrontmatterError("SKILL.md does not begin with a '---' frontmatter block")
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r").rstrip() in ("---", "..."):
            header = "\n".join(line.rstrip("\r") for line in lines[1:i])
            return header, "\n".join(lines[i + 1 :])
    raise FrontmatterError("SKILL.md frontmatter has no closing '---' line")


def _resolve_plain(text: str) -> Any:
    if text in ("", "~", "null", "Null", "NULL"):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if _INT.match(text):
        return int(text, 10)
    if _OCT.match(text):
        return int(text[2:], 8)
    if _HEX.match(text):
        return int(text[2:], 16)
    if _FLOAT.match(text) and any(c.isdigit() for c in text):
        return float(text)
    if text in (".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"):
        return float("inf")
    if text in ("-.inf", "-.Inf", "-.INF"):
        return float("-inf")
    if text in (".nan", ".NaN", ".NAN"):
        return float("nan")
    return text


_ESCAPES = {
    "0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f",
    "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0",
    "L": "\u2028", "P": "\u2029",
}  # fmt: skip


def _double_quoted(body: str) -> str:
    out: List[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        if i + 1 >= len(body):
            raise FrontmatterError("a double-quoted string ends with a backslash")
        e = body[i + 1]
        if e in _ESCAPES:
            out.append(_ESCAPES[e])
            i += 2
        elif e in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[e]
            digits = body[i + 2 : i + 2 + width]
            if len(digits) != width or not all(d in "0123456789abcdefABCDEF" for d in digits):
                raise FrontmatterError("a bad \\%s escape in a double-quoted string" % e)
            out.append(chr(int(digits, 16)))
            i += 2 + width
        else:
            raise FrontmatterError("an unknown escape \\%s in a double-quoted string" % e)
    text = "".join(out)
    if any("\ud800" <= c <= "\udfff" for c in text):
        try:  # JSON-style surrogate pairs (\ud83d\ude00) make one character
            text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
        except UnicodeDecodeError:
            raise FrontmatterError("a lone surrogate escape in a double-quoted string") from None
    return text


def _fold_lines(parts: List[str]) -> str:
    """Join the lines of a multi-line flow scalar: one space per line break, newlines for empty lines."""
    if len(parts) == 1:
        return parts[0]
    out = ""
    pending_newlines = 0
    last = len(parts) - 1
    for idx, part in enumerate(parts):
        # line breaks eat the spaces around them; the first line keeps its start, the last its end
        part = part.rstrip() if idx == 0 else (part.lstrip() if idx == last else part.strip())
        if idx and not part:
            pending_newlines += 1
            continue
        if idx:
            out += "\n" * pending_newlines if pending_newlines else " "
        pending_newlines = 0
        out += part
    return out


def _strip_comment(text: str) -> str:
    """A plain scalar ends at ' #'."""
    m = re.search(r"\s#", text)
    return (text[: m.start()] if m else text).rstrip()


class _Parser:
    def __init__(self, text: str) -> None:
        if "\t" in "".join(line[: len(line) - len(line.lstrip())] for line in text.split("\n")):
            raise FrontmatterError("tabs are not allowed in YAML indentation")
        self.lines = text.split("\n")
        self.pos = 0

    # -------------------------------------------------------------- helpers
    def _skip_blank(self) -> None:
        while self.pos < len(self.lines):
            stripped = self.lines[self.pos].strip()
            if stripped and not stripped.startswith("#"):
                return
            self.pos += 1

    def _indent(self, line: str) -> int:
        return len(line) - len(line.lstrip(" "))

    def parse(self) -> Any:
        self._skip_blank()
        if self.pos >= len(self.lines):
            return None
        first = self.lines[self.pos]
        value = self._block(self._indent(first))
        self._skip_blank()
        if self.pos < len(self.lines):
            raise FrontmatterError("unexpected content at line %d: %r" % (self.pos + 1, self.lines[self.pos].strip()))
        return value

    def _block(self, indent: int) -> Any:
        line = self.lines[self.pos]
        content = line[indent:]
        if content.startswith("- ") or content.rstrip() == "-":
            return self._sequence(indent)
        return self._mapping(indent)

    # -------------------------------------------------------------- block collections
    def _sequence(self, indent: int) -> List[Any]:
        items: List[Any] = []
        while True:
            self._skip_blank()
            if self.pos >= len(self.lines):
                return items
            line = self.lines[self.pos]
            cur = self._indent(line)
            if cur < indent:
                return items
            if cur > indent:
                raise FrontmatterError("bad indentation at line %d" % (self.pos + 1))
            content = line[indent:]
            if not (content.startswith("- ") or content.rstrip() == "-"):
                return items
            rest = content[1:].lstrip(" ")
            if not rest or rest.startswith("#"):
                self.pos += 1
                self._skip_blank()
                if self.pos < len(self.lines) and self._indent(self.lines[self.pos]) > indent:
                    items.append(self._block(self._indent(self.lines[self.pos])))
                else:
                    items.append(None)
                continue
            inner_indent = indent + (len(content) - len(rest))
            if _KEY.match(rest):
                # "- key: value" starts a mapping whose keys sit at inner_indent
                self.lines[self.pos] = " " * inner_indent + rest
                items.append(self._mapping(inner_indent))
            elif rest.startswith("- "):
                self.lines[self.pos] = " " * inner_indent + rest
                items.append(self._sequence(inner_indent))
            else:
                items.append(self._scalar_value(rest, indent))
        return items  # pragma: no cover

    def _mapping(self, indent: int) -> Dict[str, Any]:
        out: Dict[str, Any] = {}
        while True:
            self._skip_blank()
            if self.pos >= len(self.lines):
                return out
            line = self.lines[self.pos]
            cur = self._indent(line)
            if cur < indent:
                return out
            if cur > indent:
                raise FrontmatterError("bad indentation at line %d" % (self.pos + 1))
            content = line[indent:]
            if content.startswith("- ") or content.rstrip() == "-":
                return out
            m = _KEY.match(content)
            if not m:
                raise FrontmatterError("expected 'key: value' at line %d: %r" % (self.pos + 1, content.strip()))
            key = self._key(m.group(1).strip())
            if key in out:
                raise FrontmatterError("duplicate key %r at line %d" % (key, self.pos + 1))
            rest = content[m.end() :]
            if not rest.strip() or rest.strip().startswith("#"):
                self.pos += 1
                self._skip_blank()
                if self.pos < len(self.lines):
                    nxt = self.lines[self.pos]
                    nind = self._indent(nxt)
                    is_seq = nxt[nind:].startswith("- ") or nxt[nind:].rstrip() == "-"
                    if nind > indent or (nind == indent and is_seq):
                        out[key] = self._block(nind)
                        continue
                out[key] = None
                continue
            out[key] = self._scalar_value(rest, indent)
        return out  # pragma: no cover

    def _key(self, raw: str) -> str:
        if raw.startswith('"'):
            return _double_quoted(raw[1:-1])
        if raw.startswith("'"):
            return raw[1:-1].replace("''", "'")
        return raw

    # -------------------------------------------------------------- scalars
    def _continuation(self, indent: int) -> List[str]:
        """Following lines indented deeper than ``indent`` (a multi-line flow scalar)."""
        parts: List[str] = []
        while self.pos < len(self.lines):
            line = self.lines[self.pos]
            if line.strip() and self._indent(line) <= indent:
                break
            parts.append(line)
            self.pos += 1
        while parts and not parts[-1].strip():
            parts.pop()
            self.pos -= 1
        return parts

    def _scalar_value(self, text: str, indent: int) -> Any:
        """The value starting at ``text`` on the current line; consumes its lines."""
        text = text.strip()
        if text[:1] in "&*!%@`":
            raise FrontmatterError("unsupported YAML (anchor, alias, tag or directive) at line %d" % (self.pos + 1))
        if text[:1] in "|>":
            return self._block_scalar(text, indent)
        if text[:1] in "[{":
            self.pos += 1
            buf = text
            while not _balanced(buf):
                if self.pos >= len(self.lines):
                    raise FrontmatterError("an unterminated flow collection")
                buf += " " + self.lines[self.pos].strip()
                self.pos += 1
            value, end = _flow(buf, 0)
            if _strip_comment(buf[end:]).strip():
                raise FrontmatterError("unexpected text after a flow collection: %r" % buf[end:])
            return value
        if text[:1] in "\"'":
            quote = text[0]
            buf = text
            self.pos += 1
            while _quoted_end(buf, quote) < 0:
                if self.pos >= len(self.lines):
                    raise FrontmatterError("an unterminated quoted string")
                buf += "\n" + self.lines[self.pos]
                self.pos += 1
            end = _quoted_end(buf, quote)
            if _strip_comment(buf[end + 1 :]).strip():
                raise FrontmatterError("unexpected text after a quoted string: %r" % buf[end + 1 :])
            body = _fold_lines(buf[1:end].split("\n"))
            return _double_quoted(body) if quote == '"' else body.replace("''", "'")
        self.pos += 1
        first = _strip_comment(text)
        parts = [first] + [_strip_comment(p) for p in self._continuation(indent)]
        if len(parts) == 1:
            return _resolve_plain(first)
        return _fold_lines(parts)

    def _block_scalar(self, header: str, indent: int) -> str:
        m = re.match(r"^([|>])([-+]?)([1-9]?)([-+]?)\s*(#.*)?$", header)
        if not m:
            raise FrontmatterError("a bad block scalar header %r" % header)
        style = m.group(1)
        chomp = m.group(2) or m.group(4)
        self.pos += 1
        raw = []
        while self.pos < len(self.lines):
            line = self.lines[self.pos]
            if line.strip() and self._indent(line) <= indent:
                break
            raw.append(line)
            self.pos += 1
        content_lines = [line for line in raw if line.strip()]
        block_indent = (
            int(m.group(3)) + indent if m.group(3) else min((self._indent(x) for x in content_lines), default=0)
        )
        lines = [line[block_indent:] if line.strip() else "" for line in raw]
        trailing = 0
        while lines and lines[-1] == "":
            lines.pop()
            trailing += 1
        if style == "|":
            text = "\n".join(lines)
        else:
            text = ""
            prev_more = False
            for i, line in enumerate(lines):
                more = line.startswith(" ")
                if i == 0:
                    text = line
                elif line == "":
                    text += "\n"
                elif text.endswith("\n") or more or prev_more:
                    text += ("" if text.endswith("\n") else "\n") + line
                else:
                    text += " " + line
                prev_more = more
        if not lines:
            return "" if chomp != "+" else "\n" * trailing
        if chomp == "-":
            return text
        if chomp == "+":
            return text + "\n" + "\n" * trailing
        return text + "\n"


def _quoted_end(buf: str, quote: str) -> int:
    i = 1
    while i < len(buf):
        c = buf[i]
        if quote == '"' and c == "\\":
            i += 2
            continue
        if c == quote:
            if quote == "'" and buf[i + 1 : i + 2] == "'":
                i += 2
                continue
            return i
        i += 1
    return -1


def _balanced(buf: str) -> bool:
    depth = 0
    quote: Optional[str] = None
    i = 0
    while i < len(buf):
        c = buf[i]
        if quote:
            if quote == '"' and c == "\\":
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
            if depth == 0:
                return True
        i += 1
    return False


def _flow(s: str, i: int) -> Tuple[Any, int]:
    """Parse a flow value at ``s[i]``; returns (value, index after it)."""
    while i < len(s) and s[i] == " ":
        i += 1
    if i >= len(s):
        raise FrontmatterError("an incomplete flow collection")
    c = s[i]
    if c == "[":
        items: List[Any] = []
        i += 1
        while True:
            while i < len(s) and s[i] == " ":
                i += 1
            if i < len(s) and s[i] == "]":
                return items, i + 1
            value, i = _flow(s, i)
            items.append(value)
            while i < len(s) and s[i] == " ":
                i += 1
            if i < len(s) and s[i] == ",":
                i += 1
            elif i < len(s) and s[i] == "]":
                return items, i + 1
            else:
                raise FrontmatterError("a bad flow sequence: %r" % s)
    if c == "{":
        out: Dict[str, Any] = {}
        i += 1
        while True:
            while i < len(s) and s[i] == " ":
                i += 1
            if i < len(s) and s[i] == "}":
                return out, i + 1
            key, i = _flow_scalar(s, i, key=True)
            while i < len(s) and s[i] == " ":
                i += 1
            if i >= len(s) or s[i] != ":":
                raise FrontmatterError("a bad flow mapping: %r" % s)
            value, i = _flow(s, i + 1)
            if not isinstance(key, str) or key in out:
                raise FrontmatterError("a bad or duplicate key in a flow mapping: %r" % s)
            out[key] = value
            while i < len(s) and s[i] == " ":
                i += 1
            if i < len(s) and s[i] == ",":
                i += 1
            elif i < len(s) and s[i] == "}":
                return out, i + 1
            else:
                raise FrontmatterError("a bad flow mapping: %r" % s)
    return _flow_scalar(s, i, key=False)


def _flow_scalar(s: str, i: int, key: bool) -> Tuple[Any, int]:
    if s[i] in "\"'":
        quote = s[i]
        end = _quoted_end(s[i:], quote)
        if end < 0:
            raise FrontmatterError("an unterminated quoted string in a flow collection")
        body = s[i + 1 : i + end]
        value = _double_quoted(body) if quote == '"' else body.replace("''", "'")
        return value, i + end + 1
    if s[i] in "&*!%@`[{":
        raise FrontmatterError("unsupported YAML in a flow collection: %r" % s)
    j = i
    stops = ",]}:" if key else ",]}"
    while j < len(s) and s[j] not in stops:
        if not key and s[j] == ":" and (j + 1 >= len(s) or s[j + 1] == " "):
            break
        j += 1
    raw = s[i:j].strip()
    return (raw if key else _resolve_plain(raw)), j


def parse_yaml(text: str) -> Any:
    """Parse the YAML subset described in the module docstring."""
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped in ("---", "...") or stripped.startswith("%"):
            raise FrontmatterError("several YAML documents or directives are not supported")
        if stripped.startswith("? "):
            raise FrontmatterError("complex mapping keys are not supported")
    return _Parser(text).parse()
