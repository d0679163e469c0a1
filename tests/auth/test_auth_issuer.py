"""Issuer rules against the local authorization server: RFC 9207 ``iss``, RFC 8414 metadata issuer,
and authorization-server migration (credentials bound to the issuer, SEP-2352)."""

from __future__ import annotations

import pytest
import requests

from mcpsync.errors import AuthError, CallbackError
from tests.peers.authserver import AuthTestServer, make_manager, manager, no_auth_leaks, srv, store  # noqa: F401

pytestmark = pytest.mark.usefixtures("no_auth_leaks")


def call(url, auth):
    with requests.Session() as session:
        with session.post(url, auth=auth, timeout=60) as resp:
            return resp.status_code


@pytest.mark.parametrize(
    "mode,advertised",
    [("wrong", True), ("omit", True), ("normalized", True), ("wrong", False), ("normalized", False)],
)
def test_bad_iss_never_reaches_the_token_endpoint(srv, manager, mode, advertised):
    # iss-wrong-issuer, iss-supported-missing, iss-normalized (a trailing "/" is a mismatch:
    # no URL normalization), iss-unexpected (an unadvertised iss is still compared)
    srv.iss_mode = mode
    srv.metadata["authorization_response_iss_parameter_supported"] = advertised
    with pytest.raises(CallbackError, match="iss"):
        manager.authenticate("srv")
    assert srv.requests_to("/authorize") and srv.token_requests() == []
    assert manager.get_auth_status("srv") == "not_authenticated"


@pytest.mark.parametrize("advertised", [True, False])
def test_correct_or_absent_unadvertised_iss_is_accepted(srv, manager, advertised):
    srv.metadata["authorization_response_iss_parameter_supported"] = advertised
    srv.iss_mode = "correct" if advertised else "omit"
    manager.authenticate("srv")
    assert manager.get_auth_status("srv") == "authenticated"


def test_metadata_whose_issuer_differs_is_never_used(srv, manager):
    # metadata-issuer-mismatch: the document at the issuer's well-known URL names another issuer
    srv.as_locations = {"oauth", "oidc"}
    srv.metadata = dict(srv.metadata, issuer="https://attacker.example.com")
    with pytest.raises(AuthError, match="no authorization server metadata"):
        manager.authenticate("srv")
    assert not any(p.endswith(("/authorize", "/register", "/token")) for p in srv.paths())


def test_authorization_server_migration_registers_again_and_never_leaks_the_old_client(srv, manager):
    # The resource first trusts AS1 (srv); then its PRM names AS2 and AS1's tokens stop working.
    auth = manager.auth("srv", interactive=True)
    assert call(srv.server_url, auth) == 200
    as1_client = manager.store.get("srv")["clientInfo"]["clientId"]
    with AuthTestServer() as as2:
        as2.prm = srv.prm
        srv.prm["authorization_servers"] = [as2.issuer]
        srv.token_source = as2
        assert call(srv.server_url, auth) == 200
        entry = manager.store.get("srv")
        assert entry["issuer"] == as2.issuer and entry["clientInfo"]["clientId"] != as1_client
        assert len(as2.requests_to("/register")) == 1
        for request in as2.log:
            assert as1_client not in repr(request)  # the old client id is never presented to AS2
        assert call(srv.server_url, auth) == 200  # and the new token keeps working
