"""What both remote transports start from and the lifecycle state they share: :class:`RemoteEndpoint`.

Streamable HTTP (:mod:`.transport`) and legacy HTTP+SSE (:mod:`.legacy_sse`) are built the same way and end the
same way: a checked URL, the HTTP options, a display name, the server's connections
(:func:`~mcpsync.transports.http.net.make_net`) and a rate-limited log of dropped frames; then the sink they
report to, a lock, the ``closing`` event every wait of their threads watches, the ``closed`` flag and the
once-only report of the end. Each transport holds one :class:`RemoteEndpoint` (composition) and keeps only what
is its own (calls in flight, the handshake, the legacy stream).
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Dict, Optional
from urllib.parse import urlsplit

from ...errors import ConfigError, ConnectionClosed
from ...wire.drops import DropLog
from ..base import TransportSink
from .contract import HTTPNet, check_url
from .net import make_net
from .options import split_options

__all__ = ["RemoteEndpoint"]

logger = logging.getLogger(__name__)


class RemoteEndpoint:
    """One remote transport's endpoint and lifecycle (see the module docstring).

    Built in the transport's constructor; nothing blocks (no connection is opened). ``url``, ``options``,
    ``name``, ``net``, ``drops``, ``lock``, ``closing`` and ``max_retry_delay`` never change. ``closed`` and
    ``sink`` are the transport's to set: ``closed`` under ``lock`` (read without it: a stale read only delays
    noticing by one step), ``sink`` once by :meth:`attach`. :meth:`report_close` is thread-safe.

    Raises :class:`~mcpsync.ConfigError` for an invalid URL or an unknown option (``what`` names the
    transport in the message).
    """

    __slots__ = (
        "url",
        "options",
        "name",
        "net",
        "drops",
        "max_retry_delay",
        "lock",
        "closing",
        "closed",
        "sink",
        "_close_reported",
    )

    def __init__(
        self, url: str, name: Optional[str], options: Dict[str, Any], what: str, max_retry_delay: float = 30.0
    ) -> None:
        self.url = check_url(url)
        self.options, rest = split_options(dict(options))
        if rest:
            raise ConfigError("unknown %s transport option(s): %s" % (what, ", ".join(sorted(rest))))
        self.name: str = name or urlsplit(url).hostname or "server"
        self.net: HTTPNet = make_net(self.url, self.options, self.name)
        bind = getattr(self.options.auth, "bind_http", None)
        if callable(bind):  # e.g. OAuth: its discovery and token requests follow this server's proxies and TLS
            from .oauth_route import OAuthRoute

            bind(OAuthRoute(self.options))
        self.drops = DropLog(logger, self.name)  # malformed events and frames dropped by the readers
        self.max_retry_delay = float(max_retry_delay)  # cap in seconds of a reconnect backoff
        self.lock = threading.Lock()  # guards the transport's state and its calls
        self.closing = threading.Event()  # set by close(): every wait of the transport's threads ends
        self.closed = False
        self.sink: Optional[TransportSink] = None
        self._close_reported = False

    def attach(self, sink: TransportSink) -> None:
        """Remember the sink the transport reports to; a ``ConnectionClosed`` once the transport is closed."""
        if self.closed:
            raise ConnectionClosed("transport is closed", server=self.name)
        self.sink = sink

    def report_close(self, exc: Optional[BaseException]) -> None:
        """Tell the sink that the transport ended (``exc``: why, None for ``close()``), once. Any thread."""
        with self.lock:
            if self._close_reported:
                return
            self._close_reported = True
        sink = self.sink
        if sink is not None:
            sink.on_close(exc)

    def after_fork_in_child(self) -> None:
        """In a forked child: closed, and the child's copies of the sockets closed (no shutdown, nothing sent, no
        lock taken: the connections and the server session stay the parent's)."""
        self.closed = True
        self.net.after_fork_in_child()
