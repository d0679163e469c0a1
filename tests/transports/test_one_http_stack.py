"""No module of mcpsync opens an HTTP connection except through urllib3 (a static check of every module).

* no module makes a client socket connection for HTTP by itself: nothing calls ``socket.create_connection`` or
  ``urllib.request.urlopen``, and only :mod:`mcpsync.transports.http.pool` imports ``http.client`` (for the
  exception class urllib3 lets through);
* nothing sends with ``requests``: no module imports it at module level, and none calls its senders
  (``requests.get``/``post``/..., ``requests.Session``, ``requests.adapters``). It is an extra: the one use left is
  the adapter that runs a user's ``requests.auth.AuthBase`` (``auth=``) on the urllib3 pools, and
  :class:`mcpsync.Auth`'s own ``requests`` compatibility, both importing it inside the function that needs it.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import List, Set, Tuple

PKG = Path(__file__).resolve().parents[2] / "mcpsync"

#: what sends a request with requests (or opens its connection pools): used nowhere in mcpsync
REQUESTS_SENDERS = {"requests." + name for name in ("get", "post", "put", "patch", "delete", "head", "options",
                                                     "request", "Session", "session", "adapters", "sessions")}


def _modules() -> List[Tuple[str, ast.AST]]:
    return [(str(p.relative_to(PKG)), ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(PKG.rglob("*.py"))]


def _imports(tree: ast.AST) -> Set[str]:
    found: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def _attribute_calls(tree: ast.AST) -> Set[str]:
    calls: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            base = node.func.value
            if isinstance(base, ast.Name):
                calls.add("%s.%s" % (base.id, node.func.attr))
            elif isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name):
                calls.add("%s.%s.%s" % (base.value.id, base.attr, node.func.attr))
    return calls


def test_no_module_opens_an_http_connection_but_through_urllib3() -> None:
    offenders = []
    for name, tree in _modules():
        imports = _imports(tree)
        calls = _attribute_calls(tree)
        # pool.py subclasses http.client's answer class (what urllib3 parses the status line with) and catches
        # the exception class urllib3 lets through
        if name != "transports/http/pool.py" and any(
            i.startswith("http.client") for i in imports
        ):
            offenders.append((name, "imports http.client"))
        if "socket.create_connection" in calls:
            offenders.append((name, "socket.create_connection"))
        if "urllib.request.urlopen" in calls or "request.urlopen" in calls:
            offenders.append((name, "urllib.request.urlopen"))
    assert offenders == []


def _top_level_imports(tree: ast.Module) -> Set[str]:
    found: Set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def _dotted_uses(tree: ast.AST) -> Set[str]:
    uses: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            uses.add("%s.%s" % (node.value.id, node.attr))
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            uses.update("%s.%s" % (node.module, alias.name) for alias in node.names)
            uses.add(node.module)
    return uses


def test_nothing_sends_with_requests() -> None:
    offenders = []
    for name, tree in _modules():
        assert isinstance(tree, ast.Module)
        if any(i.split(".")[0] == "requests" for i in _top_level_imports(tree)):
            offenders.append((name, "imports requests at module level"))
        for use in sorted(_dotted_uses(tree) & REQUESTS_SENDERS):
            offenders.append((name, use))
    assert offenders == []


def test_the_registry_and_bundle_downloads_send_through_the_pool() -> None:
    """The registry client and .mcpb downloads use the urllib3 pool of the MCP path (PoolNet), not a stack
    of their own."""
    trees = dict(_modules())
    net = trees["registry/net.py"]
    # transports/http/net.FirstUseNet: the PoolNet of a server's OAuth requests and of the registry, made on first use
    assert "FirstUseNet" in {n.id for n in ast.walk(net) if isinstance(n, ast.Name)}
    assert "PoolNet" in {n.id for n in ast.walk(trees["transports/http/net.py"]) if isinstance(n, ast.Name)}
    for name in ("registry/client.py", "registry/mcpb.py"):
        assert "RegistryNet" in {n.id for n in ast.walk(trees[name]) if isinstance(n, ast.Name)}, name
