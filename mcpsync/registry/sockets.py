"""The registry client's HTTP session: a ``requests`` session that tells which socket a request is reading.

:func:`tracking_session` mounts connection classes that note the socket of the request in flight (in the
``slot`` dict the caller owns, key ``"sock"``) just before the status line and headers are read, so that a
:meth:`~.deadline.Deadline.guard` can shut exactly that socket down when the call's deadline passes. The
classes are made per session (no module state); the same subclassing works on a plain ``urllib3``
``PoolManager`` (its ``pool_classes_by_scheme``). A session the caller brings (``RegistryClient(session=...)``)
is left as it is: its calls keep only the per-read bounds.

Thread-safety: one slot per session; the registry client serializes its requests, so one socket at a time.
"""

from __future__ import annotations

import socket
from typing import Any, Dict

__all__ = ["interrupt", "tracking_session"]


def tracking_session(slot: Dict[str, Any]) -> Any:
    """A new ``requests.Session`` whose plain (non-proxied) http and https requests note their socket in ``slot``."""
    import requests
    from requests.adapters import HTTPAdapter
    from urllib3.connection import HTTPConnection, HTTPSConnection
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

    class Conn(HTTPConnection):
        def getresponse(self, *args: Any, **kwargs: Any) -> Any:
            slot["sock"] = self.sock
            return super().getresponse(*args, **kwargs)

    class SecureConn(HTTPSConnection):
        def getresponse(self, *args: Any, **kwargs: Any) -> Any:
            slot["sock"] = self.sock
            return super().getresponse(*args, **kwargs)

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


def interrupt(slot: Dict[str, Any]) -> None:
    """Shut the noted socket down (a read blocked on it returns at once); never raises."""
    sock = slot.get("sock")
    if sock is None:
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
