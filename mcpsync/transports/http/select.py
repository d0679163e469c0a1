"""Which remote transport to try for a URL: Streamable HTTP, legacy HTTP+SSE, or both in order.

The one module that knows both remote transports (:mod:`.http` and :mod:`.sse`); the shared
remote code in :mod:`.remote` imports neither. Each transport module is imported only when a
transport of its kind is built.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Callable, Dict, List, Optional, Tuple

from ...errors import ConfigError
from ..base import Transport
from .remote import check_url

__all__ = ["candidates", "make_transport", "transport_chain"]


#: Options only one remote transport takes; with ``transport="auto"`` each is passed to its own kind only.
_ONLY_FOR = MappingProxyType(
    {"http": ("get_stream", "max_stream_retries"), "sse": ("reconnect", "max_reconnect_attempts")}
)


def _for_kind(kind: str, options: Dict[str, Any]) -> Dict[str, Any]:
    other = {k for other_kind, names in _ONLY_FOR.items() if other_kind != kind for k in names}
    return {k: v for k, v in options.items() if k not in other}


def make_transport(kind: str, url: str, **options: Any) -> Transport:
    """Build one remote transport: ``kind`` is "http" or "sse"."""
    if kind == "http":
        from .transport import StreamableHTTPTransport

        return StreamableHTTPTransport(url, **options)
    if kind == "sse":
        from .legacy_sse import SSETransport

        return SSETransport(url, **options)
    raise ConfigError("transport must be 'auto', 'http' or 'sse', not %r" % (kind,))


def transport_chain(
    url: str, transport: str = "auto", *, prefer: Optional[str] = None, **options: Any
) -> List[Tuple[str, Callable[[], Transport]]]:
    """The ordered ``(kind, factory)`` pairs to try for ``url``.

    ``"http"`` / ``"sse"`` force one transport. ``"auto"`` tries Streamable HTTP then
    legacy HTTP+SSE, starting with ``prefer`` (the kind that last worked for this URL, which the
    caller remembers: a client keeps it in its :class:`~mcpsync.client.memory.ServerMemory`). Each
    factory builds a fresh, unstarted transport. Move to the next pair only when
    :func:`.remote.should_fall_back` says so. Pure computation (no state kept here); thread-safe.
    """
    check_url(url)
    if transport in ("http", "sse"):
        kinds = [transport]
        wrong = sorted(k for other, names in _ONLY_FOR.items() if other != transport for k in names if k in options)
        if wrong:
            raise ConfigError(
                "option(s) %s apply to the %s transport only, not to transport=%r"
                % (", ".join(wrong), "legacy SSE" if transport == "http" else "Streamable HTTP", transport)
            )
    elif transport == "auto":
        kinds = ["http", "sse"]
        if prefer == "sse":
            kinds = ["sse", "http"]
    else:
        raise ConfigError("transport must be 'auto', 'http' or 'sse', not %r" % (transport,))

    def factory(kind: str) -> Callable[[], Transport]:
        return lambda: make_transport(kind, url, **_for_kind(kind, options))

    return [(k, factory(k)) for k in kinds]


#: What :meth:`mcpsync.Client.open` calls: ``candidates(url, transport=..., prefer=..., name=..., **options)``.
candidates = transport_chain
