"""``OAuthAuth``: OAuth for the HTTP transports as an :class:`~mcpsync.httpauth.Auth` flow.

For each request the flow adds ``Authorization: Bearer <token>`` (refreshing an expiring token first, single
flight), or for a DPoP-bound token ``Authorization: DPoP <token>`` and a fresh ``DPoP`` proof for that
request's method and URL (RFC 9449), yields it, and looks at the answer:

- any ``DPoP-Nonce`` header: remembered for later proofs to that server; a 401 whose DPoP challenge says
  ``error="use_dpop_nonce"`` is resent once with a proof carrying the nonce.
- 401: refresh once and resend; then, for non-interactive grants, obtain a new token; then, when
  ``interactive``, run the browser login and resend; otherwise raise :class:`~mcpsync.errors.AuthRequired`
  carrying the parsed ``WWW-Authenticate``.
- 403 with ``error="insufficient_scope"``: when ``interactive`` (or for non-interactive grants) re-authorize
  with the union of the scopes and resend; otherwise raise :class:`~mcpsync.errors.InsufficientScope`.

At most ``max_authorization_attempts`` (default 3) authorizations per request, then a clear error. The
per-request state lives in the generator, so one instance serves many threads at once. The MCP transports
run the flow around the server's urllib3 connections; ``requests.get(url, auth=oauth.auth(name))`` runs the
same flow through a ``requests`` response hook (see :class:`~mcpsync.httpauth.Auth`).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Dict, Optional, Tuple

from ..errors import AuthRequired, InsufficientScope
from ..httpauth import Auth, AuthFlow, AuthRequest
from .discovery import parse_challenges, preferred_challenge

__all__ = ["OAuthAuth"]

log = logging.getLogger(__name__)

#: How long a token read from the credential store is reused without reading the store again (seconds). Reading
#: it (a file, the keyring or Redis) costs more than the rest of an MCP request's client side; a token another
#: process refreshed or a logout is seen within this time (plus the one read under way then: while one thread
#: reads, the others keep sending the token they have), and a 401 drops the cached token at once.
TOKEN_REUSE_SECONDS = 0.5


class OAuthAuth(Auth):
    """Tokens for server ``name`` of an :class:`~mcpsync.auth.OAuthManager`.

    Args:
        manager: the manager holding the server's configuration and the credential store.
        name: the server name.
        interactive: allow browser logins from inside a request (blocks that request until the
            user approves, up to the manager's ``callback_timeout``).
    """

    def __init__(self, manager: Any, name: str, *, interactive: bool = False) -> None:
        self.manager = manager
        self.name = name
        self.interactive = interactive
        self._cached: Optional[Tuple[str, float]] = None  # (token, monotonic time it may be reused until)
        self._cache_lock = threading.Lock()
        self._reading = threading.Lock()  # held by the one thread reading the store for a reuse that ran out

    def __repr__(self) -> str:
        return "OAuthAuth(server=%r, interactive=%r)" % (self.name, self.interactive)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, OAuthAuth)
            and other.manager is self.manager
            and other.name == self.name
            and other.interactive == self.interactive
        )

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]

    def bind_http(self, http: Any) -> None:
        """The transport's HTTP settings for this server: the manager's OAuth requests for it follow them
        (see :meth:`~mcpsync.auth.OAuthManager.use_http`)."""
        self.manager.use_http(self.name, http)

    # ------------------------------------------------------------------ the flow

    def _current_token(self) -> Optional[str]:
        cached = self._cached
        if cached is not None:
            if time.monotonic() < cached[1]:
                return cached[0]
            # Time to look at the store again: one thread does, and the others send with the token they have
            # until it is back (a herd of calls reading the store at once is what the reuse avoids; a token
            # that went bad meanwhile gets a 401, which drops it and refreshes).
            if not self._reading.acquire(blocking=False):
                return cached[0]
            try:
                return self._read_token()
            finally:
                self._reading.release()
        return self._read_token()

    def _read_token(self) -> Optional[str]:
        token: Optional[str] = self.manager.get_access_token(self.name, interactive=False)
        self._remember(token)
        return token

    def _remember(self, token: Optional[str]) -> None:
        with self._cache_lock:
            self._cached = (token, time.monotonic() + TOKEN_REUSE_SECONDS) if token else None

    def _forget(self, token: Optional[str]) -> None:
        with self._cache_lock:
            if self._cached is not None and self._cached[0] == token:
                self._cached = None

    def auth_flow(self, request: AuthRequest) -> AuthFlow:
        if request.get_header("Authorization") is not None:
            # a credential the user wrote (headers=...) is always sent as is; OAuth is for requests without one
            yield request
            return
        token = self._current_token()
        refreshed = nonce_retried = False
        attempts = 0
        while True:
            self._set_token(request, token)
            response = yield request
            nonce = response.headers.get("DPoP-Nonce")
            if nonce:
                self.manager.dpop.rs_nonces.put(request.url, nonce)
            status = response.status_code
            if status not in (401, 403):
                return
            if status == 401:
                self._forget(token)
            challenges = parse_challenges(response.headers.get("WWW-Authenticate"))
            challenge = preferred_challenge(challenges)
            dpop = next((params for scheme, params in challenges if scheme.lower() == "dpop"), None)
            if status == 401 and dpop is not None:
                if request.get_header("DPoP") is not None and dpop.get("error") == "use_dpop_nonce":
                    if nonce and not nonce_retried:
                        nonce_retried = True
                        log.debug("%s asked for a DPoP nonce; resending once with it", self.name)
                        continue
                    raise AuthRequired(
                        "server %s rejected the DPoP nonce it asked for (use_dpop_nonce again); giving up" % self.name,
                        www_authenticate=challenge,
                        status_code=401,
                        server=self.name,
                    )
                if not any(scheme.lower() == "bearer" for scheme, _ in challenges):
                    self.manager.dpop.note_challenge(self.name)
            if status == 403:
                if challenge.get("error") != "insufficient_scope":
                    return
                token = self._step_up(challenge, token, attempts)
                self._remember(token)
                attempts += 1
                log.debug("403 insufficient_scope from %s: retrying after step-up", self.name)
                continue
            self.manager.remember_challenge(self.name, challenge)
            if token and not refreshed:
                refreshed = True
                fresh = self.manager.refresh(self.name, token)
                if fresh:
                    log.debug("401 from %s: retrying with a refreshed token", self.name)
                    token = fresh
                    self._remember(token)
                    continue
            noninteractive_grant = not self._config_interactive()
            if (self.interactive or noninteractive_grant) and attempts < self.manager.max_authorization_attempts:
                attempts += 1
                token = self.manager.login(self.name, challenge=challenge, used_token=token)
                self._remember(token)
                continue
            if attempts:
                message = "server %s still answers 401 after %d authorization attempt(s)" % (self.name, attempts)
            else:
                message = (
                    "server %s requires authorization: run `mcpsync auth login %s` (or OAuthManager.authenticate), "
                    "or allow interactive login" % (self.name, self.name)
                )
            raise AuthRequired(message, www_authenticate=challenge, status_code=401, server=self.name)

    def _set_token(self, request: AuthRequest, token: Optional[str]) -> None:
        request.remove_header("DPoP")
        if token:
            for key, value in self.manager.dpop.headers(token, request.method or "GET", request.url).items():
                request.set_header(key, value)
        else:
            request.remove_header("Authorization")

    def _config_interactive(self) -> bool:
        server = self.manager._server(self.name)
        return server.oauth is None or bool(server.oauth.interactive)

    def _step_up(self, challenge: Dict[str, str], token: Optional[str], attempts: int) -> Any:
        allowed = self.interactive or not self._config_interactive()
        if not allowed:
            raise InsufficientScope(
                "server %s needs more scopes (%s): log in again with them" % (self.name, challenge.get("scope") or "?"),
                www_authenticate=challenge,
                server=self.name,
            )
        if attempts >= self.manager.max_authorization_attempts:
            raise InsufficientScope(
                "server %s still answers insufficient_scope after %d authorization attempt(s); giving up"
                % (self.name, attempts),
                www_authenticate=challenge,
                server=self.name,
            )
        entry = self.manager.store.get(self.name) or {}
        previous = (entry.get("requestedScope") or (entry.get("tokens") or {}).get("scope") or "").split()
        return self.manager.login(self.name, challenge=challenge, extra_scopes=previous, used_token=token)
