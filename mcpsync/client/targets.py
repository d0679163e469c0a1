"""What a client connects to: a command list (stdio), an ``http(s)://`` URL (Streamable HTTP, falling back to
legacy SSE), or a :class:`~mcpsync.transports.base.Transport`. Checks a target and its options up front
(:func:`target_name`), names the cache partition of a target (:func:`cache_key`), and lists the transports to try
(:func:`transport_candidates`). Pure computation; each transport module is imported only when one is built.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from ..errors import ConfigError
from ..transports.base import Transport

__all__ = ["Target", "cache_key", "target_name", "transport_candidates"]

#: What a client connects to: a command list (stdio), an ``http(s)://`` URL, or a Transport.
Target = Union[Sequence[str], str, Transport]


def target_name(target: Target, name: Optional[str], remote_options: Dict[str, Any]) -> str:
    """The display name of a client for ``target`` (``name`` when given); raises ConfigError for a bad target
    or for options that do not fit it (remote options for a stdio command)."""
    if isinstance(target, Transport):
        return name or target.name
    if isinstance(target, str):
        if remote_options.get("transport") not in (None, "auto", "http", "sse"):
            raise ConfigError("transport must be 'auto', 'http' or 'sse'")
        from urllib.parse import urlsplit

        parts = urlsplit(target)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigError("a server URL must be http(s)://host/...; for a command pass a list of strings")
        return name or parts.hostname or "server"
    if isinstance(target, (list, tuple)) and target and all(isinstance(c, str) for c in target):
        if remote_options:
            raise ConfigError(
                "option(s) for remote servers given for a stdio server: %s" % ", ".join(sorted(remote_options))
            )
        from ..transports.stdio import command_name

        return name or command_name(target)
    raise ConfigError("target must be a command list, an http(s) URL or a Transport")


def cache_key(target: Target, cwd: Any) -> Any:
    """The identity of a target for what clients sharing a :class:`~mcpsync.client.memory.ServerMemory` learned
    about it (the negotiated era)."""
    if isinstance(target, str):
        from urllib.parse import urlsplit

        p = urlsplit(target)
        return ("url", p.scheme, p.netloc.lower(), p.path)
    if isinstance(target, Transport):
        return ("transport", target.describe())
    return ("cmd", tuple(target), cwd)


def transport_candidates(
    target: Target,
    name: str,
    connect_timeout: Optional[float],
    stdio_options: Dict[str, Any],
    remote_options: Dict[str, Any],
    prefer: Optional[str] = None,
) -> List[Tuple[str, Callable[[], Transport]]]:
    """The ``(kind, factory)`` pairs to try in order; each factory builds a fresh, unstarted transport.
    ``prefer``: for a URL with ``transport="auto"``, the remote transport to try first (the one that last worked,
    from the client's :class:`~mcpsync.client.memory.ServerMemory`)."""
    if isinstance(target, Transport):
        return [(target.kind, lambda: target)]
    if isinstance(target, str):
        from ..transports.http.select import candidates

        return candidates(
            target,
            name=name,
            connect_timeout=connect_timeout,
            prefer=prefer,
            **remote_options,
        )
    from ..transports.stdio import StdioTransport

    return [("stdio", lambda: StdioTransport(target, name=name, **stdio_options))]
