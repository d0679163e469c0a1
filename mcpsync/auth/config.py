"""Per-server OAuth configuration (OpenCode's ``oauth: {clientId, clientSecret, scope}`` or ``false``).

Plain data; thread-safe to share once built. Secrets never appear in reprs.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any, Callable, Dict, Optional, Union

from ..errors import ConfigError

__all__ = ["OAuthConfig", "GRANTS"]

GRANTS = ("authorization_code", "client_credentials", "enterprise", "jwt_bearer")

_ALIASES = MappingProxyType({
    "clientId": "client_id",
    "clientSecret": "client_secret",
    "clientMetadataUrl": "client_metadata_url",
    "tokenEndpointAuthMethod": "token_endpoint_auth_method",
    "privateKey": "private_key",
    "signingAlg": "signing_alg",
    "keyId": "key_id",
    "assertionAudience": "assertion_audience",
    "authorizationServer": "authorization_server",
    "idpTokenEndpoint": "idp_token_endpoint",
    "idToken": "id_token",
    "idpClientId": "idp_client_id",
    "idpClientSecret": "idp_client_secret",
    "idpAuthMethod": "idp_auth_method",
    "dpopAlg": "dpop_alg",
    "assertionFile": "assertion_file",
})


@dataclass(frozen=True, eq=False, repr=False)
class OAuthConfig:
    """How mcpsync obtains tokens for one server.

    Args:
        client_id: a pre-registered client id (skips CIMD and dynamic registration).
        client_secret: its secret, for confidential clients.
        scope: extra scopes (space separated) added to what the server asks for.
        client_metadata_url: an HTTPS Client ID Metadata Document URL, used as the client id
            when the authorization server advertises ``client_id_metadata_document_supported``.
        token_endpoint_auth_method: ``none``, ``client_secret_basic``, ``client_secret_post`` or
            ``private_key_jwt`` (default: chosen from what the server supports).
        grant: ``authorization_code`` (browser login, default), ``client_credentials``,
            ``enterprise`` (ID token -> ID-JAG -> access token) or ``jwt_bearer`` (workload
            identity federation: the RFC 7523 grant with the JWT ``assertion`` supplies).
        private_key: PEM text or path of the key for ``private_key_jwt``.
        signing_alg: ``ES256`` (default) or ``RS256``.
        key_id: optional ``kid`` for the client assertion.
        assertion_audience: ``aud`` of the client assertion (default: the authorization server's issuer).
        authorization_server: the issuer to prefer when the server lists several.
        idp_token_endpoint: enterprise: the identity provider's token endpoint.
        id_token: enterprise: the user's ID token, or a callable returning a fresh one.
        idp_client_id, idp_client_secret, idp_auth_method: enterprise: the client at the identity provider.
        assertion: jwt_bearer: the workload's JWT, or (better) a callable returning a fresh one
            for every token request (e.g. reading a Kubernetes projected service-account token).
        assertion_file: jwt_bearer: a file holding the workload's JWT, read again for every token
            request (what a configuration file can say; e.g. ``/var/run/secrets/tokens/mcp``).
        dpop: DPoP (RFC 9449) sender-constrained tokens: None (default) uses DPoP when the
            authorization server advertises ``dpop_signing_alg_values_supported`` or the server
            challenges with the DPoP scheme; True always; False never. Needs ``mcpsync[jwt]``.
        dpop_alg: the DPoP proof algorithm, ``ES256`` (default) or ``RS256``.
    """

    client_id: Optional[str] = None
    client_secret: Optional[str] = None
    scope: Optional[str] = None
    client_metadata_url: Optional[str] = None
    token_endpoint_auth_method: Optional[str] = None
    grant: str = "authorization_code"
    private_key: Any = None
    signing_alg: str = "ES256"
    key_id: Optional[str] = None
    assertion_audience: Optional[str] = None
    authorization_server: Optional[str] = None
    idp_token_endpoint: Optional[str] = None
    id_token: Union[str, Callable[[], str], None] = None
    idp_client_id: Optional[str] = None
    idp_client_secret: Optional[str] = None
    idp_auth_method: Optional[str] = None
    assertion: Union[str, Callable[[], str], None] = None
    assertion_file: Optional[str] = None
    dpop: Optional[bool] = None
    dpop_alg: str = "ES256"

    def __post_init__(self) -> None:
        grant = self.grant
        if grant not in GRANTS:
            raise ConfigError("unknown OAuth grant %r (use one of %s)" % (grant, ", ".join(GRANTS)))
        if grant in ("client_credentials", "enterprise") and not self.client_id:
            raise ConfigError("the %s grant needs a pre-registered client_id" % grant)
        if grant == "jwt_bearer" and not (self.assertion or self.assertion_file):
            raise ConfigError(
                "the jwt_bearer grant needs an assertion (a JWT, or a callable returning one) or an assertion_file"
            )
        if self.assertion and self.assertion_file:
            raise ConfigError("pass either assertion or assertion_file, not both")
        if self.dpop not in (None, True, False):
            raise ConfigError("dpop must be true, false or unset")
        if self.dpop_alg not in ("ES256", "RS256"):
            raise ConfigError("unsupported DPoP signing algorithm %r (use ES256 or RS256)" % self.dpop_alg)
        if grant == "enterprise" and not (self.idp_token_endpoint and self.id_token and self.idp_client_id):
            raise ConfigError("enterprise-managed authorization needs idp_token_endpoint, id_token and idp_client_id")
        url = self.client_metadata_url
        if url is not None and not url.startswith("https://"):
            raise ConfigError("a client metadata document URL must be an https:// URL")

    def __repr__(self) -> str:
        return "OAuthConfig(client_id=%r, grant=%r, scope=%r, client_secret=%s, dpop=%r)" % (
            self.client_id,
            self.grant,
            self.scope,
            "<hidden>" if self.client_secret else None,
            self.dpop,
        )

    @property
    def interactive(self) -> bool:
        """True for the browser (authorization code) grant."""
        return self.grant == "authorization_code"

    @classmethod
    def from_value(cls, value: Any) -> Optional["OAuthConfig"]:
        """Build from a config value: None/True -> defaults, False -> None (OAuth disabled),
        a dict with camelCase or snake_case keys, or an :class:`OAuthConfig`."""
        if value is None or value is True:
            return cls()
        if value is False:
            return None
        if isinstance(value, OAuthConfig):
            return value
        if isinstance(value, dict):
            kwargs: Dict[str, Any] = {}
            for key, item in value.items():
                name = _ALIASES.get(key, key)
                if name not in _FIELDS:
                    raise ConfigError("unknown oauth option %r" % key)
                kwargs[name] = item
            return cls(**kwargs)
        raise ConfigError("oauth must be false, a mapping or an OAuthConfig, not %s" % type(value).__name__)


_FIELDS = frozenset(f.name for f in fields(OAuthConfig))
