"""The core knows no extension: ``client/client.py``, the session and the transports import
none of the extension modules (the input deferral, the warm cache, skills, MCP Apps pages, forms, the packages
above the client). Extensions hook into the core through :class:`mcpsync.client.hooks.ClientExtension` (or the
middleware chain) and are composed on the client's public API (``mcpsync.skills.list_skills(client)``,
``mcpsync.apps.app_for(client, tool)``); an ``extensions=[...]`` entry is anything with ``attach(client)``: a plain
client has none.

Imports are read statically (module-level, function-level and ``if TYPE_CHECKING:`` all count, except where
said). The extension hooks are also exercised end to end against the bundled example server.
"""

from __future__ import annotations

import ast
import pathlib
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

import mcpsync
from mcpsync.client.hooks import ClientExtension
from mcpsync.client.middleware import Next, RequestInfo
from tests.conftest import server_cmd
from mcpsync.client import ClientOptions

PKG = pathlib.Path(mcpsync.__file__).parent

#: extension modules of mcpsync.client, and the packages above the client
EXTENSIONS = (
    "mcpsync.input",
    "mcpsync.warm",
    "mcpsync.skills",
    "mcpsync.apps",
    "mcpsync.registry",
    "mcpsync.integrations",
    "mcpsync.testing",
    "mcpsync.cards",
    "mcpsync.manager",
)


def _module_name(path: pathlib.Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: pathlib.Path) -> Iterator[Tuple[str, int, bool]]:
    """(imported module, line, at module level outside ``if TYPE_CHECKING``) for every import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" else _module_name(path)

    def visit(node: ast.AST, top: bool) -> Iterator[Tuple[str, int, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield alias.name, child.lineno, top
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")
                    parts = parts[: len(parts) - (child.level - 1)]
                    base = ".".join(parts + ([base] if base else []))
                yield base, child.lineno, top
                for alias in child.names:
                    yield "%s.%s" % (base, alias.name), child.lineno, top
            elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                yield from visit(child, False)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                yield from visit(child, False)
            else:
                yield from visit(child, top)

    yield from visit(tree, True)


def _extension_of(name: str) -> Optional[str]:
    return next((e for e in EXTENSIONS if name == e or name.startswith(e + ".")), None)


def _offences(paths: List[pathlib.Path], *, runtime_top_only: bool) -> List[str]:
    found = []
    for path in paths:
        for name, line, top in _imports(path):
            ext = _extension_of(name)
            if ext is not None and (top or not runtime_top_only):
                found.append("%s:%d imports %s" % (path.relative_to(PKG.parent), line, ext))
    return sorted(set(found))


def test_the_session_the_transports_and_the_client_core_import_no_extension_at_all() -> None:
    paths = [PKG / "session.py", PKG / "client" / "hooks.py"]
    paths += [PKG / "client" / "middleware.py", PKG / "client" / "pipeline.py"]
    paths += sorted((PKG / "transports").rglob("*.py"))
    assert _offences(paths, runtime_top_only=False) == []


#: the resumable-input modules not yet moved out of mcpsync/client/ (into mcpsync.input): the one exception left
_MOVING = ("mcpsync.client.deferred",)


def test_the_client_imports_no_extension() -> None:
    found = _offences([PKG / "client" / "client.py"], runtime_top_only=False)
    assert [o for o in found if o.split(" imports ")[1] not in _MOVING] == []


def test_the_scan_sees_an_import(tmp_path: pathlib.Path) -> None:
    """The scanner itself: it finds relative, absolute, function-level and TYPE_CHECKING imports."""
    probe = PKG / "client" / "_probe_for_scan.py"
    probe.write_text(
        "from typing import TYPE_CHECKING\nfrom ..warm import WarmCache\n"
        "if TYPE_CHECKING:\n    from ..skills import Skill\n"
        "def f():\n    import mcpsync.apps\n",
        encoding="utf-8",
    )
    try:
        every = _offences([probe], runtime_top_only=False)
        top = _offences([probe], runtime_top_only=True)
    finally:
        probe.unlink()
    assert [o.split(" imports ")[1] for o in every] == ["mcpsync.warm", "mcpsync.skills", "mcpsync.apps"]
    assert [o.split(" imports ")[1] for o in top] == ["mcpsync.warm"]


class Recorder(ClientExtension):
    """A third-party extension built on the hooks alone."""

    def __init__(self) -> None:
        self.events: List[Tuple[Any, ...]] = []

    def before_open(self, target: Any) -> None:
        self.events.append(("before_open",))

    def negotiated(self, agreed: Any, transport: Optional[str]) -> None:
        self.events.append(("negotiated", agreed.era, transport))

    def opened(self, seed: Any) -> None:
        self.events.append(("opened",))

    def handle(self, request: RequestInfo, next: Next) -> Any:  # noqa: A002
        result = next(request)
        self.events.append(("wire", request.method))
        return result

    def listed(self, method: str, cursor: Optional[str], result: Any) -> None:
        self.events.append(("listed", method))

    def list_changed(self, method_prefix: str) -> None:
        self.events.append(("list_changed", method_prefix))


def test_an_extension_sees_the_open_the_wire_requests_and_the_listings() -> None:
    recorder = Recorder()
    client = mcpsync.Client(server_cmd(), protocol="modern", options=ClientOptions(lazy=True))
    client._extensions.append(recorder)  # noqa: SLF001 - the hook point extensions are attached at
    with client:
        client.list_tools()
        assert client.call_tool("echo", {"message": "x"}).text == "x"
    names = [e[0] for e in recorder.events]
    assert names[:3] == ["before_open", "negotiated", "opened"] and recorder.events[1][1:] == ("modern", "stdio")
    assert ("wire", "tools/list") in recorder.events and ("listed", "tools/list") in recorder.events
    assert recorder.events[-1] == ("wire", "tools/call")


def test_a_plain_client_has_no_extension() -> None:
    with mcpsync.connect(server_cmd()) as c:
        assert c._extensions == []  # noqa: SLF001
        assert c.extension(ClientExtension) is None


class AnswersElicitation(ClientExtension):
    """A third-party extension on the public hooks alone: it declares ``elicitation`` (capabilities) and answers
    the handshake era's elicitation requests itself (takes_server_request / server_request)."""

    def capabilities(self, caps: Dict[str, Any]) -> None:
        caps.setdefault("elicitation", {"form": {}})

    def takes_server_request(self, method: str) -> bool:
        return method == "elicitation/create"

    def server_request(self, method: str, params: Dict[str, Any], ctx: Any) -> Any:
        return {"action": "accept", "content": {"name": "Ext", "age": 1}}


