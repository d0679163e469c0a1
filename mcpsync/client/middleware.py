"""One middleware chain around every blocking request of a client.

A middleware is an object with one method, ``handle(request, next)``: it gets the outgoing
:class:`~mcpsync.client.interceptors.RequestInfo`, may change it (``params``, ``headers``), calls
``next(request)`` zero, one or several times, and returns a result (the raw result dict, or a
rewritten one). It may raise instead; an exception from ``next`` propagates through it unless it
catches it. This is the shape of a WSGI middleware or of httpx's auth flow::

    class Timing(Middleware):
        def handle(self, request, next):
            start = time.monotonic()
            try:
                return next(request)
            finally:
                log.info("%s took %.3fs", request.method, time.monotonic() - start)

Pass middleware in ``Client(middleware=[...])`` beside (or instead of) :class:`~mcpsync.middleware.Interceptor`
objects: an ``Interceptor`` is itself a middleware whose ``handle`` runs ``on_request``, ``next``,
then ``on_result`` or ``on_error``.

Order, outermost first (the first entry sees the request first and the result last):

0. for a tool call, the **gate stage**, once per call (never per attempt) and before the call is built:
   the **tool policy** (a ``ToolPolicy`` in ``middleware=``, as a ``PolicyGate``), then the **approval
   handler** (``Callbacks(approval_handler=...)``, as an ``ApprovalGate``; edited arguments are what every
   later stage sees). A refused call raises ``ToolDenied`` and never enters the stages below nor the wire.
   The gate stage also runs for non-blocking tool calls (``call_tool_async``, tasks);
1. **retry** (a ``Retry`` in ``middleware=``, wherever it stands): runs everything below once per attempt,
   each with a fresh copy of the request (``request.attempt`` counts from 1);
2. **trace context** (``ClientOptions(trace_context=...)``): its entries go into the request's ``_meta``;
3. **tracing** (``ClientOptions(tracing=...)``, OpenTelemetry): one span per attempt, around what follows;
4. the other **``middleware=``** entries, in list order;
5. the client's own funnel: the 2026-07-28 ``_meta`` envelope, the wire request, and in that era the
   ``input_required`` rounds and task waits.

Threads: every ``handle`` runs on the thread that called the client's blocking method (a keep-alive
ping: the keep-alive thread). The opening requests (``initialize``, ``server/discover``) run through
steps 2 to 4 (never retried). Non-blocking requests (``call_tool_async``, a listen stream's
``subscriptions/listen``) cannot be wrapped by a blocking ``handle``: they run only the
``on_request`` / ``on_result`` / ``on_error`` hooks of the ``Interceptor`` entries.

A chain is immutable once built: thread-safe.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Dict, Optional, Sequence

__all__ = ["Middleware", "Next", "RequestInfo", "chain", "own_params", "run_chain"]

logger = logging.getLogger(__name__)


class RequestInfo:
    """One outgoing request as interceptors see it. Not shared between threads.

    Attributes:
        server: the server's name.
        method: the JSON-RPC method (``tools/call``...).
        params: this request's params (a copy the hooks may change), or None.
        headers: extra HTTP headers for this request (Streamable HTTP and legacy SSE POSTs).
        request_id: the JSON-RPC id, set once the request was sent (None before).
        era: ``"legacy"`` or ``"modern"``; protocol_version: the negotiated revision.
        transport: ``"stdio"``, ``"http"`` or ``"sse"``.
        session_id: the HTTP ``Mcp-Session-Id`` when there is one.
        tool: for ``tools/call``, the tool's name (None otherwise).
        attempt: 1 for the first try, 2... for retries.
        state: scratch space for interceptors (e.g. a start time), per request and attempt.
    """

    __slots__ = (
        "server",
        "method",
        "params",
        "headers",
        "request_id",
        "era",
        "protocol_version",
        "transport",
        "session_id",
        "tool",
        "attempt",
        "state",
    )

    def __init__(
        self,
        server: str,
        method: str,
        params: Optional[Dict[str, Any]],
        *,
        era: Optional[str] = None,
        protocol_version: Optional[str] = None,
        transport: Optional[str] = None,
        session_id: Optional[str] = None,
        attempt: int = 1,
    ) -> None:
        self.server = server
        self.method = method
        self.params = params
        self.headers: Dict[str, str] = {}
        self.request_id: Any = None
        self.era = era
        self.protocol_version = protocol_version
        self.transport = transport
        self.session_id = session_id
        name = params.get("name") if method == "tools/call" and isinstance(params, dict) else None
        self.tool: Optional[str] = name if isinstance(name, str) else None
        self.attempt = attempt
        self.state: Dict[Any, Any] = {}

    def fresh(self, attempt: int) -> "RequestInfo":
        """A copy for another attempt: its own ``params`` (and ``arguments``, ``_meta``), no headers, no id, no
        state."""
        return RequestInfo(
            self.server,
            self.method,
            own_params(self.method, self.params),
            era=self.era,
            protocol_version=self.protocol_version,
            transport=self.transport,
            session_id=self.session_id,
            attempt=attempt,
        )

    def __repr__(self) -> str:
        return "<RequestInfo %s %s id=%r attempt=%d>" % (self.server, self.method, self.request_id, self.attempt)


def own_params(method: str, params: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """A copy of ``params`` that hooks may change freely: the dict, a tool call's ``arguments`` and ``_meta``."""
    if params is None:
        return None
    params = dict(params)
    if method == "tools/call" and isinstance(params.get("arguments"), dict):
        params["arguments"] = dict(params["arguments"])
    if isinstance(params.get("_meta"), dict):
        params["_meta"] = dict(params["_meta"])
    return params


#: What a middleware calls to pass the request on: the rest of the chain, returning its result.
Next = Callable[[RequestInfo], Any]


class Middleware:
    """Base class for middleware: override :meth:`handle`. See the module documentation."""

    def handle(self, request: RequestInfo, next: Next) -> Any:  # noqa: A002 - the protocol's name for it
        """Pass ``request`` on (the default) and return the result; blocks as long as ``next`` does."""
        return next(request)


def _bound(item: "Middleware", rest: Next) -> Next:
    handle = item.handle
    return lambda request: handle(request, rest)


def chain(items: Sequence["Middleware"], terminal: Next) -> Next:
    """``items`` (middleware or interceptors, outermost first) composed around ``terminal``: one callable."""
    call = terminal
    for item in reversed(items):
        call = _bound(item, call)
    return call


def run_chain(items: Sequence["Middleware"], request: RequestInfo, terminal: Next) -> Any:
    """Run ``request`` through ``items`` (outermost first) and ``terminal``; the result."""
    return chain(items, terminal)(request) if items else terminal(request)
