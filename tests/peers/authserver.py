"""A real OAuth authorization server + protected MCP-ish resource + identity provider on loopback.

Everything runs in one ``http.server.ThreadingHTTPServer`` bound to 127.0.0.1 port 0, so
tests need no network and no fixed port. Tests shape it through attributes:

- ``metadata``: the authorization server metadata document (mutate it freely);
- ``as_locations``: which well-known documents exist ("oauth", "oidc", "oidc_suffix");
- ``prm_locations``: where the protected resource metadata lives ("header", "path", "root");
- ``prm``: the protected resource metadata document;
- ``challenge_scope``, ``required_scopes``: what the resource asks for;
- ``approve``: "approve" or an OAuth error code the authorization endpoint redirects with;
- ``iss_mode``: "correct", "wrong", "normalized" (issuer + "/") or "omit" for the RFC 9207 ``iss``;
- ``dpop_algs``: advertise DPoP (RFC 9449) with these algorithms; DPoP proofs are then verified
  at the token endpoint and at the resource (signature, typ, jwk, htm, htu, iat, jti replay, ath,
  ``cnf.jkt`` binding); ``dpop_nonce_as`` / ``dpop_nonce_rs``: a nonce the token endpoint / the
  resource demands (``use_dpop_nonce`` + ``DPoP-Nonce``); ``dpop_only``: challenge with DPoP only;
- ``workload_keys``: issuer -> public key of workloads whose JWTs the jwt-bearer grant accepts;
- ``token_source``: another AuthTestServer whose tokens the resource accepts (AS migration);
- ``clients``: registered clients (client_id -> dict with redirect_uris, method, secret, public_key);
- ``log``: every request as a dict (method, path, query, form, json, headers);
- ``token_outcomes``: per token request, ``(grant_type, "ok" | error code)``;
- ``rotate_refresh_tokens`` (default True): a refresh answers a new refresh token and the used one
  dies; ``reject_reused_refresh`` (default True): presenting a dead one is ``invalid_grant``
  (False: a rotated-out refresh token still works once more, to test last-writer races);
- ``token_hook``: ``hook(form)`` called on the server thread before a token request is handled
  (tests hold requests at a racy point with it).

It checks what a strict server checks: PKCE S256, the exact redirect URI, the ``resource``
parameter, client authentication per method, refresh-token rotation, DPoP proofs and binding.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import parse_qsl, urlencode, urlsplit

GRANT_JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
GRANT_TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
TOKEN_TYPE_ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
TOKEN_TYPE_ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"


def _b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def verify_jwt(token: str, public_key: Any) -> Dict[str, Any]:
    """Verify an ES256/RS256 compact JWS with ``public_key`` (a cryptography object); the claims.

    joserfc verifies it: a JOSE library mcpsync itself does not use (it signs with PyJWT)."""
    from cryptography.hazmat.primitives import serialization
    from joserfc import jws
    from joserfc.jwk import ECKey, RSAKey

    class Registry(jws.JWSRegistry):
        max_header_length = 4096  # a DPoP proof's header carries the public key: an RSA JWK is over 512 bytes

    pem = public_key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    alg = json.loads(_b64url_decode(token.split(".")[0]))["alg"]
    if alg not in ("ES256", "RS256"):
        raise ValueError("bad alg")
    key = ECKey.import_key(pem) if alg == "ES256" else RSAKey.import_key(pem)
    verified = jws.deserialize_compact(token, key, algorithms=[alg], registry=Registry(algorithms=[alg]))
    claims: Dict[str, Any] = json.loads(verified.payload)
    return claims


class OAuthError(Exception):
    def __init__(self, error: str, description: str = "", status: int = 400) -> None:
        super().__init__(error)
        self.error = error
        self.description = description
        self.status = status


class AuthTestServer:
    """See the module docstring. Use as a context manager; ``close()`` joins every thread."""

    def __init__(self, *, issuer_path: str = "", mcp_path: str = "/mcp") -> None:
        self.lock = threading.RLock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = False
        self.httpd.block_on_close = True
        self.httpd.app = self  # type: ignore[attr-defined]
        self.port = self.httpd.server_address[1]
        self.base = "http://127.0.0.1:%d" % self.port
        self.issuer_path = issuer_path
        self.issuer = self.base + issuer_path
        self.mcp_path = mcp_path
        self.server_url = self.base + mcp_path
        self.as_locations = {"oauth"}
        self.prm_locations = {"header", "path", "root"}
        self.metadata: Dict[str, Any] = {
            "issuer": self.issuer,
            "authorization_endpoint": self.issuer + "/authorize",
            "token_endpoint": self.issuer + "/token",
            "registration_endpoint": self.issuer + "/register",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": [
                "none",
                "client_secret_basic",
                "client_secret_post",
                "private_key_jwt",
            ],
            "scopes_supported": ["read", "write", "admin", "offline_access"],
            "authorization_response_iss_parameter_supported": True,
        }
        self.prm: Dict[str, Any] = {
            "resource": self.server_url,
            "authorization_servers": [self.issuer],
            "scopes_supported": ["read", "write"],
        }
        self.prm_header_path = "/custom/prm"
        self.legacy_metadata_ok = False  # serve /.well-known/oauth-authorization-server at the origin w/o issuer check
        self.challenge_scope: Optional[str] = None
        self.required_scopes: List[str] = []
        self.approve = "approve"
        self.error_description = "The user said no"
        self.iss_mode = "correct"
        self.expires_in: Optional[int] = 3600
        self.issue_refresh_tokens = True
        self.dcr_enabled = True
        self.dcr_method: Optional[str] = None  # force the registered method
        self.clients: Dict[str, Dict[str, Any]] = {}
        self.codes: Dict[str, Dict[str, Any]] = {}
        self.access_tokens: Dict[str, Dict[str, Any]] = {}
        self.refresh_tokens: Dict[str, Dict[str, Any]] = {}
        self.id_tokens: Dict[str, str] = {}
        self.jags: Dict[str, Dict[str, Any]] = {}
        self.log: List[Dict[str, Any]] = []
        self.token_delay = 0.0
        self.dpop_algs: Optional[List[str]] = None
        self.dpop_nonce_as: Optional[str] = None
        self.dpop_nonce_rs: Optional[str] = None
        self.dpop_only = False
        self.dpop_jtis: set = set()
        self.dpop_errors: List[str] = []
        self.workload_keys: Dict[str, Any] = {}
        self.token_source: Optional["AuthTestServer"] = None
        self.rotate_refresh_tokens = True
        self.reject_reused_refresh = True
        self.retired_refresh_tokens: Dict[str, Dict[str, Any]] = {}
        self.token_outcomes: List[Tuple[str, str]] = []
        self.token_hook: Optional[Any] = None
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, args=(0.1,), name="test-authserver", daemon=True
        )
        self.thread.start()

    # -- lifecycle

    def __enter__(self) -> "AuthTestServer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(10)

    # -- helpers for tests

    def paths(self, method: Optional[str] = None) -> List[str]:
        with self.lock:
            return [e["path"] for e in self.log if method is None or e["method"] == method]

    def requests_to(self, path: str) -> List[Dict[str, Any]]:
        with self.lock:
            return [e for e in self.log if e["path"] == path]

    def token_requests(self, grant: Optional[str] = None) -> List[Dict[str, Any]]:
        return [
            e
            for e in self.requests_to(self.issuer_path + "/token")
            if grant is None or e["form"].get("grant_type") == grant
        ]

    def add_client(
        self,
        client_id: str,
        *,
        redirect_uris: Optional[List[str]] = None,
        method: str = "none",
        secret: Optional[str] = None,
        public_key: Any = None,
    ) -> None:
        with self.lock:
            self.clients[client_id] = {
                "redirect_uris": list(redirect_uris or []),
                "method": method,
                "secret": secret,
                "public_key": public_key,
            }

    def issue_access_token(
        self,
        scopes: List[str],
        expires_in: Optional[int] = 3600,
        resource: Optional[str] = None,
        jkt: Optional[str] = None,
    ) -> str:
        token = "at-" + secrets.token_hex(12)
        with self.lock:
            self.access_tokens[token] = {
                "scope": set(scopes),
                "resource": resource or self.server_url,
                "exp": time.time() + expires_in if expires_in else None,
                "jkt": jkt,
            }
        return token

    def issue_refresh_token(
        self, client_id: str, scopes: List[str], resource: Optional[str] = None, jkt: Optional[str] = None
    ) -> str:
        token = "rt-" + secrets.token_hex(12)
        with self.lock:
            self.refresh_tokens[token] = {
                "client_id": client_id,
                "scope": list(scopes),
                "resource": resource or self.server_url,
                "jkt": jkt,
            }
        return token

    def issue_id_token(self, subject: str = "alice") -> str:
        token = "idt-" + secrets.token_hex(12)
        with self.lock:
            self.id_tokens[token] = subject
        return token

    # -- request handling (called from handler threads)

    def record(self, entry: Dict[str, Any]) -> None:
        with self.lock:
            self.log.append(entry)

    def route(
        self, h: "_Handler", method: str, path: str, query: Dict[str, str], form: Dict[str, str], body: Any
    ) -> Tuple[int, Dict[str, str], bytes]:
        ip = self.issuer_path
        if method == "GET":
            doc = self.document(path)
            if doc is not None:
                if doc is self.metadata and self.dpop_algs is not None:
                    doc = dict(doc, dpop_signing_alg_values_supported=self.dpop_algs)
                return self.json(200, doc)
            if path == ip + "/authorize":
                return self.authorize(query)
        if method == "POST" and path == ip + "/token":
            if self.token_delay:
                time.sleep(self.token_delay)
            if self.token_hook is not None:
                self.token_hook(form)
            grant = str(form.get("grant_type"))
            try:
                jkt = self.check_token_dpop(h)
                doc = self.token(h, form, jkt)
            except OAuthError as exc:
                with self.lock:
                    self.token_outcomes.append((grant, exc.error))
                extra = (
                    {"DPoP-Nonce": self.dpop_nonce_as} if exc.error == "use_dpop_nonce" and self.dpop_nonce_as else {}
                )
                return self.json(exc.status, {"error": exc.error, "error_description": exc.description}, extra)
            with self.lock:
                self.token_outcomes.append((grant, "ok"))
            return self.json(200, doc)
        if method == "POST" and path == ip + "/register":
            if not self.dcr_enabled:
                return self.json(404, {"error": "not_found"})
            return self.register(body)
        if path == self.mcp_path:
            return self.resource(h)
        return 404, {"Content-Type": "text/plain"}, b"not found"

    @staticmethod
    def json(status: int, doc: Any, headers: Optional[Dict[str, str]] = None) -> Tuple[int, Dict[str, str], bytes]:
        h = {"Content-Type": "application/json", "Cache-Control": "no-store"}
        h.update(headers or {})
        return status, h, json.dumps(doc).encode("utf-8")

    def document(self, path: str) -> Optional[Dict[str, Any]]:
        ip = self.issuer_path
        prm_paths = {
            "header": self.prm_header_path,
            "path": "/.well-known/oauth-protected-resource" + self.mcp_path,
            "root": "/.well-known/oauth-protected-resource",
        }
        for kind, p in prm_paths.items():
            if path == p and kind in self.prm_locations:
                return self.prm
        as_paths = {
            "oauth": "/.well-known/oauth-authorization-server" + ip,
            "oidc": "/.well-known/openid-configuration" + ip,
            "oidc_suffix": ip + "/.well-known/openid-configuration",
        }
        for kind, p in as_paths.items():
            if path == p and kind in self.as_locations:
                return self.metadata
        if self.legacy_metadata_ok and path == "/.well-known/oauth-authorization-server":
            return self.metadata
        return None

    # -- DPoP (RFC 9449)

    def verify_dpop(
        self, proof: Optional[str], method: str, url: str, *, token: Optional[str] = None, nonce: Optional[str] = None
    ) -> str:
        """Check one DPoP proof like a strict server; the key's thumbprint. Raises ValueError(reason)."""
        from cryptography.hazmat.primitives.asymmetric import ec, rsa

        if not proof or "," in proof:
            raise ValueError("missing or multiple DPoP proofs")
        header = json.loads(_b64url_decode(proof.split(".")[0]))
        if header.get("typ") != "dpop+jwt" or header.get("alg") not in (self.dpop_algs or ["ES256"]):
            raise ValueError("bad typ or alg")
        jwk = header.get("jwk") or {}
        if "d" in jwk or "p" in jwk:
            raise ValueError("private key in jwk")
        if jwk.get("kty") == "EC":
            x, y = (int.from_bytes(_b64url_decode(jwk[k]), "big") for k in ("x", "y"))
            public: Any = ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key()
            members = {k: jwk[k] for k in ("crv", "kty", "x", "y")}
        else:
            n, e = (int.from_bytes(_b64url_decode(jwk[k]), "big") for k in ("n", "e"))
            public = rsa.RSAPublicNumbers(e, n).public_key()
            members = {k: jwk[k] for k in ("e", "kty", "n")}
        claims = verify_jwt(proof, public)
        if claims.get("htm") != method or claims.get("htu") != url:
            raise ValueError("htm/htu mismatch: %r %r" % (claims.get("htm"), claims.get("htu")))
        if not isinstance(claims.get("iat"), int) or abs(claims["iat"] - time.time()) > 60:
            raise ValueError("iat")
        with self.lock:
            if claims.get("jti") in self.dpop_jtis or not claims.get("jti"):
                raise ValueError("jti replayed")
            self.dpop_jtis.add(claims["jti"])
        if token is not None:
            ath = base64.urlsafe_b64encode(hashlib.sha256(token.encode()).digest()).decode().rstrip("=")
            if claims.get("ath") != ath:
                raise ValueError("ath")
        if nonce is not None and claims.get("nonce") != nonce:
            raise LookupError("nonce")
        canonical = json.dumps(members, separators=(",", ":"), sort_keys=True).encode()
        return base64.urlsafe_b64encode(hashlib.sha256(canonical).digest()).decode().rstrip("=")

    def check_token_dpop(self, h: "_Handler") -> Optional[str]:
        proof = h.headers.get("DPoP")
        if self.dpop_algs is None or proof is None:
            return None
        try:
            return self.verify_dpop(proof, "POST", self.metadata["token_endpoint"], nonce=self.dpop_nonce_as)
        except LookupError:
            raise OAuthError("use_dpop_nonce", "a DPoP nonce is required") from None
        except Exception as exc:  # noqa: BLE001
            with self.lock:
                self.dpop_errors.append("token: %s" % exc)
            raise OAuthError("invalid_dpop_proof", str(exc)) from None

    def challenge(self, error: Optional[str] = None, scope: Optional[str] = None) -> str:
        parts = []
        if "header" in self.prm_locations:
            parts.append('resource_metadata="%s"' % (self.base + self.prm_header_path))
        if scope:
            parts.append('scope="%s"' % scope)
        if error:
            parts.append('error="%s"' % error)
        bearer = "Bearer " + ", ".join(parts) if parts else "Bearer"
        if self.dpop_algs is None:
            return bearer
        dpop = 'DPoP algs="%s"' % " ".join(self.dpop_algs) + (", " + ", ".join(parts) if parts else "")
        return dpop if self.dpop_only else bearer + ", " + dpop

    def resource(self, h: "_Handler") -> Tuple[int, Dict[str, str], bytes]:
        auth = h.headers.get("Authorization", "")
        scheme, _, token_text = auth.partition(" ")
        token = token_text if scheme in ("Bearer", "DPoP") and token_text else None
        source = self.token_source or self
        with source.lock:
            info = source.access_tokens.get(token or "")
        if info is not None and info.get("jkt"):
            if scheme != "DPoP":
                info = None  # a DPoP-bound token presented as a bearer token is not valid
            else:
                try:
                    jkt = self.verify_dpop(
                        h.headers.get("DPoP"), h.command, self.server_url, token=token, nonce=self.dpop_nonce_rs
                    )
                except LookupError:
                    headers = {
                        "WWW-Authenticate": 'DPoP error="use_dpop_nonce", error_description="nonce required"',
                        "DPoP-Nonce": self.dpop_nonce_rs or "",
                    }
                    return self.json(401, {"error": "use_dpop_nonce"}, headers)
                except Exception as exc:  # noqa: BLE001
                    with self.lock:
                        self.dpop_errors.append("resource: %s" % exc)
                    jkt = None
                if jkt != info["jkt"]:
                    info = None
        elif info is not None and scheme != "Bearer":
            info = None
        if info is None or (info["exp"] is not None and info["exp"] < time.time()):
            return self.json(
                401,
                {"error": "unauthorized"},
                {"WWW-Authenticate": self.challenge("invalid_token" if token else None, self.challenge_scope)},
            )
        missing = [s for s in self.required_scopes if s not in info["scope"]]
        if missing:
            wanted = " ".join(self.required_scopes)
            return self.json(
                403, {"error": "insufficient_scope"}, {"WWW-Authenticate": self.challenge("insufficient_scope", wanted)}
            )
        return self.json(200, {"ok": True, "scope": sorted(info["scope"])})

    def authorize(self, q: Dict[str, str]) -> Tuple[int, Dict[str, str], bytes]:
        client_id = q.get("client_id", "")
        redirect_uri = q.get("redirect_uri", "")
        with self.lock:
            client = self.clients.get(client_id)
        if client is None or redirect_uri not in client["redirect_uris"]:
            return 400, {"Content-Type": "text/plain"}, b"unknown client or redirect_uri"
        params: Dict[str, str] = {"state": q.get("state", "")}
        if self.approve != "approve":
            params.update(error=self.approve, error_description=self.error_description)
        elif q.get("code_challenge_method") != "S256" or not q.get("code_challenge"):
            params.update(error="invalid_request", error_description="PKCE S256 required")
        elif q.get("response_type") != "code":
            params.update(error="unsupported_response_type")
        else:
            code = "code-" + secrets.token_hex(12)
            with self.lock:
                self.codes[code] = {
                    "client_id": client_id,
                    "redirect_uri": redirect_uri,
                    "challenge": q["code_challenge"],
                    "resource": q.get("resource"),
                    "scope": (q.get("scope") or "").split(),
                }
            params["code"] = code
        if self.iss_mode == "correct":
            params["iss"] = self.issuer
        elif self.iss_mode == "wrong":
            params["iss"] = "https://evil.example.com"
        elif self.iss_mode == "normalized":
            params["iss"] = self.issuer + "/"
        sep = "&" if "?" in redirect_uri else "?"
        return 302, {"Location": redirect_uri + sep + urlencode(params), "Content-Length": "0"}, b""

    def authenticate_client(self, h: "_Handler", form: Dict[str, str], *, required: bool = True) -> str:
        auth = h.headers.get("Authorization", "")
        used = "none"
        if auth.startswith("Basic "):
            from urllib.parse import unquote_plus

            raw = base64.b64decode(auth[6:]).decode("utf-8")
            user, _, pwd = raw.partition(":")
            client_id, secret, used = unquote_plus(user), unquote_plus(pwd), "client_secret_basic"
        elif form.get("client_assertion"):
            used = "private_key_jwt"
            if form.get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer":
                raise OAuthError("invalid_client", "bad assertion type", 401)
            claims_unverified = json.loads(_b64url_decode(form["client_assertion"].split(".")[1]))
            client_id = claims_unverified.get("iss", "")
            secret = None
        else:
            client_id = form.get("client_id", "")
            secret = form.get("client_secret")
            if secret is not None:
                used = "client_secret_post"
        with self.lock:
            client = self.clients.get(client_id)
        if (
            client is None
            and client_id.startswith("https://")
            and self.metadata.get("client_id_metadata_document_supported")
        ):
            client = {"method": "none", "redirect_uris": [], "secret": None}
        if client is None:
            raise OAuthError("invalid_client", "unknown client", 401)
        if client["method"] != used:
            raise OAuthError("invalid_client", "expected %s, got %s" % (client["method"], used), 401)
        if used in ("client_secret_basic", "client_secret_post") and secret != client["secret"]:
            raise OAuthError("invalid_client", "bad secret", 401)
        if used == "private_key_jwt":
            try:
                claims = verify_jwt(form["client_assertion"], client["public_key"])
            except Exception:
                raise OAuthError("invalid_client", "bad assertion signature", 401) from None
            if claims.get("sub") != client_id or claims.get("aud") not in (
                self.issuer,
                self.metadata["token_endpoint"],
            ):
                raise OAuthError("invalid_client", "bad assertion claims", 401)
            if claims.get("exp", 0) < time.time():
                raise OAuthError("invalid_client", "expired assertion", 401)
        return client_id

    def _tokens(
        self,
        client_id: str,
        scopes: List[str],
        resource: Optional[str],
        refresh: bool = True,
        jkt: Optional[str] = None,
    ) -> Dict[str, Any]:
        doc: Dict[str, Any] = {
            "access_token": self.issue_access_token(scopes, self.expires_in, resource, jkt),
            "token_type": "DPoP" if jkt else "Bearer",
            "scope": " ".join(scopes),
        }
        if self.expires_in:
            doc["expires_in"] = self.expires_in
        if refresh and self.issue_refresh_tokens:
            doc["refresh_token"] = self.issue_refresh_token(client_id, scopes, resource, jkt)
        return doc

    def workload_grant(self, form: Dict[str, str], jkt: Optional[str]) -> Dict[str, Any]:
        """RFC 7523 jwt-bearer with a workload's own JWT (workload identity federation)."""
        assertion = form.get("assertion", "")
        try:
            claims_unverified = json.loads(_b64url_decode(assertion.split(".")[1]))
            key = self.workload_keys[claims_unverified.get("iss")]
            claims = verify_jwt(assertion, key)
        except Exception:  # noqa: BLE001
            raise OAuthError("invalid_grant", "the assertion does not verify") from None
        if claims.get("aud") not in (self.issuer, self.metadata["token_endpoint"]):
            raise OAuthError("invalid_grant", "bad audience")
        if claims.get("exp", 0) < time.time():
            raise OAuthError("invalid_grant", "expired assertion")
        scopes = (form.get("scope") or "").split()
        if "forbidden" in scopes:
            raise OAuthError("invalid_scope", "scope not permitted for this workload")
        return self._tokens(str(claims.get("sub")), scopes, form.get("resource"), refresh=False, jkt=jkt)

    def token(self, h: "_Handler", form: Dict[str, str], jkt: Optional[str] = None) -> Dict[str, Any]:
        grant = form.get("grant_type")
        if grant == GRANT_JWT_BEARER and self.workload_keys and form.get("assertion", "").count(".") == 2:
            if form.get("resource") != self.prm["resource"]:
                raise OAuthError("invalid_target", "resource %r" % form.get("resource"))
            if form.get("client_id"):
                self.authenticate_client(h, form)
            return self.workload_grant(form, jkt)
        if grant == GRANT_TOKEN_EXCHANGE:  # this server is also the identity provider
            self.authenticate_client(h, form)
            if (
                form.get("requested_token_type") != TOKEN_TYPE_ID_JAG
                or form.get("subject_token_type") != TOKEN_TYPE_ID_TOKEN
            ):
                raise OAuthError("invalid_request", "bad token types")
            with self.lock:
                subject = self.id_tokens.get(form.get("subject_token", ""))
            if subject is None:
                raise OAuthError("invalid_grant", "unknown id token")
            jag = "jag-" + secrets.token_hex(12)
            with self.lock:
                self.jags[jag] = {
                    "sub": subject,
                    "aud": form.get("audience"),
                    "resource": form.get("resource"),
                    "scope": (form.get("scope") or "").split(),
                }
            return {"access_token": jag, "issued_token_type": TOKEN_TYPE_ID_JAG, "token_type": "N_A", "expires_in": 300}
        client_id = self.authenticate_client(h, form)
        resource = form.get("resource")
        if resource != self.prm["resource"]:
            raise OAuthError("invalid_target", "resource %r" % resource)
        if grant == "authorization_code":
            with self.lock:
                info = self.codes.pop(form.get("code", ""), None)
            if info is None or info["client_id"] != client_id:
                raise OAuthError("invalid_grant", "bad code")
            if form.get("redirect_uri") != info["redirect_uri"]:
                raise OAuthError("invalid_grant", "redirect_uri mismatch")
            verifier = form.get("code_verifier", "")
            digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
            if not 43 <= len(verifier) <= 128 or digest != info["challenge"]:
                raise OAuthError("invalid_grant", "PKCE verification failed")
            if info["resource"] != resource:
                raise OAuthError("invalid_target", "resource differs from the authorization request")
            return self._tokens(client_id, info["scope"], resource, jkt=jkt)
        if grant == "refresh_token":
            presented = form.get("refresh_token", "")
            with self.lock:
                if self.rotate_refresh_tokens:
                    info = self.refresh_tokens.pop(presented, None)  # rotation: single use
                    if info is not None:
                        self.retired_refresh_tokens[presented] = info
                    elif not self.reject_reused_refresh:
                        info = self.retired_refresh_tokens.pop(presented, None)
                else:
                    info = self.refresh_tokens.get(presented)
            if info is None or info["client_id"] != client_id:
                raise OAuthError("invalid_grant", "refresh token invalid")
            if info.get("jkt") and info["jkt"] != jkt:
                raise OAuthError("invalid_grant", "refresh token is bound to another DPoP key")
            return self._tokens(client_id, info["scope"], resource, refresh=self.rotate_refresh_tokens, jkt=jkt)
        if grant == "client_credentials":
            return self._tokens(client_id, (form.get("scope") or "").split(), resource, refresh=False, jkt=jkt)
        if grant == GRANT_JWT_BEARER:
            with self.lock:
                jag = self.jags.pop(form.get("assertion", ""), None)
            if jag is None or jag["aud"] != self.issuer or jag["resource"] != resource:
                raise OAuthError("invalid_grant", "bad ID-JAG")
            return self._tokens(client_id, jag["scope"], resource, refresh=False)
        raise OAuthError("unsupported_grant_type", str(grant))

    def register(self, body: Any) -> Tuple[int, Dict[str, str], bytes]:
        if not isinstance(body, dict) or not body.get("redirect_uris"):
            return self.json(400, {"error": "invalid_client_metadata"})
        method = self.dcr_method or body.get("token_endpoint_auth_method") or "client_secret_basic"
        client_id = "dcr-" + secrets.token_hex(6)
        secret = secrets.token_hex(12) if method != "none" else None
        self.add_client(client_id, redirect_uris=body["redirect_uris"], method=method, secret=secret)
        doc = {
            "client_id": client_id,
            "client_id_issued_at": int(time.time()),
            "token_endpoint_auth_method": method,
            "redirect_uris": body["redirect_uris"],
        }
        if secret:
            doc["client_secret"] = secret
            doc["client_secret_expires_at"] = 0
        return self.json(201, doc)


