"""The HTTP auth interface: an :class:`Auth` is a generator of requests.

Modelled on ``httpx.Auth.auth_flow``: for each MCP request the transport calls
``auth.auth_flow(request)``, a generator that

* **yields** the request to send (usually the one it was given, with credentials added);
* **receives** the answer (an :class:`AuthResponse`: status, headers, the request it answered) as the
  value of that ``yield``;
* either **yields another request** (refresh-on-401, a DPoP nonce retry, step-up authorization: the
  previous answer is discarded, its connection drained or closed) or **returns**, which accepts the last
  answer: the transport then reads its body as usual.

Nothing in the flow knows which HTTP library sends: refreshing a token, asking the user to log in, or
signing a DPoP proof are plain calls inside the generator. Rules for implementers:

* The flow runs on the thread of the call being sent and may block (a token refresh, a browser login);
  the call waits for it. One ``Auth`` instance serves every thread of a transport at once, so keep
  per-request state in the generator's local variables, never on ``self``.
* An exception raised inside the flow ends the request and reaches the caller: raise an
  :class:`~mcpsync.errors.MCPError` (``AuthRequired``, ``InsufficientScope``...) to give a typed error.
* A request body is bytes and may be sent again as is; at most :data:`MAX_ROUND_TRIPS` requests are
  sent for one call (a flow that asks for more raises :class:`~mcpsync.errors.AuthError`).
* Never log tokens.

Every :class:`Auth` is also a ``requests`` auth callable (``requests.get(url, auth=...)`` works; the
flow then runs in a ``requests`` response hook), so the OAuth flow serves code that uses ``requests``
directly, too. This module imports nothing beyond the standard library (``requests`` only inside
:meth:`Auth.__call__`).
"""

from __future__ import annotations

from typing import Any, Dict, Generator, Mapping, Optional

from .errors import AuthError, ConfigError

__all__ = ["MAX_ROUND_TRIPS", "Auth", "AuthFlow", "AuthRequest", "AuthResponse", "BearerAuth"]

#: The most requests one call may send through an auth flow (the first one included).
MAX_ROUND_TRIPS = 8


class AuthRequest:
    """One request as an auth flow sees it: ``method``, ``url``, ``headers`` (a dict), ``body`` (bytes or None).

    The flow may change any of them (normally only headers). Header names are compared case-insensitively
    by :meth:`get_header`, :meth:`set_header` and :meth:`remove_header`; use them rather than indexing.
    """

    __slots__ = ("method", "url", "headers", "body")

    def __init__(self, method: str, url: str, headers: Mapping[str, str], body: Optional[bytes] = None) -> None:
        self.method = method
        self.url = url
        self.headers: Dict[str, str] = dict(headers)
        self.body = body

    def get_header(self, name: str) -> Optional[str]:
        lowered = name.lower()
        for key, value in self.headers.items():
            if key.lower() == lowered:
                return value
        return None

    def set_header(self, name: str, value: str) -> None:
        if "\n" in value or "\r" in value:
            raise ConfigError("a header value holds a line break (header %r)" % (name,))
        self.remove_header(name)
        self.headers[name] = value

    def remove_header(self, name: str) -> None:
        lowered = name.lower()
        for key in [k for k in self.headers if k.lower() == lowered]:
            del self.headers[key]

    def copy(self) -> "AuthRequest":
        return AuthRequest(self.method, self.url, self.headers, self.body)

    def __repr__(self) -> str:  # never the headers' values (they hold credentials)
        return "<AuthRequest %s %s>" % (self.method, self.url.split("?", 1)[0])


class AuthResponse:
    """An answer as an auth flow sees it: ``status_code``, ``headers`` (case-insensitive ``get``), ``url`` and
    the :class:`AuthRequest` it answers. The body is not available to the flow (the transport reads it when
    the flow accepts the answer)."""

    __slots__ = ("status_code", "headers", "url", "request")

    def __init__(self, status_code: int, headers: Any, url: str, request: AuthRequest) -> None:
        self.status_code = status_code
        self.headers = headers
        self.url = url
        self.request = request

    def __repr__(self) -> str:
        return "<AuthResponse [%d]>" % self.status_code


AuthFlow = Generator[AuthRequest, AuthResponse, None]


