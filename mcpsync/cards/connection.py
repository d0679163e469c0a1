"""A card's remote turned into a ready client configuration (:func:`prepare`, :class:`CardConnection`).

The remote's URL template and headers are filled in exactly the way ``mcpsync install`` fills a registry entry's
(:func:`mcpsync.registry.resolver.resolve`: each required or secret header and each ``{variable}`` is an
:class:`~mcpsync.registry.inputs.InputRequest` answered by ``inputs``, with the card's defaults and choices), then
the finished URL passes the :class:`~.safety.URLPolicy` (no local or private address, the card's own domain).
The remote's ``supportedProtocolVersions`` seed the protocol (:func:`protocol_for`): a card that lists a
2026-07-28 revision connects with ``server/discover`` first (as negotiation does), one that lists only handshake
revisions with ``initialize`` at once -- no ``server/discover`` probe. Pure computation apart from the input callback.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Union

from ..errors import UnsupportedProtocolVersion
from ..registry.inputs import InputCallback, inputs_from
from ..wire import protocol as P
from .errors import CardInvalid, CardNotFound, CardUnsafeURL
from .model import Remote, ServerCard
from .safety import URLPolicy

__all__ = ["CardConnection", "choose_remote", "prepare", "protocol_for", "server_json"]

#: Header names a card may not set: framing, routing and the protocol's own headers.
_FORBIDDEN_HEADERS = re.compile(
    r"^(host|content-length|content-type|transfer-encoding|connection|keep-alive|upgrade|te|trailer|accept|"
    r"proxy-.*|mcp-.*|last-event-id|cookie)$", re.IGNORECASE)
_SECRET_REF = re.compile(r"\$\$|\$\{secret:([^{}]*)\}")


def protocol_for(versions: Sequence[str]) -> str:
    """The client's ``protocol=`` for a remote that says it speaks ``versions``.

    A 2026-07-28-era revision mcpsync speaks: ``auto``, whose first request is that era's ``server/discover``
    (so nothing is probed, and a card that was wrong still falls back to the handshake). Only handshake-era
    revisions: the newest one both speak, so ``initialize`` is sent at once, without a ``server/discover``
    probe. No list: ``auto``. Raises UnsupportedProtocolVersion when the card lists only revisions mcpsync does
    not speak."""
    if not versions:
        return "auto"
    if any(version in versions for version in P.MODERN_VERSIONS):
        return "auto"
    for version in P.HANDSHAKE_VERSIONS:
        if version in versions:
            return version
    raise UnsupportedProtocolVersion(
        "the card lists protocol versions %s; mcpsync speaks %s" % (
            ", ".join(list(versions)[:10]), ", ".join(P.MODERN_VERSIONS + P.HANDSHAKE_VERSIONS)))


def choose_remote(card: ServerCard, remote: Union[None, int, str] = None) -> Tuple[int, Remote]:
    """The remote to use: index ``remote``, the first of type ``remote`` (``streamable-http``/``sse``), or by
    default the first Streamable HTTP one (else the first). Raises CardNotFound."""
    if not card.remotes:
        raise CardNotFound("the Server Card %s has no remote to connect to" % card.name, url=card.source_url)
    if isinstance(remote, int) and not isinstance(remote, bool):
        if not 0 <= remote < len(card.remotes):
            raise CardNotFound("the Server Card %s has no remote %d" % (card.name, remote), url=card.source_url)
        return remote, card.remotes[remote]
    wanted = remote or "streamable-http"
    for i, item in enumerate(card.remotes):
        if item.type == wanted:
            return i, item
    if remote is not None:
        raise CardNotFound("the Server Card %s has no %s remote" % (card.name, remote), url=card.source_url)
    return 0, card.remotes[0]


def server_json(card: ServerCard, index: int) -> Dict[str, Any]:
    """A ``server.json``-shaped document holding the card's identity and its remote ``index`` (what the registry
    resolver and installer read)."""
    return {"name": card.name, "version": card.version, "description": card.description,
            "remotes": [dict(card.remotes[index].raw)]}


def check_headers(headers: Mapping[str, str], source: str) -> None:
    """Refuse a header a card may not set (framing, routing, the protocol's own) or a value with a line break."""
    for name, value in headers.items():
        if _FORBIDDEN_HEADERS.match(name):
            raise CardInvalid("the Server Card at %s may not set the %s header" % (source, name), url=source)
        if any(c in value for c in "\r\n\x00"):
            raise CardInvalid("the Server Card at %s gives header %s a line break" % (source, name), url=source)


@dataclass(frozen=True)
class CardConnection:
    """What connecting to a card's remote takes.

    Attributes:
        card / remote / index: the card and the remote chosen.
        url: the remote's URL, variables filled in and checked.
        headers: the headers to send (secret values included: never logged, not in ``repr``).
        transport: ``http`` or ``sse``.
        protocol: the seeded ``protocol=`` (see :func:`protocol_for`).
    """

    card: ServerCard
    remote: Remote
    index: int
    url: str
    headers: Dict[str, str] = field(repr=False)
    transport: str
    protocol: str

    def client_options(self) -> Dict[str, Any]:
        """Keyword arguments for :class:`mcpsync.Client` (with :attr:`url` as its target)."""
        options: Dict[str, Any] = {"transport": self.transport, "protocol": self.protocol}
        if self.headers:
            options["headers"] = dict(self.headers)
        return options


def resolve_remote(card: ServerCard, index: int, inputs: InputCallback, config_name: Optional[str] = None) -> Any:
    """The registry resolver's :class:`~mcpsync.registry.resolver.ResolvedServer` for the card's remote ``index``
    (secrets as references). A URL that is not http(s) once filled in raises CardUnsafeURL; any other shape
    problem CardInvalid."""
    from ..registry.errors import InvalidServerJson
    from ..registry.resolver import resolve

    try:
        return resolve(server_json(card, index), inputs, prefer="remote", config_name=config_name)
    except InvalidServerJson as exc:
        kind = CardUnsafeURL if "after substitution" in exc.message else CardInvalid
        raise kind("the Server Card %s: %s" % (card.source_url or card.name, exc.message),
                   url=card.source_url) from None


def check_remote_url(policy: URLPolicy, url: str, anchor: str, secrets: Mapping[str, str]) -> None:
    """``policy.check_remote(url, anchor)``, with every secret value (a secret URL variable) masked in the
    error it raises."""
    from .errors import CardError

    try:
        policy.check_remote(url, anchor)
    except CardError as exc:
        message, where = exc.message, exc.url
        for value in secrets.values():
            if value:
                message, where = message.replace(value, "***"), where.replace(value, "***")
        raise type(exc)(message, url=where) from None


def _reveal(text: str, secrets: Mapping[str, str]) -> str:
    return _SECRET_REF.sub(lambda m: "$" if m.group(0) == "$$" else secrets.get(m.group(1), ""), text)


def prepare(
    card: ServerCard,
    *,
    remote: Union[None, int, str] = None,
    inputs: Union[InputCallback, Mapping[str, Any], None] = None,
    headers: Optional[Mapping[str, str]] = None,
    policy: Optional[URLPolicy] = None,
) -> CardConnection:
    """The :class:`CardConnection` of ``card``'s remote. ``inputs`` answers the card's headers and variables by
    name (a mapping, or a callback taking an InputRequest); ``headers`` are sent as given (they also answer the
    card's headers of the same name). Raises MissingInput / InvalidInput (an unanswered required input, a value
    outside its choices), CardInvalid, CardUnsafeURL, CardDomainMismatch, UnsupportedProtocolVersion."""
    policy = policy or URLPolicy()
    index, chosen = choose_remote(card, remote)
    given = dict(headers or {})
    if callable(inputs):
        user: InputCallback = inputs
        values: Dict[str, Any] = {}
    else:
        values = dict(inputs or {})
        user = inputs_from({})
    for name, value in given.items():
        values.setdefault(name, value)

    def answer(request: Any) -> Any:
        for key in request.names:
            if key in values:
                return values[key]
        return user(request)

    resolved = resolve_remote(card, index, answer, "card")
    secrets = {key: value for key, value in resolved.secrets.items()}
    url = _reveal(resolved.url or "", secrets)
    sent = {name: _reveal(value, secrets) for name, value in resolved.headers.items()}
    check_headers(sent, card.source_url or "<inline>")
    for name, value in given.items():
        sent[name] = value
    check_remote_url(policy, url, card.source_url, secrets)
    return CardConnection(card, chosen, index, url, sent, chosen.transport,
                          protocol_for(chosen.supported_protocol_versions))
