"""What wraps a request on its way out, as one chain of :class:`Middleware` (``handle(request, next)``):
tool policy and approval (:class:`ToolPolicy`, :class:`Approval`, :class:`ToolApprovalRequest`), interceptors
(:class:`Interceptor`, :class:`RequestInfo`), retry (:class:`Retry`, :class:`RetryEvent`), OpenTelemetry tracing
(:class:`OpenTelemetryTracing`), and :class:`ClientExtension`, the hooks an extension adds to a client. See
docs/guides/production.md. Names load on first use; importing this package imports no optional library.
"""

from types import MappingProxyType as _MappingProxyType
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any
from typing import List as _List

from .._lazy import exports as _exports

if _TYPE_CHECKING:  # what the lazy names are, for type checkers (nothing is imported at run time)
    from ..client.hooks import ClientExtension
    from ..client.interceptors import Interceptor
    from ..client.middleware import Middleware, Next, RequestInfo
    from ..client.policy import Approval, ToolApprovalRequest, ToolPolicy
    from ..client.retry import Retry, RetryEvent
    from ..client.tracing import OpenTelemetryTracing

__all__ = [
    "Approval",
    "ClientExtension",
    "Interceptor",
    "Middleware",
    "Next",
    "OpenTelemetryTracing",
    "RequestInfo",
    "Retry",
    "RetryEvent",
    "ToolApprovalRequest",
    "ToolPolicy",
]

_LAZY = _MappingProxyType(
    {
        "Approval": "..client.policy",
        "ClientExtension": "..client.hooks",
        "Interceptor": "..client.interceptors",
        "Middleware": "..client.middleware",
        "Next": "..client.middleware",
        "OpenTelemetryTracing": "..client.tracing",
        "RequestInfo": "..client.middleware",
        "Retry": "..client.retry",
        "RetryEvent": "..client.retry",
        "ToolApprovalRequest": "..client.policy",
        "ToolPolicy": "..client.policy",
    }
)

_load, _names = _exports(__name__, _LAZY, globals())


def __getattr__(name: str) -> _Any:
    return _load(name)


def __dir__() -> _List[str]:
    return _names()
