"""JSON-RPC 2.0 wire format: encoding, decoding and envelope validation. No I/O.

Messages stay plain dicts (the cheapest representation to build and to hand
over between threads). :func:`encode` produces compact UTF-8 bytes with no
embedded newline; :func:`decode` parses one frame (an object or a batch) and
:func:`classify` validates one envelope and says what it is.

All functions here are pure and thread-safe.
"""

from __future__ import annotations

import itertools
import json
import logging
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, Union

from ..errors import ProtocolError

__all__ = [
    "ERROR",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "NOTIFICATION",
    "PARSE_ERROR",
    "REQUEST",
    "RESPONSE",
    "IdAllocator",
    "classify",
    "decode",
    "encode",
    "error_response",
    "is_valid_id",
    "notification",
    "request",
    "response",
    "truncate",
]

logger = logging.getLogger(__name__)

Message = Dict[str, Any]
RequestId = Union[int, str]

REQUEST = "request"
NOTIFICATION = "notification"
RESPONSE = "response"
ERROR = "error"

#: The error codes JSON-RPC 2.0 defines (its section 5.1), for a peer that answers requests.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
_loads = json.loads


def _no_default(value: Any) -> Any:
    raise TypeError("Object of type %s is not JSON serializable" % type(value).__name__)


def _make_fast_dumps() -> Callable[[Any], str]:
    """One reusable C encoder (compact, UTF-8, no NaN, no circularity check: messages are trees).

    ``JSONEncoder.encode`` builds a new C encoder on every call; reusing one saves ~2 us per message.
    Falls back to the stdlib path where the C accelerator is missing.
    """
    from json import encoder as _enc

    make = getattr(_enc, "c_make_encoder", None)
    basestring = getattr(_enc, "c_encode_basestring", None)
    if make is None or basestring is None:
        return _dumps
    try:
        iterencode = make(None, _no_default, basestring, None, ":", ",", False, False, False)
    except TypeError:  # a future signature change: use the stdlib path
        return _dumps
    join = "".join

    def dumps(value: Any) -> str:
        if type(value) is str:
            return _dumps(value)
        return join(iterencode(value, 0))

    return dumps


_fast_dumps = _make_fast_dumps()


def encode(message: Any) -> bytes:
    """Encode one message as compact UTF-8 JSON bytes, without a trailing newline.

    JSON escapes every control character inside strings, so the result never
    contains a raw newline. Raises :class:`ValueError` for values JSON cannot
    represent (NaN, infinity, non-serialisable objects).
    """
    try:
        return _fast_dumps(message).encode("utf-8", "surrogatepass")
    except (TypeError, ValueError, RecursionError) as exc:
        raise ValueError("message cannot be encoded as JSON: %s" % exc) from exc


def decode(data: Union[bytes, str]) -> Any:
    """Parse one frame. Returns a dict (one message) or a list (a batch).

    Invalid UTF-8 is replaced, never fatal. Raises :class:`ProtocolError` when the
    frame is not JSON or is neither an object nor an array.
    """
    if isinstance(data, (bytes, bytearray, memoryview)):
        data = bytes(data).decode("utf-8", "replace")
    try:
        value = _loads(data)
    except (ValueError, RecursionError) as exc:  # RecursionError: nesting deeper than the parser allows
        raise ProtocolError("frame is not valid JSON: %s (%s)" % (exc, truncate(data))) from None
    if not isinstance(value, (dict, list)):
        raise ProtocolError("frame is neither a JSON object nor an array: %s" % truncate(data))
    return value


def truncate(value: Any, limit: int = 200) -> str:
    """A short printable excerpt of a frame for log lines and error messages."""
    if isinstance(value, str):
        text = value
    else:
        try:  # bounded: a short repr however large or deeply nested the frame is
            text = _short_repr(value)
        except Exception:  # noqa: BLE001 - an excerpt must never raise
            text = "<%s>" % type(value).__name__
    if len(text) > limit:
        return text[:limit] + "...(%d chars)" % len(text)
    return text


def _make_short_repr() -> Callable[[Any], str]:
    import reprlib

    r = reprlib.Repr()
    r.maxlevel = 8
    r.maxdict = r.maxlist = 12
    r.maxstring = r.maxother = 160
    r.maxlong = 60
    return r.repr


_short_repr = _make_short_repr()


def is_valid_id(value: Any) -> bool:
    """True when ``value`` is a legal JSON-RPC id for MCP: a string or an integer (not bool, not null)."""
    t = type(value)
    return t is int or t is str


def classify(message: Any) -> Tuple[str, Optional[str]]:
    """Validate one envelope and return ``(kind, problem)``.

    ``kind`` is one of REQUEST, NOTIFICATION, RESPONSE, ERROR; ``problem`` is
    None when the envelope is valid, else a description of what is wrong (the
    kind is then the best guess, or "" when none can be made).
    """
    if type(message) is not dict:
        return "", "message is not a JSON object"
    if message.get("jsonrpc") != "2.0":
        return "", 'jsonrpc member is not "2.0"'
    method = message.get("method")
    has_id = "id" in message
    if method is not None:
        if type(method) is not str:
            return "", "method is not a string"
        params = message.get("params")
        if params is not None and type(params) not in (dict, list):
            return "", "params is neither an object nor an array"
        if not has_id:
            return NOTIFICATION, None
        if not is_valid_id(message["id"]):
            return REQUEST, "request id must be a string or an integer"
        return REQUEST, None
    if not has_id:
        return "", "message has neither method nor id"
    has_result = "result" in message
    has_error = "error" in message
    if has_result == has_error:
        return RESPONSE, "response must have exactly one of result and error"
    if has_error:
        err = message["error"]
        if type(err) is not dict:
            return ERROR, "error member is not an object"
        code = err.get("code")
        if type(code) is not int:
            return ERROR, "error.code is not an integer"
        if not is_valid_id(message["id"]) and message["id"] is not None:
            return ERROR, "response id must be a string or an integer"
        return ERROR, None
    if not is_valid_id(message["id"]):
        return RESPONSE, "response id must be a string or an integer"
    return RESPONSE, None


def request(request_id: RequestId, method: str, params: Optional[Dict[str, Any]] = None) -> Message:
    """Build a request message."""
    msg: Message = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def notification(method: str, params: Optional[Dict[str, Any]] = None) -> Message:
    """Build a notification message."""
    msg: Message = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def response(request_id: RequestId, result: Any) -> Message:
    """Build a success response echoing ``request_id`` exactly as received."""
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error_response(request_id: Any, code: int, message: str, data: Any = None) -> Message:
    """Build an error response echoing ``request_id`` exactly as received."""
    err: Dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": err}


class IdAllocator:
    """Unique, increasing integer request ids for one session. Thread-safe.

    ``itertools.count`` advances atomically under the GIL, so ``next()`` needs no lock.
    """

    __slots__ = ("_counter",)

    def __init__(self, start: int = 1) -> None:
        self._counter: Iterator[int] = itertools.count(start)

    def next(self) -> int:
        """Return the next id."""
        return next(self._counter)


def iter_messages(frame: Any) -> List[Any]:
    """The messages of a decoded frame: the batch's elements, or the single message."""
    if type(frame) is list:
        return frame
    return [frame]
