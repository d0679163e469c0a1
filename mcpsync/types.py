"""Typed results: small dataclasses over the protocol's JSON objects.

Every type keeps the dict it was built from in ``.raw``, so fields this version
of mcpsync does not know are never lost, and ``to_dict()`` gives it back.
Instances are plain data; they are safe to share between threads once built.

Tool ``annotations`` (readOnlyHint, destructiveHint, ...) are *untrusted* hints
from the server: do not base security decisions on them unless you trust the
server.
"""

from __future__ import annotations

import base64
from typing import Any, Dict, Generic, List, Optional, Tuple, TypeVar

from dataclasses import dataclass, field

from ._type_names import TYPE_NAMES as _TYPE_NAMES
from .errors import ToolError, ToolOutputInvalid

__all__ = list(_TYPE_NAMES)

JSON = Dict[str, Any]
_T = TypeVar("_T")


def _str(d: JSON, key: str) -> Optional[str]:
    v = d.get(key)
    return v if isinstance(v, str) else None


def _dict(d: JSON, key: str) -> JSON:
    v = d.get(key)
    return v if isinstance(v, dict) else {}


@dataclass
class Implementation:
    """``serverInfo`` / ``clientInfo``: name, version, title (self-reported, informational)."""

    name: str = ""
    version: str = ""
    title: Optional[str] = None
    raw: JSON = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: Any) -> "Implementation":
        d = d if isinstance(d, dict) else {}
        return cls(name=_str(d, "name") or "", version=_str(d, "version") or "", title=_str(d, "title"), raw=d)


@dataclass
class Tool:
    """A tool the server offers.

    ``annotations`` are untrusted hints (see the module docstring).
    """

    name: str
    description: Optional[str] = None
    input_schema: JSON = field(default_factory=dict)
    output_schema: Optional[JSON] = None
    title: Optional[str] = None
    annotations: JSON = field(default_factory=dict)
    raw: JSON = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: JSON) -> "Tool":
        out = d.get("outputSchema")
        return cls(
            name=_str(d, "name") or "",
            description=_str(d, "description"),
            input_schema=_dict(d, "inputSchema") or {"type": "object"},
            output_schema=out if isinstance(out, (dict, bool)) else None,  # type: ignore[arg-type]
            title=_str(d, "title") or _str(_dict(d, "annotations"), "title"),
            annotations=_dict(d, "annotations"),
            raw=d,
        )

    def to_dict(self) -> JSON:
        """The tool as the server sent it."""
        return dict(self.raw)

    @property
    def ui_resource_uri(self) -> Optional[str]:
        """The MCP Apps page this tool links (``_meta.ui.resourceUri``, or the deprecated flat
        ``_meta["ui/resourceUri"]``), or ``None``. Only ``ui://`` URIs count; anything else is ignored."""
        meta = _dict(self.raw, "_meta")
        uri = _str(_dict(meta, "ui"), "resourceUri") or _str(meta, "ui/resourceUri")
        return uri if uri is not None and uri.startswith("ui://") else None

    @property
    def visibility(self) -> Tuple[str, ...]:
        """Who may see and call this tool (MCP Apps ``_meta.ui.visibility``): a tuple of ``"model"`` and/or
        ``"app"``. Absent or malformed means both, as the extension says."""
        vis = _dict(_dict(self.raw, "_meta"), "ui").get("visibility")
        if not isinstance(vis, list) or not all(isinstance(v, str) for v in vis):
            return ("model", "app")
        return tuple(v for v in vis if v in ("model", "app"))

    @property
    def visible_to_model(self) -> bool:
        """False for an app-only tool: a host MUST NOT offer it to a model (MCP Apps)."""
        return "model" in self.visibility

    @property
    def visible_to_app(self) -> bool:
        """False for a model-only tool: a host MUST refuse an App's ``tools/call`` to it (MCP Apps)."""
        return "app" in self.visibility


