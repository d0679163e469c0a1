"""Damaged credential files (issue 9, defect 6) and a hypothesis suite over the store reader.

One rule, whatever the damage: an unreadable file (not UTF-8, not JSON, wrong top-level
shape) is moved aside byte-identical, a CredentialStoreError names the backup, and the store
goes on empty; inside a readable file, ill-typed entries and fields read as absent while the
valid entries beside them read correctly. No other exception ever escapes.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from typing import Any, Dict, List

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from mcpsync.auth import OAuthManager  # noqa: E402
from mcpsync.auth.store import CredentialStore  # noqa: E402
from mcpsync.auth.store_base import clean_entry  # noqa: E402
from mcpsync.errors import CredentialStoreError, MCPError  # noqa: E402
from tests.conftest import fuzz_examples  # noqa: E402

URL = "http://127.0.0.1:9/mcp"  # discard port: nothing listens, nothing is ever sent there
GOOD: Dict[str, Any] = {
    "serverUrl": URL,
    "issuer": "http://127.0.0.1:9",
    "tokenEndpoint": "http://127.0.0.1:9/token",
    "tokens": {"accessToken": "AT-good", "refreshToken": "RT-good", "expiresAt": 4102444800, "scope": "read"},
    "clientInfo": {"clientId": "cid", "redirectUri": "http://127.0.0.1:1/cb"},
}


def backups(directory: str) -> List[str]:
    return sorted(os.path.join(directory, n) for n in os.listdir(directory) if ".corrupt-" in n)


def manager_for(store: CredentialStore) -> OAuthManager:
    oauth = OAuthManager(store=store, http_timeout=2)
    oauth.add_server("s", URL)
    oauth.add_server("good", URL)
    return oauth


# ---------------------------------------------------------------------- defect 6 regressions

UNREADABLE = [
    b"\xff\xfe\x00garbage\x80",  # not UTF-8
    b'{"servers": {"s": "\xc3\x28"}}',  # invalid UTF-8 inside valid-looking JSON
    b"\x00" * 64,
    b"{not json",
    b"[1, 2, 3]",  # top level not an object
    b'"just a string"',
    b'{"version": 1, "servers": []}',  # servers not an object
    b'{"version": 1, "servers": "x"}',
    b"[" * 100000,  # too deeply nested to parse
]


@pytest.mark.parametrize("content", UNREADABLE, ids=range(len(UNREADABLE)))
def test_unreadable_file_is_moved_aside_byte_identical_and_the_store_goes_on(tmp_path, content):
    path = tmp_path / "mcp-auth.json"
    path.write_bytes(content)
    store = CredentialStore(str(path))
    with pytest.raises(CredentialStoreError) as info:
        store.get("s")
    found = backups(str(tmp_path))
    assert len(found) == 1
    with open(found[0], "rb") as fh:
        assert fh.read() == content
    assert found[0] in str(info.value)
    assert not path.exists()
    # the store goes on empty and works
    assert store.get("s") is None and store.all() == {}
    store.update_tokens("s", {"accessToken": "AT"}, URL)
    assert store.get("s")["tokens"]["accessToken"] == "AT"


@pytest.mark.parametrize("op", ["update", "remove", "record_callback", "take_callback", "all"])
def test_every_operation_reports_an_unreadable_file_the_same_way(tmp_path, op):
    path = tmp_path / "mcp-auth.json"
    path.write_bytes(b"\x80\x81 not utf-8")
    store = CredentialStore(str(path))
    calls = {
        "update": lambda: store.update_tokens("s", {"accessToken": "AT"}, URL),
        "remove": lambda: store.remove("s"),
        "record_callback": lambda: store.record_callback("st", {"code": "c"}),
        "take_callback": lambda: store.take_callback("st"),
        "all": lambda: store.all(),
    }
    with pytest.raises(CredentialStoreError, match="corrupt-"):
        calls[op]()
    assert len(backups(str(tmp_path))) == 1
    calls[op]()  # the second call works on the empty store


ILL_TYPED_TOKENS = ["a string", ["list"], 42, None, True, {"accessToken": ["x"]}, {"accessToken": {"a": 1}}, {}]


@pytest.mark.parametrize("tokens", ILL_TYPED_TOKENS, ids=range(len(ILL_TYPED_TOKENS)))
def test_ill_typed_tokens_read_as_absent_and_never_raise_attribute_error(tmp_path, tokens):
    path = tmp_path / "mcp-auth.json"
    bad = dict(GOOD, tokens=tokens)
    path.write_text(json.dumps({"version": 1, "servers": {"s": bad, "good": GOOD}}))
    store = CredentialStore(str(path))
    with manager_for(store) as oauth:
        assert oauth.has_stored_tokens("s") is False
        assert oauth.get_auth_status("s") == "not_authenticated"
        assert oauth.get_access_token("s") is None  # interactive grant, nothing usable: no browser, None
        # the valid entry beside it is untouched
        assert oauth.has_stored_tokens("good") is True
        assert oauth.get_auth_status("good") == "authenticated"
        assert oauth.get_access_token("good") == "AT-good"
    assert "tokens" not in store.get("s")
    assert store.get("s")["clientInfo"] == GOOD["clientInfo"]
    assert backups(str(tmp_path)) == []  # a readable file is not moved


@pytest.mark.parametrize(
    "entry",
    ["string entry", ["list"], 3, None, {"serverUrl": 5, "tokens": {"accessToken": "AT"}}],
    ids=range(5),
)
def test_ill_typed_entries_read_as_absent(tmp_path, entry):
    path = tmp_path / "mcp-auth.json"
    path.write_text(json.dumps({"version": 1, "servers": {"s": entry, "good": GOOD}}))
    store = CredentialStore(str(path))
    with manager_for(store) as oauth:
        assert oauth.has_stored_tokens("s") is False
        assert oauth.get_auth_status("s") == "not_authenticated"
        assert oauth.get_access_token("s") is None
        assert oauth.get_access_token("good") == "AT-good"
    assert store.get("good") == GOOD
    # writing the damaged entry replaces the junk; the other entry is kept
    store.update_tokens("s", {"accessToken": "new"}, URL)
    assert store.get("s")["tokens"] == {"accessToken": "new"}
    assert store.get("good") == GOOD


def test_ill_typed_fields_and_callbacks(tmp_path):
    path = tmp_path / "mcp-auth.json"
    entry = dict(GOOD)
    entry["tokens"] = dict(GOOD["tokens"], expiresAt=float("inf"), refreshToken=7)
    entry["needsAuth"] = "yes"
    entry["clientInfo"] = {"clientSecret": "orphan"}  # no clientId
    entry["pendingAuth"] = {"tokenEndpoint": "x"}  # incomplete
    text = json.dumps({"version": 1, "servers": {"s": entry}, "callbacks": {"a": "junk", "b": {"code": "C"}}})
    path.write_text(text.replace("Infinity", "1e999"))
    store = CredentialStore(str(path))
    got = store.get("s")
    assert got["tokens"] == {"accessToken": "AT-good", "scope": "read"}
    assert "needsAuth" not in got and "clientInfo" not in got and "pendingAuth" not in got
    assert store.take_callback("a") is None
    assert store.take_callback("b") == {"code": "C"}
    store.record_callback("c", {"code": "D"})
    assert store.take_callback("c") == {"code": "D"}


def test_non_finite_expiry_is_not_usable_forever(tmp_path):
    path = tmp_path / "mcp-auth.json"
    path.write_text('{"servers": {"s": {"serverUrl": "%s", "tokens": {"accessToken": "AT", "expiresAt": NaN}}}}' % URL)
    store = CredentialStore(str(path))
    assert "expiresAt" not in store.get("s")["tokens"]


# ---------------------------------------------------------------------- hypothesis suite

json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=20,
)
entry_keys = st.sampled_from(
    [
        "serverUrl",
        "tokens",
        "clientInfo",
        "issuer",
        "tokenEndpoint",
        "resource",
        "needsAuth",
        "pendingAuth",
        "tokenClient",
        "codeVerifier",
        "oauthState",
        "authIssuer",
        "requestedScope",
    ]
) | st.text(max_size=10)
token_like = st.fixed_dictionaries(
    {},
    optional={
        "accessToken": json_values,
        "refreshToken": json_values,
        "expiresAt": json_values,
        "scope": json_values,
        "tokenType": json_values,
    },
)
junk_entries = st.one_of(
    json_values,
    st.dictionaries(entry_keys, json_values | token_like, max_size=8),
    st.builds(lambda extra: dict(GOOD, **extra), st.dictionaries(entry_keys, json_values | token_like, max_size=4)),
)
documents = st.one_of(
    json_values,
    st.fixed_dictionaries({"version": json_values, "servers": json_values, "callbacks": json_values}),
    st.fixed_dictionaries(
        {"servers": st.dictionaries(st.text(max_size=10), junk_entries, max_size=5)},
        optional={"callbacks": st.dictionaries(st.text(max_size=5), json_values, max_size=3)},
    ),
)

_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture]
FUZZ = settings(deadline=None, suppress_health_check=_HEALTH, max_examples=fuzz_examples(2000))
FUZZ_SLOW = settings(deadline=None, suppress_health_check=_HEALTH, max_examples=fuzz_examples(1000))


class _Dir:
    def __enter__(self) -> str:
        self.path = tempfile.mkdtemp(prefix="mcpsync-store-fuzz-")
        return self.path

    def __exit__(self, *exc: Any) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def _exercise(store: CredentialStore) -> None:
    """Every operation on whatever is on disk: nothing but CredentialStoreError may escape."""
    for op in (
        lambda: store.get("s"),
        lambda: store.all(),
        lambda: store.get_for_url("s", URL),
        lambda: list(store.names()),
        lambda: store.find_state_owner("st"),
        lambda: store.take_callback("st"),
        lambda: store.record_callback("st2", {"code": "x"}),
        lambda: store.update_client_info("s", {"clientId": "c"}, URL),
        lambda: store.remove("zz"),
    ):
        try:
            op()
        except CredentialStoreError:
            pass


def _usable(store: CredentialStore) -> None:
    store.update_tokens("fresh", {"accessToken": "AT-fresh"}, URL)
    assert store.get("fresh")["tokens"] == {"accessToken": "AT-fresh"}
    assert store.get_for_url("fresh", URL) is not None


@FUZZ
@given(st.binary(max_size=300))
def test_fuzz_arbitrary_bytes_on_disk(content: bytes) -> None:
    with _Dir() as directory:
        path = os.path.join(directory, "mcp-auth.json")
        with open(path, "wb") as fh:
            fh.write(content)
        store = CredentialStore(path)
        _exercise(store)
        for backup in backups(directory):  # whatever was moved aside is the original, byte for byte
            with open(backup, "rb") as fh:
                assert fh.read() == content
        _usable(store)


@FUZZ
@given(documents)
def test_fuzz_arbitrary_json_documents_on_disk(doc: Any) -> None:
    with _Dir() as directory:
        path = os.path.join(directory, "mcp-auth.json")
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(doc, fh)
        store = CredentialStore(path)
        _exercise(store)
        _usable(store)


@FUZZ_SLOW
@given(st.dictionaries(st.text(max_size=10).filter(lambda n: n != "good"), junk_entries, max_size=6), json_values)
def test_fuzz_valid_entries_interleaved_with_junk_read_correctly(junk: Dict[str, Any], callbacks: Any) -> None:
    with _Dir() as directory:
        path = os.path.join(directory, "mcp-auth.json")
        servers = dict(junk)
        servers["good"] = GOOD
        with open(path, "w", encoding="utf-8") as fh:
            json.dump({"version": 1, "servers": servers, "callbacks": callbacks}, fh)
        store = CredentialStore(path)
        assert store.get("good") == GOOD
        assert store.all()["good"] == GOOD
        for name in junk:
            entry = store.get(name)
            assert entry is None or entry == clean_entry(entry)  # whatever reads is well typed
        with manager_for(store) as oauth:
            for name in list(junk)[:3]:
                oauth.add_server(name, URL)
                try:
                    assert isinstance(oauth.has_stored_tokens(name), bool)
                    assert oauth.get_auth_status(name) in ("authenticated", "expired", "not_authenticated")
                    token = oauth.get_access_token(name)
                    assert token is None or isinstance(token, str)
                except MCPError:
                    pass  # e.g. the refresh request to the (unreachable) endpoint failed: a typed error
            assert oauth.get_access_token("good") == "AT-good"
        # writes to a junk entry work, and never disturb the valid one
        for name in list(junk)[:2]:
            store.update_tokens(name, {"accessToken": "AT-" + name}, URL)
            assert store.get(name)["tokens"]["accessToken"] == "AT-" + name
        assert store.get("good") == GOOD
        assert backups(directory) == []
