"""What the client answers when the server asks: ``roots/list``, ``sampling/createMessage``,
``elicitation/create`` and ``ping``, through the user's roots and handlers.

Used for server requests (handshake era) and for the ``inputRequests`` of an ``input_required``
result (2026-07-28 era) alike; :class:`~mcpsync.Client` decides what a missing
handler means in each case (``absent``).
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional, Protocol, Tuple, Union

from ..errors import ConfigError, HandlerMissing, MCPError, MethodNotFound, ProtocolError
from ..session import handler_error
from ..types import Root
from .handlers import (
    ElicitationHandler,
    ElicitationRequest,
    ElicitationResult,
    SamplingHandler,
    SamplingRequest,
    SamplingResult,
)

__all__ = ["answer_for", "answer_server_request", "as_root", "fulfil"]


def as_root(r: Union[Root, str, Dict[str, Any]]) -> Root:
    """A :class:`~mcpsync.types.Root` from a Root, a ``{"uri", "name"}`` dict, a URI or a local path."""
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


class AnsweringClient(Protocol):
    """What :func:`answer_for` and :func:`fulfil` read of the client."""

    name: str
    _roots: Optional[List[Root]]
    sampling_handler: Optional[SamplingHandler]
    elicitation_handler: Optional[ElicitationHandler]


def answer_for(
    client: AnsweringClient, method: str, params: Dict[str, Any], *, missing: Any, during: Optional[str]
) -> Any:
    """The client's answer to one server request (``missing`` None: a handshake-era server request, where an
    absent handler is -32601; else the error class for a 2026-07-28 input round, naming ``during``)."""

    def absent(what: str) -> MCPError:
        if missing is None:
            return MethodNotFound(-32601, "Method not found: %s" % method)
        return HandlerMissing(
            "server %r needs %s to complete %s, but no %s is configured" % (client.name, what, during, what),
            server=client.name,
            method=during,
        )

    return answer_server_request(
        method,
        params,
        server=client.name,
        roots=client._roots,  # noqa: SLF001 - the owner's configuration
        sampling_handler=client.sampling_handler,
        elicitation_handler=client.elicitation_handler,
        absent=absent,
    )


def fulfil(
    client: AnsweringClient,
    requests: Dict[str, Any],
    method: str,
    failures: Optional[List[Tuple[str, BaseException]]] = None,
) -> Dict[str, Any]:
    """Answer each entry of ``inputRequests`` through the user's handlers.

    A handler that raises is answered as in the handshake era (:func:`mcpsync.session.handler_error`):
    the entry carries the JSON-RPC error object (``{"error": {...}}``) and the server decides; the
    failure is appended to ``failures``. A missing handler raises :class:`~mcpsync.HandlerMissing`.
    """
    responses: Dict[str, Any] = {}
    for key, req in requests.items():
        if not isinstance(req, dict) or not isinstance(req.get("method"), str):
            raise ProtocolError("malformed inputRequests entry %r" % key, server=client.name, method=method)
        given = req.get("params")
        p = given if isinstance(given, dict) else {}
        try:
            responses[key] = answer_for(client, req["method"], p, missing=HandlerMissing, during=method)
        except HandlerMissing:
            raise
        except Exception as exc:  # noqa: BLE001 - the same rule as a server request's handler
            responses[key] = {"error": handler_error(client.name, req["method"], exc)}
            if failures is not None:
                failures.append((req["method"], exc))
    return responses
