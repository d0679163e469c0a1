"""TLS inside TLS for the standard-library engine: an ``https`` server through an ``https://`` proxy.

The connection to the proxy is an ``ssl.SSLSocket``; the tunnel's TLS session to the server cannot be another
``SSLSocket`` on top of it (``ssl`` wraps file descriptors), so :class:`TLSInTLS` runs it in an
``ssl.SSLObject`` over memory BIOs and moves its records through the outer socket. It offers the small socket
surface the engine uses (``sendall``, ``recv``/``recv_into``, ``makefile("rb")``, ``settimeout``,
``setsockopt``, ``shutdown``, ``close``, ``detach``, ``fileno``); ``shutdown``/``close`` act on the outer socket,
so the read-timeout watchdog and ``abort()`` wake a blocked reader as they do for any connection.

Thread-safety: one thread sends or reads at a time (the engine's rule for a connection); ``shutdown`` may come
from another thread.
"""

from __future__ import annotations

import io
import socket
import ssl
from typing import Any, Optional

__all__ = ["TLSInTLS", "wrap_tls"]

_CHUNK = 1 << 16


class TLSInTLS:
    """A TLS session to ``server_hostname`` carried inside the TLS connection ``outer`` (handshake done here;
    blocks within ``outer``'s timeout; raises ``ssl.SSLError`` / ``OSError`` on failure)."""

    def __init__(self, outer: ssl.SSLSocket, context: ssl.SSLContext, server_hostname: str) -> None:
        self._outer = outer
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self._tls = context.wrap_bio(self._incoming, self._outgoing, server_hostname=server_hostname)
        while True:
            try:
                self._tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                self._flush()
                if not self._fill():
                    raise ssl.SSLEOFError("the proxy closed the tunnel during the TLS handshake") from None
        self._flush()

    def _flush(self) -> None:
        data = self._outgoing.read()
        if data:
            self._outer.sendall(data)

    def _fill(self) -> bool:
        data = self._outer.recv(_CHUNK)
        if not data:
            self._incoming.write_eof()
            return False
        self._incoming.write(data)
        return True

    # ------------------------------------------------------------------ the socket surface

    def sendall(self, data: Any) -> None:
        view = memoryview(data).cast("B")
        while view:
            try:
                sent = self._tls.write(view)
            except ssl.SSLWantReadError:  # a key update pending: read what the peer sent first
                self._flush()
                if not self._fill():
                    raise ssl.SSLEOFError("the tunnel closed while sending") from None
                continue
            view = view[sent:]
            self._flush()

    def send(self, data: Any) -> int:
        """Send some of ``data``: one TLS write, flushed through the proxy's TLS in one ``sendall`` of the outer
        socket (so, as for a plain socket's ``send``, a failure of the first one means nothing of it left);
        returns how many bytes of ``data`` were sent."""
        view = memoryview(data).cast("B")
        while True:
            try:
                sent = int(self._tls.write(view))
            except ssl.SSLWantReadError:  # a key update pending: read what the peer sent first
                self._flush()
                if not self._fill():
                    raise ssl.SSLEOFError("the tunnel closed while sending") from None
                continue
            self._flush()
            return sent

    def recv_into(self, buffer: Any, nbytes: int = 0) -> int:
        size = nbytes or len(buffer)
        while True:
            try:
                got: Any = self._tls.read(size, buffer)  # with a buffer: the count read into it
                return int(got)
            except ssl.SSLWantReadError:
                self._flush()
                if not self._fill():
                    return 0  # the tunnel ended without close_notify: an end of stream, as for a plain socket
            except ssl.SSLZeroReturnError:
                return 0

    def recv(self, size: int) -> bytes:
        buffer = bytearray(size)
        got = self.recv_into(buffer)
        return bytes(buffer[:got])

    def makefile(self, mode: str = "rb") -> io.BufferedReader:
        if mode != "rb":  # pragma: no cover - the engine reads answers only
            raise ValueError("only 'rb'")
        return io.BufferedReader(_Reader(self))

    def settimeout(self, value: Optional[float]) -> None:
        self._outer.settimeout(value)

    def setsockopt(self, *args: Any) -> None:
        self._outer.setsockopt(*args)

    def shutdown(self, how: int) -> None:
        # at the descriptor: SSLSocket.shutdown would also drop the outer SSL object, and a thread reading
        # through it would then take the outer TLS records for plaintext instead of waking with an error
        socket.socket.shutdown(self._outer, how)

    def close(self) -> None:
        self._outer.close()

    def detach(self) -> int:
        return self._outer.detach()

    def fileno(self) -> int:
        return self._outer.fileno()


class _Reader(io.RawIOBase):
    """The raw stream under ``TLSInTLS.makefile``; closing it leaves the connection open (as ``socket.makefile``)."""

    def __init__(self, sock: TLSInTLS) -> None:
        self._sock = sock

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        return self._sock.recv_into(buffer)


def wrap_tls(context: ssl.SSLContext, sock: Any, server_hostname: str) -> Any:
    """``sock`` wrapped in TLS to ``server_hostname``: an ``SSLSocket``, or :class:`TLSInTLS` when ``sock`` is
    already TLS (a tunnel through an ``https://`` proxy)."""
    if isinstance(sock, ssl.SSLSocket):
        return TLSInTLS(sock, context, server_hostname)
    return context.wrap_socket(sock, server_hostname=server_hostname)
