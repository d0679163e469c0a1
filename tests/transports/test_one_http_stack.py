"""No module of mcpsync opens an HTTP connection except through urllib3 (a static check of every module).

* no module makes a client socket connection for HTTP by itself: nothing calls ``socket.create_connection`` or
  ``urllib.request.urlopen``, and only :mod:`mcpsync.transports.http.pool` imports ``http.client`` (for the
  exception class urllib3 lets through);
* ``requests`` is imported only by the modules listed in :data:`STILL_ON_REQUESTS`: the registry client and
  ``.mcpb`` downloads (still on ``requests``, itself on urllib3; moving them onto urllib3 is the work left),
  and the adapters that let a ``requests`` auth run on the pools and an ``mcpsync.Auth`` run in ``requests``. A new
  module importing it fails here.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import List, Set, Tuple

PKG = Path(__file__).resolve().parents[2] / "mcpsync"

#: modules that still import requests (see the module docstring); the list may only shrink
STILL_ON_REQUESTS = {
    "registry/client.py",
    "registry/mcpb.py",
    "registry/sockets.py",  # the registry session that tells the deadline which socket to shut down
    "transports/http/auth.py",  # a requests.auth.AuthBase passed as auth= runs on the pools
    "httpauth.py",  # an mcpsync.Auth used as a requests auth
}


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
        # registry/sockets.py: the registry still rides requests (and so urllib3); its deadline reader subclasses
        # the response class that stack reads through, to cut each read's socket timeout to the time left. It
        # goes when the registry moves onto the pool.
        if name not in ("transports/http/pool.py", "registry/sockets.py") and any(
            i.startswith("http.client") for i in imports
        ):
            offenders.append((name, "imports http.client"))
        if "socket.create_connection" in calls:
            offenders.append((name, "socket.create_connection"))
        if "urllib.request.urlopen" in calls or "request.urlopen" in calls:
            offenders.append((name, "urllib.request.urlopen"))
    assert offenders == []


def test_requests_is_imported_only_where_it_still_carries_traffic() -> None:
    using = {name for name, tree in _modules() if any(i.split(".")[0] == "requests" for i in _imports(tree))}
    assert using <= STILL_ON_REQUESTS, using - STILL_ON_REQUESTS
