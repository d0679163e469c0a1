"""Wire format, error registry, public API surface and import cost (the layers: tests/project/test_layering.py)."""

from __future__ import annotations

import ast
import json
import pathlib
import subprocess
import sys

import pytest

import mcpsync
from mcpsync.wire import jsonrpc
from mcpsync.errors import error_from_response

PKG = pathlib.Path(mcpsync.__file__).parent


def test_encode_is_compact_single_line_utf8() -> None:
    data = jsonrpc.encode({"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"t": "a\nb ✓"}})
    assert b"\n" not in data and b'": ' not in data and b", " not in data
    assert json.loads(data)["params"]["t"] == "a\nb ✓"
    with pytest.raises(ValueError):
        jsonrpc.encode({"x": float("nan")})


@pytest.mark.parametrize(
    "msg,kind,ok",
    [
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, "response", True),
        ({"jsonrpc": "2.0", "id": "a", "error": {"code": -1, "message": "m"}}, "error", True),
        ({"jsonrpc": "2.0", "id": None, "result": {}}, "response", False),
        ({"jsonrpc": "2.0", "id": True, "result": {}}, "response", False),
        ({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1}}, "response", False),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "m"}}, "error", False),
        ({"jsonrpc": "1.0", "id": 1, "result": {}}, "", False),
        ({"jsonrpc": "2.0", "method": "n"}, "notification", True),
        ({"jsonrpc": "2.0", "method": "r", "id": 3, "params": {}}, "request", True),
        ({"jsonrpc": "2.0", "method": "r", "id": 1.5}, "request", False),
        ([1], "", False),
    ],
)
def test_classify(msg, kind, ok) -> None:  # type: ignore[no-untyped-def]
    k, problem = jsonrpc.classify(msg)
    assert (problem is None) == ok
    if kind:
        assert k == kind


def test_decode_replaces_bad_utf8_and_rejects_scalars() -> None:
    assert jsonrpc.decode(b'{"a":"\xff"}')["a"] == "\ufffd"
    with pytest.raises(mcpsync.ProtocolError):
        jsonrpc.decode(b"42")
    with pytest.raises(mcpsync.ProtocolError):
        jsonrpc.decode(b"{nope")


