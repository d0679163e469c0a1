"""The two HTTP engines a remote transport can send with, and the rule that picks one.

* :class:`RequestsNet`: a ``requests.Session`` built once per server (:func:`build_session`: the
  environment's proxies, CA bundle and netrc resolved once, same-origin redirects, keep-alive
  sockets) with the per-call fast path of :mod:`mcpsync.transports.http.fast` over its pools.
* :class:`~mcpsync.transports.http.engine.DirectNet`: the standard library alone (``http.client``
  over pooled sockets); no ``requests`` import, several times less Python per call.

:func:`make_net` picks (see ``HTTPOptions.engine`` and :func:`requests_reason`): the standard library for
every configuration (auth flows and ``requests`` auths through :mod:`~mcpsync.transports.http.auth`,
``http://`` proxies and netrc through :mod:`~mcpsync.transports.http.proxy`) but an ``https://`` or
proxy URL of an unknown scheme (left to ``requests``, which refuses it). ``requests`` is imported only when a
``RequestsNet`` is built (or a ``requests`` auth used).
"""

from __future__ import annotations

import functools
import logging
import socket
import ssl
import threading
import weakref
from typing import Any, Dict, Mapping, Optional, Tuple
from urllib.parse import urljoin, urlsplit

from ...errors import ConfigError
from .netbase import HTTPEngine, redact_url, refuse_redirect
from .options import USER_AGENT, HTTPOptions

__all__ = [
    "RequestsNet",
    "abort_connections",
    "build_session",
    "close_session",
    "direct_ssl_context",
    "engine_for",
    "make_net",
    "requests_reason",
]

logger = logging.getLogger("mcpsync.transports.http.transport")


_classes: Dict[str, Any] = {}
_classes_lock = threading.Lock()


