"""What wraps a request on its way out, as one chain of :class:`Middleware` (``handle(request, next)``):
tool policy and approval (:class:`ToolPolicy`, :class:`Approval`, :class:`ToolApprovalRequest`), interceptors
(:class:`Interceptor`, :class:`RequestInfo`), retry (:class:`Retry`, :class:`RetryEvent`), OpenTelemetry tracing
(:class:`OpenTelemetryTracing`), and :class:`ClientExtension`, the hooks an extension adds to a client. See
docs/guides/production.md. Names load on first use; importing this package imports no optional library.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from .._lazy import exports as _exports
from .._lazy import table as _table

if _TYPE_CHECKING:  # the lazy names, for type checkers ("X as X" re-exports each; nothing is imported at run time)
    from ..client.hooks import ClientExtension as ClientExtension
    from ..client.interceptors import Interceptor as Interceptor
    from ..client.middleware import Middleware as Middleware, Next as Next, RequestInfo as RequestInfo
    from ..client.policy import Approval as Approval, ToolApprovalRequest as ToolApprovalRequest
    from ..client.policy import ToolPolicy as ToolPolicy
    from ..client.retry import Retry as Retry, RetryEvent as RetryEvent
    from ..client.tracing import OpenTelemetryTracing as OpenTelemetryTracing

_LAZY = _table(
    {
        "..client.hooks": ("ClientExtension",),
        "..client.interceptors": ("Interceptor",),
        "..client.middleware": ("Middleware", "Next", "RequestInfo"),
        "..client.policy": ("Approval", "ToolApprovalRequest", "ToolPolicy"),
        "..client.retry": ("Retry", "RetryEvent"),
        "..client.tracing": ("OpenTelemetryTracing",),
    }
)
__all__ = sorted(_LAZY)

__getattr__, __dir__ = _exports(__name__, _LAZY, globals())
