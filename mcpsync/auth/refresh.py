"""Refreshing tokens: single flight per server in this process and across processes (under the credential
store's ``refresh_lock``), compare-and-set so a newer token is never overwritten, DPoP-bound refreshes, and what a
refused refresh leaves behind. :class:`TokenRefresher` is a collaborator that :class:`mcpsync.auth.OAuthManager`
holds; it owns its per-server locks and reads the manager's servers, HTTP sessions and token policy through the
callables it is given. Thread-safe.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable, Dict, Optional, Tuple

from .._threads import KeyedLocks
from ..errors import AuthError, OAuthError
from .config import OAuthConfig
from .discovery import canonical_resource
from .dpop import DPoPState
from .grants import ClientAuth, token_request, tokens_from_response
from .registration import client_from_config, client_from_stored
from .store_base import CredentialBackend, entry_for_url

__all__ = ["TokenRefresher"]

log = logging.getLogger(__name__)


class TokenRefresher:
    """Refreshes the stored tokens of named servers (held by :class:`mcpsync.auth.OAuthManager`).

    Args:
        store: the credential store the tokens live in.
        dpop: the manager's DPoP state (keys, nonces, bound tokens).
        http_timeout: seconds for one token request.
        target: ``name -> (server URL, OAuthConfig)``; raises :class:`~mcpsync.errors.ConfigError` for an
            unknown server or one with OAuth disabled.
        http: ``name -> OAuthHTTPCall``, the session the token request of that server goes through.
        usable: whether a stored token dict is still good (present and not about to expire).

    Thread-safe: one lock per server name (created on first use) makes refreshes single flight in this
    process; the store's ``refresh_lock`` does the same across processes.
    """

    def __init__(
        self,
        store: CredentialBackend,
        dpop: DPoPState,
        http_timeout: float,
        *,
        target: Callable[[str], Tuple[str, OAuthConfig]],
        http: Callable[[str], Any],
        usable: Callable[[Dict[str, Any]], bool],
    ) -> None:
        self.store = store
        self.dpop = dpop
        self.http_timeout = http_timeout
        self._target = target
        self._http = http
        self._usable = usable
        self._name_lock = KeyedLocks(threading.Lock)

    def refresh(self, name: str, used_token: Optional[str]) -> Optional[str]:
        """Refresh the tokens of ``name`` after ``used_token`` expired or was rejected.

        Single flight per name in this process; across processes under the store's ``refresh_lock``,
        re-reading first and skipping when the stored access token is no longer
        ``used_token``. Returns the new access token, or None when no refresh is possible
        (``invalid_grant`` marks the entry ``needsAuth`` without erasing anything newer).
        Blocks for one token request at most (plus waiting for a concurrent refresh).
        """
        url, cfg = self._target(name)
        with self._name_lock(name):
            entry = entry_for_url(self.store, name, url) or {}
            tokens = entry.get("tokens") or {}
            if tokens.get("accessToken") != used_token and self._usable(tokens) and not entry.get("needsAuth"):
                self.dpop.note_entry(entry)
                return str(tokens["accessToken"])
            if not tokens.get("refreshToken"):
                return None
            with self.store.refresh_lock(name):
                entry = entry_for_url(self.store, name, url) or {}
                tokens = entry.get("tokens") or {}
                if tokens.get("accessToken") != used_token and self._usable(tokens) and not entry.get("needsAuth"):
                    log.debug("tokens of %s were already refreshed elsewhere", name)
                    self.dpop.note_entry(entry)
                    return str(tokens["accessToken"])
                refresh_token = tokens.get("refreshToken")
                endpoint = entry.get("tokenEndpoint")
                if not refresh_token or not endpoint or entry.get("needsAuth"):
                    return None
                try:
                    client = self._client_for_tokens(cfg, entry)
                except AuthError:
                    return None
                # A DPoP-bound refresh keeps the key it was bound to (RFC 9449 section 5).
                key = self.dpop.stored_key(entry) if tokens.get("tokenType") == "DPoP" else None
                if tokens.get("tokenType") == "DPoP" and key is None:
                    return None
                form = {
                    "grant_type": "refresh_token",
                    "refresh_token": refresh_token,
                    "resource": entry.get("resource") or canonical_resource(url),
                }
                try:
                    doc = token_request(
                        self._http(name),
                        endpoint,
                        form,
                        client,
                        issuer=entry.get("issuer"),
                        timeout=self.http_timeout,
                        dpop=key,
                        nonces=self.dpop.nonces,
                    )
                    new = tokens_from_response(
                        doc,
                        previous_refresh_token=refresh_token,
                        requested_scope=tokens.get("scope"),
                        dpop=key is not None,
                    )
                except OAuthError as exc:
                    if exc.error not in ("invalid_grant", "invalid_client", "unauthorized_client"):
                        raise exc.with_context(server=name)
                    self._refresh_refused(name, refresh_token, exc.error, drop_client=exc.error != "invalid_grant")
                    return None

                def save(e: Dict[str, Any]) -> Tuple[bool, Optional[str]]:
                    # Compare and set: replace only the tokens this refresh started from. When
                    # they changed meanwhile (a login, or a refresh elsewhere after our lease
                    # ran out) the stored, newer tokens win and are returned instead.
                    current = e.get("tokens") or {}
                    if e.get("serverUrl") != url or current.get("refreshToken") != refresh_token:
                        stored = current.get("accessToken")
                        return False, str(stored) if stored and e.get("serverUrl") == url else None
                    e["tokens"] = new
                    e.pop("needsAuth", None)
                    return True, None

                saved, newer = self.store.update(name, save)
                if not saved:
                    log.info("the tokens of %s changed during the refresh; keeping the stored ones", name)
                    if newer:
                        self.dpop.note_entry(entry_for_url(self.store, name, url) or {})
                    return newer
                self.dpop.note(new, key)
                log.info("refreshed the access token of %s", name)
                return str(new["accessToken"])

    def _refresh_refused(self, name: str, refresh_token: str, error: str, *, drop_client: bool) -> None:
        def mark(e: Dict[str, Any]) -> None:
            if (e.get("tokens") or {}).get("refreshToken") == refresh_token:
                e["needsAuth"] = True
                if drop_client and (e.get("tokenClient") or {}).get("source") in ("stored", "registered"):
                    e.pop("clientInfo", None)

        self.store.update(name, mark)
        log.warning(
            "the authorization server refused to refresh the tokens of %s (%s); a new login is needed", name, error
        )

    def _client_for_tokens(self, cfg: OAuthConfig, entry: Dict[str, Any]) -> ClientAuth:
        source = (entry.get("tokenClient") or {}).get("source")
        client_id = (entry.get("tokenClient") or {}).get("clientId")
        if cfg.client_id:
            return client_from_config(cfg, None, method=(entry.get("tokenClient") or {}).get("method"))
        if source == "cimd" and client_id:
            return ClientAuth(client_id, None, "none", source="cimd")
        info = entry.get("clientInfo")
        if isinstance(info, dict) and info.get("clientId") and (client_id is None or info["clientId"] == client_id):
            return client_from_stored(info)
        raise AuthError("no client registration is stored for these tokens")
