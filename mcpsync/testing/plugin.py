"""The pytest plugin of mcpsync (entry point ``pytest11: mcpsync``): the ``mcp_client`` fixture, the
``mcp_server`` marker, the ``--mcp-server`` / ``--mcp-era`` options, and the server's stderr in failure reports.

* ``mcp_client``: an open :class:`mcpsync.Client` for the test's server, closed after the test (function scope:
  each test gets a fresh server process or connection). The server is the closest ``mcp_server`` marker's
  target, else ``--mcp-server`` / the ``mcp_server`` ini value.
* ``@pytest.mark.mcp_server(target, era="auto", **client_options)``: ``target`` is a command (a list, or a
  string split like a shell would), an ``http(s)://`` URL, or one configuration entry (a dict such as
  ``{"command": "python", "args": ["server.py"], "env": {...}}`` or ``{"url": ..., "headers": {...}}``);
  ``config="FILE", name="NAME"`` takes the entry from a configuration file instead. ``era`` is ``"auto"``,
  ``"legacy"`` (the initialize handshake), ``"modern"`` (2026-07-28), a revision, or a list of them: the test
  then runs once per era (ids ``[legacy]``, ``[modern]``). Other keywords go to :class:`mcpsync.Client`
  (``timeout=``, ``env=``...).
* ``mcp_era``: the era the current test runs in (a fixture; parametrized by a list ``era``).
* ``mcp_stderr``: the lines the stdio server wrote to stderr so far (a list, filled while the test runs). When a
  test fails, they are attached to its report as the section "mcp server stderr".

pytest imports this module; mcpsync itself never does.
"""

from __future__ import annotations

import shlex
import threading
from typing import Any, Dict, Generator, Iterator, List, Mapping, Optional, Sequence, Tuple

import pytest

from . import ServerTarget

MARKER = "mcp_server"
_STDERR_KEY = pytest.StashKey[List[str]]()
_CLIENT_KEY = pytest.StashKey[Any]()
_MAX_STDERR_LINES = 2000  # what mcp_stderr keeps (the last lines)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mcpsync", "MCP servers under test (mcpsync)")
    group.addoption(
        "--mcp-server",
        default=None,
        metavar="TARGET",
        help="the server mcp_client connects to when no mcp_server marker names one: a command line or an "
        "http(s):// URL",
    )
    group.addoption(
        "--mcp-era", default=None, metavar="ERA", help="auto (default), legacy, modern or a protocol revision"
    )
    parser.addini("mcp_server", "the default server of mcp_client (a command line or a URL)", default="")
    parser.addini("mcp_era", "the default protocol era of mcp_client", default="auto")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "mcp_server(target, era='auto', config=None, name=None, **client_options): the MCP server (a command, a "
        "URL or a configuration entry) and protocol era(s) of the mcp_client fixture",
    )


def _marker(node: Any) -> Optional[pytest.Mark]:
    return node.get_closest_marker(MARKER)  # type: ignore[no-any-return]


def _default_era(config: pytest.Config) -> str:
    return str(config.getoption("--mcp-era") or config.getini("mcp_era") or "auto")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``era=[...]`` on the marker: run the test once per era."""
    if "mcp_client" not in metafunc.fixturenames and "mcp_era" not in metafunc.fixturenames:
        return
    mark = _marker(metafunc.definition)
    eras = mark.kwargs.get("era") if mark is not None else None
    if isinstance(eras, (list, tuple)):
        metafunc.parametrize("mcp_era", [str(e) for e in eras], ids=[str(e) for e in eras])


@pytest.fixture
def mcp_era(request: pytest.FixtureRequest) -> str:
    """The protocol era of this test's ``mcp_client`` (the marker's ``era``, else ``--mcp-era``, else auto)."""
    mark = _marker(request.node)
    era = mark.kwargs.get("era") if mark is not None else None
    return str(era) if isinstance(era, str) else _default_era(request.config)


@pytest.fixture
def mcp_stderr(request: pytest.FixtureRequest) -> List[str]:
    """The stdio server's stderr lines so far (filled by ``mcp_client`` while the test runs)."""
    lines: List[str] = []
    request.node.stash[_STDERR_KEY] = lines
    return lines


