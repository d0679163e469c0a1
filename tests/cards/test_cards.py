"""Server Cards end to end against real local peers: an AI Catalog and card host (tests/peers/cardserver.py: ETag, 304,
Cache-Control, redirects, junk) and the example server over Streamable HTTP in both eras (tests/peers/httpserver.py).

Discovery (url and inline data entries), the v1 schema, the disk cache across processes, the URL policy, connect
(``mcpsync.cards.connect``, ``cards.client_for``, ``mcpsync --card``), the seeded protocol era (no probe of the
other era), a Manager ``card`` entry, ``mcpsync install --card`` with consent and the credential store; every
hostile card gets a typed CardError and nothing is written.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import mcpsync
import mcpsync.cards as cards
from mcpsync.cli import main
from mcpsync.errors import MCPError
from mcpsync.registry.errors import ConsentRefused, ConsentRequired, MissingInput

from tests.peers.cardserver import CARD_TYPE, SCHEMA, CardServer, card_document
from tests.peers.httpserver import MCPTestServer
from tests.transports.test_http_tls import pki  # noqa: F401 - the throwaway CA fixture
from mcpsync.client import HTTPOptions

LOCAL = ["127.0.0.1"]
MODERN = "2026-07-28"
LEGACY = "2025-11-25"


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("MCPSYNC_AUTH_FILE", str(tmp_path / "store" / "mcp-auth.json"))
    monkeypatch.setenv("MCPSYNC_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("MCPSYNC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MCPSYNC_AUTH_STORE", raising=False)
    monkeypatch.delenv("MCPSYNC_CONFIG", raising=False)
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def host():
    with CardServer() as server:
        yield server


def cache_files(tmp_path):
    folder = tmp_path / "cache" / "cards"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def run(*argv, stdin=""):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err, stdin=io.StringIO(stdin))
    return code, out.getvalue(), err.getvalue()


# ---------------------------------------------------------------------------- discovery and validation


def test_discovery_follows_url_entries_and_reads_inline_data(host):
    card_url = host.route("/mcp/server-card", card_document("http://127.0.0.1:1/mcp"))
    inline = card_document("http://127.0.0.1:2/mcp", name="io.example/inline")
    host.catalog([
        {"identifier": "urn:air:example.com:mcp:weather", "type": CARD_TYPE, "url": "/mcp/server-card"},
        {"identifier": "urn:air:example.com:agent:x", "type": "application/a2a-agent-card+json", "url": "/nope"},
        {"identifier": "urn:air:example.com:mcp:inline", "type": CARD_TYPE, "data": inline},
    ])
    found = cards.discover(host.base, allow_local=LOCAL)
    assert [c.name for c in found] == ["io.example/weather", "io.example/inline"]
    assert found[0].source_url == card_url and found[1].source_url.endswith("/.well-known/ai-catalog.json")
    assert found[0].remotes[0].url == "http://127.0.0.1:1/mcp" and found[0].title == "Weather"
    catalog_hit = host.hits("/.well-known/ai-catalog.json")[0]
    assert catalog_hit["accept"] == "application/ai-catalog+json"
    assert host.hits("/mcp/server-card")[0]["accept"] == CARD_TYPE
    assert host.hits("/nope") == []  # another artifact type is not fetched
    only = cards.discover(host.base, identifier="io.example/inline", allow_local=LOCAL)
    assert [c.name for c in only] == ["io.example/inline"]
    with pytest.raises(cards.CardNotFound):
        cards.discover(host.base, identifier="io.example/absent", allow_local=LOCAL)
    with pytest.raises(cards.CardInvalid, match="max_cards"):
        cards.discover(host.base, allow_local=LOCAL, max_cards=1)


def test_cli_discover_lists_the_cards(host):
    host.route("/mcp/server-card", card_document("http://127.0.0.1:1/mcp", versions=[MODERN],
                                                 headers=[{"name": "X-API-Key", "isRequired": True}]))
    host.catalog([{"identifier": "urn:air:x:mcp:w", "type": CARD_TYPE, "url": "/mcp/server-card"}])
    code, out, err = run("discover", host.base, "--allow-local", "127.0.0.1")
    assert code == 0, err
    assert "io.example/weather  1.2.0  Weather for tests" in out and "card: %s/mcp/server-card" % host.base in out
    assert "streamable-http http://127.0.0.1:1/mcp  (2026-07-28)  headers: X-API-Key" in out
    code, out, err = run("discover", host.base, "--allow-local", "127.0.0.1", "--json")
    assert json.loads(out)[0]["remotes"][0]["headers"] == ["X-API-Key"]
    code, _out, err = run("discover", host.base)
    assert code != 0 and "allow_local" in err


def test_catalog_url_forms():
    assert cards.catalog_url("example.com") == "https://example.com/.well-known/ai-catalog.json"
    assert cards.catalog_url("http://127.0.0.1:8/") == "http://127.0.0.1:8/.well-known/ai-catalog.json"
    assert cards.catalog_url("https://example.com/cat.json") == "https://example.com/cat.json"


@pytest.mark.parametrize("mutate, where", [
    (lambda d: d.pop("name"), "name"),
    (lambda d: d.update({"$schema": SCHEMA.replace("v1", "2025-11-25")}), "$schema"),
    (lambda d: d.update({"name": "no-slash"}), "name"),
    (lambda d: d.update({"description": "x" * 101}), "description"),
    (lambda d: d["remotes"][0].update({"url": "file:///etc/passwd"}), "remotes[0].url"),
    (lambda d: d["remotes"][0].update({"type": "stdio"}), "remotes[0].type"),
    (lambda d: d["remotes"][0].update({"headers": [{"isSecret": True}]}), "remotes[0].headers[0]"),
])
def test_schema_violations_are_named_and_nothing_is_cached(host, tmp_path, mutate, where):
    doc = card_document("http://127.0.0.1:1/mcp")
    mutate(doc)
    url = host.route("/card", doc, cache_control="max-age=600")
    with pytest.raises(cards.CardInvalid) as info:
        cards.CardFetcher(allow_local=LOCAL).fetch_card(url)
    assert where in info.value.message
    assert cache_files(tmp_path) == []


def test_the_vendored_schema_is_package_data_and_accepts_the_spec_examples():
    schema = cards.card_schema()
    assert schema["$defs"]["ServerCard"]["required"] == ["$schema", "name", "version", "description"]
    minimal = {"$schema": SCHEMA, "name": "example-org/minimal", "version": "1.0.0", "description": "Smallest."}
    assert cards.parse_card(minimal).remotes == ()
    templated = card_document("https://{tenant}.example.com/mcp", versions=["2025-06-18", "2025-11-25"])
    templated["remotes"][0]["variables"] = {"tenant": {"isRequired": True, "default": "default"}}
    card = cards.parse_card(templated)
    assert card.remotes[0].variables[0].name == "tenant" and card.remotes[0].variables[0].default == "default"


# ---------------------------------------------------------------------------- caching


def test_etag_revalidation_costs_no_body(host, tmp_path):
    url = host.route("/card", card_document("http://127.0.0.1:1/mcp"))  # no Cache-Control: revalidate each time
    fetcher = cards.CardFetcher(allow_local=LOCAL)
    first = fetcher.fetch_card(url)
    second = fetcher.fetch_card(url)
    assert first == second and second.etag == first.etag is not None
    hits = host.hits("/card")
    assert len(hits) == 2 and "if-none-match" not in hits[0] and hits[1]["if-none-match"] == first.etag
    assert host.bodies_sent == 1  # the 304 carried no body
    assert len(cache_files(tmp_path)) == 1


def test_a_stale_copy_serves_while_the_host_is_down_but_not_once_the_card_is_gone(host, caplog):
    url = host.route("/card", card_document("http://127.0.0.1:1/mcp"), cache_control="max-age=60",
                     extra_headers={"Age": "60"})  # a shared cache held it for its whole lifetime: stale at once
    fetcher = cards.CardFetcher(allow_local=LOCAL)
    fetcher.fetch_card(url)
    host.route("/card", b"", status=503)
    assert fetcher.fetch_card(url).name == "io.example/weather"
    assert any("using the copy" in r.getMessage() for r in caplog.records)
    host.route("/card", b"", status=404)
    with pytest.raises(cards.CardUnavailable) as info:
        fetcher.fetch_card(url)
    assert info.value.status == 404
    assert len(host.hits("/card")) == 3


def test_a_changed_card_replaces_the_cached_one(host):
    url = host.route("/card", card_document("http://127.0.0.1:1/mcp"))
    fetcher = cards.CardFetcher(allow_local=LOCAL)
    assert fetcher.fetch_card(url).version == "1.2.0"
    host.route("/card", card_document("http://127.0.0.1:1/mcp", version="2.0.0"))
    assert fetcher.fetch_card(url).version == "2.0.0"
    assert host.bodies_sent == 2


FETCH_IN_A_PROCESS = textwrap.dedent("""
    import sys
    import mcpsync.cards as cards
    card = cards.CardFetcher(allow_local=["127.0.0.1"]).fetch_card(sys.argv[1])
    print(card.name, card.version)
