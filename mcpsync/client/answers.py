"""What the client answers when the server asks: ``roots/list``, ``sampling/createMessage``,
``elicitation/create`` and ``ping``, through the user's roots and handlers.

Used for server requests (handshake era) and for the ``inputRequests`` of an ``input_required``
result (2026-07-28 era) alike; :class:`~mcpsync.client.core.ClientCore` decides what a missing
handler means in each case (``absent``).
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional, Union

from ..errors import ConfigError, MCPError, MethodNotFound
from ..types import Root
from .handlers import (
    ElicitationHandler,
    ElicitationRequest,
    ElicitationResult,
    SamplingHandler,
    SamplingRequest,
    SamplingResult,
)

__all__ = ["answer_server_request", "as_root"]


def as_root(r: Union[Root, str, Dict[str, Any]]) -> Root:
    """A :class:`~mcpsync.Root` from a Root, a ``{"uri", "name"}`` dict, a URI or a local path."""
    if isinstance(r, Root):
        return r
    if isinstance(r, dict):
        return Root(uri=str(r.get("uri", "")), name=r.get("name"))
    if isinstance(r, str):
        if "://" in r:
            return Root(uri=r)
        from pathlib import Path

        return Root(uri=Path(os.path.abspath(r)).as_uri(), name=os.path.basename(os.path.abspath(r)) or None)
    raise ConfigError("a root must be a Root, a dict, a file:// URI or a path")


def answer_server_request(
    method: str,
    params: Dict[str, Any],
    *,
    server: str,
    roots: Optional[List[Root]],
    sampling_handler: Optional[SamplingHandler],
    elicitation_handler: Optional[ElicitationHandler],
    absent: Callable[[str], MCPError],
) -> Dict[str, Any]:
    """The result for the server's request ``method``; raises ``absent(what)`` when ``what`` is not configured."""
    if method == "roots/list":
        if roots is None:
            raise absent("roots")
        return {"roots": [r.to_dict() for r in roots]}
    if method == "sampling/createMessage":
        if sampling_handler is None:
            raise absent("a sampling_handler")
        answer = sampling_handler(SamplingRequest.from_params(params, server))
        if isinstance(answer, SamplingResult):
            return answer.to_dict()
        if isinstance(answer, str):
            return SamplingResult(answer).to_dict()
        if not isinstance(answer, dict):
            raise TypeError("sampling_handler must return a dict, a str or a SamplingResult")
        return answer
    if method == "elicitation/create":
        if elicitation_handler is None:
            raise absent("an elicitation_handler")
        request = ElicitationRequest.from_params(params, server)
        reply = elicitation_handler(request)
        if isinstance(reply, dict):
            reply = ElicitationResult(str(reply.get("action", "")), reply.get("content"))
        if not isinstance(reply, ElicitationResult) or reply.action not in ("accept", "decline", "cancel"):
            raise TypeError("elicitation_handler must return an ElicitationResult or {'action': ...}")
        if reply.action == "accept" and request.mode != "url":
            request.validate(reply.content or {})
        return reply.to_dict()
    if method == "ping":
        return {}
    raise MethodNotFound(-32601, "Method not found: %s" % method)
