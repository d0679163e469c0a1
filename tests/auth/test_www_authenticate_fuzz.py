"""Hypothesis suite for the ``WWW-Authenticate`` parsers (issue 9: hostile peers).

Invariants: an arbitrary header string never makes a parser raise and always gives the
documented types; valid challenges interleaved with junk items (and optional whitespace)
still parse to exactly their schemes and parameters; and over a real local server, any
header a 401 can carry ends in :class:`~mcpsync.errors.AuthRequired` (never another
exception) while the next request on the same session still gets its answer.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Tuple

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from mcpsync.auth.discovery import (  # noqa: E402
    challenge_for,
    parse_challenges,
    parse_www_authenticate,
    preferred_challenge,
)
from mcpsync.errors import AuthRequired  # noqa: E402
from mcpsync.transports.http import remote as _remote  # noqa: E402
from tests.conftest import fuzz_examples  # noqa: E402

TCHAR = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
TOKEN = st.text(alphabet=TCHAR, min_size=1, max_size=12)
TOKEN68 = st.builds(
    lambda body, pad: body + "=" * pad,
    st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~+/", min_size=1, max_size=20),
    st.integers(0, 2),
)
OWS = st.text(alphabet=" \t", max_size=2)
# Junk items contain no token character, so they can never be read as a scheme or a parameter.
JUNK = st.text(alphabet=';@[]{}?()<>:\\/"=', min_size=1, max_size=6).filter(lambda s: not s.startswith("="))
QUOTED_TEXT = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E) | st.sampled_from("\t\u00e9\u00fc"), max_size=30
)


def quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


@st.composite
def challenge(draw: Any) -> Tuple[str, Dict[str, str], str]:
    """(scheme, expected params, rendered text) of one valid challenge."""
    scheme = draw(TOKEN)
    kind = draw(st.sampled_from(["bare", "token68", "params"]))
    if kind == "bare":
        return scheme, {}, scheme
    if kind == "token68":
        value = draw(TOKEN68)
        return scheme, {"token68": value}, "%s %s" % (scheme, value)
    names = draw(st.lists(TOKEN.map(str.lower), min_size=1, max_size=4, unique=True))
    expected: Dict[str, str] = {}
    parts: List[str] = []
    for name in names:
        if draw(st.booleans()):
            value = draw(QUOTED_TEXT)
            rendered = quote(value)
        else:
            value = draw(TOKEN)  # unquoted: a non-empty token
            rendered = value
        expected[name] = value
        name_case = name.upper() if draw(st.booleans()) else name
        parts.append("%s%s=%s%s" % (name_case, draw(OWS), draw(OWS), rendered))
    sep = draw(st.sampled_from([",", ", ", " ,", ",\t"]))
    return scheme, expected, "%s %s" % (scheme, sep.join(parts))


@settings(max_examples=fuzz_examples(3000), suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300))
def test_arbitrary_text_never_raises(header: str) -> None:
    challenges = parse_challenges(header)
    assert isinstance(challenges, list)
    for scheme, params in challenges:
        assert isinstance(scheme, str) and scheme
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in params.items())
    params = parse_www_authenticate(header)
    assert params == preferred_challenge(challenges)
    assert "token68" not in params
    assert challenge_for(header, "bearer") is None or isinstance(challenge_for(header, "Bearer"), dict)
    transport_params = _remote.parse_www_authenticate(header)
    assert isinstance(transport_params, dict)


@settings(max_examples=fuzz_examples(2000))
@given(st.binary(max_size=200))
def test_arbitrary_latin1_bytes_never_raise(raw: bytes) -> None:
    header = raw.decode("latin-1")  # what an HTTP library hands over for a non-UTF-8 header
    parse_challenges(header)
    parse_www_authenticate(header)
    _remote.parse_www_authenticate(header)


@settings(max_examples=fuzz_examples(3000))
@given(
    st.lists(challenge(), min_size=1, max_size=4),
    st.lists(JUNK, max_size=4),
    st.randoms(use_true_random=False),
)
def test_valid_challenges_interleaved_with_junk_parse_exactly(
    challenges: List[Tuple[str, Dict[str, str], str]], junk: List[str], rnd: Any
) -> None:
    items = [c[2] for c in challenges]
    for piece in junk:
        items.insert(rnd.randint(1, len(items)), piece)  # junk goes between challenges or at the end
    header = ", ".join(items)
    assert parse_challenges(header) == [(scheme, params) for scheme, params, _ in challenges]
    bearer = [params for scheme, params, _ in challenges if scheme.lower() == "bearer"]
    if bearer:
        assert parse_www_authenticate(header) == {k: v for k, v in bearer[0].items() if k != "token68"}


@settings(max_examples=fuzz_examples(1000))
@given(st.lists(challenge(), min_size=1, max_size=3))
def test_a_bearer_challenge_is_found_among_others(others: List[Tuple[str, Dict[str, str], str]]) -> None:
    header = ", ".join([c[2] for c in others] + ['Bearer resource_metadata="https://h/prm", scope="a b"'])
    found = parse_www_authenticate(header)
    first_bearer = next((p for s, p, _ in others if s.lower() == "bearer"), None)
    expected = first_bearer if first_bearer is not None else {"resource_metadata": "https://h/prm", "scope": "a b"}
    assert found == {k: v for k, v in expected.items() if k != "token68"}


# ---------------------------------------------------------------------------- over a real server


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        header = self.server.challenge  # type: ignore[attr-defined]
        if self.path == "/ok":
            body = b'{"ok": true}'
            self.send_response(200)
        else:
            body = b'{"error": "unauthorized"}'
            self.send_response(401)
            self.send_header("WWW-Authenticate", header)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def hostile_server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    httpd.challenge = "Bearer"  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), name="test-hostile-401", daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()
    thread.join(10)


# Header values an HTTP server can actually send: latin-1, no CR/LF/NUL.
HEADER_VALUE = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0xFF, blacklist_characters="\x7f"), max_size=200
).map(str.strip)


@settings(max_examples=fuzz_examples(200, 40), deadline=None)
@given(HEADER_VALUE)
def test_any_401_challenge_ends_in_auth_required_and_the_session_stays_usable(hostile_server, tmp_path, header):
    import requests

    from mcpsync.auth import OAuthManager

    hostile_server.challenge = header
    base = "http://127.0.0.1:%d" % hostile_server.server_address[1]
    with OAuthManager(store=str(tmp_path / "auth.json")) as manager:
        manager.add_server("srv", base + "/mcp")
        with requests.Session() as session:
            session.auth = manager.auth("srv")
            with pytest.raises(AuthRequired) as info:
                session.post(base + "/mcp", data=b"{}", timeout=30)
            assert isinstance(info.value.www_authenticate, dict)
            with session.post(base + "/ok", data=b"{}", timeout=30) as resp:
                assert resp.status_code == 200 and resp.json() == {"ok": True}
