"""Auth around a server's urllib3 pools: an :class:`~mcpsync.httpauth.Auth` flow, or a ``requests`` auth hook.

:class:`AuthNet` wraps a server's connections (a :class:`~mcpsync.transports.http.pool.PoolNet`) and runs the flow of
an :class:`~mcpsync.httpauth.Auth` around each request: it sends what the flow yields, hands each answer's
status and headers back, and returns the answer the flow accepts (its body still to read). An answer the flow
does not accept is drained (64 KiB at most, so its connection goes back to the pool) or closed. The flow runs
on the calling thread; an exception it raises ends that call (an ``MCPError`` reaches the caller as is).

:class:`RequestsHookNet` serves an ``auth=`` that is a plain ``requests`` auth (``requests.auth.AuthBase``
or any callable taking a ``PreparedRequest``) on the same pools. Honoured: everything the callable does to
the prepared request (headers, URL, body) before it is sent, and its ``response`` hooks, which get a
``requests.Response`` whose ``connection.send(prepared, **kwargs)`` sends through those pools (the idiom of
requests' own ``HTTPDigestAuth`` and of token-on-401 auths), with ``content``, ``close()``, ``headers``,
``request``, ``history``, ``status_code`` and ``url``. Not honoured: the ``kwargs`` of ``connection.send``
(the transport's timeouts, TLS and proxy settings apply, never the hook's), ``response.raw`` as a urllib3
response (it is the pools' answer: ``read``/``read1``/``close``), and cookies read from ``raw`` (the
pools keep the server's cookies themselves). A hook that reads the body of the answer it hands back (logging
it, say) works: the transport then reads that body from memory. ``requests`` is imported only when such an auth is used.
"""

from __future__ import annotations

import io
from typing import Any, Dict, Mapping, Optional

from ...httpauth import MAX_ROUND_TRIPS, Auth, AuthRequest, AuthResponse, too_many_round_trips
from .contract import HTTPNet, Timeouts

__all__ = ["AuthNet", "RequestsHookNet", "with_auth"]

_DRAIN_LIMIT = 1 << 16


class AuthNet:
    """A net that runs ``auth``'s flow around every request of ``inner`` (thread-safe as ``inner`` is); every
    other method is ``inner``'s.

    ``send`` blocks for as long as the flow and its round trips take (each bounded by the timeouts given);
    it raises what ``inner.send`` raises, or what the flow raises.
    """

    def __init__(self, inner: HTTPNet, auth: Auth) -> None:
        self.inner = inner
        self.kind = inner.kind
        self.auth = auth

    def send(self, method: str, url: str, body: Optional[bytes], headers: Mapping[str, str], timeout: Timeouts) -> Any:
        request = AuthRequest(method, url, headers, body)
        flow = self.auth.auth_flow(request)
        try:
            try:
                sent = next(flow)
            except StopIteration:  # a flow that yields nothing sends the request as it is
                return self.inner.send(method, url, body, request.headers, timeout)
            trips = 1
            while True:
                response = self.inner.send(sent.method, sent.url, sent.body, sent.headers, timeout)
                try:
                    following = flow.send(AuthResponse(response.status_code, response.headers, response.url, sent))
                except StopIteration:
                    return response
                except BaseException:
                    discard(response)
                    raise
                discard(response)
                trips += 1
                if trips > MAX_ROUND_TRIPS:
                    raise too_many_round_trips(self.auth, url)
                sent = following
        finally:
            flow.close()

    def get(self, url: str, headers: Mapping[str, str], timeout: Timeouts) -> Any:
        return self.send("GET", url, None, headers, timeout)

    def delete(self, url: str, headers: Mapping[str, str], timeout: Timeouts) -> Any:
        return self.send("DELETE", url, None, headers, timeout)

    def interrupt(self) -> None:
        self.inner.interrupt()

    def abort(self) -> None:
        self.inner.abort()

    def close(self) -> None:
        self.inner.close()

    def after_fork_in_child(self) -> None:
        self.inner.after_fork_in_child()

    def __getattr__(self, name: str) -> Any:  # the pools' other attributes (tests, diagnostics)
        return getattr(self.inner, name)


