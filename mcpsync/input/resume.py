"""Continuing a deferred call: :func:`resume` and its typed shortcut :func:`resume_tool`.

Both take the client to continue on, built with :class:`~mcpsync.input.DeferInput`, and go through its public
methods (``call_tool``, ``get_prompt``, ``read_resource``): a resumed tool call passes the tool policy and the
approval hook again, and its result is checked like any other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional, Union

from ..errors import ConfigError, InputNotResumable
from ..handles import DEFAULT, Timeout
from .deferral import _Resuming
from .deferred import InputRequired
from .extension import deferral_of

if TYPE_CHECKING:  # pragma: no cover
    from ..client.client import Client
    from ..types import CallToolResult, GetPromptResult, ReadResourceResult

__all__ = ["resume", "resume_tool"]

_RESUMABLE = ("tools/call", "prompts/get", "resources/read")


def resume(
    client: "Client",
    input_required: InputRequired,
    answers: Optional[Dict[str, Any]] = None,
    *,
    timeout: Timeout = DEFAULT,
    max_total_timeout: Timeout = DEFAULT,
    defer_again: bool = True,
) -> Union["CallToolResult", "GetPromptResult", "ReadResourceResult", None]:
    """Continue a call that raised :class:`~mcpsync.input.InputRequired` on ``client``, with the user's ``answers``.

    ``answers`` maps each question's key (``ir.questions[i].key``) to its answer: an elicitation's
    ``{"action": "accept", "content": {...}}`` (``question.accept(content)`` checks it against the schema),
    ``{"action": "decline"}`` or ``{"action": "cancel"}``; a sampling result; ``{"roots": [...]}``. A question
    left out is answered by the client's handlers (or its ``roots``), else :class:`~mcpsync.HandlerMissing` is
    raised before anything is sent.

    2026-07-28: sends the request again with the answers and the server's ``requestState`` and returns its typed
    result (:class:`~mcpsync.CallToolResult` for a tool, :class:`~mcpsync.GetPromptResult`,
    :class:`~mcpsync.ReadResourceResult`); works from any thread or process whose client is connected to the
    same server under the same ``name``. If the server asks again, another :class:`InputRequired` is raised
    (``defer_again=False``: the handlers answer instead). Blocks like the original call.

    Handshake era (``ir.live``): hands the answer to the call still waiting in this process and returns
    ``None`` at once (the result goes to that call's thread). Raises
    :class:`~mcpsync.input.InputExpired` when it is no longer waiting.

    Raises:
        ConfigError: ``client`` has no :class:`~mcpsync.input.DeferInput`; ``answers`` names a key the server did
            not ask; not an :class:`InputRequired`.
        InputNotResumable: ``ir`` names no server, or another one, or the client no longer speaks the
            2026-07-28 era (nothing is sent).
        InputExpired, InputRequired, HandlerMissing, and whatever the original call may raise.
    """
    ir = input_required
    if not isinstance(ir, InputRequired):
        raise ConfigError("resume() takes the InputRequired a call raised")
    name = client.name
    if ir.server is None:
        # made by hand or edited: it would resume on any client, so it resumes on none
        raise InputNotResumable("this input request names no server", server=name, method=ir.method)
    if ir.server != name:
        raise InputNotResumable("this input request belongs to server %r, not %r" % (ir.server, name), server=name)
    hooks = deferral_of(client)
    given = dict(answers or {})
    unknown = sorted(set(given) - set(ir.input_requests))
    if unknown:
        raise ConfigError("the server did not ask %s" % ", ".join(map(repr, unknown)), server=name)
    if ir.live:
        (key,) = list(ir.input_requests) or [""]
        if key not in given:
            raise ConfigError("no answer for %r" % key, server=name, method=ir.method)
        hooks.parked.answer(ir, given[key])
        return None
    if ir.method not in _RESUMABLE:
        raise ConfigError("cannot resume a %r request" % ir.method, server=name)
    client.session  # noqa: B018 - a lazy client opens here: the era decides whether the request can be resumed
    if client.era != "modern":
        raise InputNotResumable(
            "a 2026-07-28 input request cannot be resumed over the handshake era", server=name, method=ir.method
        )
    missing = {k: v for k, v in ir.input_requests.items() if k not in given}
    responses = dict(given)
    if missing:
        responses.update(client.fulfil_input_requests(missing, ir.method or ""))
    with hooks.scope(defer_again, _Resuming(ir, responses)):
        if ir.method == "tools/call":
            meta = ir.params.get("_meta")
            return client.call_tool(
                ir.tool_name or "",
                ir.arguments,
                timeout=timeout,
                max_total_timeout=max_total_timeout,
                meta=dict(meta) if isinstance(meta, dict) else None,
            )
        if ir.method == "prompts/get":
            arguments = ir.params.get("arguments")
            return client.get_prompt(
                str(ir.params.get("name", "")),
                dict(arguments) if isinstance(arguments, dict) else None,
                timeout=timeout,
            )
        return client.read_resource(str(ir.params.get("uri", "")), timeout=timeout, cache="bypass")


def resume_tool(
    client: "Client",
    input_required: InputRequired,
    answers: Optional[Dict[str, Any]] = None,
    *,
    timeout: Timeout = DEFAULT,
    max_total_timeout: Timeout = DEFAULT,
    defer_again: bool = True,
) -> "CallToolResult":
    """:func:`resume` for a deferred 2026-07-28 ``tools/call``, typed: the tool's result.

    Raises:
        ConfigError: ``input_required`` is not a deferred 2026-07-28 tool call; and as :func:`resume`.
    """
    if not isinstance(input_required, InputRequired) or input_required.method != "tools/call" or input_required.live:
        raise ConfigError("resume_tool() takes a deferred 2026-07-28 tool call", server=client.name)
    result = resume(
        client, input_required, answers, timeout=timeout, max_total_timeout=max_total_timeout, defer_again=defer_again
    )
    from ..types import CallToolResult

    assert isinstance(result, CallToolResult)
    return result
