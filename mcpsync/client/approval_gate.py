"""The approval handler as middleware: the second stage of the chain for a tool call.

:class:`ApprovalGate` asks the approval handler about each ``tools/call`` (after the tool policy allowed
it) with a :class:`~mcpsync.client.policy.ToolApprovalRequest`. A denial raises
:class:`~mcpsync.ToolDenied` (``by="approval"``) and nothing is sent; an approval with edited arguments
replaces the request's ``arguments`` for every later stage (interceptors, retry, the wire). Other
methods pass through. The handler runs on the thread that makes the call and may block it for as long
as it takes to answer. Immutable; thread-safe when the handler is.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional

from ..errors import ConfigError, ToolDenied
from ..types import Tool
from .middleware import Middleware, Next, RequestInfo
from .policy import Approval, ApprovalHandler, ToolApprovalRequest

__all__ = ["ApprovalGate", "LOOKUP"]

#: The ``RequestInfo.state`` key of a ``name -> Tool or None`` callable the gate uses to find the tool's
#: listed definition (annotations) for the handler; without it the handler sees no definition.
LOOKUP = "mcpsync.tool_lookup"


class ApprovalGate(Middleware):
    """Asks ``handler`` before each tool call (see the module documentation)."""

    def __init__(self, handler: ApprovalHandler) -> None:
        self.handler = handler

    def handle(self, request: RequestInfo, next: Next) -> Any:  # noqa: A002 - the protocol's name for it
        """Ask the handler; raise :class:`~mcpsync.ToolDenied` on a denial, else pass the (edited) request on."""
        if request.method != "tools/call" or request.tool is None:
            return next(request)
        params: Dict[str, Any] = request.params if request.params is not None else {}
        arguments = params.get("arguments")
        arguments = arguments if isinstance(arguments, dict) else {}
        lookup: Optional[Callable[[str], Optional[Tool]]] = request.state.get(LOOKUP)
        definition = lookup(request.tool) if lookup is not None else None
        answer = self.handler(
            ToolApprovalRequest(
                server=request.server,
                tool=request.tool,
                arguments=dict(arguments),
                annotations=dict(definition.annotations) if definition is not None else {},
                definition=definition,
            )
        )
        if not isinstance(answer, Approval):
            raise ConfigError("approval_handler must return mcpsync.middleware.Approval.approve(...) or .deny(reason)")
        if not answer.approved:
            raise ToolDenied(
                "tool call denied: %s" % answer.reason,
                tool=request.tool,
                reason=answer.reason,
                by="approval",
                server=request.server,
                method="tools/call",
            )
        if answer.arguments is not None:
            request.params = dict(params, arguments=dict(answer.arguments))
        return next(request)

    def __repr__(self) -> str:
        return "ApprovalGate(%r)" % (self.handler,)