@dataclass
class PromptArgument:
    """One argument of a prompt."""

    name: str
    description: Optional[str] = None
    required: bool = False
    raw: JSON = field(default_factory=dict, repr=False)


@dataclass
class Prompt:
    """A prompt template the server offers."""

    name: str
    description: Optional[str] = None
    title: Optional[str] = None
    arguments: List[PromptArgument] = field(default_factory=list)
    raw: JSON = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: JSON) -> "Prompt":
        args = [
            PromptArgument(
                name=_str(a, "name") or "",
                description=_str(a, "description"),
                required=bool(a.get("required", False)),
                raw=a,
            )
            for a in d.get("arguments") or []
            if isinstance(a, dict)
        ]
        return cls(
            name=_str(d, "name") or "",
            description=_str(d, "description"),
            title=_str(d, "title"),
            arguments=args,
            raw=d,
        )


@dataclass
class Resource:
    """A resource the server lists."""

    uri: str
    name: str = ""
    title: Optional[str] = None
    description: Optional[str] = None
    mime_type: Optional[str] = None
    size: Optional[int] = None
    raw: JSON = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: JSON) -> "Resource":
        size = d.get("size")
        return cls(
            uri=_str(d, "uri") or "",
            name=_str(d, "name") or "",
            title=_str(d, "title"),
            description=_str(d, "description"),
            mime_type=_str(d, "mimeType"),
            size=size if isinstance(size, int) else None,
            raw=d,
        )


@dataclass
class ResourceTemplate:
    """An RFC 6570 URI template for resources."""

    uri_template: str
    name: str = ""
    title: Optional[str] = None
    description: Optional[str] = None
    mime_type: Optional[str] = None
    raw: JSON = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: JSON) -> "ResourceTemplate":
        return cls(
            uri_template=_str(d, "uriTemplate") or "",
            name=_str(d, "name") or "",
            title=_str(d, "title"),
            description=_str(d, "description"),
            mime_type=_str(d, "mimeType"),
            raw=d,
        )


@dataclass
class ResourceContents:
    """The contents of one resource: ``text`` or base64 ``blob``."""

    uri: str
    mime_type: Optional[str] = None
    text: Optional[str] = None
    blob: Optional[str] = None
    raw: JSON = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: JSON) -> "ResourceContents":
        return cls(
            uri=_str(d, "uri") or "", mime_type=_str(d, "mimeType"), text=_str(d, "text"), blob=_str(d, "blob"), raw=d
        )

    @property
    def data(self) -> bytes:
        """The contents as bytes (decoded blob, or UTF-8 text)."""
        if self.blob is not None:
            return base64.b64decode(self.blob)
        return (self.text or "").encode("utf-8")


@dataclass
class ContentBlock:
    """Base of the content blocks; ``type`` is the block's type string."""

    type: str
    raw: JSON = field(default_factory=dict, repr=False)


@dataclass
class TextContent(ContentBlock):
    """``{"type": "text"}``."""

    text: str = ""


@dataclass
class ImageContent(ContentBlock):
    """``{"type": "image"}``: base64 ``data`` and ``mime_type``."""

    data: str = ""
    mime_type: str = ""


@dataclass
class AudioContent(ContentBlock):
    """``{"type": "audio"}``: base64 ``data`` and ``mime_type``."""

    data: str = ""
    mime_type: str = ""


@dataclass
class EmbeddedResource(ContentBlock):
    """``{"type": "resource"}``: an embedded resource's contents."""

    resource: Optional[ResourceContents] = None


@dataclass
class ResourceLink(ContentBlock):
    """``{"type": "resource_link"}``: a link to a resource the client may read."""

    uri: str = ""
    name: str = ""
    mime_type: Optional[str] = None
    description: Optional[str] = None


@dataclass
class UnknownContent(ContentBlock):
    """A content block of a type this version does not know; ``raw`` has it all."""


