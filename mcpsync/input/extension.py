"""Resumable input as a client extension: :class:`DeferInput`, and the per-call switch :func:`deferring`.

``Client(target, extensions=[mcpsync.input.DeferInput()])`` makes every call of that client defer the server's
questions (:class:`~mcpsync.input.InputRequired`) instead of asking its handlers; ``with deferring(client,
False):`` turns that off for the calls of one thread. ``DeferInput(every_call=False)`` defers only the calls
inside ``with deferring(client):``. See docs/guides/input.md.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Iterator, Optional

from ..errors import ConfigError
from .deferral import InputDeferral

if TYPE_CHECKING:  # pragma: no cover
    from ..client.client import Client
    from .parked import ParkedInputs

__all__ = ["DeferInput", "deferral_of", "deferring", "pending_input"]


class DeferInput:
    """The resumable-input extension: ``Client(..., extensions=[DeferInput(timeout=300.0)])``.

    Immutable; one object may serve many clients (each gets its own :class:`~mcpsync.input.deferral.InputDeferral`
    hooks from :meth:`attach`).

    Args:
        timeout: seconds a handshake-era question parked for :func:`~mcpsync.input.resume` waits for its
            answer (None: no limit); past it the server gets ``cancel`` (elicitation) or an error (sampling,
            roots). The 2026-07-28 era keeps nothing open: there it does not apply.
        every_call: True (the default): every call of the client defers, and the client declares the
            ``elicitation`` capability (the host answers); :func:`deferring` ``(client, False)`` turns it off
            per call. False: only calls inside :func:`deferring` ``(client)`` defer, and in the 2026-07-28 era
            such a call declares ``elicitation`` on its own request.

    Raises:
        ConfigError: a negative or non-numeric ``timeout``.
    """

    __slots__ = ("timeout", "every_call")

    def __init__(self, timeout: Optional[float] = 300.0, *, every_call: bool = True) -> None:
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0):
            raise ConfigError("DeferInput(timeout=...) takes seconds (a number >= 0) or None, not %r" % (timeout,))
        self.timeout = None if timeout is None else float(timeout)
        self.every_call = bool(every_call)

    def attach(self, client: "Client") -> InputDeferral:
        """The hooks of this extension for ``client`` (called once, by the client being built; opens nothing)."""
        return InputDeferral(client, self.timeout, self.every_call)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DeferInput):
            return NotImplemented
        return (self.timeout, self.every_call) == (other.timeout, other.every_call)

    def __hash__(self) -> int:
        return hash((DeferInput, self.timeout, self.every_call))

    def __repr__(self) -> str:
        return "DeferInput(timeout=%r, every_call=%r)" % (self.timeout, self.every_call)


def deferral_of(client: Any) -> InputDeferral:
    """The :class:`~mcpsync.input.deferral.InputDeferral` hooks :class:`DeferInput` attached to ``client``.

    Raises:
        ConfigError: the client was built without ``extensions=[mcpsync.input.DeferInput()]``.
    """
    finder = getattr(client, "extension", None)
    hooks = finder(InputDeferral) if callable(finder) else None
    if not isinstance(hooks, InputDeferral):
        raise ConfigError(
            "this client does not defer input: build it with extensions=[mcpsync.input.DeferInput()]",
            server=getattr(client, "name", None),
        )
    return hooks


@contextlib.contextmanager
def deferring(client: "Client", enabled: bool = True) -> Iterator[None]:
    """Within the block, the calls this thread makes on ``client`` defer input (``enabled=False``: they ask the
    handlers instead), whatever ``DeferInput(every_call=...)`` says. Thread-scoped: other threads keep the
    client's setting. Nests (the innermost wins). Blocks nothing itself.

    In the handshake era a server's question cannot be tied to one call (over stdio it arrives as a request of
    its own): a client that defers every call parks every question, and one that does not parks them while
    some ``deferring(client)`` block is open, on any thread.

    Raises:
        ConfigError: ``client`` has no :class:`DeferInput` extension.
    """
    with deferral_of(client).scope(bool(enabled)):
        yield


def pending_input(client: "Client") -> "ParkedInputs":
    """The handshake era's questions ``client`` parked, waiting for :func:`~mcpsync.input.resume`: a bounded
    queue (``.get(timeout)`` blocks up to ``timeout`` seconds; iterating takes what waits now). Thread-safe.

    Raises:
        ConfigError: ``client`` has no :class:`DeferInput` extension.
    """
    return deferral_of(client).parked
