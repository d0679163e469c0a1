"""Connect to the server a Server Card describes: :func:`connect` (opened) and :func:`client_for` (not yet
opened; an unopened client), :func:`load_card` and :func:`discover`.

Blocking: fetching the card blocks for its HTTP requests (see :class:`~.fetch.CardFetcher`); :func:`connect`
also blocks for the connection (up to ``connect_timeout``). Any thread may call these.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

from ..errors import HTTPStatusError, ProtocolError, RemoteError
from ..registry.inputs import InputCallback
from .connection import CardConnection, prepare
from .fetch import CardFetcher
from .model import ServerCard, parse_card
from .safety import AllowLocal

if TYPE_CHECKING:
    from ..client.client import Client

__all__ = ["CardSource", "client_for", "connect", "discover", "fetcher_for", "load_card", "resolve_card"]

log = logging.getLogger(__name__)

#: A card URL, a fetched :class:`ServerCard`, or a card document (a dict).
CardSource = Union[str, ServerCard, Mapping[str, Any]]

_FETCH_KEYS = ("pool", "cache", "allow_local", "allow_other_domains", "resolver", "max_bytes", "max_redirects",
               "max_cards", "fetch_timeout")


def fetcher_for(options: Mapping[str, Any]) -> CardFetcher:
    """A :class:`CardFetcher` from card keyword arguments, honouring the client's ``verify`` and ``proxies`` /
    ``trust_env`` settings when given."""
    proxies = options.get("proxies")
    proxy = None
    if isinstance(proxies, str):
        proxy = proxies
    elif isinstance(proxies, Mapping):
        proxy = proxies.get("https") or proxies.get("all") or proxies.get("http")
    kwargs: Dict[str, Any] = {k: options[k] for k in _FETCH_KEYS if k in options and k != "fetch_timeout"}
    if "fetch_timeout" in options:
        kwargs["timeout"] = options["fetch_timeout"]
    return CardFetcher(verify=options.get("verify", True), proxy=proxy,
                       trust_env=bool(options.get("trust_env", True)), **kwargs)


def load_card(source: CardSource, fetcher: CardFetcher) -> ServerCard:
    """``source`` as a checked :class:`ServerCard` (a URL is fetched through ``fetcher``; a dict is validated,
    its domain rule anchored nowhere: pass a URL to have it checked)."""
    if isinstance(source, ServerCard):
        return source
    if isinstance(source, str):
        return fetcher.fetch_card(source)
    card = parse_card(dict(source), "")
    fetcher.check_remotes(card)
    return card


def _split(options: Dict[str, Any]) -> Dict[str, Any]:
    return {k: options.pop(k) for k in _FETCH_KEYS if k in options}


def resolve_card(
    source: CardSource,
    *,
    remote: Union[None, int, str] = None,
    inputs: Union[InputCallback, Mapping[str, Any], None] = None,
    headers: Optional[Mapping[str, str]] = None,
    fetcher: Optional[CardFetcher] = None,
    **options: Any,
) -> CardConnection:
    """Fetch (or take) the card and prepare its remote: the :class:`~.connection.CardConnection`. ``options``
    are the fetch settings (``allow_local``, ``allow_other_domains``, ``cache``, ``pool``, ``verify``,
    ``proxies``, ``max_bytes``...)."""
    own = fetcher is None
    fetcher = fetcher or fetcher_for(options)
    try:
        card = load_card(source, fetcher)
        return prepare(card, remote=remote, inputs=inputs, headers=headers, policy=fetcher.policy)
    finally:
        if own:
            fetcher.close()


def _prepared(source: CardSource, remote: Union[None, int, str], inputs: Any, headers: Any,
              fetcher: Optional[CardFetcher], options: Dict[str, Any]) -> Tuple[CardConnection, Dict[str, Any]]:
    from ..manager.flat import flat_options, grouped

    options = flat_options(options)  # an http=HTTPOptions(verify=...) is honoured by the fetch too
    fetch_options = _split(options)
    for key in ("verify", "proxies", "trust_env"):
        if key in options:
            fetch_options[key] = options[key]
    prepared = resolve_card(source, remote=remote, inputs=inputs, headers=headers, fetcher=fetcher,
                            **fetch_options)
    client_options = prepared.client_options()  # the caller's headers= are in it, over the card's
    client_options.setdefault("name", prepared.card.name.rsplit("/", 1)[-1])
    client_options.update(options)
    return prepared, grouped(client_options, remote=True)


def client_for(
    source: CardSource,
    *,
    remote: Union[None, int, str] = None,
    inputs: Union[InputCallback, Mapping[str, Any], None] = None,
    headers: Optional[Mapping[str, str]] = None,
    fetcher: Optional[CardFetcher] = None,
    allow_local: AllowLocal = False,
    allow_other_domains: bool = False,
    factory: Optional[Callable[..., "Client"]] = None,
    **options: Any,
) -> "Client":
    """A :class:`mcpsync.Client` for the card's remote, not yet opened (use ``with`` or ``open()``); ``factory``
    builds it instead of ``Client`` (a subclass).

    ``source`` is a card URL, a :class:`ServerCard` or a card document. ``inputs`` answers the card's headers
    and URL variables by name; ``headers`` are sent as given. ``allow_local`` (True, or a list of hosts) allows
    plain http and local/private addresses, for local development and tests; ``allow_other_domains`` accepts a
    remote on another domain than the card's. Fetch settings (``cache``, ``pool``, ``max_bytes``,
    ``fetch_timeout``) go to the fetcher; every other keyword is :class:`~mcpsync.Client`'s (its ``verify``,
    ``proxies`` and ``trust_env`` are honoured by the fetch too; ``protocol=`` overrides the card's seed).
    """
    from ..client.client import Client

    options.update(allow_local=allow_local, allow_other_domains=allow_other_domains)
    prepared, client_options = _prepared(source, remote, inputs, headers, fetcher, dict(options))
    return (factory or Client)(prepared.url, **client_options)


def connect(
    source: CardSource,
    *,
    remote: Union[None, int, str] = None,
    inputs: Union[InputCallback, Mapping[str, Any], None] = None,
    headers: Optional[Mapping[str, str]] = None,
    fetcher: Optional[CardFetcher] = None,
    allow_local: AllowLocal = False,
    allow_other_domains: bool = False,
    **options: Any,
) -> "Client":
    """Like :func:`client_for`, and opened (blocks up to ``connect_timeout``). When the card's protocol list
    was wrong (the server refuses the handshake revision the card seeded: a protocol error, a JSON-RPC error or
    an HTTP error status), the connection is made again with ``protocol="auto"`` (the live server wins over the
    card), with a warning; an error of the second attempt is raised."""
    from ..client.client import Client

    user_protocol = "protocol" in options
    options.update(allow_local=allow_local, allow_other_domains=allow_other_domains)
    prepared, client_options = _prepared(source, remote, inputs, headers, fetcher, dict(options))
    client = Client(prepared.url, **client_options)
    try:
        client.open()
    except (ProtocolError, RemoteError, HTTPStatusError) as exc:
        client.close()
        if user_protocol or prepared.protocol == "auto":
            raise
        log.warning("[%s] the server does not speak %s as its card says (%s); negotiating instead",
                    client_options.get("name"), prepared.protocol, exc)
        client = Client(prepared.url, **dict(client_options, protocol="auto"))
        try:
            client.open()
        except BaseException:
            client.close()
            raise
    except BaseException:
        client.close()
        raise
    return client


def discover(
    domain: str,
    *,
    identifier: Optional[str] = None,
    fetcher: Optional[CardFetcher] = None,
    **options: Any,
) -> List[ServerCard]:
    """The Server Cards of ``domain``'s AI Catalog (``https://{domain}/.well-known/ai-catalog.json``; a URL is
    taken as the catalog's), each fetched and checked. ``options`` are the fetch settings."""
    own = fetcher is None
    fetcher = fetcher or fetcher_for(options)
    try:
        return fetcher.discover(domain, identifier)
    finally:
        if own:
            fetcher.close()
