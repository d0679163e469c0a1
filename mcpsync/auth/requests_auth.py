"""``OAuthAuth``: OAuth for the HTTP transport as a :class:`requests.auth.AuthBase`.

Before each request it adds ``Authorization: Bearer <token>`` (refreshing an expiring token
first, single flight), or for a DPoP-bound token ``Authorization: DPoP <token>`` and a fresh
``DPoP`` proof for that request's method and URL (RFC 9449). A response hook handles:

- any ``DPoP-Nonce`` header: remembered for later proofs to that server; a 401 whose DPoP
  challenge says ``error="use_dpop_nonce"`` is resent once with a proof carrying the nonce.
- 401: refresh once and resend; then, for non-interactive grants, obtain a new token; then,
  when ``interactive``, run the browser login and resend; otherwise raise
  :class:`~mcpsync.errors.AuthRequired` carrying the parsed ``WWW-Authenticate``.
- 403 with ``error="insufficient_scope"``: when ``interactive`` (or for non-interactive
  grants) re-authorize with the union of the scopes and resend; otherwise raise
  :class:`~mcpsync.errors.InsufficientScope`.

At most ``max_authorization_attempts`` (default 3) authorizations per request, then a clear
error. Per-request state lives on the prepared request, so one instance may serve many
threads at once. The request body must be replayable (bytes or str, as MCP bodies are).
"""

from __future__ import annotations

import logging
from typing import Any, Dict, Optional

from ..errors import AuthRequired, InsufficientScope
from .discovery import parse_challenges, preferred_challenge

try:  # requests is a dependency of mcpsync, but this module is only imported on demand
    from requests.auth import AuthBase
    from requests.cookies import extract_cookies_to_jar
except ImportError:  # pragma: no cover
    AuthBase = object  # type: ignore[misc,assignment]

__all__ = ["OAuthAuth"]

log = logging.getLogger(__name__)

_STATE_ATTR = "_mcpsync_oauth_state"


class _RequestState:
    __slots__ = ("token", "refreshed", "attempts", "nonce_retried")

    def __init__(self, token: Optional[str]) -> None:
        self.token = token
        self.refreshed = False
        self.attempts = 0
        self.nonce_retried = False


