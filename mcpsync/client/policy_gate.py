"""The tool policy as middleware: the first stage of the chain for a tool call.

:class:`PolicyGate` refuses a ``tools/call`` whose tool the :class:`~mcpsync.client.policy.ToolPolicy`
does not allow, with :class:`~mcpsync.ToolDenied` (``by="policy"``), before the approval handler is
asked and before anything is sent. Other methods pass through. Immutable; thread-safe; never blocks.
"""

from __future__ import annotations

from typing import Any

from ..errors import ToolDenied
from .middleware import Middleware, Next, RequestInfo
from .policy import ToolPolicy

__all__ = ["PolicyGate"]


class PolicyGate(Middleware):
    """Refuses tool calls the ``policy`` does not allow (see the module documentation)."""

    def __init__(self, policy: ToolPolicy) -> None:
        self.policy = policy

    def handle(self, request: RequestInfo, next: Next) -> Any:  # noqa: A002 - the protocol's name for it
        """Raise :class:`~mcpsync.ToolDenied` for a refused tool call, else pass the request on."""
        if request.method == "tools/call" and request.tool is not None:
            reason = self.policy.check(request.tool)
            if reason is not None:
                raise ToolDenied(
                    "tool call refused by the tool policy: %s" % reason,
                    tool=request.tool,
                    reason=reason,
                    by="policy",
                    server=request.server,
                    method="tools/call",
                )
        return next(request)

    def __repr__(self) -> str:
        return "PolicyGate(%r)" % (self.policy,)