def _requests_classes() -> Dict[str, Any]:
    """Build (once) the requests subclasses; requests is imported here, lazily."""
    with _classes_lock:
        if _classes:
            return _classes
        import requests
        from requests.adapters import HTTPAdapter
        from urllib3.connection import HTTPConnection

        class _SameOriginSession(requests.Session):
            """Follows a redirect only when it stays on the same origin."""

            def get_redirect_target(self, resp):  # type: ignore[no-untyped-def]
                target = super().get_redirect_target(resp)
                if target is None:
                    return None
                absolute = urljoin(resp.url, target if isinstance(target, str) else target.decode("latin-1"))
                return None if refuse_redirect(resp.url, absolute) else target

        class _Adapter(HTTPAdapter):
            """Keep-alive sockets, an optional SSLContext, a pool as large as the calls in flight."""

            def __init__(self, ssl_context: Optional[ssl.SSLContext] = None, **kwargs: Any) -> None:
                self._mcpsync_ssl_context = ssl_context
                self._mcpsync_aborted = False
                # every connection this adapter's pools made (weakly): close() wakes the threads blocked on them
                self._mcpsync_conns: "weakref.WeakSet[Any]" = weakref.WeakSet()
                super().__init__(**kwargs)

            def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
                self._mcpsync_pool_kwargs(kwargs)
                super().init_poolmanager(*args, **kwargs)
                self._mcpsync_track(self.poolmanager)

            def proxy_manager_for(self, proxy: str, **kwargs: Any) -> Any:
                self._mcpsync_pool_kwargs(kwargs)
                manager = super().proxy_manager_for(proxy, **kwargs)
                self._mcpsync_track(manager)
                return manager

            def _mcpsync_track(self, manager: Any) -> None:
                """Make the pools of ``manager`` register each new connection in ``_mcpsync_conns``."""
                if getattr(manager, "_mcpsync_tracked", False):
                    return
                conns = self._mcpsync_conns
                adapter = self
                new_pool = manager._new_pool

                def tracked_pool(*args: Any, **kwargs: Any) -> Any:
                    pool = new_pool(*args, **kwargs)
                    new_conn = pool._new_conn

                    def tracked_conn() -> Any:
                        conn = new_conn()
                        conns.add(conn)
                        # urllib3 makes and connects the socket in one call and keeps it only once connected:
                        # make it here, visible to mcpsync_abort() before its connect starts
                        conn._new_conn = functools.partial(_registered_new_conn, conn, adapter)
                        conn.connect = functools.partial(_connect_and_forget, conn, conn.connect)
                        return conn

                    pool._new_conn = tracked_conn
                    return pool

                manager._new_pool = tracked_pool
                manager._mcpsync_tracked = True

            def mcpsync_abort(self) -> None:
                """Shut down every socket of this adapter's connections, in use, idle or still connecting (TCP
                connect or TLS handshake); later connects are refused. Never raises, never blocks."""
                self._mcpsync_aborted = True
                for conn in list(self._mcpsync_conns):
                    # conn.sock: a connection in use or idle (during a TLS handshake, the socket the handshake
                    # detached); _mcpsync_connecting: the socket of a TCP connect, or a duplicate of the one in
                    # a TLS handshake (see _registered_new_conn): shutting either down ends the wait at once
                    for sock in (getattr(conn, "sock", None), getattr(conn, "_mcpsync_connecting", None)):
                        if sock is not None:
                            try:
                                sock.shutdown(socket.SHUT_RDWR)
                            except OSError:
                                pass

            def _mcpsync_pool_kwargs(self, kwargs: Dict[str, Any]) -> None:
                options = list(HTTPConnection.default_socket_options)
                options.append((socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1))
                kwargs.setdefault("socket_options", options)
                if self._mcpsync_ssl_context is not None:
                    kwargs["ssl_context"] = self._mcpsync_ssl_context

            def __getstate__(self) -> Dict[str, Any]:  # pragma: no cover - pickling a session
                state: Dict[str, Any] = super().__getstate__()  # type: ignore[misc]
                state.pop("_mcpsync_ssl_context", None)
                state.pop("_mcpsync_conns", None)
                return state

        class _BearerAuth(requests.auth.AuthBase):
            """``Authorization: Bearer <token>``; the token never appears in repr()."""

            def __init__(self, token: str) -> None:
                self._token = token

            def __call__(self, r):  # type: ignore[no-untyped-def]
                r.headers["Authorization"] = "Bearer " + self._token
                return r

            def __repr__(self) -> str:
                return "<BearerAuth ***>"

        _classes.update(session=_SameOriginSession, adapter=_Adapter, bearer=_BearerAuth, requests=requests)
        return _classes


