"""The narrow hooks an extension has into the client core.

An extension subclasses :class:`ClientExtension` and overrides what it needs; every hook does nothing
by default. The core calls them at fixed points and knows nothing else of the extension:

* the opening of a connection: :meth:`~ClientExtension.before_open` (before a transport is chosen),
  :meth:`~ClientExtension.prior` (an outcome of negotiation known without asking the server),
  :meth:`~ClientExtension.negotiated` (a negotiation with the server succeeded),
  :meth:`~ClientExtension.opened` (the client is open);
* what the client declares: :meth:`~ClientExtension.capabilities` (the client capabilities of ``initialize``
  and of the 2026-07-28 ``_meta`` envelope; an extension that answers server requests in the user's place
  declares them there);
* every blocking 2026-07-28 request: :meth:`~ClientExtension.handle`, a
  :class:`~mcpsync.client.middleware.Middleware` step around the wire request itself, innermost (inside
  the retry, tracing and interceptor steps; outside the ``input_required`` rounds, which run once ``next``
  returned). ``next`` stamps the ``_meta`` envelope afresh each time, so calling it again after a
  reconnect sends the request as the new connection needs it;
* the 2026-07-28 request as it goes on the wire: :meth:`~ClientExtension.stamped` (its fresh params and
  ``_meta``, which the hook may change);
* ``input_required`` answers: :meth:`~ClientExtension.input_rounds_before` and
  :meth:`~ClientExtension.input_required` (an exception to raise instead of asking the user's handlers);
* server requests: :meth:`~ClientExtension.takes_server_request` and
  :meth:`~ClientExtension.server_request` (on a handler thread, never the reader);
* :meth:`~ClientExtension.close`, when the client closes;
* listings: :meth:`~ClientExtension.listed` (a listing page was kept in memory) and
  :meth:`~ClientExtension.list_changed` (a ``notifications/*/list_changed`` arrived; on the reader
  thread: quick, no I/O that can block).

Hooks run on the thread that opens the client or calls its method (``list_changed``: the reader
thread). They must not raise except as documented.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Protocol

from .middleware import Middleware

__all__ = ["ClientExtension", "Extension"]


class ClientExtension(Middleware):
    """Base class of the core's extension hooks; see the module documentation."""

    def before_open(self, target: Any) -> None:
        """Before a transport is chosen for ``target`` (may steer the choice)."""

    def prior(self, session: Any) -> Optional[Any]:
        """A :class:`~mcpsync.client.negotiate.Negotiated` known without asking the server, or None (the default)
        to negotiate as usual. ``session`` is the freshly started session."""
        return None

    def negotiated(self, agreed: Any, transport: Optional[str]) -> None:
        """A negotiation with the server succeeded over ``transport`` (``"stdio"``, ``"http"``, ``"sse"``)."""

    def opened(self, seed: Any) -> None:
        """The client is open. ``seed(method, cursor, page, seconds)`` puts a listing page into its in-memory
        cache for ``seconds``."""

    def capabilities(self, caps: Dict[str, Any]) -> None:
        """Add what this extension answers to the client capabilities ``caps`` (change it in place), as built for
        ``initialize`` and for the 2026-07-28 envelope. The envelope is built once per configuration and
        reused, so the answer must depend only on the extension's own settings, never on the call; a per-request
        change goes through :meth:`stamped`."""

    def listed(self, method: str, cursor: Optional[str], result: Any) -> None:
        """A listing page (``tools/list``...) was fetched and kept in memory."""

    def list_changed(self, method_prefix: str) -> None:
        """``notifications/<method_prefix>list_changed`` arrived (``"tools/"``...): on the reader thread."""

    def stamped(self, params: Dict[str, Any]) -> None:
        """A 2026-07-28 request's params (a fresh dict with a fresh ``_meta``) just before they are sent."""

    def input_rounds_before(self) -> int:
        """How many ``input_required`` rounds came before this request on this thread (a resumed call)."""
        return 0

    def input_required(
        self, method: str, params: Dict[str, Any], result: Dict[str, Any], rounds: int
    ) -> Optional[BaseException]:
        """A 2026-07-28 ``input_required`` result: an exception to raise instead of asking the handlers, or None."""
        return None

    def takes_server_request(self, method: str) -> bool:
        """Whether :meth:`server_request` answers this server request instead of the user's handlers."""
        return False

    def server_request(self, method: str, params: Dict[str, Any], ctx: Any) -> Any:
        """The answer to a server request :meth:`takes_server_request` took (on a handler thread)."""
        raise NotImplementedError

    def close(self) -> None:
        """The client is closing: release what the extension holds (wake waiting threads)."""


class Extension(Protocol):
    """An entry of ``Client(extensions=[...])``: the registration hook. The client treats every entry alike.

    The client calls :meth:`attach` once, while it is built, and keeps the returned hooks; it never looks an
    extension up by module name. ``attach`` must not block nor open anything.
    """

    def attach(self, client: Any) -> ClientExtension:
        """The hooks of this extension for ``client`` (a :class:`mcpsync.Client` being built)."""
        ...
