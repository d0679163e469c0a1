"""Input requests that outlive the call: :class:`InputRequired`, its questions and its signed tokens.

A server that needs the user (an elicitation form, a URL to visit, a sampling request, the roots) normally
gets its answer from the client's handlers while the call waits. A web app cannot wait: its worker thread
must render a question, return, and continue in a later HTTP request, maybe in another process. A client with
the :class:`~mcpsync.input.DeferInput` extension stops the call instead and raises :class:`InputRequired`;
the host shows the questions and later calls :func:`mcpsync.input.resume` with the answers.

What each era allows:

- **2026-07-28** (stateless, SEP-2322 multi round-trip requests): the server answers ``input_required``
  with its questions and an opaque ``requestState``; nothing stays open on either side. The call raises
  :class:`InputRequired` at once. It is plain data: it pickles and turns into JSON (:meth:`InputRequired.to_json`),
  so it can be kept in a session, a database or a queue and resumed from another thread, a later request or
  another process, by any client connected to the same server (same ``name``).
- **Handshake era** (2024-11-05 to 2025-11-25): the server asks in a request of its own and keeps the
  tool call open until it gets the answer. Nothing can cross a process boundary. A deferring client parks
  the question: it appears in :func:`mcpsync.input.pending_input` (a bounded queue) as an
  :class:`InputRequired` with ``live=True``, the call keeps blocking, and another thread of the same
  process answers with :func:`mcpsync.input.resume` within ``DeferInput(timeout=...)`` seconds. Past that
  the server gets a ``cancel`` (elicitation) or an error (sampling, roots) and a late ``resume`` raises
  :class:`InputExpired`.

What an :class:`InputRequired` holds: the server's name, the method and the request's own parameters (the
tool name and arguments; the client's ``_meta`` envelope is re-stamped when resuming), the server's questions
and its ``requestState``. Never a token, a header or a credential. The arguments and the questions can hold
what the user typed; keep the object as private as the call itself. To hand it to a browser or another
service, sign it: :meth:`InputRequired.dumps` (HMAC-SHA256 with a secret of yours, a time stamp and a fresh
one-time id) and :meth:`InputRequired.loads` (which refuses a forged token, with ``max_age`` an old or
future-dated one, and with ``seen=`` a second use: see :mod:`mcpsync.input.seen`). A resumed tool call
passes the tool policy and approval hook again, so a tampered object can never reach a tool the client
would not call; the ``requestState`` is the server's to protect (the spec says servers must treat it as
untrusted).
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
import time
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple, Union

from ..errors import (
    ConfigError,
    InputForged,
    InputReplayed,
    InputTokenError,
    InputTokenExpired,
    MCPError,
    SchemaValidationError,
)
from ..wire import protocol as P

if TYPE_CHECKING:  # pragma: no cover
    from .seen import SeenStore

logger = logging.getLogger(__name__)

__all__ = ["INPUT_METHODS", "InputExpired", "InputQuestion", "InputRequired", "strip_envelope"]

#: the server requests a host answers for the user (everything an ``inputRequests`` entry may ask)
INPUT_METHODS = ("elicitation/create", "sampling/createMessage", "roots/list")

_TYPE = "mcpsync.InputRequired"
_VERSION = 1
_TOKEN_PREFIX = "mcpsync-ir1"
#: what a token's one-time id looks like (dumps: 18 random bytes, URL-safe base64)
_ONCE_ID = re.compile(r"[A-Za-z0-9_-]{16,64}")
#: ``_meta`` keys the client stamps on every 2026-07-28 request; dropped when an InputRequired is kept
_ENVELOPE_KEYS = (
    P.META_PROTOCOL_VERSION,
    P.META_CLIENT_CAPABILITIES,
    P.META_CLIENT_INFO,
    P.META_LOG_LEVEL,
    "progressToken",
    "traceparent",
    "tracestate",
    "baggage",
)


class InputExpired(MCPError):
    """The input request can no longer be answered: a handshake-era question whose wait ended
    (``DeferInput(timeout=...)``, the call finished, the client closed), or one that lives in another process."""


class InputQuestion:
    """One question of an :class:`InputRequired`: an ``inputRequests`` entry (or a handshake-era server request).

    Attributes:
        key: the entry's key; answers are given under it.
        method: ``elicitation/create``, ``sampling/createMessage`` or ``roots/list``.
        params: the request's parameters as the server sent them (untrusted).
    """

    __slots__ = ("key", "method", "params")

    def __init__(self, key: str, method: str, params: Dict[str, Any]) -> None:
        self.key = key
        self.method = method
        self.params = params

    @property
    def kind(self) -> str:
        """``"form"`` (an elicitation with a schema), ``"url"`` (URL-mode elicitation), ``"sampling"``,
        ``"roots"`` or ``"other"``."""
        if self.method == "elicitation/create":
            return "url" if self.params.get("mode") == "url" else "form"
        if self.method == "sampling/createMessage":
            return "sampling"
        if self.method == "roots/list":
            return "roots"
        return "other"

    @property
    def message(self) -> Optional[str]:
        """The server's text for the user (elicitations), or ``None``."""
        msg = self.params.get("message")
        return msg if isinstance(msg, str) else None

    @property
    def requested_schema(self) -> Optional[Dict[str, Any]]:
        """The form's JSON Schema (form elicitations), or ``None``. Render it with :func:`mcpsync.input.render_form`."""
        schema = self.params.get("requestedSchema")
        return schema if isinstance(schema, dict) else None

    @property
    def url(self) -> Optional[str]:
        """The URL the user is asked to open (URL-mode elicitations), or ``None``."""
        url = self.params.get("url")
        return url if isinstance(url, str) and self.kind == "url" else None

    def accept(self, content: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        """The answer "the user accepted", with ``content`` checked against :attr:`requested_schema`.

        Raises:
            SchemaValidationError: ``content`` does not fit the requested schema.
        """
        if self.kind == "form":
            schema = self.requested_schema or {"type": "object"}
            from .forms import validate_content  # jsonschema: imported only when an answer is checked

            errors = validate_content(schema, content or {})
            if errors:
                raise SchemaValidationError(
                    "the answer to %r does not fit the requested schema: %s"
                    % (self.key, "; ".join("%s: %s" % kv for kv in sorted(errors.items()))),
                    method=self.method,
                )
            return {"action": "accept", "content": dict(content or {})}
        if content is not None:
            return {"action": "accept", "content": dict(content)}
        return {"action": "accept"}

    @staticmethod
    def decline() -> Dict[str, Any]:
        """The answer "the user said no"."""
        return {"action": "decline"}

    @staticmethod
    def cancel() -> Dict[str, Any]:
        """The answer "the user dismissed the question"."""
        return {"action": "cancel"}

    def to_dict(self) -> Dict[str, Any]:
        """The entry as the wire has it: ``{"method": ..., "params": ...}``."""
        return {"method": self.method, "params": self.params}

    def __repr__(self) -> str:
        return "InputQuestion(key=%r, kind=%r, message=%r)" % (self.key, self.kind, self.message)


class InputRequired(MCPError):
    """A call stopped because the server needs input and the client defers it (:class:`~mcpsync.input.DeferInput`).

    Answer with ``mcpsync.input.resume(client, exc, {key: answer})``; :attr:`questions` says what to ask. Plain data in
    the 2026-07-28 era: pickle it, or :meth:`to_json` / :meth:`from_json`, or sign it with :meth:`dumps` /
    :meth:`loads` (see the module documentation for what it holds and how to protect it). Thread-safe to
    read; resume it once.

    Attributes:
        server, method: where the call went (``tools/call``, ``prompts/get`` or ``resources/read``).
        params: the request's own parameters (``name`` and ``arguments`` for a tool).
        input_requests: the server's questions as sent (key -> ``{"method", "params"}``).
        request_state: the server's opaque state, sent back verbatim on resume (2026-07-28), or ``None``.
        era: ``"modern"`` or ``"legacy"``.
        round: how many times the server has asked during this call (the first time: 1).
        live: True for a handshake-era question, which only the process holding the call can answer.
        issued_at: when the question arrived (seconds since the epoch).
    """

    def __init__(
        self,
        message: str = "the server needs input to complete this request",
        *,
        params: Optional[Dict[str, Any]] = None,
        input_requests: Optional[Dict[str, Any]] = None,
        request_state: Optional[str] = None,
        era: str = "modern",
        round: int = 1,
        live: bool = False,
        issued_at: Optional[float] = None,
        live_id: Optional[str] = None,
        **context: Any,
    ) -> None:
        super().__init__(message, **context)
        self.params: Dict[str, Any] = dict(params or {})
        self.input_requests: Dict[str, Any] = dict(input_requests or {})
        self.request_state = request_state
        self.era = era
        self.round = round
        self.live = live
        self.issued_at = time.time() if issued_at is None else issued_at
        self.live_id = live_id

    # --- what to ask --------------------------------------------------------------------------

    @property
    def questions(self) -> List[InputQuestion]:
        """Every question, in the server's order (entries that are not objects are skipped)."""
        out = []
        for key, req in self.input_requests.items():
            if isinstance(req, dict) and isinstance(req.get("method"), str):
                given = req.get("params")
                out.append(InputQuestion(str(key), req["method"], given if isinstance(given, dict) else {}))
        return out

    def question(self, key: str) -> InputQuestion:
        """The question under ``key`` (KeyError when there is none)."""
        for q in self.questions:
            if q.key == key:
                return q
        raise KeyError(key)

    @property
    def tool_name(self) -> Optional[str]:
        """The tool's name for a ``tools/call``, else ``None``."""
        name = self.params.get("name")
        return name if self.method == "tools/call" and isinstance(name, str) else None

    @property
    def arguments(self) -> Dict[str, Any]:
        """The tool's arguments for a ``tools/call`` (``{}`` otherwise)."""
        args = self.params.get("arguments")
        return dict(args) if isinstance(args, dict) else {}

    # --- serialisation ------------------------------------------------------------------------

    def to_dict(self) -> Dict[str, Any]:
        """A JSON-able dict holding everything needed to resume (no token or credential is ever in it)."""
        d: Dict[str, Any] = {
            "type": _TYPE,
            "v": _VERSION,
            "server": self.server,
            "method": self.method,
            "params": self.params,
            "inputRequests": self.input_requests,
            "era": self.era,
            "round": self.round,
            "live": self.live,
            "issuedAt": self.issued_at,
        }
        if self.request_state is not None:
            d["requestState"] = self.request_state
        if self.live_id is not None:
            d["liveId"] = self.live_id
        return d

    @classmethod
    def from_dict(cls, d: Any) -> "InputRequired":
        """Rebuild from :meth:`to_dict` output. Checks the shape strictly.

        Raises:
            ConfigError: not an InputRequired of a version this mcpsync reads.
        """
        if not isinstance(d, dict) or d.get("type") != _TYPE:
            raise ConfigError("not a serialised mcpsync.input.InputRequired")
        if d.get("v") != _VERSION:
            raise ConfigError(
                "InputRequired format version %r is not supported (this mcpsync reads %d)" % (d.get("v"), _VERSION)
            )
        method, params, requests = d.get("method"), d.get("params"), d.get("inputRequests")
        state, era, rnd, issued = d.get("requestState"), d.get("era"), d.get("round"), d.get("issuedAt")
        server, live_id = d.get("server"), d.get("liveId")
        if (
            not isinstance(method, str)
            or not isinstance(params, dict)
            or not isinstance(requests, dict)
            or not (state is None or isinstance(state, str))
            or era not in ("modern", "legacy")
            or not isinstance(rnd, int)
            or isinstance(rnd, bool)
            or rnd < 1
            or not isinstance(issued, (int, float))
            or isinstance(issued, bool)
            or not (server is None or isinstance(server, str))
            or not (live_id is None or isinstance(live_id, str))
            or not isinstance(d.get("live"), bool)
        ):
            raise ConfigError("malformed serialised InputRequired")
        return cls(
            server=server,
            method=method,
            params=params,
            input_requests=requests,
            request_state=state,
            era=era,
            round=rnd,
            live=d["live"],
            issued_at=float(issued),
            live_id=live_id,
        )

    def to_json(self) -> str:
        """:meth:`to_dict` as compact JSON text. Keys keep their order: the server's questions, and the
        properties of their forms, come back in the order the server gave them."""
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: Union[str, bytes]) -> "InputRequired":
        """Rebuild from :meth:`to_json` text (ConfigError when it is not one)."""
        try:
            data = json.loads(text)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ConfigError("not a serialised mcpsync.input.InputRequired: %s" % exc) from None
        return cls.from_dict(data)

    def dumps(self, secret: Union[str, bytes]) -> str:
        """A signed, URL-safe token: the JSON form, a fresh one-time id, and an HMAC-SHA256 over both with
        ``secret``.

        Every call mints a new token with its own one-time id (see :meth:`loads` with ``seen=``): hand out
        one token per question shown. The content is signed, not encrypted: whoever holds the token can read
        the arguments and questions.
        """
        import secrets  # here, not at module level: a plain connect never signs a token

        body = self.to_dict()
        body["once"] = secrets.token_urlsafe(18)
        text = json.dumps(body, separators=(",", ":"))
        payload = base64.urlsafe_b64encode(text.encode("utf-8")).rstrip(b"=")
        sig = base64.urlsafe_b64encode(_mac(secret, payload)).rstrip(b"=")
        return "%s.%s.%s" % (_TOKEN_PREFIX, payload.decode("ascii"), sig.decode("ascii"))

    @classmethod
    def loads(
        cls,
        token: str,
        secret: Union[str, bytes],
        *,
        max_age: Optional[float] = None,
        seen: Optional["SeenStore"] = None,
        leeway: float = 5.0,
    ) -> "InputRequired":
        """Verify a :meth:`dumps` token and rebuild it.

        Args:
            token, secret: the token and the secret :meth:`dumps` signed it with.
            max_age: refuse a token whose question arrived more than this many seconds ago, or whose time
                stamp lies more than ``leeway`` seconds in the future.
            seen: a store of used token ids (:func:`mcpsync.input.open_seen_store`): the token's one-time id is
                recorded there atomically, and a token whose id is already there is refused, in every process
                sharing the store. Needs ``max_age`` (the store forgets an id once its token has expired).
                Blocks for the store's round trip (a file lock, a Redis command).
            leeway: seconds of clock difference between the hosts that sign and verify.

        Raises:
            InputForged: not a token ``secret`` signed: malformed, changed (by even one byte), or signed
                with another secret.
            InputTokenExpired: older than ``max_age``, or dated in the future.
            InputReplayed: ``seen`` already holds the token's one-time id (it was used before).
            InputSeenStoreError: ``seen`` could not answer (the token is refused).
            ConfigError: ``seen`` without ``max_age``, or a signed body that is not an InputRequired.
        """
        if seen is not None and max_age is None:
            raise ConfigError("a single-use token needs max_age: the seen store forgets an id once its token expired")
        if not isinstance(token, str):
            raise InputForged("an InputRequired token must be a string")
        parts = token.split(".")
        if len(parts) != 3 or parts[0] != _TOKEN_PREFIX:
            raise InputForged("not an mcpsync InputRequired token")
        try:
            payload = parts[1].encode("ascii")
            sig = base64.urlsafe_b64decode(_padded(parts[2]))
            raw = base64.urlsafe_b64decode(_padded(parts[1]))
        except (binascii.Error, ValueError):
            raise InputForged("malformed InputRequired token") from None
        # the encodings must be the canonical ones dumps() writes, so no two texts carry the same signature
        if _unpadded(sig) != parts[2] or _unpadded(raw) != parts[1]:
            raise InputForged("malformed InputRequired token")
        import hmac  # here, not at module level: a plain connect never checks a token

        if not hmac.compare_digest(sig, _mac(secret, payload)):
            raise InputForged("the InputRequired token's signature does not match (changed, or another secret)")
        try:
            body = json.loads(raw)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            raise ConfigError("the signed InputRequired token holds no JSON: %s" % exc) from None
        ir = cls.from_dict(body)
        once = body.get("once")
        if max_age is not None:
            now = time.time()
            if now - ir.issued_at > max_age:
                raise InputTokenExpired("the InputRequired token is older than %gs" % max_age, server=ir.server)
            if ir.issued_at > now + max(0.0, leeway):
                raise InputTokenExpired(
                    "the InputRequired token is dated %.0fs in the future" % (ir.issued_at - now), server=ir.server
                )
        if seen is not None:
            assert max_age is not None
            if not isinstance(once, str) or not _ONCE_ID.fullmatch(once):
                raise InputTokenError("the InputRequired token has no one-time id (signed by an older mcpsync)")
            if not seen.claim(once, ir.issued_at + max_age + max(0.0, leeway)):
                logger.warning("[%s] refused a replayed InputRequired token (%s)", ir.server, ir.tool_name or ir.method)
                raise InputReplayed("this InputRequired token was used already", server=ir.server, method=ir.method)
        return ir

    def __reduce__(self) -> Tuple[Any, Tuple[Dict[str, Any]]]:
        return (_rebuild, (self.to_dict(),))

    def __repr__(self) -> str:
        return "InputRequired(server=%r, method=%r, questions=%r, era=%r, round=%d)" % (
            self.server,
            self.method,
            [q.key for q in self.questions],
            self.era,
            self.round,
        )


def _rebuild(d: Dict[str, Any]) -> InputRequired:
    return InputRequired.from_dict(d)


def _padded(text: str) -> bytes:
    return (text + "=" * (-len(text) % 4)).encode("ascii")


def _unpadded(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _mac(secret: Union[str, bytes], payload: bytes) -> bytes:
    import hashlib  # here, not at module level (with hmac): loaded by the first token signed or checked
    import hmac

    key = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)
    if not key:
        raise ConfigError("an empty secret cannot sign an InputRequired")
    return hmac.new(key, payload, hashlib.sha256).digest()


def strip_envelope(params: Mapping[str, Any]) -> Dict[str, Any]:
    """The request's own parameters: without ``inputResponses``/``requestState`` and the client's envelope."""
    out = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
    meta = out.get("_meta")
    if isinstance(meta, dict):
        kept = {k: v for k, v in meta.items() if k not in _ENVELOPE_KEYS}
        if kept:
            out["_meta"] = kept
        else:
            out.pop("_meta")
    return out
