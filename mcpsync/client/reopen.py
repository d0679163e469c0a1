"""Opening a client on use: ``Client(..., options=ClientOptions(lazy=True))``'s first use, and the first use in a
child process of a client opened before ``os.fork()`` (``after_fork="reopen"``, the default).

:attr:`mcpsync.Client.session` is the one funnel every method goes through; its fast path is an
attribute check, and only a client that is not open comes here (:func:`open_on_use`). The open is single flight:
it runs under the client's ``_open_lock`` (the lock ``open()`` itself takes), threads racing the first use wait
for it, and when it fails every waiter of that attempt gets its error while the next use tries again. A client
closed by the user is never opened again. :func:`abandon_after_fork` is what the fork hook
(:mod:`mcpsync.client.registry`) does to every open or lazy client in the new child.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any, Dict, Literal, Optional, Protocol

from .._dispatch import NotificationQueue
from ..errors import ClientClosed
from ..session import Session
from ..transports.base import Transport
from ..types import Implementation
from . import registry
from .modern import ModernFeatures

__all__ = ["AfterFork", "Reopenable", "abandon_after_fork", "open_on_use"]

logger = logging.getLogger(__name__)

#: What a client opened before ``os.fork()`` does in the child: open again there on first use, or raise.
AfterFork = Literal["reopen", "error"]


class Reopenable(Protocol):
    """The client's lifecycle state these functions work on (:class:`~mcpsync.Client`'s: this
    module is part of the core's lifecycle, not a feature part)."""

    @property
    def name(self) -> str: ...

    lazy: bool
    after_fork: AfterFork
    era: Optional[str]  # reset here
    protocol_version: Optional[str]
    server_info: Implementation
    server_capabilities: Dict[str, Any]
    instructions: Optional[str]
    transport_kind: Optional[str]
    notifications: NotificationQueue
    _target: Any
    _session: Optional[Session]
    _state: str
    _lock: Any
    _open_lock: Any
    _user_closed: bool
    _forked_away: bool
    _open_attempts: int
    _open_error: Optional[BaseException]
    _keepalive_stop: threading.Event
    _keepalive_thread: Optional[threading.Thread]
    _modern: ModernFeatures

    def open(self) -> Any: ...

    def close(self, timeout: Optional[float] = None) -> None: ...

    def _abandon_after_fork(self) -> None: ...


def open_on_use(client: Reopenable) -> Session:
    """The open session of ``client``, opening it first when allowed (lazy, or again in a forked child).

    Blocks up to ``connect_timeout`` when it opens. Raises :class:`~mcpsync.ClientClosed` when the client is not
    open (and not lazy) or was closed, :class:`~mcpsync.errors.ForkedClientError` in a forked child with
    ``after_fork="error"``, and the open's own error (ConnectError, ConnectTimeout...) when opening fails.
    """
    s = client._session
    forked = client._forked_away or (s is not None and s.forked)
    if forked and s is not None and s.forked and client._state != "closed":
        abandon_after_fork(client)  # not yet released in this process (normally the fork hook did it)
    # a Transport object given as the target was the parent's and cannot be started again: the error, not a reopen
    if forked and (client.after_fork == "error" or client._user_closed or isinstance(client._target, Transport)):
        if s is not None and s.forked:
            raise s.forked_error()
        raise ClientClosed("client is closed", server=client.name)
    if not forked and not (client.lazy and not client._user_closed):
        if client._state == "new":
            raise ClientClosed(
                "client is not open: call open() or use it in a with block first "
                "(or pass options=ClientOptions(lazy=True))",
                server=client.name,
            )
        state = "still opening" if client._state == "opening" else "closed"
        raise ClientClosed("client is %s" % state, server=client.name)
    attempt = client._open_attempts
    with client._open_lock:
        s = client._session
        if s is not None and client._state == "open" and not s.forked:
            return s  # another thread opened it meanwhile
        if client._user_closed:
            raise ClientClosed("client is closed", server=client.name)
        failed = client._open_error
        if attempt != client._open_attempts and failed is not None:
            raise failed  # the open this caller waited for failed: one attempt per wave of callers
        if forked:
            logger.info("[%s] was opened in another process; opening it again in process %d", client.name, os.getpid())
        _reset(client)
        client._open_attempts += 1
        try:
            client.open()
        except BaseException as exc:
            client._open_error = exc
            raise
        client._open_error = None
        client._forked_away = False
        s = client._session
    if s is None or client._state != "open":  # closed concurrently, right after opening
        raise ClientClosed("client is closed", server=client.name)
    return s


def _reset(client: Reopenable) -> None:
    """Back to "new" after a failed lazy open or in a forked child: fresh per-connection state."""
    if client._state == "new":
        return
    client._state = "new"
    client._session = None
    client.era = client.protocol_version = None
    client.server_info = Implementation()
    client.server_capabilities = {}
    client.instructions = None
    client.transport_kind = None
    client.notifications = NotificationQueue()
    client._keepalive_stop = threading.Event()
    client._keepalive_thread = None
    vars(client).pop("_validation_listed", None)  # Client's "listed once to validate" flag: its class default
    client._modern = ModernFeatures(client)


def abandon_after_fork(client: Reopenable) -> None:
    """In a forked child: ``client`` is closed at once, without locks, I/O or signals (the server is the parent's).

    Runs in the ``os.register_at_fork`` hook for every open (or lazy) client. Unless the client was closed or made
    with ``after_fork="error"``, its next use opens it again in this process (:func:`open_on_use`)."""
    client._lock = threading.RLock()  # another thread may have held the parent's at fork time
    client._open_lock = threading.RLock()
    state = client._state
    if state == "new":
        return  # nothing of the parent's to release
    client._forked_away = client._forked_away or state in ("open", "opening")
    client._state = "closed"
    s = client._session
    if s is not None:
        s.abandon_after_fork()
    client.notifications.reset_after_fork()
    client._modern.close(after_fork=True)  # listen streams end: iterating one in the child never blocks
    registry.untrack(client)
