"""An MCP server object written with the official SDK (``mcp``'s ``MCPServer``) or FastMCP, served from the
test process itself: no subprocess, no import of the server per test.

:class:`InProcessServer` serves the object's Streamable HTTP app (``http_app()`` of FastMCP,
``streamable_http_app()`` of the SDK) with uvicorn, on ``127.0.0.1`` and a free port, from one daemon thread
(``mcpsync-inprocess-server``) that runs the app's event loop; a :class:`mcpsync.Client` connects to
:attr:`InProcessServer.url` in either protocol era (these servers answer both). The server's tools run on that
thread's event loop (their blocking code blocks that loop, as it would in production); what they log goes to
this process's ``logging`` (pytest shows it as captured log).

Needs uvicorn (a dependency of the SDK and of FastMCP). Thread-safe: :meth:`start` and :meth:`close` may be
called from any thread; :meth:`close` is idempotent and joins the thread (bounded by ``stop_timeout``).
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from typing import Any, Optional

from .._threads import join, spawn
from ..errors import ConfigError, ConnectError

__all__ = ["InProcessServer", "is_server_object"]

log = logging.getLogger(__name__)


def is_server_object(target: Any) -> bool:
    """True for an object :class:`InProcessServer` can serve (a FastMCP or an SDK server)."""
    if isinstance(target, (str, bytes, list, tuple, dict)):
        return False
    return callable(getattr(target, "http_app", None)) or callable(getattr(target, "streamable_http_app", None))


def _asgi_app(server: Any, path: str) -> Any:
    http_app = getattr(server, "http_app", None)
    if callable(http_app):  # FastMCP (2.3 and later)
        return http_app(path=path, transport="http")
    streamable = getattr(server, "streamable_http_app", None)
    if callable(streamable):  # the official SDK: mcp.server.mcpserver.MCPServer (FastMCP 1 in mcp 1.x)
        try:
            return streamable(streamable_http_path=path)
        except TypeError:  # an older SDK: the path comes from its settings
            return streamable()
    raise ConfigError(
        "cannot serve %r in process: expected a FastMCP or an official-SDK server object (http_app() or "
        "streamable_http_app())" % type(server).__name__
    )


class InProcessServer:
    """Serves ``server`` (a FastMCP or SDK server object) over Streamable HTTP from a thread of this process.

    Args:
        server: the server object (``FastMCP(...)``, ``MCPServer(...)``).
        path: the endpoint's path (default ``/mcp``).
        startup_timeout: how long :meth:`start` waits for the app to be ready (seconds).
        stop_timeout: how long :meth:`close` waits for the thread (seconds).

    Use as a context manager (``with InProcessServer(mcp) as url:``) or :meth:`start` / :meth:`close`.
    """

    def __init__(
        self, server: Any, *, path: str = "/mcp", startup_timeout: float = 30.0, stop_timeout: float = 10.0
    ) -> None:
        if not is_server_object(server):
            _asgi_app(server, path)  # raises the ConfigError that says what is expected
        self.server = server
        self.path = path
        self.startup_timeout = startup_timeout
        self.stop_timeout = stop_timeout
        self._lock = threading.Lock()
        self._uvicorn: Any = None
        self._thread: Optional[threading.Thread] = None
        self._url: Optional[str] = None
        self._failure: Optional[BaseException] = None

    @property
    def url(self) -> str:
        """The endpoint's URL (``http://127.0.0.1:PORT/mcp``); starts the server first if needed."""
        return self.start()

    def start(self) -> str:
        """Start serving (once; later calls return the URL). Blocks until the app is ready, up to
        ``startup_timeout``; raises :class:`~mcpsync.errors.ConnectError` when it does not start."""
        with self._lock:
            if self._url is not None:
                return self._url
            try:
                import uvicorn
            except ImportError:
                raise ConfigError(
                    "serving a server object in process needs uvicorn (a dependency of the SDK and of FastMCP): "
                    "pip install uvicorn"
                ) from None

            app = _asgi_app(self.server, self.path)
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                # accepted connections inherit it: without it every answer written in two parts waits for the
                # client's delayed ACK (40 ms a request on Linux)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.bind(("127.0.0.1", 0))
                sock.listen(128)
            except OSError:
                sock.close()
                raise
            port = sock.getsockname()[1]
            ready = threading.Event()

            class _Server(uvicorn.Server):  # type: ignore[misc,unused-ignore]
                async def startup(self, sockets: Any = None) -> None:
                    try:
                        await super().startup(sockets=sockets)
                    finally:
                        ready.set()

                def install_signal_handlers(self) -> None:  # older uvicorn; a thread has none to install
                    return None

            config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False, ws="none")
            served = _Server(config)

            def run() -> None:
                try:
                    asyncio.run(served.serve(sockets=[sock]))
                except BaseException as exc:  # noqa: BLE001 - reported by start()
                    self._failure = exc
                finally:
                    ready.set()
                    sock.close()

            thread = spawn("mcpsync-inprocess-server", run)
            if not ready.wait(self.startup_timeout) or not served.started:
                served.should_exit = True
                join(thread, self.stop_timeout)
                raise ConnectError(
                    "the in-process server %s did not start%s"
                    % (type(self.server).__name__, ": %s" % self._failure if self._failure else "")
                )
            self._uvicorn, self._thread = served, thread
            self._url = "http://127.0.0.1:%d%s" % (port, self.path)
            return self._url

    def close(self) -> None:
        """Stop serving: the app's shutdown runs, open connections end, the thread is joined (up to
        ``stop_timeout``). Idempotent."""
        with self._lock:
            served, thread = self._uvicorn, self._thread
            self._uvicorn, self._thread, self._url = None, None, None
        if served is None:
            return
        served.should_exit = True
        if not join(thread, self.stop_timeout):
            served.force_exit = True
            if not join(thread, self.stop_timeout):
                log.warning("the in-process server's thread did not stop within %.0f s", 2 * self.stop_timeout)

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()
