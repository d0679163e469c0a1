"""A ``requests`` auth whose response hook resends the request (the idiom of requests' own HTTPDigestAuth and
of mcpsync's OAuthAuth on a 401) works through the HTTP transport's fast sender: the prepared request it copies
carries a cookie jar, as requests' own prepared requests do."""

from __future__ import annotations

from typing import Any

import requests
from requests.cookies import extract_cookies_to_jar

import mcpsync

from tests.peers.httpserver import MCPTestServer
from mcpsync.client import HTTPOptions


class ResendOn401(requests.auth.AuthBase):
    """Sends no credentials first; on a 401 resends the same request once with a bearer token."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.resent = 0

    def __call__(self, r: Any) -> Any:
        r.register_hook("response", self.handle_401)
        return r

    def handle_401(self, r: Any, **kwargs: Any) -> Any:
        if r.status_code != 401:
            return r
        r.content  # noqa: B018 - drain so the connection can be reused
        r.close()
        prep = r.request.copy()
        extract_cookies_to_jar(prep._cookies, r.request, r.raw)
        prep.prepare_cookies(prep._cookies)
        prep.headers["Authorization"] = "Bearer " + self.token
        self.resent += 1
        new = r.connection.send(prep, **kwargs)
        new.history.append(r)
        new.request = prep
        return new


def test_a_response_hook_that_resends_the_request() -> None:
    with MCPTestServer(era="legacy") as srv:
        srv.faults.require_token = "good"
        auth = ResendOn401("good")
        with mcpsync.connect(srv.url, protocol="legacy", http=HTTPOptions(transport="http"), auth=auth) as client:
            assert client.call_tool("echo", {"message": "hi"}).text == "hi"
        assert auth.resent >= 2  # initialize and every later request got a 401 first
