"""A raw-socket HTTP/1.1 server that parses what arrives with ``h11`` (test-only) and records every request.

It answers each request ``200`` with an empty JSON object, keeping the connection alive. ``requests`` holds
``(method, target, headers)`` as ``h11`` parsed them from the bytes on the wire (header names lower-cased, values
as bytes); ``raw`` holds every byte received. A request ``h11`` refuses is recorded in ``errors``.
"""

from __future__ import annotations

import socket
import threading
from typing import List, Tuple

import h11

Request = Tuple[bytes, bytes, List[Tuple[bytes, bytes]]]


class H11Server:
    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.url = "http://127.0.0.1:%d" % self.port
        self.requests: List[Request] = []
        self.errors: List[str] = []
        self.raw = bytearray()
        self.lock = threading.Lock()
        self._conns: List[socket.socket] = []
        self._threads: List[threading.Thread] = []
        self._accepter = threading.Thread(target=self._accept, name="test-h11-server", daemon=True)
        self._accepter.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self._conns.append(conn)
            thread = threading.Thread(target=self._serve, args=(conn,), name="test-h11-conn", daemon=True)
            self._threads.append(thread)
            thread.start()

    def _serve(self, conn: socket.socket) -> None:
        parser = h11.Connection(h11.SERVER)
        current: List[Request] = []
        try:
            while True:
                event = parser.next_event()
                if event is h11.NEED_DATA:
                    data = conn.recv(65536)
                    with self.lock:
                        self.raw += data
                    parser.receive_data(data)
                    if not data:
                        return
                    continue
                if isinstance(event, h11.Request):
                    current = [(event.method, event.target, [(bytes(k), bytes(v)) for k, v in event.headers])]
                elif isinstance(event, h11.EndOfMessage):
                    with self.lock:
                        self.requests.extend(current)
                    answer = parser.send(
                        h11.Response(
                            status_code=200, headers=[("Content-Type", "application/json"), ("Content-Length", "2")]
                        )
                    )
                    answer += parser.send(h11.Data(data=b"{}"))
                    answer += parser.send(h11.EndOfMessage())
                    conn.sendall(answer)
                    parser.start_next_cycle()
                elif isinstance(event, h11.ConnectionClosed):
                    return
        except h11.RemoteProtocolError as exc:
            with self.lock:
                self.errors.append(str(exc))
        except OSError:
            return
        finally:
            conn.close()

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes accept(); close() alone does not
        except OSError:
            pass
        self.sock.close()
        with self.lock:
            conns = list(self._conns)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._accepter.join(5)
        for thread in self._threads:
            thread.join(5)

    def __enter__(self) -> "H11Server":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
