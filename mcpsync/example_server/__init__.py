"""The mcpsync example MCP server: a pure-Python (standard library only) peer for demos and tests.

Run it over stdio with ``python -m mcpsync.example_server [options]``, over Streamable HTTP with
``--http PORT``; serve it from a program with :class:`.http.HTTPFront`, or mount
:class:`ExampleServer` behind any other transport (see :mod:`.core`).
"""

from __future__ import annotations

from .connections import QueueConnection
from .core import Connection, ExampleServer, Options, RequestContext, ServerSession
from .stdio import main

__all__ = ["Connection", "ExampleServer", "Options", "QueueConnection", "RequestContext", "ServerSession", "main"]
