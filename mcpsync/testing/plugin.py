"""The pytest plugin of mcpsync (entry point ``pytest11: mcpsync``): the ``mcp_client`` fixture, the
``mcp_server`` marker, the ``--mcp-server`` / ``--mcp-era`` options, and the server's stderr in failure reports.

* ``mcp_client``: an open :class:`mcpsync.Client` for the test's server. The server is the closest
  ``mcp_server`` marker's target, else ``--mcp-server`` / the ``mcp_server`` ini value. Its ``scope``
  (the marker's ``scope=``, else ``--mcp-scope`` / the ``mcp_scope`` ini value, else ``"function"``):
  ``"function"``: a fresh server process or connection per test, closed after it; ``"module"`` / ``"session"``:
  one client (one server process) shared by the tests of a module / of the whole run that name the same
  server, era and options, closed at the end of the module / run (a client whose server died is replaced).
* ``@pytest.mark.mcp_server(target, era="auto", scope=None, **client_options)``: ``target`` is a command (a
  list, or a string split like a shell would), an ``http(s)://`` URL, one configuration entry (a dict such as
  ``{"command": "python", "args": ["server.py"], "env": {...}}`` or ``{"url": ..., "headers": {...}}``), or a
  **server object** written with the official SDK (``MCPServer``) or FastMCP: it is served in the test process
  (:class:`~mcpsync.testing.inprocess.InProcessServer`, Streamable HTTP on 127.0.0.1, once per run), no
  subprocess; ``config="FILE", name="NAME"`` takes the entry from a configuration file instead. ``era`` is ``"auto"``,
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
from .inprocess import InProcessServer, is_server_object

MARKER = "mcp_server"
SCOPES = ("function", "module", "session")
_STDERR_KEY = pytest.StashKey[List[str]]()
_CLIENT_KEY = pytest.StashKey[Any]()
_SHARED_KEY = pytest.StashKey[bool]()
_MAX_STDERR_LINES = 2000  # what mcp_stderr keeps (the last lines)


class _Sink:
    """Where a client's stderr lines go: the current test's ``mcp_stderr`` list (swapped per test when shared)."""

    def __init__(self, lines: List[str], user: Any) -> None:
        self.lock = threading.Lock()
        self.lines = lines
        self.user = user

    def __call__(self, line: str) -> None:  # runs on the client's dispatch thread
        with self.lock:
            self.lines.append(line)
            del self.lines[:-_MAX_STDERR_LINES]
        if self.user is not None:
            self.user(line)


class _Pool:
    """The clients of one scope (a module or the session), by server/era/options; and, for the session, the
    server objects served in process. Closed by the scope's fixture. Used from the test thread only."""

    def __init__(self) -> None:
        self.clients: Dict[str, Tuple[Any, _Sink]] = {}
        self.served: Dict[int, InProcessServer] = {}

    def serve(self, server: Any) -> str:
        entry = self.served.get(id(server))
        if entry is None or entry.server is not server:
            entry = self.served[id(server)] = InProcessServer(server)
        return entry.start()

    def close(self) -> None:
        clients, self.clients = list(self.clients.values()), {}
        served, self.served = list(self.served.values()), {}
        for client, _ in clients:
            client.close()
        for server in served:
            server.close()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mcpsync", "MCP servers under test (mcpsync)")
    group.addoption(
        "--mcp-scope",
        default=None,
        choices=SCOPES,
        help="the default scope of mcp_client: function (a fresh server per test, the default), module or session",
    )
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
    parser.addini("mcp_scope", "the default scope of mcp_client: function, module or session", default="function")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "mcp_server(target, era='auto', scope=None, config=None, name=None, **client_options): the MCP server (a "
        "command, a URL, a configuration entry or an SDK/FastMCP server object), protocol era(s) and scope of the "
        "mcp_client fixture",
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


def _pool_lifetime() -> Iterator[_Pool]:
    """A new pool, closed when the generator is (a fixture's teardown)."""
    pool = _Pool()
    try:
        yield pool
    finally:
        pool.close()


@pytest.fixture(scope="session")
def _mcp_session_pool() -> Iterator[_Pool]:
    """The session's shared clients and in-process servers (closed at the end of the run)."""
    yield from _pool_lifetime()


