"""What clients learned about the servers they connected to: :class:`ServerMemory`.

Each :class:`~mcpsync.Client` owns one (``client.memory``); the clients of a :class:`~mcpsync.Manager` share the
manager's (``manager.memory``), and clients built with one ``ClientOptions(memory=...)`` share that one. Nothing
is kept at module level: the memory lives and dies with its owner.
"""

from __future__ import annotations

import threading
from typing import Any, Dict, Optional
from urllib.parse import urlsplit

from .. import _forks
from ..errors import ConfigError

__all__ = ["ServerMemory"]


class ServerMemory:
    """Per-server facts learned while connecting, reused by later connections of the clients that share it.

    * **The protocol era** each server spoke (keyed by :func:`~mcpsync.client.targets.cache_key`: the command and
      working directory, or the URL), so that ``protocol="auto"`` skips the ``server/discover`` probe of a server
      known to speak only the ``initialize`` handshake. A verdict that fails is forgotten and probed again.
      **Single flight**: while one connection probes a server, the others connecting to it at the same time wait
      for its verdict (:meth:`begin_probe`) instead of each probing, so a fleet of clients sharing one memory
      pays one probe per server.
    * **The remote transport** that worked for a URL with ``transport="auto"`` (Streamable HTTP or legacy
      HTTP+SSE), tried first next time.

    Thread-safe: every method takes one internal lock briefly and never blocks on I/O. Usable in a child process
    made by ``os.fork()``: the facts carry over; probes under way in the parent do not (the child probes itself).
    Holds no thread, socket or file, so there is nothing to close; the memory goes away with its last owner.
    """

    def __init__(self) -> None:
        self._pid = _forks.pid()
        self._lock = threading.Lock()
        self._eras: Dict[Any, str] = {}
        self._probing: Dict[Any, threading.Event] = {}
        self._transports: Dict[str, str] = {}
        self._done = threading.Event()  # handed to a waiter when a verdict exists already
        self._done.set()

    def _guard(self) -> threading.Lock:
        """The lock (in a forked child: a new one, and no probes of the parent's threads to wait for)."""
        if self._pid != _forks.pid():
            self._lock = threading.Lock()  # a thread of the parent may have held the old one at fork time
            self._probing = {}
            self._pid = _forks.pid()
        return self._lock

    # -- protocol eras ---------------------------------------------------------------------------------------

    def era(self, key: Any) -> Optional[str]:
        """The protocol revision the server ``key`` last agreed on, or None."""
        with self._guard():
            return self._eras.get(key)

    def remember_era(self, key: Any, version: str) -> None:
        """Record that the server ``key`` speaks protocol revision ``version``."""
        with self._guard():
            self._eras[key] = version

    def forget_era(self, key: Any) -> None:
        """Forget the verdict for ``key`` (it failed, or the server changed): the next connection probes."""
        with self._guard():
            self._eras.pop(key, None)

    def begin_probe(self, key: Any) -> Optional[threading.Event]:
        """None: the caller probes ``key`` and must call :meth:`end_probe`. Else an event to wait on: the probe
        another connection runs (set when it ends), or an event already set when a verdict exists."""
        with self._guard():
            if key in self._eras:
                return self._done
            running = self._probing.get(key)
            if running is not None:
                return running
            self._probing[key] = threading.Event()
            return None

    def end_probe(self, key: Any) -> None:
        """The probe of ``key`` ended (with a verdict or not): wake whoever waits for it. Idempotent."""
        with self._guard():
            event = self._probing.pop(key, None)
        if event is not None:
            event.set()

    # -- remote transports ------------------------------------------------------------------------------------

    @staticmethod
    def _url_key(url: str) -> str:
        parts = urlsplit(url)
        return "%s://%s%s?%s" % (parts.scheme.lower(), (parts.netloc or "").lower(), parts.path or "/", parts.query)

    def transport(self, url: str) -> Optional[str]:
        """The remote transport (``"http"`` or ``"sse"``) that last worked for ``url``, or None."""
        with self._guard():
            return self._transports.get(self._url_key(url))

    def remember_transport(self, url: str, kind: str) -> None:
        """Record that transport ``kind`` (``"http"`` or ``"sse"``) worked for ``url``; raises
        :class:`~mcpsync.errors.ConfigError` (a ValueError) for another kind."""
        if kind not in ("http", "sse"):
            raise ConfigError("a remembered transport is 'http' or 'sse', not %r" % (kind,))
        with self._guard():
            self._transports[self._url_key(url)] = kind

    def forget_transport(self, url: str) -> None:
        """Forget which transport worked for ``url``."""
        with self._guard():
            self._transports.pop(self._url_key(url), None)

    def clear(self) -> None:
        """Forget everything (probes under way still end normally)."""
        with self._guard():
            self._eras.clear()
            self._transports.clear()