class RequestsHookNet(AuthNet):
    """A net that applies a ``requests`` auth callable (and its response hooks) to every request of ``inner``
    instead of an :class:`~mcpsync.httpauth.Auth` flow (see the module docstring for what is honoured).
    Thread-safe when the callable is."""

    def send(self, method: str, url: str, body: Optional[bytes], headers: Mapping[str, str], timeout: Timeouts) -> Any:
        import requests

        prepared = requests.Request(method, url, headers=dict(headers), data=body).prepare()
        prepared.prepare_auth(self.auth)  # runs the callable, as a requests.Session would
        response = self._send_prepared(prepared, timeout)
        hooks = list(prepared.hooks.get("response") or ())
        if not hooks:
            return response.raw
        kwargs: Dict[str, Any] = {"stream": True, "timeout": timeout, "verify": True, "cert": None, "proxies": {}}
        try:
            for hook in hooks:
                result = hook(response, **kwargs)
                if result is not None:
                    response = result
        except BaseException:
            discard(response.raw)
            raise
        if getattr(response, "_content_consumed", False) and isinstance(response.content, bytes):
            return _Replayed(response)  # a hook read the body it hands back: the transport reads it from memory
        return response.raw

    def _send_prepared(self, prepared: Any, timeout: Timeouts) -> Any:
        body = prepared.body
        if isinstance(body, str):
            body = body.encode("utf-8")
        headers = {k: v for k, v in prepared.headers.items() if isinstance(v, str)}
        raw = self.inner.send(prepared.method or "GET", prepared.url, body, headers, timeout)
        return _as_requests_response(raw, prepared, _Connection(self, timeout))


class _Connection:
    """``response.connection`` for a hook: ``send(prepared, **kwargs)`` goes through the pools."""

    def __init__(self, net: RequestsHookNet, timeout: Timeouts) -> None:
        self._net = net
        self._timeout = timeout

    def send(self, prepared: Any, **kwargs: Any) -> Any:
        return self._net._send_prepared(prepared, self._timeout)


def _as_requests_response(raw: Any, prepared: Any, connection: _Connection) -> Any:
    import requests
    from requests.structures import CaseInsensitiveDict

    response = requests.Response()
    response.status_code = raw.status_code
    response.reason = getattr(raw, "reason", "")
    response.headers = CaseInsensitiveDict(raw.headers.items())
    response.raw = raw
    response.url = prepared.url
    response.request = prepared
    response.connection = connection  # type: ignore[assignment]  # send() is all a hook uses
    return response


class _Replayed:
    """An answer whose body a hook already read: status, headers and the body from memory ."""

    def __init__(self, response: Any) -> None:
        self.status_code = response.status_code
        self.reason = response.reason
        self.headers = response.headers
        self.url = response.url
        self._body = io.BytesIO(response.content)

    def set_read_timeout(self, seconds: Optional[float], slack: float = 0.0) -> None:
        """Nothing to bound: the body is in memory."""

    def shutdown(self) -> None:
        """Nothing to wake: reading from memory never blocks."""

    def read1(self, amt: int = -1, decode_content: bool = True) -> bytes:
        return self._body.read1(amt)

    def read(self, amt: Optional[int] = None, decode_content: bool = True) -> bytes:
        return self._body.read(amt)

    def release_conn(self) -> None:
        self._body = io.BytesIO()

    close = release_conn


def discard(response: Any) -> None:
    """Drain a small unwanted answer so its connection can be reused; close a large or broken one."""
    try:
        left = _DRAIN_LIMIT
        read1 = getattr(response, "read1", None)
        while read1 is not None and left > 0:
            chunk = read1(left)
            if not chunk:
                break
            left -= len(chunk)
    except Exception:  # noqa: BLE001 - the connection is closed below
        pass
    try:
        response.close()
    except Exception:  # noqa: BLE001
        pass


def with_auth(net: HTTPNet, auth: Any) -> HTTPNet:
    """``net`` with ``auth`` applied to every request: an :class:`~mcpsync.httpauth.Auth` natively, any other
    callable as a ``requests`` auth (a :class:`~mcpsync.errors.ConfigError` when ``requests``, an extra, is not
    installed); ``net`` itself when ``auth`` is None."""
    if auth is None:
        return net
    if isinstance(auth, Auth):
        return AuthNet(net, auth)
    try:
        import requests  # noqa: F401 - only to say now, not at the first call, that it is missing
    except ImportError:
        from ...errors import ConfigError

        raise ConfigError(
            "auth=%s is a requests auth, and requests is not installed: install it (the `requests` extra) or "
            "pass an mcpsync.Auth" % type(auth).__name__
        )
    return RequestsHookNet(net, auth)