class Attach:
    """The registration half: what ``extensions=[...]`` takes."""

    def __init__(self) -> None:
        self.hooks = AnswersElicitation()

    def attach(self, client: Any) -> ClientExtension:
        return self.hooks


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_third_party_extension_declares_a_capability_through_the_hook(era: str) -> None:
    """The example server refuses ``elicit`` from a client that did not declare ``elicitation``: with the hook
    it is declared (at initialize, and in the 2026-07-28 envelope), and the handshake-era question is answered by
    the extension."""
    with mcpsync.connect(server_cmd("--era", era)) as plain:  # not declared: refused by the server
        if era == "legacy":
            assert plain.call_tool("elicit", {}).is_error
        else:
            with pytest.raises(mcpsync.errors.MissingClientCapability):
                plain.call_tool("elicit", {})
    entry = Attach()
    with mcpsync.connect(server_cmd("--era", era), extensions=[entry]) as c:
        assert c.extension(AnswersElicitation) is entry.hooks
        if era == "legacy":
            result = c.call_tool("elicit", {})
            assert result.structured_content == {"action": "accept", "content": {"name": "Ext", "age": 1}}
        else:  # declared, so the server asks; the extension answers no 2026-07-28 round and there is no handler
            with pytest.raises(mcpsync.HandlerMissing):
                c.call_tool("elicit", {})


def test_the_warm_cache_is_attached_as_an_extension(tmp_path: pathlib.Path) -> None:
    from mcpsync.warm import WarmCache
    from mcpsync.warm.cache import WarmStart

    c = mcpsync.Client(server_cmd(), options=ClientOptions(lazy=True), extensions=[WarmCache(tmp_path)])
    assert [type(e).__name__ for e in c._extensions] == ["WarmStart"]  # noqa: SLF001
    assert isinstance(c._extensions[0], WarmStart)  # noqa: SLF001
    c.close()


class RecorderExtension:
    """A third-party ``extensions=[...]`` entry: anything with ``attach(client)``."""

    def __init__(self) -> None:
        self.attached: List[Any] = []
        self.recorder = Recorder()

    def attach(self, client: Any) -> ClientExtension:
        self.attached.append(client)
        return self.recorder


def test_any_entry_with_attach_is_composed_like_the_shipped_extensions(tmp_path: pathlib.Path) -> None:
    from mcpsync.warm import WarmCache

    ours = RecorderExtension()
    with mcpsync.Client(server_cmd(), extensions=[ours, WarmCache(tmp_path)]) as client:
        assert client.call_tool("echo", {"message": "x"}).text == "x"
        assert ours.attached == [client]
    assert [e[0] for e in ours.recorder.events][:3] == ["before_open", "negotiated", "opened"]
    assert ("wire", "tools/call") in ours.recorder.events
    with pytest.raises(mcpsync.ConfigError, match="attach") as info:
        mcpsync.Client(server_cmd(), extensions=[object()])
    assert "warm" not in str(info.value).lower()
