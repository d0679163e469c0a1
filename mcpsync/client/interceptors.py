"""Interceptors: a small chain of hooks around every outgoing request and its result.

Pass ``middleware=[...]`` to :class:`mcpsync.Client` (or ``client_options`` of a Manager). Each
interceptor subclasses :class:`Interceptor` and overrides any of three hooks:

* ``on_request(info)``: before the request is sent. ``info.params`` is this request's own copy
  (``arguments`` of a tool call included): edit it in place or assign a new dict to rewrite
  arguments or add ``_meta`` entries. ``info.headers`` adds HTTP headers to this request's POST
  (ignored over stdio). Raising here fails the call before anything is sent.
* ``on_result(info, result)``: the raw result dict arrived; return it, or a rewritten dict
  (redaction). ``info.request_id`` is the JSON-RPC id that was used.
* ``on_error(info, error)``: the request failed (any exception, also one raised by a later hook).

Order: ``on_request`` runs in list order; ``on_result`` / ``on_error`` in reverse order (the first
interceptor wraps all the others). Every hook of an interceptor whose ``on_request`` ran is
followed by exactly one ``on_result`` or ``on_error``.

Threads: for blocking methods (``call_tool``, ``list_tools``, ``read_resource``, ``request``...) every
hook runs on the thread that called the method, never on a reader thread. For ``call_tool_async``,
``on_request`` runs on the calling thread and ``on_result`` / ``on_error`` on the client's dispatch
thread when the request ends (there they observe; their return value is not used). A retried request
(see :class:`mcpsync.middleware.Retry`) runs the chain once per attempt (``info.attempt`` counts from 1).

The opening requests (``initialize``, the ``server/discover`` probe) run through the chain too (never
retried; ``info.era`` is None then), and so do keep-alive pings (on the client's keep-alive thread) and
the ``subscriptions/listen`` request of each listen stream (``on_request`` on the thread that opens or re-opens
the stream; ``on_result`` / ``on_error`` on the dispatch thread when the stream ends, observe only). Not
intercepted: notifications (``notifications/cancelled``, ``notifications/initialized``...), which have no result.
"""

from __future__ import annotations

import logging
from typing import Any, Dict, List, Sequence

from .middleware import Middleware, Next, RequestInfo

__all__ = ["Interceptor", "RequestInfo"]

logger = logging.getLogger(__name__)


class Interceptor(Middleware):
    """Base class for interceptors; every hook does nothing by default. See the module docstring.

    An interceptor is a :class:`~mcpsync.client.middleware.Middleware` whose :meth:`handle` runs
    ``on_request``, the rest of the chain, then ``on_result`` or ``on_error``."""

    def handle(self, request: RequestInfo, next: Next) -> Any:  # noqa: A002 - the protocol's name for it
        """The three hooks around ``next(request)`` (an ``on_error`` that raises is logged, never raised)."""
        self.on_request(request)
        try:
            result = next(request)
        except BaseException as exc:
            fail([self], request, exc)
            raise
        try:
            return self.on_result(request, result)
        except BaseException as exc:
            fail([self], request, exc)
            raise

    def on_request(self, info: RequestInfo) -> None:
        """Before the request is sent (may change ``info.params`` / ``info.headers``, or raise)."""

    def on_result(self, info: RequestInfo, result: Dict[str, Any]) -> Dict[str, Any]:
        """The raw result arrived; return it or a replacement."""
        return result

    def on_error(self, info: RequestInfo, error: BaseException) -> None:
        """The request failed with ``error`` (which is then raised to the caller)."""


def enter(items: Sequence[Interceptor], info: RequestInfo) -> List[Interceptor]:
    """Run ``on_request`` in order; returns the interceptors entered. On a failure the entered ones
    get ``on_error`` (in reverse) and the error propagates."""
    entered: List[Interceptor] = []
    for item in items:
        try:
            item.on_request(info)
        except BaseException as exc:
            fail(entered, info, exc)
            raise
        entered.append(item)
    return entered


def succeed(entered: List[Interceptor], info: RequestInfo, result: Any) -> Any:
    """Run ``on_result`` in reverse order; a hook that raises turns the rest into ``on_error``."""
    for index in range(len(entered) - 1, -1, -1):
        try:
            result = entered[index].on_result(info, result)
        except BaseException as exc:
            fail(entered[:index], info, exc)
            raise
    return result


def fail(entered: List[Interceptor], info: RequestInfo, error: BaseException) -> None:
    """Run ``on_error`` in reverse order; an exception from a hook is logged, never raised."""
    for item in reversed(entered):
        try:
            item.on_error(info, error)
        except Exception:  # noqa: BLE001 - the original error is what the caller sees
            logger.warning("[%s] interceptor %r failed in on_error", info.server, item, exc_info=True)
