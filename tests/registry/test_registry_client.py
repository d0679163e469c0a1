"""The registry client against a local registry (tests/peers/registryserver.py): paging, search, versions, URL-encoded
names, statuses, the disk cache (TTL, ETag revalidation, stale answers when the registry is down), and hostile
answers (hypothesis: junk pages raise RegistryError subclasses, nothing else)."""

from __future__ import annotations

import json
import os
import socket

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpsync.registry import (
    InvalidServerJson,
    RegistryClient,
    RegistryError,
    RegistryNotFound,
    RegistryUnavailable,
    registry_url,
)
from mcpsync.registry.client import DEFAULT_REGISTRY_URL

from tests.conftest import fuzz_examples
from tests.peers.registryserver import RegistryServer, entry, fixture


def _servers():
    old = fixture("deprecated-old.json")
    old_v1 = dict(fixture("npm-everything.json"), version="2026.1.1")
    return [
        entry(fixture("npm-everything.json")),
        entry(old_v1, latest=False),
        entry(fixture("pypi-time.json")),
        entry(fixture("oci-weather.json")),
        entry(fixture("remote-tenant.json")),
        entry(old, "deprecated", message="use io.github.acme/weather instead"),
        entry(dict(old, name="io.github.acme/gone"), "deleted", message="removed for malware"),
    ]


@pytest.fixture
def registry():
    with RegistryServer(_servers(), page_size=2) as server:
        yield server


def test_registry_url_choice(monkeypatch):
    monkeypatch.delenv("MCPSYNC_REGISTRY_URL", raising=False)
    assert registry_url() == DEFAULT_REGISTRY_URL == "https://registry.modelcontextprotocol.io"
    monkeypatch.setenv("MCPSYNC_REGISTRY_URL", "https://sub.example.com/v0.1/")
    assert registry_url() == "https://sub.example.com"
    assert registry_url("http://127.0.0.1:9/") == "http://127.0.0.1:9"
    with pytest.raises(RegistryError):
        registry_url("file:///etc/passwd")


def test_search_pages_with_cursors_and_keeps_only_active_latest(registry, tmp_path):
    with RegistryClient(registry.url, cache_dir=str(tmp_path)) as client:
        found = client.search(limit=None)
    assert [e.name for e in found] == [
        "io.github.modelcontextprotocol/server-everything",
        "io.github.modelcontextprotocol/time",
        "io.github.acme/weather",
        "io.github.acme/tenant-remote",
    ]
    pages = [q for p, q, _h in registry.requests if p == "/v0.1/servers"]
    assert len(pages) == 3 and all("version=latest" in q for q in pages)
    assert sum("cursor=" in q for q in pages) == 2


def test_search_text_and_deprecated_shown_with_message(registry, tmp_path):
    with RegistryClient(registry.url, cache_dir=False) as client:
        assert [e.name for e in client.search("acme")] == ["io.github.acme/weather", "io.github.acme/tenant-remote"]
        both = client.search("weather", statuses=("active", "deprecated"))
    assert [(e.name, e.status) for e in both] == [("io.github.acme/weather", "active"),
                                                  ("io.github.acme/old-weather", "deprecated")]
    assert both[1].status_message == "use io.github.acme/weather instead"
    assert any("search=weather" in q for _p, q, _h in registry.requests)


def test_get_versions_url_encoded_and_statuses(registry, caplog):
    with RegistryClient(registry.url, cache_dir=False) as client:
        latest = client.get("io.github.modelcontextprotocol/server-everything")
        assert latest.version == "2026.8.31" and latest.is_latest
        pinned = client.get("io.github.modelcontextprotocol/server-everything", "2026.1.1")
        assert pinned.version == "2026.1.1" and pinned.is_latest is False
        versions = client.versions("io.github.modelcontextprotocol/server-everything")
        assert sorted(v.version for v in versions) == ["2026.1.1", "2026.8.31"]
        with caplog.at_level("WARNING"):
            old = client.get("io.github.acme/old-weather")
        assert old.deprecated and "use io.github.acme/weather" in caplog.text
        with pytest.raises(RegistryNotFound, match="deleted: removed for malware"):
            client.get("io.github.acme/gone")
        with pytest.raises(RegistryNotFound):
            client.get("io.github.acme/nothing")
        with pytest.raises(RegistryNotFound):
            client.get("io.github.acme/weather", "9.9.9")
    paths = registry.api_requests()
    assert "/v0.1/servers/io.github.modelcontextprotocol%2Fserver-everything/versions/latest" in paths
    assert "/v0.1/servers/io.github.modelcontextprotocol%2Fserver-everything/versions" in paths


