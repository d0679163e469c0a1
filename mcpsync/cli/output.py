"""Output helpers of the ``mcpsync`` command line: tables, results, JSON, the progress bar.

Only the CLI uses this module (it is the one part of mcpsync allowed to write
to stdout/stderr). Everything here takes the stream to write to explicitly.
"""

from __future__ import annotations

import json
import os
import threading
from typing import TYPE_CHECKING, IO, Any, Dict, Iterable, List, Optional, Sequence, Tuple

from .._display import escape_controls
from ..types import (
    AudioContent,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    GetPromptResult,
    ImageContent,
    ProgressEvent,
    Prompt,
    ReadResourceResult,
    Resource,
    ResourceContents,
    ResourceLink,
    ResourceTemplate,
    TextContent,
    Tool,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..client.client import Client

__all__ = [
    "Console",
    "ProgressBar",
    "dump_json",
    "escape_controls",
    "is_terminal",
    "format_call_result",
    "format_content",
    "format_prompt_result",
    "format_read_result",
    "prompt_rows",
    "resource_rows",
    "table",
    "template_rows",
    "tool_rows",
]


def is_terminal(stream: Any) -> bool:
    """True when ``stream`` is a terminal (False for anything without a working ``isatty``)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def dump_json(value: Any) -> str:
    """Pretty, stable JSON text (UTF-8 kept as is)."""
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def terminal_width(stream: IO[str], default: int = 100) -> int:
    """The width of the terminal behind ``stream`` (``default`` when it is not a terminal)."""
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        return default
    return max(40, columns) if columns else default  # a pseudo-terminal may report 0 columns


def _first_line(text: Optional[str]) -> str:
    if not text:
        return ""
    for line in text.strip().splitlines():
        if line.strip():
            return line.strip()
    return ""


def _clip(text: str, width: int) -> str:
    if width <= 0 or len(text) <= width:
        return text
    return text[: max(0, width - 1)] + "\u2026"


def table(rows: Sequence[Sequence[str]], *, width: Optional[int] = None, indent: str = "") -> List[str]:
    """Align ``rows`` in columns separated by two spaces; the last column is clipped to ``width``."""
    if not rows:
        return []
    ncols = max(len(r) for r in rows)
    widths = [0] * ncols
    for row in rows:
        for i, cell in enumerate(row[:-1]):
            widths[i] = max(widths[i], min(len(cell), 48))
    lines = []
    for row in rows:
        parts = []
        for i, cell in enumerate(row):
            if i < len(row) - 1:
                parts.append(cell.ljust(widths[i]))
            else:
                parts.append(cell)
        line = indent + "  ".join(parts).rstrip()
        lines.append(_clip(line, width) if width else line)
    return lines


def _type_name(schema: Any) -> str:
    """A short type for one property schema: ``string``, ``integer|null``, ``array[string]``, ``'a'|'b'``."""
    if not isinstance(schema, dict):
        return ""
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and len(enum) <= 6:
        return "|".join(json.dumps(v, ensure_ascii=False) for v in enum)
    if "const" in schema:
        return json.dumps(schema["const"], ensure_ascii=False)
    kind = schema.get("type")
    if isinstance(kind, list):
        return "|".join(str(k) for k in kind if isinstance(k, str))
    if kind == "array":
        inner = _type_name(schema.get("items"))
        return "array[%s]" % inner if inner else "array"
    if isinstance(kind, str):
        return kind
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            names = [n for n in (_type_name(o) for o in options) if n]
            return "|".join(dict.fromkeys(names))
    return ""


def _schema_signature(schema: Any) -> str:
    """``a: number, b: number, [seconds: number = 1]``: the properties of an object schema with their types and
    defaults; optional ones in brackets."""
    if not isinstance(schema, dict):
        return ""
    props = schema.get("properties")
    if not isinstance(props, dict):
        return ""
    listed = schema.get("required")
    required = listed if isinstance(listed, list) else []
    parts = []
    for name, prop in props.items():
        text = str(name)
        kind = _type_name(prop)
        if kind:
            text += ": " + kind
        if isinstance(prop, dict) and "default" in prop:
            text += " = " + _clip(json.dumps(prop["default"], ensure_ascii=False), 24)
        parts.append(text if name in required else "[%s]" % text)
    return ", ".join(parts)


def tool_rows(tools: Iterable[Tool]) -> List[Tuple[str, str, str]]:
    """One (name, arguments, description) row per tool."""
    return [(t.name, _schema_signature(t.input_schema), _first_line(t.description or t.title)) for t in tools]


def prompt_rows(prompts: Iterable[Prompt]) -> List[Tuple[str, str, str]]:
    """One (name, arguments, description) row per prompt."""
    rows = []
    for p in prompts:
        args = ", ".join(a.name if a.required else "[%s]" % a.name for a in p.arguments)
        rows.append((p.name, args, _first_line(p.description or p.title)))
    return rows


def resource_rows(resources: Iterable[Resource]) -> List[Tuple[str, str, str]]:
    """One (uri, mime type, name: description) row per resource."""
    return [(r.uri, r.mime_type or "", _label(r.title or r.name, r.description)) for r in resources]


def template_rows(templates: Iterable[ResourceTemplate]) -> List[Tuple[str, str, str]]:
    """One (uri template, mime type, name: description) row per resource template."""
    return [(t.uri_template, t.mime_type or "", _label(t.title or t.name, t.description)) for t in templates]


def _label(label: str, description: Optional[str]) -> str:
    """``label: first line of description``, or whichever of the two is there."""
    desc = _first_line(description)
    return "%s: %s" % (label, desc) if label and desc else label or desc


def _b64_size(data: str) -> int:
    data = data.strip()
    return max(0, len(data) * 3 // 4 - data[-2:].count("="))


def _contents_text(c: ResourceContents) -> str:
    if c.text is not None:
        return c.text
    if c.blob is not None:
        return "[binary %s, %d bytes]" % (c.mime_type or "data", _b64_size(c.blob))
    return "[empty %s]" % c.uri


def format_content(block: ContentBlock) -> str:
    """A readable rendering of one content block (text as is; binary data summarised)."""
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, (ImageContent, AudioContent)):
        return "[%s %s, %d bytes]" % (block.type, block.mime_type or "", _b64_size(block.data))
    if isinstance(block, EmbeddedResource):
        if block.resource is None:
            return "[resource]"
        return "[resource %s]\n%s" % (block.resource.uri, _contents_text(block.resource))
    if isinstance(block, ResourceLink):
        desc = " - %s" % block.description if block.description else ""
        return "[link %s %s%s]" % (block.uri, block.name, desc)
    return "[%s content] %s" % (block.type or "unknown", json.dumps(block.raw, ensure_ascii=False)[:200])


def format_call_result(result: CallToolResult) -> str:
    """The readable form of a tool result: its content blocks, then structuredContent when it adds something."""
    parts = [format_content(b) for b in result.content]
    if result.structured_content is not None:
        structured = json.dumps(result.structured_content, ensure_ascii=False, sort_keys=True)
        text = "\n".join(parts).strip()
        if text != structured and not _same_json(text, result.structured_content):
            parts.append("structuredContent: %s" % structured)
    return "\n".join(parts)


def _same_json(text: str, value: Any) -> bool:
    try:
        return bool(json.loads(text) == value)
    except ValueError:
        return False


def format_prompt_result(result: GetPromptResult) -> str:
    """``[role] text`` per message, after the description."""
    lines = []
    if result.description:
        lines.append(result.description)
        lines.append("")
    for m in result.messages:
        lines.append("[%s] %s" % (m.role, format_content(m.content)))
    return "\n".join(lines)


def format_read_result(result: ReadResourceResult) -> str:
    """The text of each content; binary contents summarised; a header per item when there are several."""
    if len(result.contents) == 1:
        return _contents_text(result.contents[0])
    chunks = []
    for c in result.contents:
        chunks.append("--- %s (%s)" % (c.uri, c.mime_type or "unknown type"))
        chunks.append(_contents_text(c))
    return "\n".join(chunks)


class Console:
    """Thread-safe writing of whole lines to a stream, keeping a live progress line at the bottom.

    Log lines (written from the client's dispatch thread) and the progress bar
    (also updated there) never garble each other.
    """

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.lock = threading.RLock()
        self._live = ""  # the progress line currently drawn ("" when none)
        self._tty = is_terminal(stream)

    @property
    def isatty(self) -> bool:
        """True when the stream is a terminal (control characters in what is written are then escaped)."""
        return self._tty

    def _safe(self, text: str) -> str:
        return escape_controls(text) if self._tty else text

    def line(self, text: str) -> None:
        """Write ``text`` and a newline, above the live line if there is one."""
        with self.lock:
            try:
                if self._live:
                    self.stream.write("\r\x1b[K")
                self.stream.write(self._safe(text) + "\n")
                if self._live:
                    self.stream.write(self._live)
                self.stream.flush()
            except (OSError, ValueError):
                pass

    def live(self, text: str) -> None:
        """Replace the live line with ``text`` (no newline)."""
        with self.lock:
            self._live = text = self._safe(text)
            try:
                self.stream.write("\r\x1b[K" + text)
                self.stream.flush()
            except (OSError, ValueError):
                pass

    def clear_live(self) -> None:
        """Erase the live line."""
        with self.lock:
            if not self._live:
                return
            self._live = ""
            try:
                self.stream.write("\r\x1b[K")
                self.stream.flush()
            except (OSError, ValueError):
                pass


class ProgressBar:
    """Renders progress notifications: a bar redrawn in place on a terminal, or plain lines.

    Args:
        console: where to draw.
        mode: "bar" (terminal), "lines" (one line per notification) or "off".
        label: shown before the bar (the tool's name).
    """

    def __init__(self, console: Console, mode: str, label: str = "") -> None:
        self.console = console
        self.mode = mode
        self.label = label
        self.events = 0

    def __call__(self, event: ProgressEvent) -> None:
        """Show one progress event (called on the client's dispatch thread)."""
        self.events += 1
        if self.mode == "off":
            return
        if self.mode == "lines":
            self.console.line("  progress: %s%s" % (self._numbers(event), self._message(event)))
            return
        width = terminal_width(self.console.stream, 80)
        head = "%s " % self.label if self.label else ""
        numbers = self._numbers(event)
        bar = ""
        if event.total:
            cells = 24
            fraction = min(1.0, max(0.0, float(event.progress) / float(event.total)))
            done = int(round(fraction * cells))
            bar = "[%s%s] " % ("#" * done, "." * (cells - done))
        self.console.live(_clip("%s%s%s%s" % (head, bar, numbers, self._message(event)), width - 1))

    @staticmethod
    def _numbers(event: ProgressEvent) -> str:
        def num(x: Any) -> str:
            return ("%d" % x) if isinstance(x, (int, float)) and float(x).is_integer() else "%.4g" % x

        if event.total:
            return "%s/%s" % (num(event.progress), num(event.total))
        return num(event.progress)

    @staticmethod
    def _message(event: ProgressEvent) -> str:
        return "  %s" % event.message if event.message else ""

    def finish(self) -> None:
        """Erase the bar (terminal mode)."""
        if self.mode == "bar":
            self.console.clear_live()


def describe_server(client: Client) -> List[Tuple[str, str]]:
    """(label, value) rows describing a connected client: server, protocol, transport, capabilities."""
    info = client.server_info
    title = info.title or info.name or "(unnamed)"
    server = "%s %s" % (title, info.version) if info.version else title
    if info.name and info.title and info.name != info.title:
        server += " (%s)" % info.name
    rows = [
        ("Server", server),
        ("Protocol", "%s (%s era) over %s" % (client.protocol_version, client.era, client.transport_kind or "?")),
        ("Capabilities", ", ".join(sorted(client.server_capabilities)) or "(none)"),
    ]
    if client.instructions:
        rows.append(("Instructions", _first_line(client.instructions)))
    return rows


def server_json(client: Client) -> Dict[str, Any]:
    """The machine-readable description of a connected client."""
    return {
        "serverInfo": client.server_info.raw
        or {"name": client.server_info.name, "version": client.server_info.version},
        "protocolVersion": client.protocol_version,
        "era": client.era,
        "transport": client.transport_kind,
        "capabilities": client.server_capabilities,
        "instructions": client.instructions,
    }