@pytest.fixture(scope="module")
def _mcp_module_pool() -> Iterator[_Pool]:
    """The module's shared clients (closed at the end of the module)."""
    yield from _pool_lifetime()


def _scope(request: pytest.FixtureRequest, kwargs: Dict[str, Any]) -> str:
    scope = kwargs.pop("scope", None) or request.config.getoption("--mcp-scope") or request.config.getini("mcp_scope")
    scope = str(scope or "function")
    if scope not in SCOPES:
        raise pytest.UsageError("mcp_server: scope must be one of %s, not %r" % (", ".join(SCOPES), scope))
    return scope


@pytest.fixture
def mcp_client(
    request: pytest.FixtureRequest, mcp_era: str, mcp_stderr: List[str], _mcp_session_pool: _Pool
) -> Iterator[Any]:
    """An open :class:`mcpsync.Client` for the test's server: a new one closed after the test (function scope),
    or the module's / session's shared one (module, session scope).

    Blocks while the server starts and the handshake runs (bounded by ``connect_timeout``, default 30 s).
    """
    from ..client.client import Client

    mark = _marker(request.node)
    if mark is not None:
        args, kwargs = tuple(mark.args), dict(mark.kwargs)
    else:
        args, kwargs = (), {}
    kwargs.pop("era", None)
    scope = _scope(request, kwargs)
    config_file, name = kwargs.pop("config", None), kwargs.pop("name", None)
    if config_file is not None:
        where, options = _from_config_file(str(config_file), name)
    else:
        target = args[0] if args else request.config.getoption("--mcp-server") or request.config.getini("mcp_server")
        if target is None or target == "" or target == []:
            raise pytest.UsageError(
                "mcp_client needs a server: @pytest.mark.mcp_server(COMMAND | URL | ENTRY | SERVER OBJECT), "
                "--mcp-server or the mcp_server ini option"
            )
        if is_server_object(target):
            where, options = _mcp_session_pool.serve(target), {"name": _server_name(target)}
        else:
            where, options = client_arguments(target)
    from ..manager.flat import flat_options, grouped

    options = flat_options(options)  # flat names: the marker's keywords over the entry's settings
    options.update(flat_options(kwargs))
    options.setdefault("protocol", mcp_era)
    sink = _Sink(mcp_stderr, options.pop("on_stderr", None))
    if isinstance(where, list):
        options["on_stderr"] = sink
    if scope == "function":
        client = Client(where, **grouped(options, remote=isinstance(where, str)))
        request.node.stash[_CLIENT_KEY] = client  # for the failure report: its stderr, also after a failed open
        client.open()
        try:
            yield client
        finally:
            client.close()
        return
    pool: _Pool = _mcp_session_pool if scope == "session" else request.getfixturevalue("_mcp_module_pool")
    key = repr((where, sorted((k, repr(v)) for k, v in options.items() if k != "on_stderr")))
    entry = pool.clients.get(key)
    if entry is not None and not entry[0].connected:  # its server died (or a test closed it): a new one
        pool.clients.pop(key)
        entry[0].close()
        entry = None
    if entry is None:
        client = Client(where, **grouped(options, remote=isinstance(where, str)))
        request.node.stash[_CLIENT_KEY] = client
        client.open()
        entry = pool.clients[key] = (client, sink)
    client, shared_sink = entry
    with shared_sink.lock:
        shared_sink.lines = mcp_stderr  # this test's lines from now on
        shared_sink.user = sink.user
    request.node.stash[_CLIENT_KEY] = client
    request.node.stash[_SHARED_KEY] = True
    yield client


def _server_name(server: Any) -> str:
    name = getattr(server, "name", None)
    return str(name) if isinstance(name, str) and name else type(server).__name__


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

    A test's own server (function scope) is stopped first (its client closed; the fixture's own close is then a
    no-op), so every line it wrote is in the report, not only those read so far. A shared server (module or
    session scope) keeps running: the report has the lines it wrote during the test, as read so far.
    """
    outcome = yield
    report = outcome.get_result()
    if not report.failed or call.when not in ("setup", "call"):
        return
    client = item.stash.get(_CLIENT_KEY, None)
    if client is None:
        return
    if item.stash.get(_SHARED_KEY, False):  # other tests use this server: keep it running, report this test's lines
        own: Optional[List[str]] = item.stash.get(_STDERR_KEY, None)
        lines = list(own or [])
    else:
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
