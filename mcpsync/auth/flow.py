"""The OAuth provider: per-server-name logins, token refresh and non-interactive grants.

:class:`OAuthManager` is the OpenCode-style API (``start_auth``, ``authenticate``,
``finish_auth``, ``remove_auth``, ``supports_oauth``, ``has_stored_tokens``,
``get_auth_status``) plus :meth:`OAuthManager.auth` which returns the
:class:`~mcpsync.auth.oauth_auth.OAuthAuth` to give the HTTP transport.

Thread-safety: every method may be called from any thread. Per server name, one login
runs at a time (others wait and reuse its tokens) and one refresh runs at a time
(single flight); across processes (and hosts, with the Redis store) the refresh holds the
store's ``refresh_lock`` from read to write and is skipped when another process already
rotated the tokens; the write is a compare-and-set, so newer tokens are never overwritten.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional, Tuple, Union
from urllib.parse import urlencode, urlsplit

from .._threads import KeyedLocks
from ..errors import AuthError, CallbackError, ConfigError, OAuthError
from . import callback as _callback
from .backends import open_store
from .callback import AuthorizationRequest, parse_redirect
from .config import OAuthConfig
from .discovery import (
    DEFAULT_PROTOCOL_VERSION,
    AuthServerMetadata,
    Discovery,
    ProtectedResourceMetadata,
    canonical_resource,
    probe_challenge,
)
from .dpop import DPoPKey, DPoPState
from .grants import ClientAuth, noninteractive_grant, token_request, tokens_from_response
from .pkce import code_challenge, make_code_verifier, make_state
from .refresh import TokenRefresher
from .registration import client_from_config, client_from_stored, known_client_id, register_client, resolve_client
from .scopes import select_scopes, split_scope, union
from .store_base import CredentialBackend, entry_for_url

if TYPE_CHECKING:  # pragma: no cover
    from .oauth_auth import OAuthAuth

__all__ = ["AuthorizationRequest", "OAuthManager", "ENV_CALLBACK_PORT"]

log = logging.getLogger(__name__)

ENV_CALLBACK_PORT = "MCPSYNC_OAUTH_CALLBACK_PORT"
_PENDING_KEYS = ("codeVerifier", "oauthState", "authIssuer", "pendingAuth")


class _InvalidClient(Exception):
    """Internal: the stored client registration was rejected; register again."""


class _ServerEntry:
    __slots__ = ("name", "url", "oauth")

    def __init__(self, name: str, url: str, oauth: Optional[OAuthConfig]) -> None:
        self.name = name
        self.url = url
        self.oauth = oauth


class OAuthManager:
    """OAuth for a set of named remote servers, sharing one credential store.

    Args:
        store: a credential store (any :class:`~mcpsync.auth.CredentialBackend`, e.g. the file
            :class:`CredentialStore`), or a string for :func:`~mcpsync.auth.open_store`,
            or None: ``$MCPSYNC_AUTH_STORE`` if set, else the default file.
        callback_host, callback_port, callback_path: where the loopback callback server listens
            (default ``127.0.0.1``, ``$MCPSYNC_OAUTH_CALLBACK_PORT`` or 19876, ``/mcp/oauth/callback``).
        redirect_uri: the exact redirect URI to use (default built from the three above); it is
            used byte for byte in registration, authorization and token requests.
        client_name, client_uri: client metadata for dynamic registration.
        authorize_handler: ``handler(AuthorizationRequest) -> redirect URL | code | (code, state) | dict``
            replacing the browser step (headless machines, tests, automation). Blocks as long as it likes.
        open_browser: ``open_browser(url) -> bool`` replacing :func:`webbrowser.open`.
        on_authorization_url: ``callback(name, url)`` called before every browser step (e.g. print it).
        on_browser_open_failed: ``callback(name, url)`` when the browser could not be opened; the
            user can then paste the redirect URL into :meth:`finish_auth`.
        callback_timeout: seconds a browser login waits for its redirect (default 300).
        http_timeout: seconds per discovery/registration/token request.
        protocol_version: the ``MCP-Protocol-Version`` sent on discovery requests.
        refresh_skew: refresh this many seconds before the access token expires.
        max_authorization_attempts: authorizations per request before giving up (step-up limit).
        verify: TLS verification for the OAuth requests (True, False, a CA bundle path or an ``ssl.SSLContext``);
            where a server has HTTP settings of its own (:meth:`use_http`: a transport or a Manager sets them) they
            apply, and this stays the default for a server whose ``verify`` is the default.

    Attributes:
        store: the credential store.
        dpop: the :class:`~mcpsync.auth.dpop.DPoPState` (DPoP keys, nonces, bound tokens).
    """

    def __init__(
        self,
        *,
        store: Union[CredentialBackend, str, None] = None,
        callback_host: str = _callback.DEFAULT_CALLBACK_HOST,
        callback_port: Optional[int] = None,
        callback_path: str = _callback.DEFAULT_CALLBACK_PATH,
        redirect_uri: Optional[str] = None,
        client_name: str = "mcpsync",
        client_uri: Optional[str] = None,
        authorize_handler: Optional[Callable[[AuthorizationRequest], Any]] = None,
        open_browser: Optional[Callable[[str], bool]] = None,
        on_authorization_url: Optional[Callable[[str, str], None]] = None,
        on_browser_open_failed: Optional[Callable[[str, str], None]] = None,
        callback_timeout: float = _callback.DEFAULT_WAIT,
        http_timeout: float = 30.0,
        protocol_version: str = DEFAULT_PROTOCOL_VERSION,
        refresh_skew: float = 60.0,
        max_authorization_attempts: int = 3,
        verify: Any = True,
    ) -> None:
        self.store: CredentialBackend = store if isinstance(store, CredentialBackend) else open_store(store)
        if redirect_uri is not None:
            parts = urlsplit(redirect_uri)
            if parts.scheme != "http" or not parts.hostname or parts.port is None:
                raise ConfigError("redirect_uri must be an http://host:port/path loopback URL")
            callback_host, callback_port, callback_path = parts.hostname, parts.port, parts.path or "/"
        if callback_port is None:
            env_port = os.environ.get(ENV_CALLBACK_PORT)
            try:
                callback_port = int(env_port) if env_port else _callback.DEFAULT_CALLBACK_PORT
            except ValueError:
                raise ConfigError("%s must be a port number" % ENV_CALLBACK_PORT) from None
        if not callback_path.startswith("/"):
            raise ConfigError("callback_path must start with '/'")
        self.callback_host = callback_host
        self.callback_port = int(callback_port)
        self.callback_path = callback_path
        self.redirect_uri = redirect_uri or "http://%s:%d%s" % (
            "[%s]" % callback_host if ":" in callback_host else callback_host,
            self.callback_port,
            callback_path,
        )
        self.client_name = client_name
        self.client_uri = client_uri
        self.authorize_handler = authorize_handler
        self.open_browser = open_browser
        self.on_authorization_url = on_authorization_url
        self.on_browser_open_failed = on_browser_open_failed
        self.callback_timeout = callback_timeout
        self.http_timeout = http_timeout
        self.protocol_version = protocol_version
        self.refresh_skew = refresh_skew
        self.max_authorization_attempts = max_authorization_attempts
        self.verify = verify
        self._lock = threading.Lock()
        self._servers: Dict[str, _ServerEntry] = {}
        self._login_lock = KeyedLocks(threading.RLock)
        self._challenges: Dict[str, Dict[str, str]] = {}
        self._pending: Dict[str, _callback.PendingCallback] = {}
        self._session: Any = None
        self._http_by_name: Dict[str, Tuple[Any, Any, Any]] = {}  # name -> (settings key, OAuthRoute, OAuthHTTPCall)
        self._closed = False
        self.dpop = DPoPState()  # DPoP keys, nonces and bound tokens (see mcpsync.auth.dpop)
        self._refresher = TokenRefresher(
            self.store,
            self.dpop,
            http_timeout,
            target=self._refresh_target,
            http=lambda name: self._http(name),
            usable=lambda t: self._usable(t),
        )

    def __repr__(self) -> str:
        return "OAuthManager(store=%r, redirect_uri=%r, servers=%r)" % (
            self.store.location,
            self.redirect_uri,
            sorted(self._servers),
        )

    def __enter__(self) -> "OAuthManager":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Cancel pending browser logins, stop their callback servers, close HTTP connections. Idempotent."""
        with self._lock:
            self._closed = True
            pending = list(self._pending.values())
            self._pending.clear()
            session, self._session = self._session, None
            routed = {id(entry[2]): entry[2] for entry in self._http_by_name.values() if entry[2] is not None}
            self._http_by_name = {name: (key, http, None) for name, (key, http, _) in self._http_by_name.items()}
        for waiter in pending:
            waiter.cancel("the OAuth manager was closed")
        for other in [session, *routed.values()]:
            if other is not None:
                other.close()

    # ------------------------------------------------------------------ configuration

    def add_server(self, name: str, url: str, oauth: Any = None) -> None:
        """Declare (or replace) server ``name`` at ``url``; ``oauth`` as in :meth:`OAuthConfig.from_value`."""
        if not url.startswith(("http://", "https://")):
            raise ConfigError("OAuth needs an http(s) server URL, not %r" % url)
        with self._lock:
            self._servers[name] = _ServerEntry(name, url, OAuthConfig.from_value(oauth))

    def _server(self, name: str) -> _ServerEntry:
        with self._lock:
            entry = self._servers.get(name)
        if entry is None:
            raise ConfigError("unknown server %r: call add_server(name, url) first" % name)
        return entry

    def _oauth(self, name: str) -> Tuple[_ServerEntry, OAuthConfig]:
        server = self._server(name)
        if server.oauth is None:
            raise ConfigError("OAuth is disabled for server %r (oauth: false)" % name, server=name)
        return server, server.oauth

    def _refresh_target(self, name: str) -> Tuple[str, OAuthConfig]:
        server, cfg = self._oauth(name)
        return server.url, cfg

    def use_http(self, name: str, http: Any) -> None:
        """Send the OAuth requests made for server ``name`` (the probe of its MCP URL, discovery, registration,
        token and refresh requests) through ``http.session(verify)``: an
        :class:`~mcpsync.wire.http_call.OAuthHTTPCall` on that server's own connections and HTTP settings (its
        proxies, TLS verification, client certificate, ``trust_env``). Each remote transport built with
        :meth:`auth` calls this with its settings (an
        :class:`~mcpsync.transports.http.oauth_route.OAuthRoute`), and so does a :class:`~mcpsync.Manager` for
        each of its servers; the latest settings for a name win. ``http.key`` equal to the current one keeps
        the current session; None goes back to the default session (``verify=``, environment proxies).
        The manager's own ``verify=`` still applies where the server's ``verify`` is the default. Thread-safe;
        does not block (the session is built on first use)."""
        old = None
        with self._lock:
            current = self._http_by_name.get(name)
            key = getattr(http, "key", http)
            if current is not None and current[0] == key:
                return
            if http is None:
                self._http_by_name.pop(name, None)
            else:
                self._http_by_name[name] = (key, http, None)
            old = current[2] if current is not None else None
            if old is not None and any(entry[2] is old for entry in self._http_by_name.values()):
                old = None  # still serving another server with the same settings
        if old is not None:
            old.close()

    def _http(self, name: Optional[str] = None) -> Any:
        """The :class:`~mcpsync.wire.http_call.OAuthHTTPCall` for the OAuth requests of server ``name`` (see
        :meth:`use_http`)."""
        with self._lock:
            routed = self._http_by_name.get(name) if name is not None else None
            if routed is not None:
                key, http, session = routed
                if session is None:
                    session = next(
                        (entry[2] for entry in self._http_by_name.values() if entry[0] == key and entry[2]), None
                    ) or http.session(self.verify)
                    self._http_by_name[name] = (key, http, session)  # type: ignore[index]
                return session
            if self._session is None:
                from .http_direct import DirectHTTP

                self._session = DirectHTTP(self.verify)
            return self._session

    def auth(self, name: str, *, interactive: bool = False) -> OAuthAuth:
        """The :class:`~mcpsync.auth.oauth_auth.OAuthAuth` for server ``name``.

        With ``interactive=True`` a 401 that refreshing cannot fix (or a 403
        ``insufficient_scope``) opens the browser login from inside the request.
        """
        from .oauth_auth import OAuthAuth

        self._server(name)
        return OAuthAuth(self, name, interactive=interactive)

    # ------------------------------------------------------------------ status API

    def supports_oauth(self, name: str) -> bool:
        """Whether ``name`` is a remote server with OAuth enabled (configuration only, no I/O)."""
        try:
            server = self._server(name)
        except ConfigError:
            return False
        return server.oauth is not None

    def _entry(self, name: str) -> Optional[Dict[str, Any]]:
        return entry_for_url(self.store, name, self._server(name).url)

    def has_stored_tokens(self, name: str) -> bool:
        """Whether tokens are stored for ``name`` at its current URL."""
        entry = self._entry(name)
        return bool(entry and (entry.get("tokens") or {}).get("accessToken"))

    def get_auth_status(self, name: str) -> str:
        """``"authenticated"``, ``"expired"`` (access token expired or refresh refused; a refresh
        token may still renew it silently unless refused) or ``"not_authenticated"``."""
        entry = self._entry(name)
        tokens = (entry or {}).get("tokens") or {}
        if not tokens.get("accessToken"):
            return "not_authenticated"
        if entry and entry.get("needsAuth"):
            return "expired"
        expires = tokens.get("expiresAt")
        if isinstance(expires, (int, float)) and expires <= time.time():
            return "expired"
        return "authenticated"

    def remove_auth(self, name: str) -> None:
        """Forget everything stored for ``name`` (tokens, client registration, login in progress)."""
        with self._lock:
            waiter = self._pending.pop(name, None)
        if waiter is not None:
            waiter.cancel("the credentials of %s were removed" % name)
        self.store.remove(name)

    def remember_challenge(self, name: str, challenge: Dict[str, str]) -> None:
        """Record the last ``WWW-Authenticate`` parameters of ``name`` (used by the next discovery).

        A challenge without ``resource_metadata`` keeps the one learned before: a server (or anything in front
        of it) answering one 401 with a bare challenge must not send every later login to the wrong place."""
        if challenge:
            with self._lock:
                merged = dict(challenge)
                known = (self._challenges.get(name) or {}).get("resource_metadata")
                if known and not merged.get("resource_metadata"):
                    merged["resource_metadata"] = known
                self._challenges[name] = merged

    def probe_challenge(self, name: str, headers: Optional[Dict[str, str]] = None, timeout: float = 10.0) -> bool:
        """Ask ``name`` for its 401 challenge and remember it (:func:`.discovery.probe_challenge`)."""
        challenge = probe_challenge(self._server(name).url, headers, timeout=timeout, session=self._http(name))
        self.remember_challenge(name, challenge or {})
        return bool(challenge)

    def _probe_for_metadata(self, name: str) -> bool:
        """No 401 was seen yet (``authenticate()``, ``start_auth()``, a non-interactive grant before any request)
        and the well-known locations named no protected-resource metadata: ask the server for its challenge, as
        a refused client would (the spec lets a server name its metadata only there). True when the challenge
        names metadata. One bounded POST, the same path ``mcpsync auth login`` takes."""
        self.probe_challenge(name, timeout=min(self.http_timeout, 10.0))
        with self._lock:
            return bool((self._challenges.get(name) or {}).get("resource_metadata"))

    # ------------------------------------------------------------------ tokens

    def _usable(self, tokens: Dict[str, Any]) -> bool:
        if not tokens.get("accessToken"):
            return False
        expires = tokens.get("expiresAt")
        return not (isinstance(expires, (int, float)) and expires - self.refresh_skew <= time.time())

    def refresh(self, name: str, used_token: Optional[str]) -> Optional[str]:
        """Refresh the tokens of ``name`` after ``used_token`` expired or was rejected.

        Single flight per name in this process; across processes under the store's ``refresh_lock``,
        re-reading first and skipping when the stored access token is no longer ``used_token``. Returns the
        new access token, or None when no refresh is possible (``invalid_grant`` marks the entry
        ``needsAuth`` without erasing anything newer). Blocks for one token request at most (plus waiting
        for a concurrent refresh). Thread-safe.
        """
        return self._refresher.refresh(name, used_token)

    def _forget_client(self, name: str) -> None:
        def forget(e: Dict[str, Any]) -> None:
            e.pop("clientInfo", None)

        self.store.update(name, forget)

    def get_access_token(
        self, name: str, *, interactive: bool = False, timeout: Optional[float] = None
    ) -> Optional[str]:
        """A valid access token for ``name``, refreshing or obtaining one when needed.

        Order: the stored token if not about to expire -> refresh (single flight) ->
        non-interactive grant (client credentials, enterprise) -> browser login when
        ``interactive`` -> None. Blocks for the HTTP requests involved (and the whole
        browser login, up to ``timeout`` or ``callback_timeout``, when interactive).
        """
        server, cfg = self._oauth(name)
        entry = entry_for_url(self.store, name, server.url) or {}
        tokens = entry.get("tokens") or {}
        used = tokens.get("accessToken")
        if used and not entry.get("needsAuth"):
            if self._usable(tokens):
                self.dpop.note_entry(entry)
                return str(used)
            if tokens.get("refreshToken"):
                fresh = self.refresh(name, used)
                if fresh:
                    return fresh
        if not cfg.interactive:
            return self.obtain(name, used_token=used)
        if interactive:
            return self.login(name, used_token=used, timeout=timeout)
        return None

    # ------------------------------------------------------------------ discovery and logins

    def _discover(
        self, name: str, challenge: Optional[Dict[str, str]]
    ) -> Tuple[Optional[ProtectedResourceMetadata], AuthServerMetadata, str]:
        server, cfg = self._oauth(name)
        if challenge:
            self.remember_challenge(name, challenge)
        else:
            with self._lock:
                challenge = self._challenges.get(name)
        discovery = Discovery(self._http(name), protocol_version=self.protocol_version, timeout=self.http_timeout)
        try:
            try:
                prm, meta = discovery.discover(server.url, challenge, preferred_issuer=cfg.authorization_server)
            except AuthError:
                if challenge or not self._probe_for_metadata(name):
                    raise
                prm = None  # retried below with the challenge
            if prm is None and not challenge and self._probe_for_metadata(name):
                with self._lock:
                    challenge = self._challenges.get(name)
                prm, meta = discovery.discover(server.url, challenge, preferred_issuer=cfg.authorization_server)
        except AuthError as exc:
            raise exc.with_context(server=name)
        resource = prm.resource if prm is not None and prm.resource else canonical_resource(server.url)

        def bind(e: Dict[str, Any]) -> None:
            if e.get("serverUrl") not in (None, server.url):
                for key in ("tokens", "clientInfo", "needsAuth", "tokenClient", "dpopKey") + _PENDING_KEYS:
                    e.pop(key, None)
            if e.get("issuer") not in (None, meta.issuer):
                log.info("the authorization server of %s changed; its old credentials are discarded", name)
                for key in ("tokens", "clientInfo", "needsAuth", "tokenClient", "dpopKey"):
                    e.pop(key, None)
            e["serverUrl"] = server.url
            e["issuer"] = meta.issuer
            e["resource"] = resource
            if meta.token_endpoint:
                e["tokenEndpoint"] = meta.token_endpoint

        self.store.update(name, bind)
        return prm, meta, resource

    def login(
        self,
        name: str,
        *,
        challenge: Optional[Dict[str, str]] = None,
        extra_scopes: Iterable[str] = (),
        used_token: Optional[str] = None,
        timeout: Optional[float] = None,
        force: bool = False,
    ) -> str:
        """Obtain new tokens for ``name`` (browser login, or the configured non-interactive grant).

        Logins of one name are serialized; a caller that waited reuses the tokens another
        thread just obtained (unless ``force``). A rejected stored client registration is
        discarded and the client registers again, once. Returns the access token.
        Blocks for the whole login (browser: up to ``timeout`` or ``callback_timeout``).
        """
        server, cfg = self._oauth(name)
        wanted = union(extra_scopes, split_scope((challenge or {}).get("scope")))
        with self._login_lock(name):
            if not force:
                entry = entry_for_url(self.store, name, server.url) or {}
                tokens = entry.get("tokens") or {}
                if (
                    tokens.get("accessToken") != used_token
                    and self._usable(tokens)
                    and not entry.get("needsAuth")
                    and set(wanted) <= set(split_scope(entry.get("requestedScope") or tokens.get("scope")))
                ):
                    self.dpop.note_entry(entry)
                    return str(tokens["accessToken"])
            if not cfg.interactive:
                return self._grant(name, challenge, wanted)
            retried = False
            while True:
                try:
                    return self._browser_login(name, challenge, wanted, timeout)
                except _InvalidClient:
                    if retried:
                        raise OAuthError(
                            "the authorization server rejected a freshly registered client",
                            error="invalid_client",
                            server=name,
                        ) from None
                    retried = True
                    log.info("the stored client registration of %s was rejected; registering again", name)
                    self._forget_client(name)

    def obtain(
        self,
        name: str,
        *,
        used_token: Optional[str] = None,
        challenge: Optional[Dict[str, str]] = None,
        extra_scopes: Iterable[str] = (),
    ) -> str:
        """Run the non-interactive grant of ``name`` (client credentials or enterprise); the access token."""
        return self.login(name, challenge=challenge, extra_scopes=extra_scopes, used_token=used_token)

    def _grant(self, name: str, challenge: Optional[Dict[str, str]], extra: List[str]) -> str:
        server, cfg = self._oauth(name)
        prm, meta, resource = self._discover(name, challenge)
        if not meta.token_endpoint:
            raise AuthError("the authorization server %s has no token endpoint" % meta.issuer, server=name)
        client = client_from_config(cfg, meta) if cfg.client_id else None
        scopes = select_scopes(cfg, prm, meta, challenge, extra)
        scope = " ".join(scopes) or None
        try:
            key = self._dpop_key(name, cfg, meta)
            doc = noninteractive_grant(
                self._http(name),
                cfg,
                meta.issuer,
                meta.token_endpoint,
                client,
                resource,
                scope,
                timeout=self.http_timeout,
                dpop=key,
                nonces=self.dpop.nonces,
            )
            new = tokens_from_response(doc, requested_scope=scope, dpop=key is not None)
        except AuthError as exc:
            raise exc.with_context(server=name)
        self._save_tokens(name, new, client, scope)
        self.dpop.note(new, key)
        log.info("obtained an access token for %s (%s grant)", name, cfg.grant)
        return str(new["accessToken"])

    def _dpop_key(self, name: str, cfg: OAuthConfig, meta: AuthServerMetadata) -> Optional[DPoPKey]:
        """The DPoP key for ``name``'s next token request, or None for Bearer tokens."""
        alg = self.dpop.wants(name, cfg, meta.dpop_signing_alg_values_supported)
        return self.dpop.key_for(name, alg, self.store) if alg else None

    def _save_tokens(
        self, name: str, tokens: Dict[str, Any], client: Optional[ClientAuth], scope: Optional[str]
    ) -> None:
        def save(e: Dict[str, Any]) -> None:
            e["tokens"] = tokens
            if client is None:
                e.pop("tokenClient", None)
            else:
                e["tokenClient"] = {"clientId": client.client_id, "source": client.source, "method": client.method}
            if scope:
                e["requestedScope"] = scope
            for key in _PENDING_KEYS + ("needsAuth",):
                e.pop(key, None)

        self.store.update(name, save)

    def start_auth(
        self, name: str, *, challenge: Optional[Dict[str, str]] = None, extra_scopes: Iterable[str] = ()
    ) -> str:
        """Discover, register if needed, record PKCE verifier and state; return the authorization URL.

        Complete it with :meth:`finish_auth` (this or another process). Blocks for the discovery
        and registration requests. Raises :class:`~mcpsync.errors.NeedsClientRegistration` when no
        client id can be obtained.
        """
        server, cfg = self._oauth(name)
        if not cfg.interactive:
            raise ConfigError(
                "server %r uses the %s grant; no browser login is needed" % (name, cfg.grant), server=name
            )
        url, _state = self._prepare(name, challenge, list(extra_scopes))
        return url

    def _resolve_client(self, name: str, cfg: Any, meta: Any) -> Tuple[ClientAuth, Optional[Dict[str, Any]]]:
        """The client to use with ``meta``'s authorization server: (ClientAuth, a new registration or None)."""
        stored = (self.store.get(name) or {}).get("clientInfo")
        register = functools.partial(
            register_client,
            self._http(name),
            meta,
            self.redirect_uri,
            client_name=self.client_name,
            client_uri=self.client_uri,
            timeout=self.http_timeout,
            protocol_version=self.protocol_version,
        )
        try:
            return resolve_client(cfg, meta, stored, self.redirect_uri, register)
        except AuthError as exc:
            raise exc.with_context(server=name)

    def ensure_client(
        self, name: str, *, challenge: Optional[Dict[str, str]] = None, register: bool = True
    ) -> Optional[str]:
        """Discover the authorization server and obtain a client id (configured, CIMD or DCR); no browser.

        Stores a new registration; leaves any login in progress alone. Returns the client id. With
        ``register=False`` nothing is registered: returns the client id when known (else None).
        Raises :class:`~mcpsync.errors.NeedsClientRegistration` when no client id can be obtained.
        """
        server, cfg = self._oauth(name)
        _prm, meta, _resource = self._discover(name, challenge)
        if not register:
            stored = (self.store.get(name) or {}).get("clientInfo")
            return known_client_id(cfg, meta, stored, self.redirect_uri)
        client, registered = self._resolve_client(name, cfg, meta)
        if registered is not None:

            def record(e: Dict[str, Any]) -> None:
                e["clientInfo"] = registered

            self.store.update(name, record)
        return str(client.client_id)

    def _prepare(self, name: str, challenge: Optional[Dict[str, str]], extra: List[str]) -> Tuple[str, str]:
        server, cfg = self._oauth(name)
        prm, meta, resource = self._discover(name, challenge)
        methods = meta.code_challenge_methods_supported
        if not methods or "S256" not in methods:
            raise AuthError(
                "the authorization server %s does not advertise PKCE S256 (code_challenge_methods_supported: %s); "
                "refusing to proceed" % (meta.issuer, methods),
                server=name,
            )
        if not meta.authorization_endpoint or not meta.token_endpoint:
            raise AuthError(
                "the authorization server %s lacks an authorization or token endpoint" % meta.issuer, server=name
            )
        scopes = select_scopes(cfg, prm, meta, challenge, extra)
        scope = " ".join(scopes) or None
        try:
            dpop_alg = self.dpop.wants(name, cfg, meta.dpop_signing_alg_values_supported)
        except AuthError as exc:
            raise exc.with_context(server=name)
        client, registered = self._resolve_client(name, cfg, meta)
        verifier = make_code_verifier()
        state = make_state()
        pending = {
            "issuer": meta.issuer,
            "tokenEndpoint": meta.token_endpoint,
            "redirectUri": self.redirect_uri,
            "resource": resource,
            "scope": scope,
            "issRequired": meta.iss_parameter_supported,
            "clientId": client.client_id,
            "clientSource": client.source,
            "clientMethod": client.method,
            "dpopAlg": dpop_alg,
        }

        def record(e: Dict[str, Any]) -> None:
            if registered is not None:
                e["clientInfo"] = registered
            e["codeVerifier"] = verifier
            e["oauthState"] = state
            e["authIssuer"] = meta.issuer
            e["pendingAuth"] = pending

        self.store.update(name, record)
        params = {
            "response_type": "code",
            "client_id": client.client_id,
            "redirect_uri": self.redirect_uri,
            "code_challenge": code_challenge(verifier),
            "code_challenge_method": "S256",
            "state": state,
            "resource": resource,
        }
        if scope:
            params["scope"] = scope
        endpoint = meta.authorization_endpoint
        return endpoint + ("&" if "?" in endpoint else "?") + urlencode(params), state

    def _browser_login(
        self, name: str, challenge: Optional[Dict[str, str]], extra: List[str], timeout: Optional[float]
    ) -> str:
        url, state = self._prepare(name, challenge, extra)
        try:
            params = _callback.authorize_in_browser(self, name, url, state, timeout)
            return self._complete(name, params)
        except _InvalidClient:
            raise
        except BaseException:
            self._clear_pending(name, state)
            raise

    def _clear_pending(self, name: str, state: Optional[str]) -> None:
        def clear(e: Dict[str, Any]) -> None:
            if state is None or e.get("oauthState") == state:
                for key in _PENDING_KEYS:
                    e.pop(key, None)

        try:
            self.store.update(name, clear)
        except Exception:  # noqa: BLE001 - cleanup must not mask the real error
            log.debug("could not clear the login state of %s", name, exc_info=True)

    def _complete(self, name: str, params: Dict[str, str]) -> str:
        server, cfg = self._oauth(name)
        entry = self.store.get(name) or {}
        pending = entry.get("pendingAuth")
        verifier = entry.get("codeVerifier")
        expected_state = entry.get("oauthState")
        if not isinstance(pending, dict) or not verifier or not expected_state:
            raise CallbackError("no login of %s is in progress" % name, server=name)
        if params.get("error"):
            self._clear_pending(name, expected_state)
            raise OAuthError(error=params["error"], description=params.get("error_description", ""), server=name)
        if params.get("state") != expected_state:
            raise CallbackError("the redirect's state does not match the login in progress; ignored", server=name)
        iss = params.get("iss")
        if iss is None and pending.get("issRequired"):
            raise CallbackError("the redirect lacks the iss parameter the authorization server promised", server=name)
        if iss is not None and iss != entry.get("authIssuer"):
            raise CallbackError("the redirect's iss does not match the authorization server; ignored", server=name)
        code = params.get("code")
        if not code:
            raise CallbackError("the redirect carries no authorization code", server=name)
        source = pending.get("clientSource")
        if source == "config" and cfg.client_id:
            client = client_from_config(cfg, None, method=pending.get("clientMethod"))
        elif source == "cimd":
            client = ClientAuth(str(pending["clientId"]), None, "none", source="cimd")
        else:
            info = entry.get("clientInfo") or {}
            if info.get("clientId") != pending.get("clientId"):
                raise CallbackError("the client registration changed during the login of %s" % name, server=name)
            client = client_from_stored(info, source=source or "stored")
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": pending["redirectUri"],
            "code_verifier": verifier,
            "resource": pending["resource"],
        }
        try:
            alg = pending.get("dpopAlg")
            key = self.dpop.key_for(name, alg, self.store) if isinstance(alg, str) else None
            doc = token_request(
                self._http(name),
                pending["tokenEndpoint"],
                form,
                client,
                issuer=pending.get("issuer"),
                timeout=self.http_timeout,
                dpop=key,
                nonces=self.dpop.nonces,
            )
            tokens = tokens_from_response(doc, requested_scope=pending.get("scope"), dpop=key is not None)
        except OAuthError as exc:
            self._clear_pending(name, expected_state)
            if exc.error in ("invalid_client", "unauthorized_client") and client.source in ("stored", "registered"):
                raise _InvalidClient() from exc
            raise exc.with_context(server=name)
        self._save_tokens(name, tokens, client, pending.get("scope"))
        self.dpop.note(tokens, key)
        log.info("login of %s completed", name)
        return str(tokens["accessToken"])

    def authenticate(self, name: str, timeout: Optional[float] = None, *, scopes: Iterable[str] = ()) -> None:
        """The whole login of ``name``: browser (or handler), callback, code exchange; blocks.

        Always runs a new authorization (non-interactive grants: a new token request).
        Waits up to ``timeout`` (default ``callback_timeout``) for the redirect; the redirect
        URL may also be pasted into :meth:`finish_auth` from another thread meanwhile.
        Raises :class:`~mcpsync.errors.CallbackError`, :class:`~mcpsync.errors.OAuthError`,
        :class:`~mcpsync.errors.NeedsClientRegistration` or :class:`~mcpsync.errors.AuthError`.
        """
        with self._lock:
            challenge = self._challenges.get(name)
        self.login(name, challenge=challenge, extra_scopes=scopes, timeout=timeout, force=True)

    def finish_auth(self, name: str, code_or_url: Any) -> bool:
        """Complete a login with a pasted redirect URL, a bare code, or (code, state).

        If :meth:`authenticate` is waiting in this process, the parameters are handed to it
        (first of callback and paste wins) and True is returned at once. Otherwise the login
        begun by :meth:`start_auth` (in any process sharing the store) is completed here:
        state (and ``iss``) checked, code exchanged; returns True. Blocks for the token request.
        """
        entry = self.store.get(name) or {}
        params = parse_redirect(code_or_url, entry.get("oauthState"))
        with self._lock:
            waiter = self._pending.get(name)
        if waiter is not None:
            waiter.deliver(params)
            return True
        with self._login_lock(name):
            try:
                self._complete(name, params)
            except _InvalidClient:
                self._forget_client(name)
                raise OAuthError(
                    "the stored client registration was rejected; it was discarded, run the login again",
                    error="invalid_client",
                    server=name,
                ) from None
        return True