def test_ids_unique_across_threads() -> None:
    import threading

    alloc = jsonrpc.IdAllocator()
    got = []

    def take() -> None:
        got.extend(alloc.next() for _ in range(1000))

    ts = [threading.Thread(target=take) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert len(set(got)) == 8000


@pytest.mark.parametrize(
    "code,cls",
    [
        (-32700, mcpsync.errors.ParseError),
        (-32600, mcpsync.errors.InvalidRequest),
        (-32601, mcpsync.errors.MethodNotFound),
        (-32602, mcpsync.errors.InvalidParams),
        (-32603, mcpsync.errors.InternalError),
        (-32000, mcpsync.errors.ServerError),
        (-32001, mcpsync.errors.ResourceNotFound),
        (-32002, mcpsync.errors.ResourceNotFound),
        (-32003, mcpsync.errors.PromptNotFound),
        (-32004, mcpsync.errors.ExecutionFailed),
        (-32005, mcpsync.errors.PermissionDenied),
        (-32020, mcpsync.errors.HeaderMismatch),
        (-32021, mcpsync.errors.MissingClientCapability),
        (-32022, mcpsync.errors.UnsupportedVersionError),
        (-32042, mcpsync.errors.URLElicitationRequired),
        (-1234, mcpsync.RemoteError),
    ],
)
def test_error_registry(code, cls) -> None:  # type: ignore[no-untyped-def]
    exc = error_from_response({"code": code, "message": "m", "data": {"d": 1}}, server="s", method="x", request_id=7)
    assert type(exc) is cls and exc.code == code and exc.data == {"d": 1}
    assert "server=s" in str(exc) and "id=7" in str(exc)
    assert isinstance(exc, mcpsync.MCPError)


def test_resource_not_found_as_invalid_params_in_modern_era() -> None:
    exc = error_from_response({"code": -32602, "message": "nf", "data": {"uri": "u"}}, method="resources/read")
    assert isinstance(exc, mcpsync.errors.ResourceNotFound)


def test_timeout_is_builtin_timeout_and_config_is_value_error() -> None:
    assert issubclass(mcpsync.RequestTimeout, TimeoutError)
    assert issubclass(mcpsync.ConfigError, ValueError)
    assert issubclass(mcpsync.errors.ServerExited, mcpsync.errors.ConnectionClosed)


def test_all_is_sorted_complete_and_importable() -> None:
    assert mcpsync.__all__ == sorted(mcpsync.__all__)
    for name in mcpsync.__all__:
        assert getattr(mcpsync, name) is not None, name
    # the root error and its first-level classes are at the top; every error is in mcpsync.errors
    first_level = {
        n for n, v in vars(mcpsync.errors).items() if isinstance(v, type) and v.__bases__[0] is mcpsync.MCPError
    }
    assert first_level | {"MCPError"} <= set(mcpsync.__all__)
    errors_defined = {n for n, v in vars(mcpsync.errors).items() if isinstance(v, type) and issubclass(v, Exception)}
    assert errors_defined <= set(mcpsync.errors.__all__)


def test_import_is_light_and_starts_nothing() -> None:
    code = (
        "import sys, threading, mcpsync\n"
        "heavy = [m for m in ('requests', 'jsonschema', 'filelock', 'http.client', 'sseclient', 'subprocess',"
        " 'concurrent.futures') if m in sys.modules]\n"
        "optional = ('opentelemetry', 'cryptography', 'keyring', 'redis')\n"
        "extras = [m for m in sys.modules if m.split('.')[0] in optional]\n"
        "print(heavy + extras, threading.active_count())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[] 1", out.stdout + out.stderr


def test_a_client_without_production_options_imports_no_extra() -> None:
    # opentelemetry-api is installed here (test extra), yet a client whose app did not import it loads
    # neither it nor the pipeline/tracing modules: the "auto" check is one sys.modules lookup.
    code = (
        "import sys, mcpsync\n"
        "c = mcpsync.Client(['python3', '-c', 'pass'])\n"
        "mods = [m for m in sys.modules if m.split('.')[0] == 'opentelemetry'"
        " or m in ('mcpsync.client.pipeline', 'mcpsync.client.tracing', 'mcpsync.client.retry')]\n"
        "print(mods, c._pipeline)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[] None", out.stdout + out.stderr


def test_library_never_prints() -> None:
    offenders = []
    for path in PKG.rglob("*.py"):
        rel = str(path.relative_to(PKG))
        if rel.startswith(("cli", "__main__", "example_server")):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print":
                offenders.append(rel)
    assert not offenders, offenders


def test_every_public_module_name_is_reexported() -> None:
    import mcpsync.types

    top_types = {n for n in mcpsync.__all__ if getattr(getattr(mcpsync, n), "__module__", "") == "mcpsync.types"}
    assert top_types and top_types <= set(mcpsync.types.__all__)


def test_tool_ui_visibility_and_resource_uri():
    from mcpsync.types import Tool

    plain = Tool.from_dict({"name": "t"})
    assert plain.visibility == ("model", "app") and plain.visible_to_model and plain.visible_to_app
    assert plain.ui_resource_uri is None
    app_only = Tool.from_dict({"name": "t", "_meta": {"ui": {"resourceUri": "ui://x/page", "visibility": ["app"]}}})
    assert app_only.visibility == ("app",) and not app_only.visible_to_model and app_only.visible_to_app
    assert app_only.ui_resource_uri == "ui://x/page"
    flat = Tool.from_dict({"name": "t", "_meta": {"ui/resourceUri": "ui://y"}})
    assert flat.ui_resource_uri == "ui://y"
    assert Tool.from_dict({"name": "t", "_meta": {"ui": {"resourceUri": "https://evil"}}}).ui_resource_uri is None
    assert Tool.from_dict({"name": "t", "_meta": {"ui": {"visibility": "model"}}}).visibility == ("model", "app")