class Auth:
    """Base class of an HTTP auth (see the module docstring for the contract).

    The default flow sends the request unchanged. Subclasses override :meth:`auth_flow`.
    """

    def auth_flow(self, request: AuthRequest) -> AuthFlow:
        """Yield the request(s) to send, receiving each answer; return to accept the last answer."""
        yield request

    def bind_http(self, http: Any) -> None:
        """Called by each remote transport built with this auth, with its server's HTTP settings (an
        :class:`~mcpsync.transports.http.oauth_route.OAuthRoute`: ``http.session(verify)`` opens an
        :class:`~mcpsync.auth.http_hook.OAuthHTTPCall` on the server's own urllib3 route: proxies, TLS settings).
        A flow that makes HTTP requests of its own (OAuth
        discovery, registration, token) sends them that way; the default ignores it. Does not block."""

    def __call__(self, prepared: Any) -> Any:
        """``requests`` compatibility: run this flow on a ``requests.PreparedRequest`` (and its response hook)."""
        return _RequestsBridge(self).start(prepared)


class BearerAuth(Auth):
    """``Authorization: Bearer <token>`` on every request (the token never appears in ``repr()``).

    ``HTTPOptions(bearer_token=...)`` sends the same header without a flow; this class is for code that
    composes auths or passes one explicitly.
    """

    def __init__(self, token: str) -> None:
        if not isinstance(token, str) or not token.strip() or "\n" in token or "\r" in token:
            raise ConfigError("a bearer token must be a non-empty single-line string")
        self._token = token

    def auth_flow(self, request: AuthRequest) -> AuthFlow:
        request.set_header("Authorization", "Bearer " + self._token)
        yield request

    def __repr__(self) -> str:
        return "<BearerAuth ***>"


def too_many_round_trips(auth: Any, url: str) -> AuthError:
    """The error for a flow that asks for more than :data:`MAX_ROUND_TRIPS` requests."""
    return AuthError(
        "the auth flow %s sent %d requests for one call to %s without accepting an answer; giving up"
        % (type(auth).__name__, MAX_ROUND_TRIPS, url.split("?", 1)[0])
    )


class _RequestsBridge:
    """Runs an :class:`Auth` flow inside ``requests``: the first request on the prepared request, the next
    ones from a response hook through ``response.connection.send`` (the idiom of requests' own digest auth)."""

    def __init__(self, auth: Auth) -> None:
        self._auth = auth

    def start(self, prepared: Any) -> Any:
        body = prepared.body
        if isinstance(body, str):
            body = body.encode("utf-8")
        elif body is not None and not isinstance(body, bytes):
            raise ConfigError("an mcpsync Auth needs a replayable (bytes) request body")
        request = AuthRequest(prepared.method or "GET", prepared.url, dict(prepared.headers), body)
        flow = self._auth.auth_flow(request)
        sent = next(flow)
        _apply(prepared, sent)
        state = {"flow": flow, "sent": sent, "trips": 1}

        def hook(response: Any, **kwargs: Any) -> Any:
            return self._on_response(response, state, kwargs)

        prepared.register_hook("response", hook)
        return prepared

    def _on_response(self, response: Any, state: Dict[str, Any], kwargs: Dict[str, Any]) -> Any:
        flow = state["flow"]
        while True:
            answer = AuthResponse(response.status_code, response.headers, response.url, state["sent"])
            try:
                nxt = flow.send(answer)
            except StopIteration:
                return response
            except BaseException:
                _discard(response)
                raise
            state["trips"] += 1
            if state["trips"] > MAX_ROUND_TRIPS:
                _discard(response)
                flow.close()
                raise too_many_round_trips(self._auth, nxt.url)
            _discard(response)
            prepared = response.request.copy()
            _apply(prepared, nxt)
            _carry_cookies(prepared, response)
            state["sent"] = nxt
            new = response.connection.send(prepared, **kwargs)
            new.history.append(response)
            new.request = prepared
            response = new


def _apply(prepared: Any, request: AuthRequest) -> None:
    prepared.method = request.method
    if prepared.url != request.url:
        prepared.prepare_url(request.url, None)
    prepared.headers.clear()
    prepared.headers.update(request.headers)
    if request.body is not prepared.body:
        prepared.body = request.body


def _carry_cookies(prepared: Any, response: Any) -> None:
    """Send the cookies the discarded answer set with the next request, as requests' own digest auth does."""
    jar = getattr(prepared, "_cookies", None)
    if jar is None:
        return
    from requests.cookies import extract_cookies_to_jar

    extract_cookies_to_jar(jar, response.request, response.raw)  # type: ignore[no-untyped-call]
    prepared.headers.pop("Cookie", None)
    prepared.prepare_cookies(jar)


def _discard(response: Any) -> None:
    try:
        response.content  # noqa: B018 - drain so the connection can be reused
    except Exception:  # noqa: BLE001 - a broken body does not matter here
        pass
    response.close()
