"""What user handlers receive when a server asks the client for something.

A server may ask for a model completion (``sampling/createMessage``), for user
input (``elicitation/create``, form or URL mode) or for the client's roots
(``roots/list``). In the handshake era these arrive as server requests; in the
2026-07-28 era as ``inputRequests`` of an ``input_required`` result. Either way
the same handler answers, on a handler thread (never the reader thread).

Handlers:
    ``sampling_handler(SamplingRequest) -> dict | SamplingResult``
    ``elicitation_handler(ElicitationRequest) -> dict | ElicitationResult``

Raise :class:`~mcpsync.RemoteError` from a handler to answer with that JSON-RPC
error; any other exception is answered with a generic internal error (nothing
of the exception leaks to the server).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from dataclasses import dataclass, field
from urllib.parse import urlsplit

from ..errors import SchemaValidationError
from .schema import coerce_value, compile_schema, schema_defaults, validate

__all__ = [
    "ElicitationHandler",
    "ElicitationRequest",
    "ElicitationResult",
    "SamplingHandler",
    "SamplingRequest",
    "SamplingResult",
]

JSON = Dict[str, Any]


def _field(params: JSON, key: str, kind: Union[type, Tuple[type, ...]], default: Any = None) -> Any:
    """``params[key]`` when it is a ``kind``, else ``default``: a malformed field of a server's request is dropped."""
    value = params.get(key)
    return value if isinstance(value, kind) else default


@dataclass
class SamplingResult:
    """A model's answer to a sampling request."""

    text: str
    model: str = "unknown"
    role: str = "assistant"
    stop_reason: Optional[str] = "endTurn"

    def to_dict(self) -> JSON:
        """The protocol form (CreateMessageResult)."""
        d: JSON = {"role": self.role, "content": {"type": "text", "text": self.text}, "model": self.model}
        if self.stop_reason:
            d["stopReason"] = self.stop_reason
        return d


@dataclass
class SamplingRequest:
    """A server's ``sampling/createMessage`` request.

    Attributes:
        messages: the conversation (role + content dicts).
        max_tokens: the limit the answer must respect.
        system_prompt, temperature, stop_sequences, model_preferences, tools, tool_choice:
            as sent (None when absent).
        server: the name of the server asking (show it to the user).
        raw: the request params.
    """

    messages: List[JSON]
    max_tokens: Optional[int] = None
    system_prompt: Optional[str] = None
    temperature: Optional[float] = None
    stop_sequences: Optional[List[str]] = None
    model_preferences: Optional[JSON] = None
    tools: Optional[List[JSON]] = None
    tool_choice: Optional[JSON] = None
    server: Optional[str] = None
    raw: JSON = field(default_factory=dict, repr=False)

    @classmethod
    def from_params(cls, params: JSON, server: Optional[str] = None) -> "SamplingRequest":
        """Build from ``sampling/createMessage`` params."""
        msgs = params.get("messages")
        return cls(
            messages=[m for m in msgs if isinstance(m, dict)] if isinstance(msgs, list) else [],
            max_tokens=_field(params, "maxTokens", int),
            system_prompt=_field(params, "systemPrompt", str),
            temperature=_field(params, "temperature", (int, float)),
            stop_sequences=_field(params, "stopSequences", list),
            model_preferences=_field(params, "modelPreferences", dict),
            tools=_field(params, "tools", list),
            tool_choice=_field(params, "toolChoice", dict),
            server=server,
            raw=params,
        )

    @property
    def text(self) -> str:
        """The text of every text message, joined by newlines."""
        parts = []
        for m in self.messages:
            c = m.get("content")
            blocks = c if isinstance(c, list) else [c]
            for b in blocks:
                if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str):
                    parts.append(b["text"])
        return "\n".join(parts)

    def reply(self, text: str, model: str = "unknown", stop_reason: str = "endTurn") -> SamplingResult:
        """A text answer to return from the handler."""
        return SamplingResult(text=text, model=model, stop_reason=stop_reason)