def content_block(d: Any) -> ContentBlock:
    """Build the typed content block for one JSON content object."""
    if not isinstance(d, dict):
        return UnknownContent(type="", raw={"value": d})
    t = d.get("type")
    if t == "text":
        return TextContent(type=t, text=_str(d, "text") or "", raw=d)
    if t == "image":
        return ImageContent(type=t, data=_str(d, "data") or "", mime_type=_str(d, "mimeType") or "", raw=d)
    if t == "audio":
        return AudioContent(type=t, data=_str(d, "data") or "", mime_type=_str(d, "mimeType") or "", raw=d)
    if t == "resource":
        res = d.get("resource")
        return EmbeddedResource(
            type=t, resource=ResourceContents.from_dict(res) if isinstance(res, dict) else None, raw=d
        )
    if t == "resource_link":
        return ResourceLink(
            type=t,
            uri=_str(d, "uri") or "",
            name=_str(d, "name") or "",
            mime_type=_str(d, "mimeType"),
            description=_str(d, "description"),
            raw=d,
        )
    return UnknownContent(type=t if isinstance(t, str) else "", raw=d)


def _text_of(blocks: List[ContentBlock]) -> str:
    return "\n".join(b.text for b in blocks if isinstance(b, TextContent))


class CallToolResult:
    """The result of ``tools/call``.

    ``is_error`` is data, not an exception (the tool ran and reported failure);
    call :meth:`raise_for_error` to turn it into a :class:`~mcpsync.ToolError`.
    The typed ``content`` blocks are built on first access (``text`` reads the
    raw blocks directly), which keeps the per-call cost low.
    """

    __slots__ = ("_content", "structured_content", "is_error", "meta", "raw", "output_schema")

    def __init__(
        self,
        content: Optional[List[ContentBlock]] = None,
        structured_content: Any = None,
        is_error: bool = False,
        meta: Optional[JSON] = None,
        raw: Optional[JSON] = None,
    ) -> None:
        self._content = content
        self.structured_content = structured_content
        self.is_error = is_error
        self.meta = meta if meta is not None else {}
        self.raw = raw if raw is not None else {}
        #: the tool's outputSchema, set by the client once ``structured_content`` was checked against it
        self.output_schema: Optional[JSON] = None

    @classmethod
    def from_dict(cls, d: JSON) -> "CallToolResult":
        meta = d.get("_meta")
        return cls(None, d.get("structuredContent"), d.get("isError") is True, meta if type(meta) is dict else {}, d)

    @property
    def content(self) -> List[ContentBlock]:
        """The content blocks as typed objects (TextContent, ImageContent, ...)."""
        if self._content is None:
            raw = self.raw.get("content")
            self._content = [content_block(c) for c in raw] if isinstance(raw, list) else []
        return self._content

    @content.setter
    def content(self, value: List[ContentBlock]) -> None:
        self._content = list(value)

    @property
    def text(self) -> str:
        """The text of every text block, joined by newlines ("" when there is none)."""
        if self._content is not None:
            return _text_of(self._content)
        raw = self.raw.get("content")
        if not isinstance(raw, list):
            return ""
        return "\n".join(
            b["text"] for b in raw if type(b) is dict and b.get("type") == "text" and isinstance(b.get("text"), str)
        )

    @property
    def data(self) -> Any:
        """The structured result: ``structured_content`` (checked against the tool's outputSchema by the
        client unless ``validate_output=False``), unwrapped from ``{"result": ...}`` when the schema marks it
        wrapped (FastMCP's ``x-fastmcp-wrap-result``). None when the tool returned no structured content.
        Raises :class:`~mcpsync.ToolError` when the tool reported an error."""
        from ._structured import unwrap

        self.raise_for_error()
        return unwrap(self.structured_content, self.output_schema)

    def parse(self, model: Any) -> Any:
        """:attr:`data` as an instance of ``model``: a dataclass (nested ones too), a pydantic model, or any
        type pydantic's ``TypeAdapter`` takes (when pydantic is installed). Raises
        :class:`~mcpsync.errors.ToolOutputInvalid` when it does not fit, :class:`~mcpsync.ToolError` on a tool error."""
        from ._structured import parse_into

        data = self.data
        try:
            return parse_into(model, data)
        except ToolOutputInvalid as exc:
            exc.result = self
            raise

    def raise_for_error(self) -> "CallToolResult":
        """Raise :class:`~mcpsync.ToolError` when the tool reported ``isError``; else return self."""
        if self.is_error:
            raise ToolError("tool reported an error: %s" % (self.text or "(no text)")[:500], result=self)
        return self

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CallToolResult):
            return NotImplemented
        return (self.content, self.structured_content, self.is_error, self.meta) == (
            other.content,
            other.structured_content,
            other.is_error,
            other.meta,
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "CallToolResult(content=%r, structured_content=%r, is_error=%r)" % (
            self.content,
            self.structured_content,
            self.is_error,
        )


@dataclass
class PromptMessage:
    """One message of a prompt: a role and a content block."""

    role: str
    content: ContentBlock
    raw: JSON = field(default_factory=dict, repr=False)


@dataclass
class GetPromptResult:
    """The result of ``prompts/get``."""

    description: Optional[str] = None
    messages: List[PromptMessage] = field(default_factory=list)
    raw: JSON = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: JSON) -> "GetPromptResult":
        msgs = [
            PromptMessage(role=_str(m, "role") or "", content=content_block(m.get("content")), raw=m)
            for m in d.get("messages") or []
            if isinstance(m, dict)
        ]
        return cls(description=_str(d, "description"), messages=msgs, raw=d)

    @property
    def text(self) -> str:
        """The text of every text message, joined by newlines."""
        return _text_of([m.content for m in self.messages])