def _registered_new_conn(conn: Any, adapter: Any) -> socket.socket:
    """urllib3's ``HTTPConnection._new_conn`` with the socket visible to ``mcpsync_abort`` before it connects.

    Each socket is kept in ``conn._mcpsync_connecting`` from its creation, so ``close()`` shuts down a
    stalled TCP connect (and, through ``conn.sock``, the TLS handshake after it) at once. Errors are the
    ones urllib3 raises (``NameResolutionError``, ``ConnectTimeoutError``, ``NewConnectionError``).
    """
    from urllib3 import exceptions as urllib3_errors
    from urllib3.connection import HTTPSConnection
    from urllib3.exceptions import ConnectTimeoutError, NewConnectionError
    from urllib3.util.connection import allowed_gai_family

    host, port = conn._dns_host, conn.port
    if host.startswith("["):
        host = host.strip("[]")
    try:
        infos = socket.getaddrinfo(host, port, allowed_gai_family(), socket.SOCK_STREAM)
    except socket.gaierror as exc:
        name_error = getattr(urllib3_errors, "NameResolutionError", None)  # urllib3 >= 2; 1.26 has none
        if name_error is not None:
            raise name_error(conn.host, conn, exc) from exc
        raise NewConnectionError(conn, "Failed to establish a new connection: %s" % exc) from exc
    failure: Optional[OSError] = None
    for family, kind, proto, _, address in infos:
        if adapter._mcpsync_aborted:
            raise NewConnectionError(conn, "Failed to establish a new connection: the transport is closed")
        sock = socket.socket(family, kind, proto)
        conn._mcpsync_connecting = sock
        try:
            if adapter._mcpsync_aborted:  # closed between the check above and the registration
                raise OSError("the transport is closed")
            for option in conn.socket_options or ():
                sock.setsockopt(*option)
            if conn.timeout is None or isinstance(conn.timeout, (int, float)):
                sock.settimeout(conn.timeout)
            if conn.source_address:
                sock.bind(conn.source_address)
            sock.connect(address)
        except socket.timeout as exc:
            sock.close()
            conn._mcpsync_connecting = None
            raise ConnectTimeoutError(
                conn, "Connection to %s timed out. (connect timeout=%s)" % (conn.host, conn.timeout)
            ) from exc
        except OSError as exc:
            sock.close()
            conn._mcpsync_connecting = None
            failure = exc
            if adapter._mcpsync_aborted:
                break
            continue
        tls: bool = isinstance(conn, HTTPSConnection)
        if tls:
            # the TLS handshake next detaches ``sock`` into an SSLSocket: a duplicate descriptor of the same
            # TCP socket (closed by _connect_and_forget when connect() ends) lets abort() shut it down meanwhile
            conn._mcpsync_connecting = sock.dup()
            conn._mcpsync_dup = True
        if adapter._mcpsync_aborted:  # connected just as the transport closed: never used
            sock.close()
            _forget_connecting(conn)
            raise NewConnectionError(conn, "Failed to establish a new connection: the transport is closed")
        return sock
    raise NewConnectionError(conn, "Failed to establish a new connection: %s" % (failure or "no address",))


def _forget_connecting(conn: Any) -> None:
    sock, conn._mcpsync_connecting = getattr(conn, "_mcpsync_connecting", None), None
    if sock is not None and conn.__dict__.pop("_mcpsync_dup", False):
        sock.close()  # the duplicate only: the connection's own socket is urllib3's


def _connect_and_forget(conn: Any, connect: Any) -> None:
    """``conn.connect()`` (TCP, proxy tunnel, TLS), then forget the socket kept for abort() while connecting."""
    try:
        connect()
    finally:
        _forget_connecting(conn)


def _system_context() -> ssl.SSLContext:
    try:
        import truststore

        context: ssl.SSLContext = truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        return context
    except ImportError:
        return ssl.create_default_context()


def build_session(url: str, options: HTTPOptions) -> Any:
    """One ``requests.Session`` for one server, with the environment resolved once."""
    classes = _requests_classes()
    requests = classes["requests"]
    session = classes["session"]()
    session.max_redirects = 5
    verify = options.verify
    ssl_context: Optional[ssl.SSLContext] = None
    if isinstance(verify, ssl.SSLContext):
        ssl_context, verify = verify, True
    elif verify == "system":
        ssl_context, verify = _system_context(), True
    elif not isinstance(verify, (bool, str)):
        session.close()
        raise ConfigError("verify must be a bool, a CA bundle path, an ssl.SSLContext or 'system'")
    for prefix in ("https://", "http://"):
        session.mount(
            prefix,
            classes["adapter"](
                ssl_context=ssl_context,
                pool_connections=4,
                pool_maxsize=options.pool_maxsize,
                max_retries=0,
            ),
        )
    if options.trust_env:
        env_proxies = requests.utils.get_environ_proxies(url)
        proxies = dict(env_proxies)
        if verify is True and ssl_context is None:
            import os

            bundle = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE")
            if bundle:
                verify = bundle
    else:
        proxies = {}
    if options.proxies is not None:
        proxies = dict(options.proxies)
    auth = options.auth
    if options.bearer_token is not None:
        auth = classes["bearer"](options.bearer_token)
    elif auth is None and options.trust_env:
        auth = requests.utils.get_netrc_auth(url)
    session.trust_env = False  # everything from the environment is resolved above, once
    session.proxies = proxies
    session.verify = verify
    session.cert = options.cert
    session.auth = auth
    session.headers = requests.structures.CaseInsensitiveDict(
        {"User-Agent": USER_AGENT, "Accept-Encoding": "gzip, deflate"}
    )
    session.headers.update(options.headers)
    return session