@dataclass
class ElicitationResult:
    """The user's answer: action "accept" (with content), "decline" or "cancel"."""

    action: str
    content: Optional[JSON] = None

    def to_dict(self) -> JSON:
        """The protocol form (ElicitResult)."""
        d: JSON = {"action": self.action}
        if self.action == "accept" and self.content is not None:
            d["content"] = self.content
        return d


@dataclass
class ElicitationRequest:
    """A server's ``elicitation/create`` request (form or URL mode).

    Show the user which server asks (``server``), let them review and decline.

    Form mode: ``requested_schema`` is a flat object schema of primitive
    properties; :meth:`defaults` gives the schema's defaults, :meth:`accept`
    validates the content against the schema before it is sent.

    URL mode: ``url`` is where the user should go; :attr:`host` is what to show
    when asking for consent before opening it.
    """

    message: str
    mode: str = "form"
    requested_schema: JSON = field(default_factory=dict)
    url: Optional[str] = None
    elicitation_id: Optional[str] = None
    server: Optional[str] = None
    raw: JSON = field(default_factory=dict, repr=False)

    @classmethod
    def from_params(cls, params: JSON, server: Optional[str] = None) -> "ElicitationRequest":
        """Build from ``elicitation/create`` params (a request without ``mode`` is a form)."""
        return cls(
            message=_field(params, "message", str, ""),
            mode=_field(params, "mode", str, "form"),
            requested_schema=_field(params, "requestedSchema", dict, {}),
            url=_field(params, "url", str),
            elicitation_id=_field(params, "elicitationId", str),
            server=server,
            raw=params,
        )

    @property
    def host(self) -> Optional[str]:
        """URL mode: the target host to show the user before opening the URL."""
        if not self.url:
            return None
        return urlsplit(self.url).hostname

    @property
    def fields(self) -> Dict[str, JSON]:
        """Form mode: the requested properties (name -> property schema)."""
        props = self.requested_schema.get("properties")
        return dict(props) if isinstance(props, dict) else {}

    @property
    def required(self) -> List[str]:
        """Form mode: the names of the required properties."""
        req = self.requested_schema.get("required")
        return [r for r in req if isinstance(r, str)] if isinstance(req, list) else []

    def defaults(self) -> JSON:
        """Form mode: the schema's default values (strings, integers, numbers, enums, booleans)."""
        return schema_defaults(self.requested_schema)

    def coerce(self, answers: Dict[str, Any]) -> JSON:
        """Convert text answers (e.g. from input()) to the types the schema asks for."""
        props = self.fields
        return {k: coerce_value(props.get(k), v) for k, v in answers.items()}

    def validate(self, content: JSON) -> None:
        """Raise :class:`~mcpsync.SchemaValidationError` when ``content`` does not match the schema."""
        validate(compile_schema(self.requested_schema or {}), content, SchemaValidationError, "elicitation answer")

    def accept(self, content: Optional[JSON] = None, *, fill_defaults: bool = True) -> ElicitationResult:
        """Accept with ``content`` (defaults filled in for missing fields), validated against the schema."""
        if self.mode == "url":
            return ElicitationResult("accept")
        data = dict(self.defaults()) if fill_defaults else {}
        data.update(content or {})
        self.validate(data)
        return ElicitationResult("accept", data)

    def decline(self) -> ElicitationResult:
        """The user said no."""
        return ElicitationResult("decline")

    def cancel(self) -> ElicitationResult:
        """The user dismissed the request."""
        return ElicitationResult("cancel")


#: ``sampling_handler``: answers a sampling request with a :class:`SamplingResult`, the text alone,
#: or the protocol's result dict (``role``, ``content``, ``model``...).
SamplingHandler = Callable[[SamplingRequest], Union[SamplingResult, str, Dict[str, Any]]]
#: ``elicitation_handler``: answers with an :class:`ElicitationResult` or ``{"action": ..., "content": ...}``.
ElicitationHandler = Callable[[ElicitationRequest], Union[ElicitationResult, Dict[str, Any]]]
