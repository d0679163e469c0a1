"""The protocol trace: every frame in and out on the ``mcpsync.wire`` logger, at DEBUG level.

Off by default and free when off: a session checks ``WIRE_LOG.isEnabledFor(DEBUG)`` once, when it starts, and only
then routes its frames through :class:`TracingSink` and :func:`traced_send`. Each line is one frame as compact JSON,
truncated, with the values of secret-looking keys (tokens, passwords, API keys, cookies, authorization) replaced
by ``***``. ``mcpsync -vv`` turns it on; an application does the same with
``logging.getLogger("mcpsync.wire").setLevel(logging.DEBUG)`` plus a handler.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any, Callable, TypeVar

__all__ = ["WIRE_LOG", "TracingSink", "describe", "enabled", "traced_send"]

#: The logger of the protocol trace.
WIRE_LOG = logging.getLogger("mcpsync.wire")
#: Characters of one frame shown in a trace line.
LIMIT = 500

_SECRET = re.compile(r"token|secret|passw|authorization|api[-_]?key|cookie|credential|private[-_]?key", re.I)
_NOT_SECRET = frozenset({"progressToken"})

F = TypeVar("F", bound=Callable[..., Any])


def enabled() -> bool:
    """Whether the trace is on (the ``mcpsync.wire`` logger is enabled for DEBUG)."""
    return WIRE_LOG.isEnabledFor(logging.DEBUG)


def _redact(value: Any, depth: int = 0) -> Any:
    if depth > 32:
        return "..."
    if isinstance(value, dict):
        return {
            k: "***"
            if isinstance(k, str) and k not in _NOT_SECRET and _SECRET.search(k) and isinstance(v, str)
            else _redact(v, depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_redact(v, depth + 1) for v in value]
    return value


def describe(message: Any, limit: int = LIMIT) -> str:
    """One frame as a trace line: compact JSON, secrets redacted, at most ``limit`` characters (plus a count)."""
    try:
        text = json.dumps(_redact(message), ensure_ascii=False, separators=(",", ":"), default=repr)
    except (TypeError, ValueError, RecursionError):
        text = repr(type(message))
    if len(text) > limit:
        return "%s...(%d chars)" % (text[:limit], len(text))
    return text


def traced_send(send: F, name: str) -> F:
    """``send`` that first writes its frame to the trace (``name >> frame``)."""

    def send_traced(message: Any, *args: Any, **kwargs: Any) -> Any:
        WIRE_LOG.debug("[%s] >> %s", name, describe(message))
        return send(message, *args, **kwargs)

    return send_traced  # type: ignore[return-value]


class TracingSink:
    """A transport sink that writes each incoming frame to the trace (``name << frame``), then hands it on."""

    def __init__(self, sink: Any, name: str) -> None:
        self._sink = sink
        self._name = name

    def on_message(self, message: Any) -> None:
        WIRE_LOG.debug("[%s] << %s", self._name, describe(message))
        self._sink.on_message(message)

    def on_request_error(self, request_id: Any, exc: BaseException) -> None:
        self._sink.on_request_error(request_id, exc)

    def on_close(self, exc: Any) -> None:
        WIRE_LOG.debug("[%s] connection closed: %s", self._name, exc)
        self._sink.on_close(exc)