def abort_connections(session: Any) -> None:
    """Shut down the sockets of every connection ``session`` made, in use or idle (never raises).

    A thread blocked waiting for an answer on one of them (a POST whose server stalls) wakes up
    with an error at once; ``close()`` calls this so no caller outlives it.
    """
    for adapter in list(getattr(session, "adapters", {}).values()):
        abort = getattr(adapter, "mcpsync_abort", None)
        if abort is not None:
            abort()


def close_session(session: Any) -> None:
    """Close a ``requests.Session`` and every pooled connection it holds, now (never raises).

    ``Session.close()`` alone only forgets the pools with urllib3 >= 2.x's PoolManager.clear(),
    leaving their idle keep-alive sockets open until garbage collection; each pool is closed
    here first (a connection still in use is closed when it is handed back).
    """
    try:
        for adapter in list(getattr(session, "adapters", {}).values()):
            managers = [getattr(adapter, "poolmanager", None)]
            managers.extend(list(getattr(adapter, "proxy_manager", {}).values()))
            for manager in managers:
                pools = getattr(manager, "pools", None)
                if pools is None:
                    continue
                for key in list(pools.keys()):
                    try:
                        pool = pools[key]
                    except KeyError:
                        continue
                    pool.close()
    except Exception:  # noqa: BLE001 - closing must not raise
        logger.debug("closing the connection pools failed", exc_info=True)
    try:
        session.close()
    except Exception:  # noqa: BLE001
        pass


class RequestsNet:
    """The ``requests`` engine of one transport: its ``requests.Session`` and the per-call fast path over it.

    POSTs go through :class:`~mcpsync.transports.http.fast.FastSender` (the session's urllib3 pools);
    GET and DELETE through the session itself. Thread-safe, as the session and its pools are.
    """

    kind = "requests"

    def __init__(self, url: str, options: HTTPOptions) -> None:
        from .fast import FastSender

        self.session = build_session(url, options)
        self._fast = FastSender(self.session)

    def send(
        self,
        method: str,
        url: str,
        body: Optional[bytes],
        headers: Mapping[str, str],
        timeout: Tuple[Optional[float], Optional[float]],
        stream: bool = True,
    ) -> Any:
        """One request; the answer's body is streamed. Raises ``requests`` exceptions."""
        if method == "POST":
            return self._fast.send(method, url, body, headers, timeout)
        return self.session.request(method, url, data=body, headers=dict(headers), stream=stream, timeout=timeout)

    def get(self, url: str, headers: Mapping[str, str], timeout: Tuple[Optional[float], Optional[float]]) -> Any:
        return self.send("GET", url, None, headers, timeout)

    def delete(self, url: str, headers: Mapping[str, str], timeout: Tuple[Optional[float], Optional[float]]) -> Any:
        return self.send("DELETE", url, None, headers, timeout, stream=False)

    def abort(self) -> None:
        abort_connections(self.session)

    def close(self) -> None:
        close_session(self.session)

    def after_fork_in_child(self) -> None:
        """In a forked child: close this process's copies of the sockets, never shutting one down."""
        from .engine import close_fd

        for adapter in list(getattr(self.session, "adapters", {}).values()):
            for conn in list(getattr(adapter, "_mcpsync_conns", ())):
                sock = getattr(conn, "sock", None)
                if sock is not None:
                    close_fd(sock)


def requests_reason(url: str, options: HTTPOptions) -> Optional[str]:
    """Why ``url`` under ``options`` needs the ``requests`` engine, or None when the standard library serves it.

    Only a proxy URL of a scheme the standard-library engine does not know (every one ``requests`` speaks is
    known: see :data:`mcpsync.transports.http.proxy.SCHEMES`), which ``requests`` then refuses with its error."""
    from .proxy import unsupported_proxy

    return unsupported_proxy(url, options)