@pytest.fixture
def mcp_client(request: pytest.FixtureRequest, mcp_era: str, mcp_stderr: List[str]) -> Iterator[Any]:
    """An open :class:`mcpsync.Client` for the test's server; closed (the server stopped) after the test.

    Blocks while the server starts and the handshake runs (bounded by ``connect_timeout``, default 30 s).
    """
    from ..client.client import Client

    mark = _marker(request.node)
    if mark is not None:
        args, kwargs = tuple(mark.args), dict(mark.kwargs)
    else:
        args, kwargs = (), {}
    kwargs.pop("era", None)
    config_file, name = kwargs.pop("config", None), kwargs.pop("name", None)
    if config_file is not None:
        where, options = _from_config_file(str(config_file), name)
    else:
        target = args[0] if args else request.config.getoption("--mcp-server") or request.config.getini("mcp_server")
        if not target:
            raise pytest.UsageError(
                "mcp_client needs a server: @pytest.mark.mcp_server(COMMAND | URL | ENTRY), --mcp-server or the "
                "mcp_server ini option"
            )
        where, options = client_arguments(target)
    options.update(kwargs)
    options.setdefault("protocol", mcp_era)
    lock = threading.Lock()
    user_on_stderr = options.pop("on_stderr", None)

    def on_stderr(line: str) -> None:  # runs on the client's dispatch thread
        with lock:
            mcp_stderr.append(line)
            del mcp_stderr[:-_MAX_STDERR_LINES]
        if user_on_stderr is not None:
            user_on_stderr(line)

    if isinstance(where, list):
        options["on_stderr"] = on_stderr
    client = Client(where, **options)
    request.node.stash[_CLIENT_KEY] = client  # for the failure report: its stderr, also after a failed open
    client.open()
    try:
        yield client
    finally:
        client.close()


def client_arguments(target: ServerTarget) -> Tuple[Any, Dict[str, Any]]:
    """(the first argument of :class:`mcpsync.Client`, its keyword arguments) for a marker's ``target``."""
    if isinstance(target, str):
        if target.startswith(("http://", "https://")):
            return target, {}
        command = shlex.split(target)
        if not command:
            raise pytest.UsageError("mcp_server: an empty command")
        return command, {}
    if isinstance(target, Mapping):
        return _from_entry("server", dict(target))
    if isinstance(target, Sequence) and all(isinstance(a, str) for a in target) and target:
        return list(target), {}
    raise pytest.UsageError("mcp_server: expected a command, a URL or a configuration entry, got %r" % (target,))


def _from_config_file(path: str, name: Optional[str]) -> Tuple[Any, Dict[str, Any]]:
    from ..manager.config import load_config

    servers = load_config(path)
    if name is None:
        if len(servers) != 1:
            raise pytest.UsageError("mcp_server(config=%r): name one of its servers (%s)" % (path, ", ".join(servers)))
        name = next(iter(servers))
    if name not in servers:
        raise pytest.UsageError("mcp_server: no server %r in %s (%s)" % (name, path, ", ".join(servers)))
    return _client_kwargs(servers[name])


def _from_entry(name: str, entry: Dict[str, Any]) -> Tuple[Any, Dict[str, Any]]:
    from ..manager.config import parse_config

    return _client_kwargs(parse_config({"mcpServers": {name: entry}}, source="mcp_server marker")[name])


def _client_kwargs(cfg: Any) -> Tuple[Any, Dict[str, Any]]:
    if cfg.error is not None:
        raise cfg.error
    options: Dict[str, Any] = dict(cfg.options)
    options["name"] = cfg.name
    if cfg.timeout is not None:
        options["timeout"] = cfg.timeout
    options["connect_timeout"] = cfg.connect_timeout
    if cfg.url:
        options["transport"] = cfg.transport
        if cfg.headers:
            options["headers"] = dict(cfg.headers)
        if cfg.bearer_token:
            options["bearer_token"] = cfg.bearer_token
        return cfg.url, options
    if cfg.env:
        options["env"] = dict(cfg.env)
    if cfg.cwd:
        options["cwd"] = cfg.cwd
    if cfg.inherit_env is not None:
        options["inherit_env"] = cfg.inherit_env
    return list(cfg.command), options


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    """Attach the server's stderr to the report of a test that failed in setup or call.

    The server is stopped first (its client closed; the fixture's own close is then a no-op), so every line
    it wrote is in the report, not only those read so far.
    """
    outcome = yield
    report = outcome.get_result()
    if not report.failed or call.when not in ("setup", "call"):
        return
    client = item.stash.get(_CLIENT_KEY, None)
    if client is None:
        return
    lines = _server_stderr(client)
    if lines:
        report.sections.append(("mcp server stderr", "\n".join(lines)))


def _server_stderr(client: Any) -> List[str]:
    """Every stderr line the client's stdio server wrote (its captured tail), after stopping it."""
    from ..errors import MCPError

    try:
        transport = client.session.transport
    except MCPError:  # not open: a failed open keeps its transport for stderr_tail
        return list(client.stderr_tail)
    client.close()
    return list(getattr(transport, "stderr_tail", None) or [])