class _Handler(BaseHTTPRequestHandler):
    timeout = 10

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def _dispatch(self, method: str) -> None:
        app: AuthTestServer = self.server.app  # type: ignore[attr-defined]
        parts = urlsplit(self.path)
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        form: Dict[str, str] = {}
        body: Any = None
        ctype = self.headers.get("Content-Type", "")
        if raw and "application/x-www-form-urlencoded" in ctype:
            form = dict(parse_qsl(raw.decode("utf-8"), keep_blank_values=True))
        elif raw and "json" in ctype:
            body = json.loads(raw.decode("utf-8"))
        app.record(
            {
                "method": method,
                "path": parts.path,
                "query": query,
                "form": form,
                "json": body,
                "headers": dict(self.headers.items()),
            }
        )
        status, headers, payload = app.route(self, method, parts.path, query, form, body)
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        if "Content-Length" not in headers:
            self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if payload:
            self.wfile.write(payload)

    def do_GET(self) -> None:  # noqa: N802
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch("POST")

    def do_DELETE(self) -> None:  # noqa: N802
        self._dispatch("DELETE")


def free_port() -> int:
    """A TCP port that was free on 127.0.0.1 a moment ago, chosen *below* the ephemeral range.

    A port from the ephemeral range (what binding port 0 gives) can be handed out again by
    the kernel as the source port of any outgoing connection the moment it is released,
    which makes re-binding it (as the callback server does when it takes over a port) fail
    for as long as that connection lives. Real callback ports (19876) are outside that range.
    """
    import random
    import socket

    low = 32768
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as fh:
            low = int(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        pass
    for _ in range(200):
        port = random.randint(20000, max(20001, min(low, 32768) - 1))
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as s:  # fall back to any free port
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def approve_via_http(request: Any) -> str:
    """An authorization handler: GET the authorization URL like a browser would, return the redirect URL."""
    import requests

    with requests.get(request.url, allow_redirects=False, timeout=10) as resp:
        if resp.status_code != 302:
            raise AssertionError("authorization endpoint answered %s: %s" % (resp.status_code, resp.text))
        return resp.headers["Location"]


# ---------------------------------------------------------------------------- pytest fixtures
# Test modules import these names; pytest picks fixtures up from a module's namespace.

import pytest  # noqa: E402


def mcpsync_threads() -> List[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("mcpsync-")]


@pytest.fixture
def no_auth_leaks():
    """No callback server may outlive a test (conftest's autouse check covers threads and processes)."""
    yield
    from mcpsync.auth import callback

    assert callback.running_servers() == []


@pytest.fixture
def srv():
    with AuthTestServer() as server:
        yield server


@pytest.fixture
def store(tmp_path):
    from mcpsync.auth.store import CredentialStore

    return CredentialStore(str(tmp_path / "mcp-auth.json"))


@pytest.fixture
def make_manager(store):
    from mcpsync.auth import OAuthManager

    made = []

    def factory(**kwargs: Any) -> Any:
        kwargs.setdefault("store", store)
        kwargs.setdefault("callback_port", free_port())
        kwargs.setdefault("authorize_handler", approve_via_http)
        manager = OAuthManager(**kwargs)
        made.append(manager)
        return manager

    yield factory
    for manager in made:
        manager.close()


@pytest.fixture
def manager(make_manager, srv):
    m = make_manager()
    m.add_server("srv", srv.server_url)
    return m