def engine_for(url: str, options: HTTPOptions) -> str:
    """``"stdlib"`` or ``"requests"``: the engine a transport to ``url`` uses (see ``HTTPOptions.engine``)."""
    if options.engine == "requests":
        return "requests"
    reason = requests_reason(url, options)
    if reason is None:
        return "stdlib"
    if options.engine == "stdlib":
        raise ConfigError("engine='stdlib' cannot serve a configuration with %s; use engine='requests'" % reason)
    return "requests"


def direct_ssl_context(options: HTTPOptions) -> ssl.SSLContext:
    """The TLS settings of the standard-library engine, as ``requests`` would verify (its CA bundle rules)."""
    import os

    verify = options.verify
    if isinstance(verify, ssl.SSLContext):
        context = verify
    elif verify == "system":
        context = _system_context()
    elif verify is False:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif verify is True or isinstance(verify, str):
        bundle: Optional[str] = verify if isinstance(verify, str) else None
        if bundle is None and options.trust_env:
            bundle = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE") or None
        if bundle is None:
            try:
                import certifi  # what requests verifies with by default

                bundle = certifi.where()
            except ImportError:  # pragma: no cover - certifi comes with requests
                bundle = None
        if bundle is not None and not os.path.exists(bundle):
            raise ConfigError("the CA bundle %r does not exist" % (bundle,))
        if bundle is not None and os.path.isdir(bundle):
            context = ssl.create_default_context(capath=bundle)
        else:
            context = ssl.create_default_context(cafile=bundle)
    else:
        raise ConfigError("verify must be a bool, a CA bundle path, an ssl.SSLContext or 'system'")
    cert = options.cert
    if cert is not None:
        if isinstance(verify, ssl.SSLContext):
            raise ConfigError("pass the client certificate inside the SSLContext given as verify")
        try:
            if isinstance(cert, str):
                context.load_cert_chain(cert)
            else:
                context.load_cert_chain(cert[0], cert[1])
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError("cannot load the client certificate: %s" % (exc,)) from None
    return context


def make_net(url: str, options: HTTPOptions, name: str = "server") -> HTTPEngine:
    """The HTTP engine of one transport: a :class:`~mcpsync.transports.http.engine.DirectNet` or a
    :class:`RequestsNet` (see ``HTTPOptions.engine``). Both have ``send``, ``get``, ``delete``,
    ``abort``, ``close`` and ``kind``."""
    if engine_for(url, options) == "requests":
        from ...httpauth import Auth

        if isinstance(options.auth, Auth):  # an mcpsync flow runs around the engine, as on the standard library's
            from .auth import AuthNet

            import copy

            plain = copy.copy(options)
            plain.auth = None
            return AuthNet(RequestsNet(url, plain), options.auth)
        return RequestsNet(url, options)
    from .engine import DirectNet

    from .proxy import netrc_authorization, proxy_table

    headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "gzip, deflate"}
    headers.update(options.headers)
    if options.bearer_token is not None:
        headers["Authorization"] = "Bearer " + options.bearer_token
    elif options.auth is None and options.trust_env and not any(k.lower() == "authorization" for k in headers):
        credentials = netrc_authorization(url)  # as requests does: only when nothing else authorizes
        if credentials is not None:
            headers["Authorization"] = credentials
    context = None
    if urlsplit(url).scheme.lower() == "https":
        context = direct_ssl_context(options)
        if options.verify is False:  # what urllib3's InsecureRequestWarning says under the requests engine
            logger.warning("TLS certificate verification is off for %s (verify=False)", redact_url(url))
    from .auth import with_auth

    proxies = proxy_table(options)
    if proxies.needs_tls():  # an https:// proxy is verified as a server would be (verify=, cert=)
        proxies.tls = context if context is not None else direct_ssl_context(options)
    net = DirectNet(
        url, headers, ssl_context=context, pool_maxsize=options.pool_maxsize, name=name, proxies=proxies or None
    )
    return with_auth(net, options.auth)