def test_disk_cache_ttl_etag_and_stale_fallback(registry, tmp_path):
    cache = str(tmp_path / "cache")
    with RegistryClient(registry.url, cache_dir=cache, ttl=3600) as client:
        client.get("io.github.acme/weather")
        client.get("io.github.acme/weather")
    assert len(registry.api_requests()) == 1  # the second answer came from the disk cache
    assert os.listdir(cache)
    with RegistryClient(registry.url, cache_dir=cache, ttl=0) as client:
        assert client.get("io.github.acme/weather").version == "1.2.0"
    assert len(registry.api_requests()) == 2
    revalidation = registry.requests[-1][2]
    assert revalidation.get("If-None-Match", "").startswith('"')  # answered 304, the cached body was used
    # the registry goes away: a stale cached answer is used, with a warning; an uncached one fails clearly
    sock = socket.socket()  # bound, never listening (closed at the end): refused, and no one else gets the port
    sock.bind(("127.0.0.1", 0))
    dead = "http://127.0.0.1:%d" % sock.getsockname()[1]
    cache_url = registry.url

    with RegistryClient(dead, cache_dir=cache, ttl=0, timeout=5) as client:
        with pytest.raises(RegistryUnavailable):
            client.get("io.github.acme/weather")
    # the cached registry goes down: its answer (copied under the dead URL's key) is used, with a warning
    from mcpsync.registry.cache import DiskCache

    disk = DiskCache(cache)
    good = disk.get("%s/v0.1/servers/io.github.acme%%2Fweather/versions/latest" % cache_url)
    assert good is not None
    disk.put("%s/v0.1/servers/io.github.acme%%2Fweather/versions/latest" % dead, good.body, good.etag)
    with RegistryClient(dead, cache_dir=cache, ttl=0, timeout=5) as client:
        assert client.get("io.github.acme/weather").version == "1.2.0"
    sock.close()


def test_damaged_cache_files_read_as_absent(registry, tmp_path):
    cache = tmp_path / "cache"
    with RegistryClient(registry.url, cache_dir=str(cache), ttl=3600) as client:
        client.get("io.github.acme/weather")
    for f in cache.iterdir():
        f.write_bytes(b"\xff{not json")
    with RegistryClient(registry.url, cache_dir=str(cache), ttl=3600) as client:
        assert client.get("io.github.acme/weather").version == "1.2.0"
    assert len(registry.api_requests()) == 2


def test_registry_errors_are_clear(registry):
    registry.junk, registry.junk_status = b'{"title": "boom"}', 500
    with RegistryClient(registry.url, cache_dir=False) as client:
        with pytest.raises(RegistryUnavailable, match="HTTP 500"):
            client.search("x")
    registry.junk, registry.junk_status = b"<html>", 200
    with RegistryClient(registry.url, cache_dir=False) as client:
        with pytest.raises(InvalidServerJson, match="not JSON"):
            client.get("io.github.acme/weather")
    with pytest.raises(RegistryError):
        RegistryClient(registry.url, cache_dir=False).get("no-slash")


def test_bad_entries_are_skipped_and_logged(registry, caplog):
    registry.junk = json.dumps({"servers": [
        "junk", {"server": {"name": 3}}, {"server": {"name": "a/b"}},
        {"server": {"name": "io.github.acme/ok", "version": "1.0.0", "description": "fine"}},
    ], "metadata": {"nextCursor": None}}).encode()

    with caplog.at_level("WARNING"), RegistryClient(registry.url, cache_dir=False) as client:
        found = client.search()
    assert [e.name for e in found] == ["io.github.acme/ok"] and found[0].status == "active"
    assert "skipping" in caplog.text


def test_a_cursor_loop_ends(registry):
    registry.junk = json.dumps({"servers": [], "metadata": {"nextCursor": "same"}}).encode()
    with RegistryClient(registry.url, cache_dir=False) as client:
        assert client.search(limit=None) == []
    assert len(registry.api_requests()) == 2


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(
        st.sampled_from(["servers", "server", "name", "version", "metadata", "nextCursor", "_meta", "status",
                         "io.modelcontextprotocol.registry/official", "isLatest", "x"]), kids, max_size=5),
    max_leaves=25,
)


@settings(max_examples=fuzz_examples(300, 150), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(page=_json | st.binary(max_size=64).map(lambda b: b.decode("latin-1")))
def test_junk_pages_raise_only_registry_errors(registry, page):
    registry.junk = (page if isinstance(page, str) else json.dumps(page)).encode("utf-8", "surrogatepass")
    with RegistryClient(registry.url, cache_dir=False) as client:
        for call in (lambda: client.search(limit=5), lambda: client.get("io.github.acme/x"),
                     lambda: client.versions("io.github.acme/x")):
            try:
                result = call()
            except RegistryError:
                continue
            assert result is not None


def test_a_stalled_registry_times_out_and_a_cut_answer_fails_clearly(registry):
    import threading

    registry.stall = threading.Event()
    with RegistryClient(registry.url, cache_dir=False, timeout=1) as client:
        with pytest.raises(RegistryUnavailable, match="cannot reach|timeout of 1s"):
            client.search("x")
    registry.stall.set()
    registry.stall = None
    registry.cut = True
    with RegistryClient(registry.url, cache_dir=False, timeout=10) as client:
        with pytest.raises(RegistryError):
            client.search("x")
    registry.cut = False
    with RegistryClient(registry.url, cache_dir=False) as client:
        assert client.search("weather")  # valid traffic still gets correct answers


def test_importing_the_registry_package_is_cheap():
    import subprocess
    import sys

    code = ("import sys, mcpsync, mcpsync.registry, mcpsync.cli.registry; "
            "print(sorted(m for m in ('requests', 'jsonschema', 'zipfile', 'mcpsync.registry.client') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]"