class OAuthAuth(AuthBase):
    """Bearer tokens for server ``name`` of an :class:`~mcpsync.auth.OAuthManager`.

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

    def __call__(self, request: Any) -> Any:
        if "Authorization" in request.headers:
            # a credential the user wrote (headers=...) is always sent as is; OAuth is for requests without one
            return request
        token = self.manager.get_access_token(self.name, interactive=False)
        self._set_token(request, token)
        setattr(request, _STATE_ATTR, _RequestState(token))
        request.register_hook("response", self._handle_response)
        return request

    def _set_token(self, request: Any, token: Optional[str]) -> None:
        request.headers.pop("DPoP", None)
        if token:
            headers = self.manager.dpop.headers(token, request.method or "GET", request.url)
            request.headers.update(headers)
        else:
            request.headers.pop("Authorization", None)

    def _config_interactive(self) -> bool:
        server = self.manager._server(self.name)
        return server.oauth is None or server.oauth.interactive

    def _handle_response(self, response: Any, **kwargs: Any) -> Any:
        status = response.status_code
        nonce = response.headers.get("DPoP-Nonce")
        if nonce:
            self.manager.dpop.rs_nonces.put(response.request.url, nonce)
        if status not in (401, 403):
            return response
        state: Optional[_RequestState] = getattr(response.request, _STATE_ATTR, None)
        if state is None:
            return response
        try:
            return self._handle_challenge(response, state, kwargs)
        except BaseException:
            self._discard(response)  # never leak the connection of a response nobody will see
            raise

    def _handle_challenge(self, response: Any, state: _RequestState, kwargs: Dict[str, Any]) -> Any:
        status = response.status_code
        nonce = response.headers.get("DPoP-Nonce")
        challenges = parse_challenges(response.headers.get("WWW-Authenticate"))
        challenge = preferred_challenge(challenges)
        dpop = next((params for scheme, params in challenges if scheme.lower() == "dpop"), None)
        sent_dpop = "DPoP" in response.request.headers
        if status == 401 and dpop is not None:
            if sent_dpop and dpop.get("error") == "use_dpop_nonce":
                if nonce and not state.nonce_retried:
                    state.nonce_retried = True
                    log.debug("%s asked for a DPoP nonce; resending once with it", self.name)
                    return self._resend(response, state, state.token or "", kwargs)
                self._discard(response)
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
                return response
            return self._step_up(response, state, challenge, kwargs)
        self.manager.remember_challenge(self.name, challenge)
        if state.token and not state.refreshed:
            state.refreshed = True
            fresh = self.manager.refresh(self.name, state.token)
            if fresh:
                log.debug("401 from %s: retrying with a refreshed token", self.name)
                return self._resend(response, state, fresh, kwargs)
        noninteractive_grant = not self._config_interactive()
        if (self.interactive or noninteractive_grant) and state.attempts < self.manager.max_authorization_attempts:
            state.attempts += 1
            fresh = self.manager.login(self.name, challenge=challenge, used_token=state.token)
            return self._resend(response, state, fresh, kwargs)
        self._discard(response)
        if state.attempts:
            message = "server %s still answers 401 after %d authorization attempt(s)" % (self.name, state.attempts)
        else:
            message = (
                "server %s requires authorization: run `mcpsync auth login %s` (or OAuthManager.authenticate), "
                "or allow interactive login" % (self.name, self.name)
            )
        raise AuthRequired(message, www_authenticate=challenge, status_code=401, server=self.name)

    def _step_up(self, response: Any, state: _RequestState, challenge: Dict[str, str], kwargs: Dict[str, Any]) -> Any:
        allowed = self.interactive or not self._config_interactive()
        if not allowed:
            self._discard(response)
            raise InsufficientScope(
                "server %s needs more scopes (%s): log in again with them" % (self.name, challenge.get("scope") or "?"),
                www_authenticate=challenge,
                server=self.name,
            )
        if state.attempts >= self.manager.max_authorization_attempts:
            self._discard(response)
            raise InsufficientScope(
                "server %s still answers insufficient_scope after %d authorization attempt(s); giving up"
                % (self.name, state.attempts),
                www_authenticate=challenge,
                server=self.name,
            )
        state.attempts += 1
        entry = self.manager.store.get(self.name) or {}
        previous = (entry.get("requestedScope") or (entry.get("tokens") or {}).get("scope") or "").split()
        fresh = self.manager.login(self.name, challenge=challenge, extra_scopes=previous, used_token=state.token)
        log.debug("403 insufficient_scope from %s: retrying after step-up", self.name)
        return self._resend(response, state, fresh, kwargs)

    @staticmethod
    def _discard(response: Any) -> None:
        try:
            response.content  # noqa: B018 - drain so the connection can be reused
        except Exception:  # noqa: BLE001 - a broken body does not matter here
            pass
        response.close()

    def _resend(self, response: Any, state: _RequestState, token: str, kwargs: Dict[str, Any]) -> Any:
        """Send the request again with ``token`` (and a fresh DPoP proof); hooks re-run here."""
        self._discard(response)
        prepared = response.request.copy()
        setattr(prepared, _STATE_ATTR, state)
        state.token = token
        if prepared._cookies is not None:  # the transport's fast path sends without a cookie jar
            extract_cookies_to_jar(prepared._cookies, response.request, response.raw)  # type: ignore[no-untyped-call]
            prepared.prepare_cookies(prepared._cookies)
        self._set_token(prepared, token)
        new_response = response.connection.send(prepared, **kwargs)
        new_response.history.append(response)
        new_response.request = prepared
        # The adapter does not run hooks: handle a further 401/403 here.
        return self._handle_response(new_response, **kwargs)
