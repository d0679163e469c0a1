"""Whether the application has set up OpenTelemetry: looked up in ``sys.modules`` only (nothing is imported).

"auto" tracing is on when the application imported the OpenTelemetry API *and* set a tracer provider (a
library that merely imports the API, such as the official SDK, does not turn it on). Used by
:mod:`mcpsync.client.controls` (whether a client needs a pipeline) and :mod:`mcpsync.client.pipeline`.
"""

from __future__ import annotations

import sys

__all__ = ["otel_configured"]


def otel_configured() -> bool:
    """True when the application imported OpenTelemetry and set a tracer provider (no import happens here)."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return False
    try:
        return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
    except Exception:  # noqa: BLE001 - a broken OpenTelemetry setup means no tracing, never a failed client
        return False