""")


def fetch_in_a_process(url):
    proc = subprocess.run([sys.executable, "-c", FETCH_IN_A_PROCESS, url], capture_output=True, text=True,
                          timeout=60, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_cache_control_is_honoured_across_processes(host):
    fresh = host.route("/fresh", card_document("http://127.0.0.1:1/mcp"), cache_control="public, max-age=3600")
    stale = host.route("/stale", card_document("http://127.0.0.1:1/mcp"), cache_control="no-cache")
    never = host.route("/never", card_document("http://127.0.0.1:1/mcp"), cache_control="no-store")
    for url in (fresh, stale, never):
        assert fetch_in_a_process(url) == "io.example/weather 1.2.0"
        assert fetch_in_a_process(url) == "io.example/weather 1.2.0"
    assert len(host.hits("/fresh")) == 1  # the second process used the fresh copy: no request at all
    stale_hits = host.hits("/stale")
    assert len(stale_hits) == 2 and stale_hits[1]["if-none-match"]  # revalidated, 304
    never_hits = host.hits("/never")
    assert len(never_hits) == 2 and "if-none-match" not in never_hits[1]  # no-store was never kept
    assert host.bodies_sent == 4


# ---------------------------------------------------------------------------- hostile hosts and cards


def test_redirects_are_followed_checked_and_loops_refused(host, tmp_path):
    host.route("/real", card_document("http://127.0.0.1:1/mcp"))
    host.redirect("/moved", "/real", 301)
    assert cards.CardFetcher(allow_local=LOCAL).fetch_card(host.url("/moved")).name == "io.example/weather"
    host.redirect("/a", "/b")
    host.redirect("/b", "/a")
    with pytest.raises(cards.CardRedirectError, match="loop"):
        cards.CardFetcher(allow_local=LOCAL, cache=False).fetch_card(host.url("/a"))
    for i in range(8):
        host.redirect("/chain%d" % i, "/chain%d" % (i + 1))
    with pytest.raises(cards.CardRedirectError, match="more than 5"):
        cards.CardFetcher(allow_local=LOCAL, cache=False).fetch_card(host.url("/chain0"))
    host.redirect("/file", "file:///etc/passwd")
    host.redirect("/private", "http://10.1.2.3/card")
    host.redirect("/nowhere", "")
    with pytest.raises(cards.CardUnsafeURL):
        cards.CardFetcher(allow_local=LOCAL, cache=False).fetch_card(host.url("/file"))
    with pytest.raises(cards.CardUnsafeURL):
        cards.CardFetcher(allow_local=LOCAL, cache=False).fetch_card(host.url("/private"))
    with pytest.raises(cards.CardRedirectError):
        cards.CardFetcher(allow_local=LOCAL, cache=False).fetch_card(host.url("/nowhere"))


def test_hostile_answers_get_typed_errors_and_nothing_is_written(host, tmp_path):
    ok = card_document("http://127.0.0.1:1/mcp")
    host.route("/junk", b"\x00\xffnot json at all", content_type=CARD_TYPE)
    host.route("/html", ok, content_type="text/html")
    host.route("/declared-huge", ok, extra_headers={})
    host.route("/huge", b"", content_type=CARD_TYPE, stream=8 * 1024 * 1024)
    host.route("/deep", b"[" * 20000 + b"]" * 20000, content_type=CARD_TYPE)
    host.route("/500", b"", status=500)
    host.route("/private", card_document("http://10.0.0.7/mcp"))
    host.route("/loopback-name", card_document("http://localhost:8080/mcp"))
    host.route("/metadata", card_document("http://169.254.169.254/latest"))
    host.route("/ipv6", card_document("http://[::1]:9/mcp"))
    host.route("/other-domain", card_document("https://bank.example/mcp"))
    fetcher = cards.CardFetcher(allow_local=LOCAL, max_bytes=64 * 1024)
    expected = {
        "/junk": cards.CardInvalid, "/html": cards.CardContentTypeError, "/huge": cards.CardTooLarge,
        "/deep": cards.CardInvalid, "/500": cards.CardUnavailable, "/private": cards.CardUnsafeURL,
        "/loopback-name": cards.CardUnsafeURL, "/metadata": cards.CardUnsafeURL, "/ipv6": cards.CardUnsafeURL,
        "/other-domain": cards.CardDomainMismatch,
    }
    for path, error in expected.items():
        with pytest.raises(error) as info:
            fetcher.fetch_card(host.url(path))
        assert isinstance(info.value, MCPError) and info.value.url
    small = cards.CardFetcher(allow_local=LOCAL, max_bytes=100)
    with pytest.raises(cards.CardTooLarge):
        small.fetch_card(host.url("/declared-huge"))
    with pytest.raises(cards.CardUnsafeURL):
        cards.CardFetcher().fetch_card(host.url("/declared-huge"))  # no opt-in: plain http to 127.0.0.1 refused
    with pytest.raises(cards.CardUnsafeURL):
        cards.CardFetcher().fetch_card("file:///etc/passwd")
    assert cache_files(tmp_path) == []


def test_a_template_filled_with_a_file_url_or_a_private_host_is_refused(host, tmp_path):
    doc = card_document("{base}/mcp")
    doc["remotes"][0]["variables"] = {"base": {"default": "file:///etc"}}
    url = host.route("/tmpl", doc)
    with pytest.raises(cards.CardUnsafeURL):
        cards.resolve_card(url, allow_local=LOCAL)
    with pytest.raises(cards.CardUnsafeURL):
        cards.resolve_card(url, inputs={"base": "http://192.168.1.1"}, allow_local=LOCAL)
    with pytest.raises(cards.CardUnsafeURL):
        cards.install_card(url, config=str(tmp_path / "mcp.json"), yes=True, allow_local=LOCAL)
    assert not (tmp_path / "mcp.json").exists()
    secret = card_document("http://10.9.9.9/{key}/mcp")
    secret["remotes"][0]["variables"] = {"key": {"isRequired": True, "isSecret": True}}
    with pytest.raises(cards.CardUnsafeURL) as info:
        cards.resolve_card(host.route("/secret", secret), inputs={"key": "hunter2"}, allow_local=LOCAL)
    assert "hunter2" not in str(info.value) and "hunter2" not in info.value.url and "***" in info.value.url


def test_the_domain_rule_and_its_opt_in():
    policy = cards.URLPolicy.make(resolver=lambda host: ["93.184.216.34"])
    policy.check_remote("https://mcp.example.com/mcp", "https://example.com/card")
    policy.check_remote("https://example.com/mcp", "https://mcp.example.com/mcp/server-card")
    with pytest.raises(cards.CardDomainMismatch):
        policy.check_remote("https://evil.example.net/mcp", "https://example.com/card")
    with pytest.raises(cards.CardDomainMismatch):
        policy.check_remote("https://com/mcp", "https://example.com/card")
    loose = cards.URLPolicy.make(allow_other_domains=True, resolver=lambda host: ["93.184.216.34"])
    loose.check_remote("https://evil.example.net/mcp", "https://example.com/card")
    rebound = cards.URLPolicy.make(resolver=lambda host: ["10.0.0.1"])
    with pytest.raises(cards.CardUnsafeURL, match="resolves"):
        rebound.check("https://internal.example.com/card")


def test_card_headers_may_not_set_framing_or_protocol_headers(host):
    doc = card_document("http://127.0.0.1:1/mcp", headers=[{"name": "Host", "value": "evil"}])
    with pytest.raises(cards.CardInvalid, match="Host"):
        cards.resolve_card(host.route("/h", doc), allow_local=LOCAL)
    doc = card_document("http://127.0.0.1:1/mcp", headers=[{"name": "X-A", "value": "a\r\nInjected: 1"}])
    with pytest.raises(cards.CardInvalid, match="line break"):
        cards.resolve_card(host.route("/h2", doc), allow_local=LOCAL)


# ---------------------------------------------------------------------------- connecting


def test_the_seed_comes_from_supported_protocol_versions():
    assert cards.protocol_for([]) == "auto"
    assert cards.protocol_for(["2025-06-18", MODERN]) == "auto"  # discover comes first anyway
    assert cards.protocol_for(["2025-03-26", "2025-06-18"]) == "2025-06-18"
    with pytest.raises(mcpsync.errors.UnsupportedProtocolVersion):
        cards.protocol_for(["2099-01-01"])


def test_connect_in_each_era_without_probing_the_other(host, era):
    with MCPTestServer(era=era) as mcp:
        url = host.route("/mcp/server-card", card_document(mcp.url, versions=[MODERN if era == "modern" else LEGACY]))
        with cards.connect(url, allow_local=LOCAL) as client:
            assert client.call_tool("echo", {"message": "hi"}).text == "hi"
            assert client.protocol_version == (MODERN if era == "modern" else LEGACY)
        if era == "modern":
            assert mcp.records(rpc="initialize") == []
        else:
            assert mcp.records(rpc="server/discover") == []  # the card said: no discover probe


def test_client_for_card_with_a_required_secret_header(host, era):
    headers = [{"name": "Authorization", "isRequired": True, "isSecret": True, "value": "Bearer {token}",
                "variables": {"token": {"isRequired": True, "isSecret": True}}}]
    with MCPTestServer(era=era) as mcp:
        mcp.faults.require_token = "t0k"
        url = host.route("/card", card_document(mcp.url, headers=headers))
        with pytest.raises(MissingInput):
            mcpsync.cards.client_for(url, allow_local=LOCAL)
        client = mcpsync.cards.client_for(url, inputs={"token": "t0k"}, allow_local=LOCAL, name="weather")
        assert "t0k" not in repr(client)
        with client:
            assert client.call_tool("echo", {"message": "secret ok"}).text == "secret ok"
        sent = {r.headers.get("authorization") for r in mcp.records(method="POST")}
        assert sent == {"Bearer t0k"}


@pytest.mark.parametrize("served, claimed", [("legacy", [MODERN]), ("modern", [LEGACY])])
def test_a_card_that_misstates_its_era_still_connects(host, caplog, served, claimed):
    with MCPTestServer(era=served) as mcp:
        url = host.route("/card", card_document(mcp.url, versions=claimed))
        with cards.connect(url, allow_local=LOCAL) as client:
            assert mcpsync.wire.protocol.era_of(client.protocol_version) == served
    if claimed == [LEGACY]:  # the seeded handshake failed: negotiated again, said once
        assert any("does not speak" in r.getMessage() for r in caplog.records)


def test_cli_connects_with_card(host):
    with MCPTestServer(era="modern") as mcp:
        url = host.route("/card", card_document(mcp.url, versions=[MODERN]))
        code, out, err = run("--card", url, "--allow-local", "127.0.0.1", "call", "echo", "-a", "message=hello")
        assert code == 0, err
        assert "hello" in out
        code, _out, err = run("--card", url, "tools")
        assert code != 0 and "allow_local" in err  # plain http to a local host needs the opt-in


def test_manager_card_entry(host, era, tmp_path):
    with MCPTestServer(era=era) as mcp:
        mcp.faults.require_token = "s3cret"
        headers = [{"name": "Authorization", "isRequired": True, "isSecret": True}]
        url = host.route("/card", card_document(mcp.url, headers=headers, versions=[
            MODERN if era == "modern" else LEGACY]))
        config = {"weather": {"card": {"url": url, "allow_local": LOCAL}, "headers": {"Authorization":
                                                                                          "Bearer s3cret"}},
                  "broken": {"card": {"url": host.url("/absent"), "allow_local": LOCAL}}}
        with mcpsync.Manager(config) as mgr:
            assert mgr.status("weather").status == "connected", mgr.status("weather").error
            assert mgr.call_tool("echo", {"message": "via card"}, server="weather").text == "via card"
            status = mgr.status("broken")
            assert status.status == "failed" and isinstance(status.error, cards.CardUnavailable)
            assert mgr.has_stored_tokens("weather") is False  # OAuth settings apply to the card's remote
        if era == "legacy":
            assert mcp.records(rpc="server/discover") == []


def test_a_manager_card_entry_whose_card_misstates_the_era_negotiates_on_the_next_attempt(host):
    with MCPTestServer(era="modern") as mcp:
        url = host.route("/card", card_document(mcp.url, versions=[LEGACY]))  # wrong: the server is modern only
        with mcpsync.Manager({"weather": {"card": {"url": url, "allow_local": LOCAL}}}) as mgr:
            assert mgr.status("weather").status == "failed"
            assert mgr.connect("weather").status == "connected", mgr.status("weather").error
            assert mgr.call_tool("echo", {"message": "negotiated"}, server="weather").text == "negotiated"


# ---------------------------------------------------------------------------- installing


def test_install_needs_consent_and_keeps_secrets_in_the_store(host, tmp_path):
    from mcpsync.auth.secrets import read_secret

    headers = [{"name": "X-API-Key", "isRequired": True, "isSecret": True},
               {"name": "X-Region", "default": "eu-west-1", "choices": ["us-east-1", "eu-west-1"]}]
    with MCPTestServer(era="modern") as mcp:
        url = host.route("/card", card_document(mcp.url, headers=headers, versions=[MODERN]))
        cfg = tmp_path / "mcp.json"
        with pytest.raises(ConsentRequired):
            cards.install_card(url, config=str(cfg), allow_local=LOCAL)
        assert host.hits("/card") == []  # refused before any request
        with pytest.raises(ConsentRefused):
            cards.install_card(url, config=str(cfg), inputs={"X-API-Key": "k3y"}, approve=lambda r: False,
                               allow_local=LOCAL)
        assert not cfg.exists() and read_secret("weather/X-API-Key") is None
        # the CLI without a terminal and without --yes: shown, refused, nothing written
        code, _out, err = run("install", "--card", url, "--allow-local", "127.0.0.1", "--config", str(cfg),
                              "--input", "X-API-Key=k3y")
        assert code == 1 and "remote server: %s" % mcp.url in err and "X-API-Key" in err and "k3y" not in err
        assert not cfg.exists()
        code, out, err = run("install", "--card", url, "--allow-local", "127.0.0.1", "--config", str(cfg),
                             "--input", "X-API-Key=k3y", "--yes")
        assert code == 0, err
        assert "installed io.example/weather 1.2.0 as 'weather'" in out
        entry = json.loads(cfg.read_text())["mcpServers"]["weather"]
        assert entry["url"] == mcp.url and entry["headers"] == {"X-API-Key": "${secret:weather/X-API-Key}",
                                                               "X-Region": "eu-west-1"}
        assert entry["registry"]["card"] == url and "k3y" not in cfg.read_text()
        assert read_secret("weather/X-API-Key") == "k3y"
        with mcpsync.Manager(str(cfg)) as mgr:
            assert mgr.call_tool("echo", {"message": "installed"}, server="weather").text == "installed"
        sent = [r.headers.get("x-api-key") for r in mcp.records(method="POST")]
        assert sent and set(sent) == {"k3y"}


def test_outdated_and_update_follow_the_card_and_reuse_the_stored_secret(host, tmp_path):
    headers = [{"name": "X-API-Key", "isRequired": True, "isSecret": True}]
    cfg = tmp_path / "mcp.json"
    with MCPTestServer(era="modern") as old_mcp, MCPTestServer(era="legacy") as new_mcp:
        url = host.route("/card", card_document(old_mcp.url, headers=headers))
        code, _out, err = run("install", "--card", url, "--allow-local", "127.0.0.1", "--config", str(cfg),
                              "--input", "X-API-Key=k3y", "--yes")
        assert code == 0, err
        code, out, err = run("outdated", "--config", str(cfg), "--allow-local", "127.0.0.1")
        assert code == 0 and "up to date" in err
        host.route("/card", card_document(new_mcp.url, headers=headers, version="2.0.0", versions=[LEGACY]))
        code, out, err = run("outdated", "--config", str(cfg), "--allow-local", "127.0.0.1")
        assert "weather  io.example/weather  1.2.0 -> 2.0.0  (card %s)" % url in out
        code, out, err = run("update", "--config", str(cfg), "--allow-local", "127.0.0.1")  # no terminal, no --yes
        assert code == 1 and json.loads(cfg.read_text())["mcpServers"]["weather"]["url"] == old_mcp.url
        code, out, err = run("update", "--config", str(cfg), "--allow-local", "127.0.0.1", "--yes")
        assert code == 0, err
        assert "updated 'weather' to io.example/weather 2.0.0" in out
        entry = json.loads(cfg.read_text())["mcpServers"]["weather"]
        assert entry["url"] == new_mcp.url and entry["registry"]["cardVersion"] == "2.0.0"
        with mcpsync.Manager(str(cfg)) as mgr:
            assert mgr.call_tool("echo", {"message": "updated"}, server="weather").text == "updated"
        assert {r.headers.get("x-api-key") for r in new_mcp.records(method="POST")} == {"k3y"}


def test_install_refuses_a_bad_choice_and_a_missing_secret(host, tmp_path):
    headers = [{"name": "X-API-Key", "isRequired": True, "isSecret": True},
               {"name": "X-Region", "choices": ["us-east-1"]}]
    url = host.route("/card", card_document("http://127.0.0.1:1/mcp", headers=headers))
    cfg = tmp_path / "mcp.json"
    with pytest.raises(MissingInput):
        cards.install_card(url, config=str(cfg), yes=True, allow_local=LOCAL)
    with pytest.raises(mcpsync.registry.InvalidInput):
        cards.install_card(url, config=str(cfg), yes=True, inputs={"X-API-Key": "k", "X-Region": "mars"},
                           allow_local=LOCAL)
    assert not cfg.exists()


def test_install_refuses_a_taken_name_before_asking_and_replace_overwrites_it(host, tmp_path):
    url = host.route("/card", card_document("http://127.0.0.1:1/mcp"))
    cfg = tmp_path / "mcp.json"
    cards.install_card(url, config=str(cfg), yes=True, allow_local=LOCAL)
    before = cfg.read_text()
    asked = []
    with pytest.raises(mcpsync.ConfigError, match="already has a server named .*replace=True"):
        cards.install_card(url, config=str(cfg), approve=lambda r: asked.append(r) or True, allow_local=LOCAL)
    assert not asked and cfg.read_text() == before  # refused before the consent, the file untouched
    cards.install_card(url, config=str(cfg), yes=True, replace=True, allow_local=LOCAL)
    assert len(json.loads(cfg.read_text())["mcpServers"]) == 1


# ---------------------------------------------------------------------------- HTTP settings


def test_cards_go_through_the_proxy_the_client_would_use(host, monkeypatch):
    from tests.peers.proxyserver import ProxyServer

    url = host.route("/card", card_document("http://127.0.0.1:1/mcp"))
    with ProxyServer(credentials=("user", "p@ss")) as proxy:
        cards.CardFetcher(proxy=proxy.url_with_credentials, allow_local=LOCAL, cache=False).fetch_card(url)
        cards.resolve_card(url, proxies={"http": proxy.url_with_credentials}, allow_local=LOCAL, cache=False)
        monkeypatch.setenv("HTTP_PROXY", proxy.url_with_credentials)
        cards.CardFetcher(allow_local=LOCAL, cache=False).fetch_card(url)
        cards.CardFetcher(allow_local=LOCAL, cache=False, trust_env=False).fetch_card(url)  # direct
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        cards.CardFetcher(allow_local=LOCAL, cache=False).fetch_card(url)  # bypassed
        forwarded = [target for (_m, target, _auth) in proxy.forwarded]
    assert forwarded == [url, url, url]
    assert len(host.hits("/card")) == 5


def test_a_pool_passed_in_is_used_and_left_open(host):
    import urllib3

    url = host.route("/card", card_document("http://127.0.0.1:1/mcp"))
    pool = urllib3.PoolManager()
    with cards.CardFetcher(pool=pool, allow_local=LOCAL) as fetcher:
        fetcher.fetch_card(url)
    assert pool.pools  # the connection pool it made is still there: the fetcher did not clear a pool it was given
    pool.clear()
    with pytest.raises(cards.CardError, match="closed"):
        fetcher.fetch_card(host.url("/elsewhere"))  # closed: not even the given pool is used again


def test_threads_sharing_a_fetcher_and_the_cache_see_whole_cards(host, tmp_path):
    import threading

    url = host.route("/card", card_document("http://127.0.0.1:1/mcp"), cache_control="no-cache")
    fetcher = cards.CardFetcher(allow_local=LOCAL)
    start = threading.Barrier(8)
    results, errors = [], []

    def fetch():
        start.wait(timeout=30)
        try:
            for _ in range(5):
                results.append(fetcher.fetch_card(url))
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=fetch, name="test-card-fetch-%d" % i) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    fetcher.close()
    assert errors == [] and len(results) == 40 and len(set(results)) == 1
    assert [n for n in cache_files(tmp_path) if n.endswith(".tmp")] == []
    assert cards.CardCache().get(url) is not None


@pytest.mark.skipif(shutil.which("openssl") is None and os.environ.get("CI") != "true", reason="needs openssl")
@pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")  # urllib3's own, for verify=False
def test_https_cards_honour_verify_and_the_client_uses_it_too(pki):
    import ssl

    from tests.transports.test_http_tls import _tls_server

    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(pki["server.crt"], pki["server.key"])
    with _tls_server(pki) as mcp, CardServer(tls=server_ctx) as tls_host:
        remote = "https://127.0.0.1:%d/mcp" % mcp.port
        url = tls_host.route("/mcp/server-card", card_document(remote, versions=[MODERN]))
        assert url.startswith("https://")
        with pytest.raises(cards.CardUnavailable):  # the system's CAs do not know the test CA
            cards.CardFetcher(allow_local=LOCAL, cache=False).fetch_card(url)
        assert cards.CardFetcher(allow_local=LOCAL, cache=False, verify=False).fetch_card(url).name
        with cards.connect(
            url, allow_local=LOCAL, cache=False, http=HTTPOptions(verify=pki["ca.crt"], transport="http")
        ) as client:
            assert client.call_tool("echo", {"message": "tls card"}).text == "tls card"


def test_importing_cards_is_cheap_and_client_for_keeps_a_subclass(host):
    code = ("import sys, mcpsync, mcpsync.cards as c; c.CardError; "
            "heavy = [m for m in ('urllib3', 'jsonschema', 'requests', 'mcpsync.cards.fetch') if m in sys.modules]; "
            "assert not heavy, heavy")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr

    class Mine(mcpsync.Client):
        pass

    url = host.route("/card", card_document("http://127.0.0.1:1/mcp"))
    client = mcpsync.cards.client_for(url, allow_local=LOCAL, factory=Mine)
    assert type(client) is Mine
    client.close()
