"""Builds a client's :class:`~mcpsync.client.pipeline.Pipeline` only when an option asks for one, and sorts the
``middleware=`` list and the ``extensions=`` list of :class:`mcpsync.Client`.

Kept apart from :mod:`mcpsync.client.pipeline` so that a client without production options imports
none of it: the only cost is this check. OpenTelemetry is only looked for in ``sys.modules``: "auto"
tracing is on when the application has imported it *and* set a tracer provider (a library that merely
imports the API, such as the official SDK, does not turn it on).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Tuple, Union

from ..errors import ConfigError
from .hooks import Extension
from .middleware import Middleware
from .otel import otel_configured

if TYPE_CHECKING:
    from .pipeline import Pipeline, TracingOption
    from .policy import ApprovalHandler, ToolPolicy
    from .retry import Retry

    #: What ``Client(middleware=[...])`` takes: middleware (interceptors, tracing), at most one Retry policy and
    #: at most one ToolPolicy.
    MiddlewareEntry = Union[Middleware, Retry, ToolPolicy]

__all__ = ["build_pipeline", "checked_extensions", "otel_configured", "split_middleware"]


def _is(entry: object, module: str, name: str) -> bool:
    """``isinstance(entry, <module>.<name>)`` without importing ``module`` (an instance implies it is imported)."""
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(entry, getattr(loaded, name))


def split_middleware(
    entries: Optional[Iterable[Any]],
) -> Tuple[Optional["ToolPolicy"], Optional["Retry"], List[Middleware]]:
    """The ``middleware=`` list as the pipeline takes it: its ToolPolicy, its Retry, and the chain (in order).

    A :class:`~mcpsync.middleware.Retry` runs outermost and a :class:`~mcpsync.middleware.ToolPolicy` before a
    tool call is built, wherever they stand in the list; the other entries wrap each request in list order.
    Raises ConfigError for anything else, for a string, and for a second Retry or ToolPolicy."""
    if entries is None:
        return None, None, []
    if isinstance(entries, (str, bytes, Middleware)) or not isinstance(entries, Iterable):
        raise ConfigError("middleware must be a list (of Middleware, Interceptor, Retry or ToolPolicy objects)")
    policy: Optional["ToolPolicy"] = None
    retry: Optional["Retry"] = None
    chain: List[Middleware] = []
    for entry in entries:
        if isinstance(entry, Middleware):
            chain.append(entry)
        elif _is(entry, "mcpsync.client.retry", "Retry"):
            if retry is not None:
                raise ConfigError("middleware holds two Retry policies; pass one")
            retry = entry
        elif _is(entry, "mcpsync.client.policy", "ToolPolicy"):
            if policy is not None:
                raise ConfigError("middleware holds two ToolPolicy objects; pass one (it takes both lists)")
            policy = entry
        else:
            raise ConfigError(
                "middleware entries must be mcpsync.middleware Middleware, Interceptor, Retry or ToolPolicy "
                "objects, got %r" % (entry,)
            )
    return policy, retry, chain


def checked_extensions(entries: Optional[Iterable[object]]) -> List["Extension"]:
    """The ``extensions=`` list, checked: every entry is an object with the registration hook ``attach(client)``
    (:class:`~mcpsync.client.hooks.Extension`), at most one of each type, all treated alike. Raises ConfigError
    for anything else."""
    if entries is None:
        return []
    if isinstance(entries, (str, bytes)) or not isinstance(entries, Iterable):
        raise ConfigError("extensions must be a list of objects with attach(client), got %r" % (entries,))
    found: List["Extension"] = []
    for entry in entries:
        if not callable(getattr(entry, "attach", None)):
            raise ConfigError(
                "extensions entries must be objects with attach(client) (mcpsync.client.hooks.Extension), got %r"
                % (entry,)
            )
        if any(type(other) is type(entry) for other in found):
            raise ConfigError("extensions holds two %s objects; pass one" % type(entry).__name__)
        found.append(entry)  # type: ignore[arg-type] # it has attach(), checked above
    return found


def build_pipeline(
    policy: Optional["ToolPolicy"],
    approval_handler: Optional["ApprovalHandler"],
    interceptors: List[Middleware],
    retry: Optional["Retry"],
    tracing: "TracingOption",
    trace_context: Dict[str, str],
) -> Optional["Pipeline"]:
    """The client's pipeline, or None when no option asks for one (nothing is imported then)."""
    wants_tracing = tracing is not False and tracing is not None and (tracing != "auto" or otel_configured())
    if not (
        policy is not None
        or approval_handler is not None
        or interceptors
        or retry is not None
        or wants_tracing
        or trace_context
    ):
        return None
    from .pipeline import Pipeline

    return Pipeline.build(
        allowed_tools=policy.allowed if policy is not None else None,
        disabled_tools=policy.denied if policy is not None else None,
        approval_handler=approval_handler,
        interceptors=interceptors,
        retry=retry,
        tracing=tracing,
        trace_context=trace_context,
    )
