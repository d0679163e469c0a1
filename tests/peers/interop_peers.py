"""Finding the interop peers: server-everything (npm) and the official Python SDK (``mcp``).

``require_peer(name)`` returns the command that starts the peer over stdio. When the peer is missing the
test is skipped with the reason, except under ``CI=true``, where it fails: interop is mandatory in CI
(``bash .ci/run`` installs both peers). The one exception is the SDK on Python < 3.10, which it does not
support: skipped everywhere.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path
from typing import List, Optional

import pytest

EVERYTHING_VERSION = "2026.8.31"
SDK_VERSION = "2.3.0"

ROOT = Path(__file__).resolve().parents[2]
PEERS = Path(__file__).resolve().parent
SDK_SERVER = PEERS / "sdk_server.py"

_EVERYTHING_CANDIDATES = (
    ROOT / ".ci" / "node" / "node_modules" / ".bin" / "mcp-server-everything",
    Path("/tmp/npmtest/node_modules/.bin/mcp-server-everything"),
)


def in_ci() -> bool:
    """True when running under CI (``CI=true``): missing peers are failures, not skips."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def _executable(path: Optional[str]) -> Optional[str]:
    if path and os.path.isfile(path) and os.access(path, os.X_OK):
        return str(path)
    return None


def everything_bin() -> Optional[str]:
    """The server-everything launcher: $MCPSYNC_EVERYTHING_BIN, .ci/node, /tmp/npmtest, then PATH."""
    env = os.environ.get("MCPSYNC_EVERYTHING_BIN")
    if env:
        return _executable(env)
    for cand in _EVERYTHING_CANDIDATES:
        found = _executable(str(cand))
        if found:
            return found
    return shutil.which("mcp-server-everything")


def everything_missing() -> Optional[str]:
    """Why server-everything cannot run here (None when it can)."""
    env = os.environ.get("MCPSYNC_EVERYTHING_BIN")
    if env and not _executable(env):
        return "MCPSYNC_EVERYTHING_BIN=%s is not an executable file" % env
    if shutil.which("node") is None:
        return "node is not on PATH (server-everything is a Node.js program; install Node.js >= 18)"
    if everything_bin() is None:
        return (
            "@modelcontextprotocol/server-everything@%s is not installed: run `bash .ci/run`, or "
            "`npm install --prefix .ci/node @modelcontextprotocol/server-everything@%s`, or set "
            "MCPSYNC_EVERYTHING_BIN" % (EVERYTHING_VERSION, EVERYTHING_VERSION)
        )
    return None


def sdk_version() -> Optional[str]:
    """The installed version of the official SDK ``mcp`` (None when absent)."""
    if importlib.util.find_spec("mcp") is None:
        return None
    try:
        from importlib.metadata import version

        return version("mcp")
    except Exception:  # pragma: no cover - metadata missing
        return "unknown"


def sdk_missing() -> Optional[str]:
    """Why the official SDK server cannot run here (None when it can)."""
    got = sdk_version()
    if got is None:
        return "the official MCP SDK is not installed: pip install -e '.[interop]' (mcp==%s)" % SDK_VERSION
    if got != SDK_VERSION:
        return "mcp %s is installed, these tests are written for mcp==%s" % (got, SDK_VERSION)
    return None


def require_peer(name: str) -> List[str]:
    """The stdio command for peer ``name`` ("everything" or "sdk"); skip (fail under CI=true) when missing."""
    if name == "everything":
        reason = everything_missing()
        command = [everything_bin() or "mcp-server-everything", "stdio"]
    elif name == "sdk":
        if sys.version_info < (3, 10):
            pytest.skip("the official MCP SDK (mcp==%s) needs Python >= 3.10" % SDK_VERSION)
        reason = sdk_missing()
        command = [sys.executable, str(SDK_SERVER)]
    else:
        raise ValueError("unknown peer %r" % name)
    if reason is not None:
        if in_ci():
            pytest.fail("interop peer %r is mandatory under CI=true: %s" % (name, reason), pytrace=False)
        pytest.skip("interop peer %r missing: %s" % (name, reason))
    return command
