"""Input requests that outlive the call: ``defer_input`` and :class:`InputRequired`.

A server that needs the user (an elicitation form, a URL to visit, a sampling request, the roots) normally
gets its answer from the client's handlers while the call waits. A web app cannot wait: its worker thread
must render a question, return, and continue in a later HTTP request, maybe in another process. With
``defer_input`` the call stops instead and raises :class:`InputRequired`; the host shows the questions and
later calls :meth:`mcpsync.Client.resume` with the answers.

What each era allows:

- **2026-07-28** (stateless, SEP-2322 multi round-trip requests): the server answers ``input_required``
  with its questions and an opaque ``requestState``; nothing stays open on either side. The call raises
  :class:`InputRequired` at once. It is plain data: it pickles and turns into JSON (:meth:`InputRequired.to_json`),
  so it can be kept in a session, a database or a queue and resumed from another thread, a later request or
  another process, by any client connected to the same server (same ``name``).
- **Handshake era** (2024-11-05 to 2025-11-25): the server asks in a request of its own and keeps the
  tool call open until it gets the answer. Nothing can cross a process boundary. With ``defer_input`` the
  question is parked: it appears in ``client.pending_input`` (a bounded queue) as an
  :class:`InputRequired` with ``live=True``, the call keeps blocking, and another thread of the same
  process answers with :meth:`~mcpsync.Client.resume` within ``input_timeout`` seconds. Past that the
  server gets a ``cancel`` (elicitation) or an error (sampling, roots) and a late ``resume`` raises
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
import contextlib
import logging
import os
import itertools
import json
import re
import threading
import time
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Mapping, Optional, Protocol, Tuple, Union

from ..errors import (
    ConfigError,
    InputForged,
    InputNotResumable,
    InputReplayed,
    InputTokenError,
    InputTokenExpired,
    MCPError,
    SchemaValidationError,
)
from ..wire import protocol as P
from ..client.hooks import ClientExtension

if TYPE_CHECKING:  # pragma: no cover
    from ..session import RequestContext
    from .seen import SeenStore

logger = logging.getLogger(__name__)

__all__ = [
    "INPUT_METHODS",
    "InputExpired",
    "InputQuestion",
    "InputDeferral",
    "InputRequired",
    "ParkedInputs",
]

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
    (``input_timeout``, the call finished, the client closed), or one that lives in another process."""


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
    """A call stopped because the server needs input and the client defers it (``defer_input``).

    Answer with ``client.resume(exc, {key: answer})``; :attr:`questions` says what to ask. Plain data in
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
        server: Optional[str] = None,
        method: Optional[str] = None,
        request_id: Any = None,
        params: Optional[Dict[str, Any]] = None,
        input_requests: Optional[Dict[str, Any]] = None,
        request_state: Optional[str] = None,
        era: str = "modern",
        round: int = 1,
        live: bool = False,
        issued_at: Optional[float] = None,
        live_id: Optional[str] = None,
    ) -> None:
        super().__init__(message, server=server, method=method, request_id=request_id)
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


# --------------------------------------------------------------------------- handshake era: parked questions


class _Parked:
    __slots__ = ("ir", "event", "answer", "state", "__weakref__")

    def __init__(self, ir: InputRequired) -> None:
        self.ir = ir
        self.event = threading.Event()
        self.answer: Any = None
        self.state = "waiting"  # waiting -> answered | expired


class ParkedInputs:
    """The handshake era's parked questions of one client, and ``client.pending_input``. Thread-safe.

    ``get(timeout)`` blocks up to ``timeout`` seconds for the next question (``queue.Empty`` when none
    came); iteration yields what is waiting now. At most ``maxsize`` questions wait; a question past that
    is not parked but answered at once as declined by the host (``cancel``), with a warning in the log.
    """

    def __init__(self, server: str, maxsize: int = 64) -> None:
        self._server = server
        self._maxsize = maxsize
        self._cond = threading.Condition(threading.Lock())
        self._waiting: List[_Parked] = []  # parked and not yet handed out by get()
        self._open: Dict[str, _Parked] = {}  # parked and not yet answered or expired
        # live ids are "<server>:<random per client>:<n>": a question parked by another client (or another
        # process) never matches one of ours, even for a server of the same name
        self._id_prefix = "%s:%s" % (server, os.urandom(6).hex())  # secrets.token_hex(6), without loading secrets
        self._ids = itertools.count(1)
        self._closed = False

    def park(self, ir: InputRequired) -> Optional[_Parked]:
        """Park ``ir`` (None when the queue is full or closed: the caller answers ``cancel``)."""
        with self._cond:
            if self._closed or len(self._open) >= self._maxsize:
                return None
            live_id = "%s:%d" % (self._id_prefix, next(self._ids))
            ir.live, ir.live_id = True, live_id
            parked = _Parked(ir)
            self._open[live_id] = parked
            self._waiting.append(parked)
            self._cond.notify_all()
            return parked

    def wait(self, parked: _Parked, timeout: Optional[float]) -> Any:
        """Block up to ``timeout`` seconds for the answer; raises InputExpired when none came."""
        parked.event.wait(timeout)
        with self._cond:
            self._forget(parked)
            if parked.state == "answered":
                return parked.answer
            parked.state = "expired"
        raise InputExpired("no answer within %ss" % timeout, server=self._server, method=parked.ir.method)

    def answer(self, ir: InputRequired, value: Any) -> None:
        """Hand ``value`` to the parked question ``ir`` (InputExpired when it is no longer waiting)."""
        with self._cond:
            parked = self._open.get(ir.live_id or "")
            if parked is None or parked.state != "waiting":
                raise InputExpired(
                    "this input request is no longer waiting (answered, timed out, its call ended, or it belongs"
                    " to another process or client)",
                    server=self._server,
                    method=ir.method,
                )
            parked.state, parked.answer = "answered", value
            self._forget(parked)
        parked.event.set()

    def _forget(self, parked: _Parked) -> None:
        self._open.pop(parked.ir.live_id or "", None)
        if parked in self._waiting:
            self._waiting.remove(parked)

    def get(self, timeout: Optional[float] = None) -> InputRequired:
        """The next parked question, waiting up to ``timeout`` seconds (``queue.Empty`` when none)."""
        import queue

        with self._cond:
            if not self._cond.wait_for(lambda: self._waiting or self._closed, timeout) or not self._waiting:
                raise queue.Empty
            return self._waiting.pop(0).ir

    def __len__(self) -> int:
        with self._cond:
            return len(self._waiting)

    def __iter__(self) -> Iterator[InputRequired]:
        with self._cond:
            items, self._waiting = self._waiting, []
        return iter([p.ir for p in items])

    def close(self) -> None:
        """Expire every parked question (their waits end at once) and refuse new ones."""
        with self._cond:
            self._closed = True
            parked = list(self._open.values())
            self._open.clear()
            self._waiting.clear()
            for p in parked:
                if p.state == "waiting":
                    p.state = "expired"
            self._cond.notify_all()
        for p in parked:
            p.event.set()


# --------------------------------------------------------------------------- one client's deferral


class DeferringClient(Protocol):
    """What :class:`InputDeferral` reads of its client (declared here, so this module imports no client)."""

    name: str
    defer_input: bool
    input_timeout: Optional[float]
    elicitation_handler: Any
    _roots: Optional[List[Any]]


class InputDeferral(ClientExtension):
    """One client's ``defer_input``: the per-call setting (thread-local), the round a resume starts at, and
    the handshake era's parked questions; hooked into the client core as a
    :class:`~mcpsync.client.hooks.ClientExtension`. Owned by the client; thread-safe."""

    @classmethod
    def of(cls, client: DeferringClient, option: Any) -> "InputDeferral":
        """The deferral of ``client`` (``option`` is unused: every client can defer per call)."""
        return cls(client)

    def __init__(self, client: DeferringClient) -> None:
        self._client = client
        self._local = threading.local()
        self._calls = 0  # calls in flight with defer_input=True on a client without it (handshake era)
        self._lock = threading.Lock()
        # the session answers server requests on 4 threads (Session handler_workers): parked questions may
        # hold 3 of them, so pings and other server requests always have one
        self.parked = ParkedInputs(client.name, maxsize=3)

    @contextlib.contextmanager
    def scope(self, flag: Optional[bool], start_round: int = 0) -> Iterator[None]:
        """Run one call on this thread with its own ``defer_input`` (None: the client's)."""
        local = self._local
        saved = (getattr(local, "flag", None), getattr(local, "start_round", 0))
        local.flag, local.start_round = flag, start_round
        counted = bool(flag) and not self._client.defer_input
        if counted:
            with self._lock:
                self._calls += 1
        try:
            yield
        finally:
            local.flag, local.start_round = saved
            if counted:
                with self._lock:
                    self._calls -= 1

    def deferring(self) -> bool:
        """True when the current call defers input (its own ``defer_input``, else the client's)."""
        flag = getattr(self._local, "flag", None)
        return self._client.defer_input if flag is None else bool(flag)

    def start_round(self) -> int:
        """How many input rounds came before this request (a resumed call carries them on)."""
        return int(getattr(self._local, "start_round", 0))

    def input_rounds_before(self) -> int:
        return self.start_round()

    def stamped(self, params: Dict[str, Any]) -> None:
        self.stamp(params)

    def input_required(
        self, method: str, params: Dict[str, Any], result: Dict[str, Any], rounds: int
    ) -> Optional[BaseException]:
        """The :class:`InputRequired` to raise when this call defers the result's questions, else None."""
        return self.deferred(method, params, result, rounds) if self.defers(result.get("inputRequests")) else None

    def takes_server_request(self, method: str) -> bool:
        return self.parks(method)

    def server_request(self, method: str, params: Dict[str, Any], ctx: Any) -> Any:
        return self.park(method, params, ctx)

    def close(self) -> None:
        self.parked.close()

    def stamp(self, stamped: Dict[str, Any]) -> None:
        """2026-07-28: a call that defers on a client without an elicitation handler or ``defer_input``
        declares the elicitation capability for this request (the host will answer)."""
        client = self._client
        if not self.deferring() or client.defer_input or client.elicitation_handler is not None:
            return
        meta = stamped["_meta"]  # a fresh dict (Client._stamp); the capabilities dict is shared: copy it
        caps = dict(meta.get(P.META_CLIENT_CAPABILITIES) or {})
        caps["elicitation"] = {"form": {}, "url": {}}
        meta[P.META_CLIENT_CAPABILITIES] = caps

    def defers(self, requests: Any) -> bool:
        """Stop on these ``inputRequests``? Yes when deferring, unless only the configured roots are asked."""
        if not self.deferring() or not isinstance(requests, dict) or not requests:
            return False
        only_roots = all(isinstance(r, dict) and r.get("method") == "roots/list" for r in requests.values())
        return not (only_roots and self._client._roots is not None)  # noqa: SLF001 - the owner's configuration

    def deferred(self, method: str, params: Dict[str, Any], result: Dict[str, Any], rounds: int) -> InputRequired:
        """The :class:`InputRequired` for a 2026-07-28 ``input_required`` result."""
        requests: Dict[str, Any] = result["inputRequests"]
        state = result.get("requestState")
        asked = sorted("%s (%s)" % (k, r.get("method") if isinstance(r, dict) else "?") for k, r in requests.items())
        return InputRequired(
            "the server needs input to complete this call: %s" % ", ".join(asked),
            server=self._client.name,
            method=method,
            params=strip_envelope(params),
            input_requests=requests,
            request_state=state if isinstance(state, str) else None,
            era="modern",
            round=rounds,
        )

    def parks(self, method: str) -> bool:
        """Handshake era: park this server request for another thread (``defer_input`` on the client, or a
        deferring call in flight; the roots are answered from configuration when the client has them)."""
        if method not in INPUT_METHODS or (method == "roots/list" and self._client._roots is not None):  # noqa: SLF001
            return False
        return self._client.defer_input or self._calls > 0

    def park(self, method: str, params: Dict[str, Any], ctx: "RequestContext") -> Any:
        """Park a handshake-era question until ``resume`` answers it or ``input_timeout`` passes. Runs on a
        handler thread, never the reader; blocks at most ``input_timeout`` seconds (or until close)."""
        client = self._client
        ir = InputRequired(
            "the server asks %s and waits for the answer" % method,
            server=client.name,
            method=method,
            input_requests={"r%s" % (ctx.request_id,): {"method": method, "params": params}},
            era="legacy",
            request_id=ctx.request_id,
        )
        parked = self.parked.park(ir)
        if parked is not None:
            try:
                return self.parked.wait(parked, client.input_timeout)
            except InputExpired:
                logger.info("[%s] no answer to the parked %s within %ss", client.name, method, client.input_timeout)
        else:
            logger.warning("[%s] too many questions waiting for an answer; %s declined", client.name, method)
        if method == "elicitation/create":
            return {"action": "cancel"}
        raise MCPError("the user did not answer %s in time" % method, server=client.name, method=method)


# --------------------------------------------------------------------------- resuming a deferred call


class ResumingClient(Protocol):
    """What :func:`resume` uses of the client (declared here, so this module imports no client)."""

    name: str

    @property
    def pending_input(self) -> ParkedInputs: ...
    _deferral: "InputDeferral"

    def fulfil_input_requests(self, requests: Dict[str, Any], method: str) -> Dict[str, Any]: ...

    def _authorize_tool(self, name: str, arguments: Dict[str, Any], lookup: Any = None) -> Dict[str, Any]: ...

    def _tool_for_approval(self, name: str) -> Any: ...

    def _call_tool(
        self,
        name: str,
        params: Dict[str, Any],
        timeout: Any,
        max_total_timeout: Any,
        progress: Any,
        validate_output: Any,
    ) -> Any: ...

    def _call(
        self, method: str, params: Optional[Dict[str, Any]], *, timeout: Any = ..., max_total_timeout: Any = ...
    ) -> Any: ...


def resume(
    client: ResumingClient,
    input_required: InputRequired,
    answers: Optional[Dict[str, Any]],
    *,
    timeout: Any,
    max_total_timeout: Any,
    defer_input: Optional[bool],
) -> Any:
    """:meth:`mcpsync.Client.resume` (see there): answer a deferred call's questions and continue it."""
    from ..types import GetPromptResult, ReadResourceResult

    ir = input_required
    if not isinstance(ir, InputRequired):
        raise ConfigError("resume() takes the InputRequired a call raised")
    if ir.server is None:
        # made by hand or edited: it would resume on any client, so it resumes on none
        raise InputNotResumable("this input request names no server", server=client.name, method=ir.method)
    if ir.server != client.name:
        raise InputNotResumable(
            "this input request belongs to server %r, not %r" % (ir.server, client.name), server=client.name
        )
    given = dict(answers or {})
    unknown = sorted(set(given) - set(ir.input_requests))
    if unknown:
        raise ConfigError("the server did not ask %s" % ", ".join(map(repr, unknown)), server=client.name)
    if ir.live:
        (key,) = list(ir.input_requests) or [""]
        if key not in given:
            raise ConfigError("no answer for %r" % key, server=client.name, method=ir.method)
        client.pending_input.answer(ir, given[key])
        return None
    if ir.method not in ("tools/call", "prompts/get", "resources/read"):
        raise ConfigError("cannot resume a %r request" % ir.method, server=client.name)
    missing = {k: v for k, v in ir.input_requests.items() if k not in given}
    responses = dict(given)
    if missing:
        responses.update(client.fulfil_input_requests(missing, ir.method or ""))
    params = dict(ir.params)
    params["inputResponses"] = responses
    if ir.request_state is not None:
        params["requestState"] = ir.request_state
    flag = True if defer_input is None else defer_input
    if ir.method == "tools/call":
        name = ir.tool_name or ""
        params["arguments"] = client._authorize_tool(name, ir.arguments, client._tool_for_approval)
        with client._deferral.scope(flag, ir.round):
            return client._call_tool(name, params, timeout, max_total_timeout, None, None)
    with client._deferral.scope(flag, ir.round):
        raw = client._call(ir.method, params, timeout=timeout, max_total_timeout=max_total_timeout)
    if ir.method == "prompts/get":
        return GetPromptResult.from_dict(raw)
    return ReadResourceResult.from_dict(raw)
