"""The registry client's HTTP session: a ``requests`` session whose answers are read within the call's deadline.

:func:`tracking_session` mounts connection classes whose responses read through :class:`DeadlineReader`: while
the caller's ``slot`` dict holds a :class:`~.deadline.Deadline` (key ``"deadline"``), every read of the status
line, the headers and the body waits at most what is left of it (the socket's timeout is clipped before each
read), so a peer that trickles its answer a byte at a time cannot hold a call past its deadline, and no thread
is needed to interrupt it. The classes are made per session (no module state); the same subclassing works on
a plain ``urllib3`` ``PoolManager`` (its ``pool_classes_by_scheme``). A session the caller brings
(``RegistryClient(session=...)``), and a request through a proxy, keep only the per-read bounds.

Thread-safety: one slot per session; the registry client serializes its requests, so one deadline at a time.
"""

from __future__ import annotations

import http.client
import io
import socket
from typing import Any, Dict, Optional

__all__ = ["DeadlineReader", "tracking_session"]


class DeadlineReader(io.RawIOBase):
    """A response's socket reader whose every read waits at most what is left of ``deadline`` (its
    ``remaining()``): the socket's timeout is clipped to that before the read and restored after it, and once
    nothing is left a read raises ``socket.timeout`` without waiting. Blocks at most that long per read."""

    def __init__(self, inner: Any, sock: socket.socket, deadline: Any) -> None:
        super().__init__()
        self._inner = inner
        self._sock = sock
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> Optional[int]:
        left = self._deadline.remaining()
        if left <= 0.0:
            raise socket.timeout("the call's deadline passed")
        before = self._sock.gettimeout()
        self._sock.settimeout(left if before is None else min(before, left))
        try:
            n: Optional[int] = self._inner.readinto(buffer)
            return n
        finally:
            try:
                self._sock.settimeout(before)
            except OSError:  # closed meanwhile
                pass

    def close(self) -> None:
        try:
            self._inner.close()
        finally:
            super().close()


def tracking_session(slot: Dict[str, Any]) -> Any:
    """A new ``requests.Session`` whose plain (non-proxied) http and https requests note their socket in ``slot``."""
    import requests
    from requests.adapters import HTTPAdapter
    from urllib3.connection import HTTPConnection, HTTPSConnection
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

    class Response(http.client.HTTPResponse):
        def __init__(self, sock: Any, *args: Any, **kwargs: Any) -> None:
            super().__init__(sock, *args, **kwargs)
            deadline = slot.get("deadline")
            if deadline is not None and isinstance(self.fp, io.BufferedReader):  # nothing was read yet
                raw = self.fp.detach()  # the makefile() reader lets go of its SocketIO without closing it
                self.fp = io.BufferedReader(DeadlineReader(raw, sock, deadline))

    class Conn(HTTPConnection):
        response_class = Response

    class SecureConn(HTTPSConnection):
        response_class = Response

    class Pool(HTTPConnectionPool):
        ConnectionCls = Conn

    class SecurePool(HTTPSConnectionPool):
        ConnectionCls = SecureConn

    class Adapter(HTTPAdapter):
        def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
            super().init_poolmanager(*args, **kwargs)
            self.poolmanager.pool_classes_by_scheme = {"http": Pool, "https": SecurePool}

    session = requests.Session()
    session.mount("http://", Adapter())
    session.mount("https://", Adapter())
    return session

