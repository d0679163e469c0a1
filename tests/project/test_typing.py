"""Types as a user sees them: a program using the documented API passes ``mypy --strict``, and the main
entry points reveal precise types (``connect()`` is a ``Client``, results are typed, nothing is ``Any``).

The package itself is checked with ``mypy`` (``[tool.mypy]`` in pyproject.toml: strict) by ``.ci/run``.
Without mypy installed these tests skip, except under ``CI=true`` where they fail.
"""

from __future__ import annotations

import ast
import os
import pathlib
import re
import subprocess
import sys
from typing import Dict, List, Tuple

import pytest

import mcpsync

from tests.conftest import server_cmd

PKG = pathlib.Path(mcpsync.__file__).parent
PROGRAM = pathlib.Path(__file__).with_name("typing_user_program.py")
#: The user's view: strict, and mcpsync's own modules are not reported (as for an installed package).
USER_CONFIG = """\
[mypy]
strict = True
python_version = 3.10
[mypy-mcpsync.*]
follow_imports = silent
"""


def _mypy_available() -> None:
    try:
        import mypy  # noqa: F401
    except ImportError:
        if os.environ.get("CI", "").strip().lower() in ("true", "1", "yes"):
            pytest.fail("mypy is required under CI=true (pip install -e '.[test]')", pytrace=False)
        pytest.skip("mypy is not installed (pip install -e '.[test]')")


def _run_mypy(tmp_path: pathlib.Path, target: pathlib.Path) -> Tuple[int, str]:
    _mypy_available()
    config = tmp_path / "mypy.ini"
    config.write_text(USER_CONFIG)
    env = dict(os.environ)
    source_root = str(PKG.parent)
    if "site-packages" not in source_root:  # a checkout: let mypy find this very copy of mcpsync
        env["MYPYPATH"] = source_root
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(config),
            "--cache-dir",
            str(tmp_path / "cache"),
            str(target),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(tmp_path),
        timeout=600,
    )
    return out.returncode, out.stdout + out.stderr


def _short(type_text: str) -> str:
    """``mcpsync.client.client.Client`` -> ``Client``, ``typing.Sequence[str]`` -> ``Sequence[str]``."""
    return re.sub(r"\b(?:[A-Za-z_]\w*\.)+([A-Za-z_]\w*)", r"\1", type_text)


def _expected_reveals() -> Dict[int, str]:
    found = {}
    for number, line in enumerate(PROGRAM.read_text().splitlines(), 1):
        if "reveal_type(" in line and "# revealed: " in line:
            found[number] = line.split("# revealed: ", 1)[1].strip()
    return found


def test_user_program_is_strict_clean_and_reveals_precise_types(tmp_path: pathlib.Path) -> None:
    code, output = _run_mypy(tmp_path, PROGRAM)
    errors = [line for line in output.splitlines() if ": error:" in line]
    assert code == 0 and not errors, output
    revealed: Dict[int, str] = {}
    for line in output.splitlines():
        m = re.match(r".*typing_user_program\.py:(\d+): note: Revealed type is \"(.*)\"$", line)
        if m:
            revealed[int(m.group(1))] = _short(m.group(2))
    expected = _expected_reveals()
    assert len(expected) >= 20
    wrong: List[str] = []
    for number, want in expected.items():
        got = revealed.get(number, "<nothing revealed>")
        ok = got.startswith(want[:-3]) if want.endswith("...") else got == want
        if not ok or "Any" in got.replace("dict[str, Any]", ""):
            wrong.append("line %d: want %s, got %s" % (number, want, got))
    assert not wrong, "\n".join(wrong)


