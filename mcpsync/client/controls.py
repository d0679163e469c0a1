"""Builds a client's :class:`~mcpsync.client.pipeline.Pipeline` only when an option asks for one.

Kept apart from :mod:`mcpsync.client.pipeline` so that a client without production options imports
none of it: the only cost is this check. OpenTelemetry is only looked for in ``sys.modules``: "auto"
tracing is on when the application has imported it *and* set a tracer provider (a library that merely
imports the API, such as the official SDK, does not turn it on).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Iterable, Optional

from .otel import otel_configured

if TYPE_CHECKING:
    from .middleware import Middleware
    from .pipeline import Pipeline, TracingOption
    from .policy import ApprovalHandler
    from .retry import Retry

__all__ = ["build_pipeline", "otel_configured"]


def build_pipeline(
    allowed_tools: Optional[Iterable[str]],
    disabled_tools: Optional[Iterable[str]],
    approval_handler: Optional["ApprovalHandler"],
    interceptors: Optional[Iterable["Middleware"]],
    retry: Optional["Retry"],
    tracing: "TracingOption",
    trace_context: Dict[str, str],
) -> Optional["Pipeline"]:
    """The client's pipeline, or None when no option asks for one (nothing is imported then)."""
    wants_tracing = tracing is not False and tracing is not None and (tracing != "auto" or otel_configured())
    if not (
        allowed_tools is not None
        or disabled_tools
        or approval_handler is not None
        or interceptors
        or retry is not None
        or wants_tracing
        or trace_context
    ):
        return None
    from .pipeline import Pipeline

    return Pipeline.build(
        allowed_tools=allowed_tools,
        disabled_tools=disabled_tools,
        approval_handler=approval_handler,
        interceptors=interceptors,
        retry=retry,
        tracing=tracing,
        trace_context=trace_context,
    )
