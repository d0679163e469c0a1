"""The HTTP transports are composed, not assembled from mixins (the project's engineering standard).

``StreamableHTTPTransport`` owns a ``HandshakeSession`` (transports/http/handshake.py) and an ``EventStreams``
reader (transports/http/streams.py); both get what they use through their constructors, so neither imports
the transport, and the stream reader does not know the handshake session. The behaviour itself is tested
against real local servers in test_http_streamable.py, test_http_modern.py, test_http_faults.py and others.
"""

from __future__ import annotations

import ast
import pathlib
from typing import Set

import mcpsync
from mcpsync.transports.base import Transport
from mcpsync.transports.http.handshake import HandshakeSession
from mcpsync.transports.http.legacy_sse import SSETransport
from mcpsync.transports.http.streams import EventStreams
from mcpsync.transports.http.transport import StreamableHTTPTransport

PKG = pathlib.Path(mcpsync.__file__).parent
HTTP = PKG / "transports" / "http"


def _relative_imports(path: pathlib.Path) -> Set[str]:
    """The sibling modules ``path`` imports (``from .x import ...`` / ``from . import x``)."""
    out: Set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                out.add(node.module.split(".")[0])
            else:
                out.update(a.name for a in node.names)
    return out


def test_the_remote_transports_inherit_only_the_transport_contract() -> None:
    for cls in (StreamableHTTPTransport, SSETransport):
        assert [c for c in cls.__mro__ if c not in (cls, object)] == [Transport, Transport.__mro__[1]], cls.__mro__


def test_no_mixin_classes_in_the_package() -> None:
    offenders = []
    for path in sorted(PKG.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.name.endswith("Mixin"):
                offenders.append("%s: %s" % (path.relative_to(PKG), node.name))
    assert not offenders


def test_the_collaborators_do_not_reach_back_into_the_transport() -> None:
    handshake = _relative_imports(HTTP / "handshake.py")
    streams = _relative_imports(HTTP / "streams.py")
    assert "transport" not in handshake and "legacy_sse" not in handshake, handshake
    assert not {"transport", "handshake", "legacy_sse"} & streams, streams
    for path in (HTTP / "handshake.py", HTTP / "streams.py"):
        text = path.read_text(encoding="utf-8")
        assert "StreamableHTTPTransport" not in text.split('"""', 2)[2], path  # the docstring may name it


def test_a_transport_composes_one_of_each() -> None:
    t = StreamableHTTPTransport("http://127.0.0.1:9/mcp", name="composed")
    try:
        assert isinstance(t._session, HandshakeSession)  # noqa: SLF001
        assert isinstance(t._streams, EventStreams)  # noqa: SLF001
        assert t.era is None and t.session_id is None
        t.set_protocol("2026-07-28", "modern")  # no GET stream in this era: nothing is sent
        assert t.era == t._session.era == "modern"  # noqa: SLF001
    finally:
        t.close(timeout=5)