def test_a_type_error_in_user_code_is_reported(tmp_path: pathlib.Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import mcpsync\n"
        "from mcpsync.client import ClientOptions, HTTPOptions\n"
        "client = mcpsync.connect(['x'], timeout='soon')\n"  # wrong option type
        "count: int = client.call_tool('echo').text\n"  # wrong result type
        "client.list_tools()[0].nme\n"  # typo on a result
        "mgr = mcpsync.Manager({})\n"
        "mgr.on('status_changed', lambda server: None)\n"  # the listener gets (server, status)
        "mcpsync.Client('https://h/mcp', bearer='t')\n"  # issue 19 item 9: remote options are typed
        "mcpsync.connect('https://h/mcp', timout=3)\n"
        "mcpsync.Client('https://h/mcp', header={'X': 'y'})\n"
        "mcpsync.Client('https://h/mcp', http=HTTPOptions(transport='websocket'))\n"
        "mcpsync.Client('https://h/mcp', http=HTTPOptions(read_timeout='slow'))\n"
        "mcpsync.Client(['srv'], options=ClientOptions(after_fork='ignore'))\n"
        "mcpsync.Client(['srv'], cwd='/tmp')\n"  # moved into StdioOptions
    )
    code, output = _run_mypy(tmp_path, bad)
    assert code == 1, output
    assert 'bad.py:8: error: Unexpected keyword argument "bearer" for "Client"' in output, output
    assert 'bad.py:9: error: Unexpected keyword argument "timout" for "connect"' in output, output
    assert 'bad.py:10: error: Unexpected keyword argument "header" for "Client"' in output, output
    assert 'bad.py:11: error: Argument "transport" to "HTTPOptions"' in output, output
    assert 'bad.py:12: error: Argument "read_timeout" to "HTTPOptions"' in output, output
    assert 'bad.py:13: error: Argument "after_fork" to "ClientOptions"' in output, output
    assert 'bad.py:3: error: Argument "timeout" to "connect"' in output, output
    assert 'bad.py:14: error: Unexpected keyword argument "cwd" for "Client"' in output, output
    assert "bad.py:4: error: Incompatible types in assignment" in output, output
    assert 'bad.py:5: error: "Tool" has no attribute "nme"' in output, output
    assert "bad.py:7: error:" in output, output


def test_user_program_runs_against_the_example_server() -> None:
    from tests.project import typing_user_program as program

    seen = program.main(server_cmd())
    assert seen["echo"] == "hi" and seen["sum"] == "5.0" and seen["async"] == "later"
    assert "sampled:" in seen["sample"] and "accept" in seen["elicit"]
    assert "echo" in seen["tools"].split(",") and seen["first_page"]
    assert seen["timeout"] == "RequestTimeout" and seen["tool_error"]
    assert seen["manager_status"] == "connected" and int(seen["manager_tools"]) > 3
    assert seen["manager_echo"] == "via manager"
    assert "example:connected" in seen["manager_events"].split(","), seen["manager_events"]


def _type_checking_imports(init: pathlib.Path, reexport: bool) -> Dict[str, str]:
    """name -> module (relative to the package) of every ``if TYPE_CHECKING:`` import in ``init``."""
    tree = ast.parse(init.read_text())
    names = {}
    for node in tree.body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) in ("TYPE_CHECKING", "_TYPE_CHECKING"):
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.level >= 1 and stmt.module:
                    for alias in stmt.names:
                        if reexport:
                            assert alias.asname == alias.name, "re-export %s as %s" % (alias.name, alias.name)
                        names[alias.name] = "." * (stmt.level - 1) + stmt.module
    return names


#: Every package whose names load lazily (``_LAZY``), checked below.
LAZY_PACKAGES = [
    "mcpsync",
    "mcpsync.adapters",
    "mcpsync.apps",
    "mcpsync.auth",
    "mcpsync.input",
    "mcpsync.integrations",
    "mcpsync.middleware",
    "mcpsync.registry",
    "mcpsync.skills",
    "mcpsync.tasks",
    "mcpsync.transports",
    "mcpsync.warm",
]


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_lazy_name_is_visible_to_type_checkers(package: str) -> None:
    import importlib

    module = importlib.import_module(package)
    init = pathlib.Path(str(module.__file__))
    # mcpsync computes part of its namespace lazily, so its imports must say "X as X"
    declared = _type_checking_imports(init, reexport=package == "mcpsync")
    table = module._LAZY  # noqa: SLF001
    lazy = {name: where[1:] if where.startswith(".") else where for name, where in table.items()}
    missing = sorted(set(lazy) - set(declared))
    assert not missing, "add to the `if TYPE_CHECKING:` imports of %s: %s" % (init, missing)
    submodules = getattr(module, "_SUBMODULES", frozenset())
    extra = sorted(set(declared) - set(lazy) - set(submodules))
    assert not extra, "imported for type checkers but not in _LAZY: %s" % extra
    moved = sorted(n for n in lazy if declared[n] != lazy[n] and not declared[n].startswith(lazy[n] + "."))
    assert not moved, "TYPE_CHECKING import and _LAZY disagree on the module of %s" % moved


def test_type_checking_imports_cost_nothing_at_run_time() -> None:
    code = "import sys, mcpsync\nprint(sorted(m for m in sys.modules if m.startswith('mcpsync.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    loaded = set(eval(out.stdout))  # noqa: S307 - our own output
    assert loaded <= {"mcpsync.__version__", "mcpsync._lazy", "mcpsync._type_names", "mcpsync.errors"}, loaded