@dataclass
class ReadResourceResult:
    """The result of ``resources/read``."""

    contents: List[ResourceContents] = field(default_factory=list)
    raw: JSON = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: JSON) -> "ReadResourceResult":
        return cls(
            contents=[ResourceContents.from_dict(c) for c in d.get("contents") or [] if isinstance(c, dict)], raw=d
        )

    @property
    def text(self) -> str:
        """The text of every text content, joined by newlines."""
        return "\n".join(c.text for c in self.contents if c.text is not None)


@dataclass
class Completion:
    """The result of ``completion/complete``."""

    values: List[str] = field(default_factory=list)
    total: Optional[int] = None
    has_more: bool = False
    raw: JSON = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: JSON) -> "Completion":
        c = _dict(d, "completion")
        total = c.get("total")
        return cls(
            values=[v for v in c.get("values") or [] if isinstance(v, str)],
            total=total if isinstance(total, int) else None,
            has_more=c.get("hasMore") is True,
            raw=d,
        )


@dataclass
class Page(Generic[_T]):
    """One page of a list method: the typed ``items`` and the ``next_cursor`` (None at the end).

    ``Page[Tool]`` from ``list_tools_page()``, ``Page[Prompt]`` from ``list_prompts_page()``...
    """

    items: List[_T]
    next_cursor: Optional[str] = None
    raw: JSON = field(default_factory=dict, repr=False)


@dataclass
class Root:
    """A root the client exposes to servers (a ``file://`` URI and an optional name)."""

    uri: str
    name: Optional[str] = None

    def to_dict(self) -> JSON:
        """The protocol form."""
        d: JSON = {"uri": self.uri}
        if self.name is not None:
            d["name"] = self.name
        return d


@dataclass
class ProgressEvent:
    """A ``notifications/progress`` delivered to a call's progress callback."""

    progress: float
    total: Optional[float] = None
    message: Optional[str] = None
    raw: JSON = field(default_factory=dict, repr=False)


@dataclass
class ServerNotification:
    """A notification from the server, as put on the client's notification queue.

    Attributes:
        method: e.g. ``notifications/tools/list_changed``.
        params: the notification's params (a dict).
        server: the server's name.
    """

    method: str
    params: JSON = field(default_factory=dict)
    server: Optional[str] = None
