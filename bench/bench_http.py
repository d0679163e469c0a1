"""Remote servers at the floor: mcpsync vs a stdlib ``http.client`` floor, plain ``requests`` and the official SDK.

    .venv/bin/python bench/bench_http.py              # full run: 5 rounds (~15 min here)
    .venv/bin/python bench/bench_http.py --quick      # smaller counts, 5 rounds (~6 min)
    .venv/bin/python bench/bench_http.py --only http-json-legacy,many --rounds 7
    .venv/bin/python bench/bench_http.py --profile mcpsync http-json-legacy   # cProfile of one worker
    .venv/bin/python bench/bench_http.py --quick --rounds 7 --only http-json-legacy --tasks calls --no-sdk \
        --clients mcpsync,floor-relay,relay,floor-proxy,proxy,floor-https,https,floor-tunnel,tunnel \
        --proxy squid   # the proxy rows, next to the bare relay

Every remote client talks to the same minimal stdlib server (asyncio streams, one child process, never doing more
than parsing the request and writing a canned answer). Configurations (``--only``):

* ``http-json-legacy`` / ``http-json-modern``: Streamable HTTP, ``application/json`` answers, handshake era
  (2025-11-25, ``Mcp-Session-Id``) or 2026-07-28 (``_meta`` envelope, ``Mcp-Method`` headers, no session);
* ``http-sse-legacy`` / ``http-sse-modern``: the same with ``text/event-stream`` answers (one event, then the
  stream ends);
* ``sse-legacy``: the legacy HTTP+SSE transport (GET stream + POSTed messages, answers on the stream);
* ``many``: 20 stdio servers (``python -m mcpsync.example_server.echo --handshake-only``) connected in parallel.
  Every client's servers get the whole environment (mcpsync ``inherit_env=True``, the SDK ``env=os.environ``,
  as the floor's ``Popen``), so the 20 children are the same processes whichever client starts them, and
  every client's modules are imported before the clock starts.

Clients:

* ``floor``: hand-written on the stdlib: one ``http.client.HTTPConnection`` per thread, ``json``, a straight-line
  POST per call; for ``sse-legacy`` one reader thread on the GET stream and a dict of id -> Future. For ``many``:
  ``bench/floor_client.py`` (Popen + initialize) in 20 threads.
* ``requests``: the same client written on one shared ``requests.Session`` (pool of 128).
* ``urllib3``: the same client written on one bare urllib3 ``HTTPConnectionPool`` (128 connections,
  ``retries=False``): the library mcpsync sends every request with, by itself.
* ``mcpsync``: ``mcpsync.connect(url, http=HTTPOptions(transport=...), protocol=legacy|modern)``, one client
  shared by all threads.
  For ``many``: ``mcpsync.connect(cmd, protocol="auto")`` in 20 threads, and ``manager``: one ``mcpsync.Manager``
  with the 20 servers, ``open()``.
* ``sdk``: the official SDK ``mcp`` (``mcp.Client``, asyncio; tasks for calls in flight), when installed.
* ``oauth`` (Streamable HTTP configurations): the ``mcpsync`` client with ``auth=OAuthManager.auth(name)``: a real
  local authorization server (``tests/peers/authserver.py``, in the worker process) logs the worker in once
  (authorization code + PKCE, approved over HTTP) and issues access tokens that live 2 s, so the manager
  refreshes them (``refresh_token`` grant) again and again during the run; the worker reports how many times.
* ``proxy``: the ``mcpsync`` client through a local forward proxy (absolute-form requests to an ``http://``
  server); ``floor-proxy``: the stdlib floor through the same proxy. ``--proxy`` picks the proxy: ``squid``
  (Debian's ``squid``, a C proxy, configured in a temp dir with keep-alive to clients and to servers, POSTs
  included), ``tinyproxy`` (C, but it closes every client connection after one answer: its forward rows pay a
  new TCP connection per call), ``python`` (``tests/peers/proxyserver.py``, stdlib, a thread per connection). The
  default ``auto`` takes squid when it is installed, else the Python proxy; tinyproxy only when asked for (it
  also answers without ``Connection: close`` before closing, so a keep-alive client now and then sends its next
  request into a closing connection, and a POST that may have reached the proxy is not sent again: that call
  fails, for the floor as for mcpsync; its CONNECT tunnels also stalled here, see bench/README.md). The proxy
  measured is printed.
* ``relay`` / ``floor-relay``: mcpsync and the floor to the same server through a bare TCP relay (``socat``,
  when installed: no proxy protocol, it parses nothing). Its hop is the least any proxy can cost on this machine,
  so ``floor-relay`` / ``floor`` bounds from below what the proxy rows can reach against this server.
* ``https`` / ``floor-https``: mcpsync and the floor against the same server over TLS (its certificate from a
  throwaway CA made with ``openssl``), direct; ``tunnel`` / ``floor-tunnel``: the same through a ``CONNECT``
  tunnel of the same proxy (once a tunnel is up the proxy relays bytes). Skipped when ``openssl`` is missing.

``--server-delay MS``: the server waits that long before each ``tools/call`` answer (a server doing work, or one
across a network): a hop's fixed cost then weighs what it would against such a server.

The variants are also printed as ratios, computed per round (both clients of a ratio measured in the same round) and
given as the median with the range over the rounds: ``oauth``, ``proxy`` / ``mcpsync`` (what auth / a proxy
costs mcpsync), ``floor-proxy`` / ``floor`` (what the hop itself costs), ``proxy`` / ``floor-proxy`` (what
mcpsync adds behind the same proxy), and the same three for the tunnel against the direct TLS clients.

Every measurement runs in a fresh worker process, clients interleaved (the order flips every round), medians over
the rounds; ratios are against the floor measured in the same run. Metrics: round trip median and p99 (sequential
``tools/call``), sleeps per sequential call (the worker's voluntary context switches during them, per call: how
often a call had to wait for its answer), calls/s with 1 / 8 / 64 in flight (threads, or asyncio tasks for the SDK),
one 10 MB result (wall time, and the rise of the worker's peak RSS over its level just before the call), cold start
(a whole process: interpreter, imports, connect over HTTP, one call, close), and for ``many`` the wall time until
all 20 are connected. Nothing here is a test: no time is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple
from mcpsync.client import ClientOptions, HTTPOptions, StdioOptions

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BIG = 10 * 1000 * 1000
LEGACY = "2025-11-25"
MODERN = "2026-07-28"
META_KEY = "io.modelcontextprotocol/protocolVersion"
MODERN_META = {
    META_KEY: MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "floor", "version": "1"},
}
N_SERVERS = 20
sys.path.insert(0, ROOT)
ECHO = [sys.executable, "-m", "mcpsync.example_server.echo", "--handshake-only"]

CONFIGS = ["http-json-legacy", "http-json-modern", "http-sse-legacy", "http-sse-modern", "sse-legacy", "many"]
REMOTE_CLIENTS = [
    "floor", "requests", "urllib3", "mcpsync", "oauth", "floor-relay", "relay", "floor-proxy", "proxy",
    "floor-https", "https", "floor-tunnel", "tunnel", "sdk",
]  # fmt: skip
# mcpsync with auth / through a proxy / over TLS, direct or tunnelled, and the floor the same ways: Streamable
# HTTP configurations only, calls only
VARIANTS = ("oauth", "floor-relay", "relay", "floor-proxy", "proxy", "floor-https", "https", "floor-tunnel", "tunnel")
# the floor / mcpsync through a bare TCP relay (socat): no proxy, the same bytes one more process away
RELAY_CLIENTS = ("floor-relay", "relay")
TLS_CLIENTS = ("floor-https", "https", "floor-tunnel", "tunnel")
PROXY_KINDS = ("squid", "tinyproxy", "python")
MANY_CLIENTS = ["floor", "mcpsync", "manager", "sdk"]

# ---------------------------------------------------------------------------------------------- the server


def serve(port: int) -> None:  # pragma: no cover - runs in the child
    """Streamable HTTP on /mcp (JSON answers) and /mcp-sse (event-stream answers), legacy HTTP+SSE on /sse."""
    big_text = "x" * BIG
    delay = float(os.environ.get("MCPSYNC_BENCH_SERVER_DELAY_MS") or 0) / 1000.0  # --server-delay
    streams: Dict[str, asyncio.StreamWriter] = {}
    counter = [0]
    dumps = json.JSONEncoder(separators=(",", ":")).encode

    def answer(msg: Dict[str, Any]) -> Optional[bytes]:
        method = msg.get("method")
        if "id" not in msg or method is None:
            return None
        params = msg.get("params") or {}
        modern = isinstance(params.get("_meta"), dict) and META_KEY in params["_meta"]
        result: Dict[str, Any]
        if method == "initialize":
            result = {
                "protocolVersion": params.get("protocolVersion", LEGACY),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "bench", "version": "1"},
            }
        elif method == "server/discover":
            result = {
                "supportedVersions": [MODERN, LEGACY],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "bench", "version": "1"},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "bench", "version": "1"}},
                "ttlMs": 0,
                "cacheScope": "public",
            }
        elif method == "tools/list":
            schema = {"type": "object", "properties": {"message": {"type": "string"}}}
            result = {"tools": [{"name": "echo", "inputSchema": schema}, {"name": "big", "inputSchema": schema}]}
            if modern:
                result.update(ttlMs=0, cacheScope="public")
        elif method == "tools/call":
            args = params.get("arguments") or {}
            text = big_text if params.get("name") == "big" else str(args.get("message", ""))
            result = {"content": [{"type": "text", "text": text}]}
        elif method == "ping":
            result = {}
        else:
            return dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}}).encode()
        if modern:
            result["resultType"] = "complete"
        return dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode()

    def chunk(data: bytes) -> bytes:
        return b"%x\r\n%s\r\n" % (len(data), data)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                verb, target, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        k, v = line.split(":", 1)
                        headers[k.strip().lower()] = v.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
                path, _, query = target.partition("?")
                if verb == "GET" and path == "/sse":
                    counter[0] += 1
                    sid = str(counter[0])
                    writer.write(
                        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                    )
                    writer.write(chunk(b"event: endpoint\ndata: /messages?sid=%s\n\n" % sid.encode()))
                    streams[sid] = writer
                    try:
                        await reader.read()  # until the client goes away
                    finally:
                        streams.pop(sid, None)
                    return
                if verb == "GET":
                    writer.write(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
                    continue
                if verb == "DELETE":
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
                    continue
                msg = json.loads(body)
                out = answer(msg)
                if delay and msg.get("method") == "tools/call":
                    await asyncio.sleep(delay)
                if path == "/messages":
                    writer.write(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
                    stream = streams.get(query.split("=", 1)[-1])
                    if out is not None and stream is not None:
                        stream.write(chunk(b"event: message\ndata: " + out + b"\n\n"))
                    continue
                extra = b"Mcp-Session-Id: bench\r\n" if msg.get("method") == "initialize" else b""
                if out is None:
                    writer.write(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
                elif path == "/mcp":
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + extra)
                    writer.write(b"Content-Length: %d\r\n\r\n" % len(out))
                    writer.write(out)
                else:
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n" + extra)
                    writer.write(b"Transfer-Encoding: chunked\r\n\r\n")
                    writer.write(chunk(b"event: message\ndata: " + out + b"\n\n") + b"0\r\n\r\n")
                if writer.transport.get_write_buffer_size() > 1 << 20:
                    await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", port, limit=64 * 1024 * 1024, backlog=512)
        tls = os.environ.get("MCPSYNC_BENCH_SERVE_TLS")  # "port,certfile,keyfile": the same server over TLS
        if tls:
            import ssl

            tls_port, cert, key = tls.split(",")
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(cert, key)
            tls_server = await asyncio.start_server(
                handle, "127.0.0.1", int(tls_port), limit=64 * 1024 * 1024, backlog=512, ssl=ctx
            )
            await tls_server.start_serving()
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port: int = s.getsockname()[1]
    s.close()
    return port


def wait_for_port(port: int, proc: "subprocess.Popen[Any]", what: str) -> None:
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 1).close()
            return
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError("%s exited (status %s) before listening" % (what, proc.returncode)) from None
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class Server:
    """The bench server in a child process; with ``pki`` (see :func:`make_pki`) also over TLS on ``tls_port``."""

    def __init__(self, pki: Optional[Dict[str, str]] = None, delay_ms: float = 0.0) -> None:
        self.port = free_port()
        self.tls_port = free_port() if pki else 0
        env = dict(os.environ)
        if delay_ms:
            env["MCPSYNC_BENCH_SERVER_DELAY_MS"] = str(delay_ms)
        if pki:
            env["MCPSYNC_BENCH_SERVE_TLS"] = "%d,%s,%s" % (self.tls_port, pki["server.crt"], pki["server.key"])
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--serve", str(self.port)], env=env)
        wait_for_port(self.port, self.proc, "the bench server")
        if pki:
            wait_for_port(self.tls_port, self.proc, "the bench server (TLS)")

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


class ProxyProcess(Server):
    """tests/peers/proxyserver.py in a process of its own (a proxy is another process in real life too)."""

    describe = "python (tests/peers/proxyserver.py: stdlib, a thread per connection, keep-alive to clients and servers)"

    def __init__(self) -> None:
        code = (
            "import sys, time; sys.path.insert(0, %r)\n"
            "from tests.peers.proxyserver import ProxyServer\n"
            "p = ProxyServer().start(); print(p.port, flush=True)\n"
            "sys.stdin.read()\n"
            "p.stop()\n" % ROOT
        )
        self.proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.proc.stdout is not None
        self.port = int(self.proc.stdout.readline())

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


# squid: keep-alive to clients and to servers. By default squid opens a new server connection for every request
# it could not retry (a POST: every MCP request); server_pconn_for_nonretriable lets it reuse an idle one.
SQUID_CONF = """http_port 127.0.0.1:{port}
pid_filename none
cache_log /dev/null
access_log none
cache_store_log none
cache deny all
cache_mem 8 MB
coredump_dir none
netdb_filename none
pinger_enable off
http_access allow all
via off
forwarded_for transparent
shutdown_lifetime 0 seconds
client_persistent_connections on
server_persistent_connections on
server_pconn_for_nonretriable allow all
"""

# tinyproxy keeps no client connection alive (every answer ends its connection): see the module docstring
TINYPROXY_CONF = """Port {port}
Listen 127.0.0.1
Timeout 600
MaxClients 1024
LogLevel Critical
DisableViaHeader Yes
"""


class NativeProxy:
    """squid or tinyproxy from the system (``PATH``, ``/usr/sbin``), configured in a temp dir, in the foreground."""

    def __init__(self, kind: str) -> None:
        import tempfile

        exe = find_program(kind)
        if exe is None:
            raise RuntimeError("%s is not installed" % kind)
        self.tmp = tempfile.TemporaryDirectory(prefix="mcpsync-bench-proxy-")
        self.port = free_port()
        conf = os.path.join(self.tmp.name, kind + ".conf")
        with open(conf, "w") as f:
            f.write((SQUID_CONF if kind == "squid" else TINYPROXY_CONF).format(port=self.port))
        self.log = open(os.path.join(self.tmp.name, "stderr"), "wb")
        # squid -N: no daemon, one process; -d 1: startup errors to stderr (the log is /dev/null); as root it
        # runs as its cache_effective_user. tinyproxy -d: no daemon.
        cmd = [exe, "-N", "-d", "1", "-f", conf] if kind == "squid" else [exe, "-d", "-c", conf]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)
        try:
            wait_for_port(self.port, self.proc, kind)
        except BaseException:
            with open(self.log.name, "rb") as f:  # what the proxy said, before its temp dir goes
                said = f.read().decode("utf-8", "replace")[-2000:]
            self.close()
            sys.stderr.write(said)
            raise
        version = subprocess.run([exe, "-v"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout.decode()
        first = version.strip().splitlines()[0] if version.strip() else kind
        how = (
            "keep-alive to clients and servers, POSTs included"
            if kind == "squid"
            else "no keep-alive to clients: a new TCP connection to the proxy per forwarded call"
        )
        self.describe = "%s (%s; %s)" % (kind, first.strip()[:60], how)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.log.close()
        self.tmp.cleanup()


class Relay:
    """A bare TCP relay to the bench server: ``socat`` (C; a process per connection, ``select`` and
    ``read``/``write``, ``TCP_NODELAY`` both sides), which parses nothing. Its hop is the least any proxy's can
    cost on this machine: a forward proxy or a ``CONNECT`` tunnel relays the same bytes and does more besides."""

    def __init__(self, server_port: int) -> None:
        exe = find_program("socat")
        if exe is None:
            raise RuntimeError("socat is not installed")
        self.port = free_port()
        listen = "TCP-LISTEN:%d,bind=127.0.0.1,fork,reuseaddr,nodelay,backlog=512" % self.port
        # a new session: terminate() below then ends the per-connection children too
        self.proc = subprocess.Popen(
            [exe, listen, "TCP:127.0.0.1:%d,nodelay" % server_port], stdin=subprocess.DEVNULL, start_new_session=True
        )
        wait_for_port(self.port, self.proc, "socat")
        version = subprocess.run([exe, "-V"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout.decode()
        line = next((x for x in version.splitlines() if "version" in x), "socat").strip()
        self.describe = "%s (a bare TCP relay: parses nothing)" % line[:60]

    def close(self) -> None:
        import signal

        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        self.proc.wait(10)


def find_program(name: str) -> Optional[str]:
    import shutil

    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/local/sbin:/sbin")


def start_proxy(kind: str) -> Any:
    """The proxy of ``--proxy``: ``auto`` takes squid if installed, else tests/peers/proxyserver.py (see the module
    docstring for why not tinyproxy)."""
    if kind == "auto":
        kind = "squid" if find_program("squid") else "python"
    return ProxyProcess() if kind == "python" else NativeProxy(kind)


def make_pki(directory: str) -> Optional[Dict[str, str]]:
    """A throwaway CA and a certificate for 127.0.0.1 (the ``openssl`` command), or None without it."""
    import shutil

    if shutil.which("openssl") is None:
        return None

    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=directory, check=True, capture_output=True, timeout=60)

    with open(os.path.join(directory, "san.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\n")
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=mcpsync bench CA",
        "-keyout", "ca.key", "-out", "ca.crt")  # fmt: skip
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", "server.key",
        "-out", "server.csr")  # fmt: skip
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
        "-extfile", "san.ext", "-out", "server.crt")  # fmt: skip
    return {k: os.path.join(directory, k) for k in ("ca.crt", "server.crt", "server.key")}


def url_for(port: int, config: str) -> str:
    path = "/sse" if config.startswith("sse") else "/mcp-sse" if config.startswith("http-sse") else "/mcp"
    return "http://127.0.0.1:%d%s" % (port, path)


# ---------------------------------------------------------------------------------------------- floor (stdlib)


class StdlibFloor:
    """One http.client connection per thread, json, a straight-line POST per call (the least a client can do)."""

    def __init__(self, url: str, config: str) -> None:
        import concurrent.futures
        import http.client
        from urllib.parse import urlsplit

        self._http = http.client
        self._futures = concurrent.futures
        parts = urlsplit(url)
        self.host, self.port, self.path = parts.hostname or "", parts.port or 80, parts.path
        self.modern = config.endswith("modern")
        self.legacy_sse = config.startswith("sse")
        self.local = threading.local()
        self.lock = threading.Lock()
        self.next_id = 0
        self.headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        self.conns: List[Any] = []
        if self.legacy_sse:
            self.pending: Dict[int, Any] = {}
            self.stream_conn = http.client.HTTPConnection(self.host, self.port)
            self.stream_conn.request("GET", self.path, headers={"Accept": "text/event-stream"})
            self.stream = self.stream_conn.getresponse()
            self.endpoint_ready = threading.Event()
            self.reader = threading.Thread(target=self._read, daemon=True)
            self.reader.start()
            self.endpoint_ready.wait(10)
        if self.modern:
            self.headers["MCP-Protocol-Version"] = MODERN
            self._rpc("server/discover", {})
        else:
            init = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "floor", "version": "1"}}
            self._rpc("initialize", init)
            if not self.legacy_sse:
                self.headers["Mcp-Session-Id"] = "bench"
                self.headers["MCP-Protocol-Version"] = LEGACY
            self._post(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode(), {}).read()

    def _conn(self) -> Any:
        conn = getattr(self.local, "conn", None)
        if conn is None:
            conn = self.local.conn = self._http.HTTPConnection(self.host, self.port)
            with self.lock:
                self.conns.append(conn)
        return conn

    def _post(self, body: bytes, extra: Dict[str, str]) -> Any:
        conn = self._conn()
        headers = dict(self.headers, **extra) if extra else self.headers
        conn.request("POST", self.endpoint if self.legacy_sse else self.path, body, headers)
        resp = conn.getresponse()
        return resp

    def _rpc(self, method: str, params: Dict[str, Any]) -> Any:
        with self.lock:
            self.next_id += 1
            rid = self.next_id
        if self.modern:  # what 2026-07-28 asks of every request: version, capabilities (MUST), clientInfo (SHOULD)
            params = dict(params, _meta=dict(MODERN_META))
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode()
        extra = {"Mcp-Method": method}
        if method == "tools/call":
            extra["Mcp-Name"] = params["name"]
        if self.legacy_sse:
            fut = self._futures.Future()
            self.pending[rid] = fut
            self._post(body, {}).read()
            return fut.result(120)
        resp = self._post(body, extra if self.modern else {})
        data = resp.read()
        if resp.getheader("Content-Type", "").startswith("text/event-stream"):
            start = data.index(b"data: ") + 6
            return json.loads(data[start : data.index(b"\n", start)])
        return json.loads(data)

    def _read(self) -> None:
        buf = bytearray()
        scan = 0
        read1 = self.stream.read1
        try:
            while True:
                chunk = read1(1 << 20)
                if not chunk:
                    return
                buf += chunk
                while True:
                    end = buf.find(b"\n\n", scan)
                    if end < 0:
                        scan = max(0, len(buf) - 1)
                        break
                    event = bytes(buf[:end])
                    del buf[: end + 2]
                    scan = 0
                    kind, data = "message", b""
                    for line in event.split(b"\n"):
                        if line.startswith(b"event:"):
                            kind = line[6:].strip().decode()
                        elif line.startswith(b"data:"):
                            data = line[5:].strip()
                    del event
                    if kind == "endpoint":
                        self.endpoint = data.decode()
                        self.endpoint_ready.set()
                        continue
                    msg = json.loads(data)
                    del data
                    fut = self.pending.pop(msg.get("id"), None)
                    if fut is not None:
                        fut.set_result(msg)
                    msg = None
        except Exception:  # noqa: BLE001 - the stream was shut down by close()
            return

    def call(self, tool: str, args: Dict[str, Any]) -> str:
        return self._rpc("tools/call", {"name": tool, "arguments": args})["result"]["content"][0]["text"]

    def close(self) -> None:
        if self.legacy_sse:
            sock = self.stream_conn.sock
            if sock is not None:
                sock.shutdown(socket.SHUT_RDWR)
            self.reader.join(10)
            self.stream_conn.close()
        for conn in self.conns:
            conn.close()


class WholeAnswer:
    """An answer read whole (by requests or urllib3), read by the floor's code as an ``http.client`` answer.

    One class for every call: a class made per call (as this bench once did) is a reference cycle per call,
    which made the garbage collector run every few dozen calls and cost those rows ~15 us a call."""

    __slots__ = ("data", "headers")

    def __init__(self, data: bytes, headers: Any) -> None:
        self.data = data
        self.headers = headers

    def read(self) -> bytes:
        return self.data

    def getheader(self, name: str, default: str) -> str:
        return self.headers.get(name, default)  # type: ignore[no-any-return]


class RequestsClient(StdlibFloor):
    """The same client on one shared requests.Session (pool of 128): what plain requests costs."""

    def __init__(self, url: str, config: str) -> None:
        import requests
        from requests.adapters import HTTPAdapter

        self.session = requests.Session()
        self.session.mount("http://", HTTPAdapter(pool_maxsize=128))
        self.url = url
        super().__init__(url, config)

    def _post(self, body: bytes, extra: Dict[str, str]) -> Any:
        headers = dict(self.headers, **extra) if extra else self.headers
        target = "http://%s:%d%s" % (self.host, self.port, self.endpoint) if self.legacy_sse else self.url
        r = self.session.post(target, data=body, headers=headers)
        return WholeAnswer(r.content, r.headers)

    def close(self) -> None:
        super().close()
        self.session.close()


class Urllib3Client(StdlibFloor):
    """The same client on one bare urllib3 ``HTTPConnectionPool`` (128 connections, ``retries=False``, answers
    read whole): what the library mcpsync sends with costs by itself."""

    def __init__(self, url: str, config: str) -> None:
        import urllib3
        from urllib.parse import urlsplit

        parts = urlsplit(url)
        self.pool = urllib3.HTTPConnectionPool(parts.hostname, parts.port or 80, maxsize=128, retries=False)
        super().__init__(url, config)

    def _post(self, body: bytes, extra: Dict[str, str]) -> Any:
        headers = dict(self.headers, **extra) if extra else self.headers
        r = self.pool.urlopen("POST", self.endpoint if self.legacy_sse else self.path, body=body, headers=headers)
        return WholeAnswer(r.data, r.headers)

    def close(self) -> None:
        super().close()
        self.pool.close()


class MCPSyncRemote:
    def __init__(self, url: str, config: str) -> None:
        import mcpsync

        self.c = mcpsync.connect(
            url,
            http=HTTPOptions(transport="sse" if config.startswith("sse") else "http"),
            options=ClientOptions(validate_output=False),
            protocol="modern" if config.endswith("modern") else "legacy",
            timeout=120,
        )

    def call(self, tool: str, args: Dict[str, Any]) -> str:
        return self.c.call_tool(tool, args).text  # type: ignore[no-any-return]

    def close(self) -> None:
        self.c.close()


class MCPSyncOAuth(MCPSyncRemote):
    """``auth=OAuthManager.auth(name)`` against a real local authorization server; 2 s tokens, refreshed."""

    def __init__(self, url: str, config: str) -> None:
        import tempfile

        import mcpsync
        from mcpsync.auth import OAuthManager
        from mcpsync.auth.store import CredentialStore
        from tests.peers.authserver import AuthTestServer, approve_via_http

        self.auth_server = AuthTestServer().__enter__()
        self.auth_server.expires_in = 2
        self.auth_server.prm["resource"] = url
        self.tmp = tempfile.TemporaryDirectory()
        self.oauth = OAuthManager(
            store=CredentialStore(os.path.join(self.tmp.name, "auth.json")),
            authorize_handler=approve_via_http,
            refresh_skew=1.0,
        )
        self.oauth.add_server("bench", url)
        self.oauth.remember_challenge("bench", {"resource_metadata": self.auth_server.base + "/custom/prm"})
        self.oauth.authenticate("bench")
        self.c = mcpsync.connect(
            url,
            http=HTTPOptions(transport="http"),
            options=ClientOptions(validate_output=False),
            protocol="modern" if config.endswith("modern") else "legacy",
            timeout=120,
            auth=self.oauth.auth("bench"),
        )

    def extra(self) -> Dict[str, Any]:
        return {"refreshes": len(self.auth_server.token_requests("refresh_token"))}

    def close(self) -> None:
        super().close()
        self.oauth.close()
        self.auth_server.__exit__(None, None, None)
        self.tmp.cleanup()


def bench_proxy_url() -> str:
    return "http://127.0.0.1:%s" % os.environ["MCPSYNC_BENCH_PROXY"]


class MCPSyncProxied(MCPSyncRemote):
    """Through the local forward proxy whose port is in ``MCPSYNC_BENCH_PROXY`` (``proxies=``, absolute form)."""

    def __init__(self, url: str, config: str) -> None:
        import mcpsync

        self.c = mcpsync.connect(
            url,
            http=HTTPOptions(transport="http", proxies={"http": bench_proxy_url()}),
            options=ClientOptions(validate_output=False),
            protocol="modern" if config.endswith("modern") else "legacy",
            timeout=120,
        )


class MCPSyncHTTPS(MCPSyncRemote):
    """The same server over TLS (``verify=`` the bench CA in ``MCPSYNC_BENCH_CA``), direct or, as ``tunnel``,
    through a ``CONNECT`` tunnel of the bench proxy."""

    tunnel = False

    def __init__(self, url: str, config: str) -> None:
        import mcpsync

        self.c = mcpsync.connect(
            url,
            http=HTTPOptions(
                transport="http",
                verify=os.environ["MCPSYNC_BENCH_CA"],
                proxies={"https": bench_proxy_url()} if self.tunnel else {},
            ),
            options=ClientOptions(validate_output=False),
            protocol="modern" if config.endswith("modern") else "legacy",
            timeout=120,
        )


class MCPSyncTunnel(MCPSyncHTTPS):
    tunnel = True


class FloorProxied(StdlibFloor):
    """The floor through the local forward proxy (absolute-form request targets)."""

    def __init__(self, url: str, config: str) -> None:
        self.target_url = url
        super().__init__(url, config)

    def _conn(self) -> Any:
        conn = getattr(self.local, "conn", None)
        if conn is None:
            port = int(os.environ["MCPSYNC_BENCH_PROXY"])
            conn = self.local.conn = self._http.HTTPConnection("127.0.0.1", port)
            with self.lock:
                self.conns.append(conn)
        return conn

    def _post(self, body: bytes, extra: Dict[str, str]) -> Any:
        conn = self._conn()
        headers = dict(self.headers, **extra) if extra else self.headers
        conn.request("POST", self.target_url, body, headers)
        return conn.getresponse()


class FloorHTTPS(StdlibFloor):
    """The floor over TLS: one ``http.client.HTTPSConnection`` per thread, direct or (``floor-tunnel``) through
    a ``CONNECT`` tunnel of the bench proxy (``set_tunnel``)."""

    tunnel = False

    def _conn(self) -> Any:
        conn = getattr(self.local, "conn", None)
        if conn is None:
            import ssl

            ctx = ssl.create_default_context(cafile=os.environ["MCPSYNC_BENCH_CA"])
            if self.tunnel:
                conn = self._http.HTTPSConnection("127.0.0.1", int(os.environ["MCPSYNC_BENCH_PROXY"]), context=ctx)
                conn.set_tunnel(self.host, self.port)
            else:
                conn = self._http.HTTPSConnection(self.host, self.port, context=ctx)
            self.local.conn = conn
            with self.lock:
                self.conns.append(conn)
        return conn


class FloorTunnel(FloorHTTPS):
    tunnel = True


def sync_client(name: str, url: str, config: str) -> Any:
    cls = {
        "floor-proxy": FloorProxied,
        "floor": StdlibFloor,
        "floor-relay": StdlibFloor,
        "relay": MCPSyncRemote,
        "requests": RequestsClient,
        "urllib3": Urllib3Client,
        "mcpsync": MCPSyncRemote,
        "oauth": MCPSyncOAuth,
        "proxy": MCPSyncProxied,
        "floor-https": FloorHTTPS,
        "https": MCPSyncHTTPS,
        "floor-tunnel": FloorTunnel,
        "tunnel": MCPSyncTunnel,
    }[name]
    if name in TLS_CLIENTS:  # the same path on the server's TLS port
        path = url.split("/", 3)[3]
        url = "https://127.0.0.1:%s/%s" % (os.environ["MCPSYNC_BENCH_TLS_PORT"], path)
    elif name in RELAY_CLIENTS:  # the same path, one relay away
        path = url.split("/", 3)[3]
        url = "http://127.0.0.1:%s/%s" % (os.environ["MCPSYNC_BENCH_RELAY"], path)
    return cls(url, config)


# ---------------------------------------------------------------------------------------------- workers


def _percentile(xs: List[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def _peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _tput_threads(call: Callable[[], Any], inflight: int, total: int) -> float:
    per = max(1, total // inflight)
    barrier = threading.Barrier(inflight + 1)
    errors: List[BaseException] = []

    def work() -> None:
        barrier.wait()
        try:
            for _ in range(per):
                call()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(inflight)]
    for t in threads:
        t.start()
    barrier.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    dt = time.perf_counter() - t0
    if errors:
        raise errors[0]
    return per * inflight / dt


def worker_sync(name: str, config: str, task: str, port: int, n: int, total: int) -> Dict[str, Any]:
    url = url_for(port, config)
    c = sync_client(name, url, config)
    try:
        assert c.call("echo", {"message": "hi"}) == "hi"
        if task == "cold":
            return {}
        for _ in range(50):
            c.call("echo", {"message": "warm"})
        if task == "big":
            before = _peak_rss_mb()
            t0 = time.perf_counter()
            text = c.call("big", {})
            dt = time.perf_counter() - t0
            assert len(text) == BIG
            del text
            return {"big_time": dt, "big_rss": _peak_rss_mb() - before}
        import resource

        lat = []
        switches = resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw
        for _ in range(n):
            t0 = time.perf_counter()
            c.call("echo", {"message": "m"})
            lat.append(time.perf_counter() - t0)
        switches = resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw - switches
        res = {"rt": statistics.median(lat), "p99": _percentile(lat, 0.99), "sleeps": switches / n}
        for k in (1, 8, 64):
            res["c%d" % k] = _tput_threads(lambda: c.call("echo", {"message": "c"}), k, total)
        if hasattr(c, "extra"):
            res.update(c.extra())
        return res
    finally:
        c.close()


def worker_sdk(config: str, task: str, port: int, n: int, total: int) -> Dict[str, Any]:
    from mcp import Client

    url = url_for(port, config)
    mode = MODERN if config.endswith("modern") else "legacy"

    def make() -> Any:
        if config.startswith("sse"):
            from mcp.client.sse import sse_client

            return Client(sse_client(url), mode="legacy", read_timeout_seconds=120)
        return Client(url, mode=mode, read_timeout_seconds=120)

    async def main() -> Dict[str, Any]:
        async with make() as c:

            async def call(tool: str, msg: str) -> str:
                r = await c.call_tool(tool, {"message": msg})
                return r.content[0].text  # type: ignore[no-any-return]

            assert await call("echo", "hi") == "hi"
            if task == "cold":
                return {}
            for _ in range(50):
                await call("echo", "warm")
            if task == "big":
                before = _peak_rss_mb()
                t0 = time.perf_counter()
                try:
                    text = await call("big", "")
                except BaseException as exc:  # noqa: BLE001 - the SDK caps an event at 1 MiB
                    return {"big_time": "failed (%s)" % type(exc).__name__, "big_rss": "failed"}
                dt = time.perf_counter() - t0
                assert len(text) == BIG
                del text
                return {"big_time": dt, "big_rss": _peak_rss_mb() - before}
            lat = []
            for _ in range(n):
                t0 = time.perf_counter()
                await call("echo", "m")
                lat.append(time.perf_counter() - t0)
            res: Dict[str, Any] = {"rt": statistics.median(lat), "p99": _percentile(lat, 0.99)}
            for k in (1, 8, 64):
                per = max(1, total // k)

                async def seq(per: int = per) -> None:
                    for _ in range(per):
                        await call("echo", "c")

                t0 = time.perf_counter()
                await asyncio.gather(*(seq() for _ in range(k)))
                res["c%d" % k] = per * k / (time.perf_counter() - t0)
            return res

    return asyncio.run(main())


def worker_many(name: str) -> Dict[str, Any]:
    """Connect N_SERVERS handshake-only stdio servers in parallel; the time until all are connected."""
    if name == "floor":
        sys.path.insert(0, HERE)
        from floor_client import FloorClient

        clients: List[Any] = [None] * N_SERVERS

        def one(i: int) -> None:
            clients[i] = FloorClient(ECHO, new_session=True)

        t0 = time.perf_counter()
        threads = [threading.Thread(target=one, args=(i,)) for i in range(N_SERVERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        dt = time.perf_counter() - t0
        for c in clients:
            c.close()
        return {"connect": dt}
    if name in ("mcpsync", "manager"):
        # the floor and the SDK import everything before the clock starts; mcpsync defers its client and
        # transport modules to the first connect (the cold-start row measures that): import them here too
        import mcpsync.client.client
        import mcpsync.transports.http.select
        import mcpsync.transports.stdio  # noqa: F401
    if name == "mcpsync":
        import mcpsync

        conns: List[Any] = [None] * N_SERVERS

        def one_m(i: int) -> None:
            conns[i] = mcpsync.connect(ECHO, protocol="auto", name="echo%d" % i, stdio=StdioOptions(inherit_env=True))

        t0 = time.perf_counter()
        threads = [threading.Thread(target=one_m, args=(i,)) for i in range(N_SERVERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        dt = time.perf_counter() - t0
        assert all(c.era == "legacy" for c in conns)
        for c in conns:
            c.close()
        return {"connect": dt}
    if name == "manager":
        import mcpsync

        cfg = {
            "mcpServers": {
                "s%d" % i: {"command": ECHO[0], "args": ECHO[1:], "inherit_env": True} for i in range(N_SERVERS)
            }
        }
        mgr = mcpsync.Manager(cfg)
        t0 = time.perf_counter()
        mgr.open()
        dt = time.perf_counter() - t0
        assert len(mgr.clients()) == N_SERVERS, mgr.status()
        mgr.close()
        return {"connect": dt}
    # the official SDK: one asyncio loop, the 20 connects gathered
    from mcp import Client, StdioServerParameters

    async def main() -> float:
        params = StdioServerParameters(command=ECHO[0], args=ECHO[1:], cwd=ROOT, env=dict(os.environ))
        connected = [asyncio.Event() for _ in range(N_SERVERS)]
        done = asyncio.Event()

        async def one(ev: asyncio.Event) -> None:  # each client enters and exits in its own task
            async with Client(params, mode="auto"):
                ev.set()
                await done.wait()

        t0 = time.perf_counter()
        tasks = [asyncio.ensure_future(one(ev)) for ev in connected]
        for ev in connected:
            await ev.wait()
        dt = time.perf_counter() - t0
        done.set()
        await asyncio.gather(*tasks)
        return dt

    return {"connect": asyncio.run(main())}


def worker(args: List[str]) -> Dict[str, Any]:
    name, config, task, port, n, total = args
    if config == "many":
        return worker_many(name)
    if name == "sdk":
        return worker_sdk(config, task, int(port), int(n), int(total))
    return worker_sync(name, config, task, int(port), int(n), int(total))


# ---------------------------------------------------------------------------------------------- driver


def run_worker(name: str, config: str, task: str, port: int, n: int, total: int) -> Dict[str, Any]:
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", name, config, task, str(port), str(n), str(total)]
    t0 = time.perf_counter()
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=900)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        err = out.stderr.decode("utf-8", "replace")[-2000:]
        return {"error": "%s %s %s failed: %s" % (name, config, task, err.strip().splitlines()[-1] if err else "?")}
    res: Dict[str, Any] = json.loads(out.stdout.decode().strip().splitlines()[-1])
    if task == "cold":
        res["cold"] = wall
    return res


def sdk_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("mcp") is not None


# metric -> (label, format, target for mcpsync as (op, limit) or None)
METRICS: List[Tuple[str, str, Optional[Tuple[str, float]]]] = [
    ("rt", "round trip, median", ("<=", 1.5)),
    ("p99", "round trip, p99", None),
    ("sleeps", "sleeps per sequential call (voluntary context switches)", None),
    ("c1", "calls/s, 1 in flight", None),
    ("c8", "calls/s, 8 in flight", None),
    ("c64", "calls/s, 64 in flight", (">=", 0.8)),
    ("big_time", "10 MB result, time", ("<=", 1.2)),
    ("big_rss", "10 MB result, peak RSS rise", ("<=", 1.3)),
    ("cold", "cold: process, import, connect, 1 call, close", ("<=", 1.3)),
    ("connect", "20 stdio servers connected in parallel", ("<=", 1.05)),
]


def fmt(metric: str, v: Any) -> str:
    if not isinstance(v, (int, float)):
        return str(v)
    if metric in ("rt", "p99"):
        return "%.0f us" % (v * 1e6)
    if metric.startswith("c") and metric != "cold" and metric != "connect":
        return "%.0f/s" % v
    if metric == "sleeps":
        return "%.2f" % v
    if metric == "big_rss":
        return "%.1f MB" % v
    return "%.3f s" % v


def median_of(values: List[Any]) -> Any:
    nums = [v for v in values if isinstance(v, (int, float))]
    if len(nums) != len(values):
        bad = [v for v in values if not isinstance(v, (int, float))]
        return bad[0] if bad else None
    return statistics.median(nums) if nums else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="300 sequential calls, 1280 calls per throughput run")
    ap.add_argument("--only", default=",".join(CONFIGS))
    ap.add_argument("--clients", default=None, help="comma list (default: all available)")
    ap.add_argument("--tasks", default="calls,big,cold")
    ap.add_argument("--no-sdk", action="store_true")
    ap.add_argument(
        "--server-delay",
        type=float,
        default=0.0,
        metavar="MS",
        help="the server waits MS milliseconds before answering each tools/call (a server doing work, or far away)",
    )
    ap.add_argument("--proxy", default="auto", choices=("auto",) + PROXY_KINDS, help="the proxy of the proxy rows")
    ap.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--worker", nargs=6, help=argparse.SUPPRESS)
    ap.add_argument("--profile", nargs=2, metavar=("CLIENT", "CONFIG"), help="cProfile one calls worker in-process")
    args = ap.parse_args()
    if args.serve:
        serve(args.serve)
        return 0
    if args.worker:
        print(json.dumps(worker(args.worker)))
        return 0
    if args.profile:
        return profile(args.profile[0], args.profile[1], proxy_kind=args.proxy)
    n, total = (300, 1280) if args.quick else (1000, 3200)
    with_sdk = not args.no_sdk and sdk_available()
    configs = args.only.split(",")
    tasks = args.tasks.split(",")
    print(
        "mcpsync remote benchmark: %s, Python %s, %d rounds, %d sequential calls, %d calls per throughput run%s"
        % (
            time.strftime("%Y-%m-%d %H:%M"),
            sys.version.split()[0],
            args.rounds,
            n,
            total,
            "" if with_sdk else " (official SDK not run)",
        ),
        flush=True,
    )
    # a wheel install byte-compiles mcpsync; a source tree run with PYTHONDONTWRITEBYTECODE=1 would otherwise
    # compile every mcpsync module from source in every cold worker (the standard library has its .pyc files)
    import compileall

    compileall.compile_dir(os.path.join(ROOT, "mcpsync"), quiet=1)
    tls = not args.clients or any(c in args.clients.split(",") for c in TLS_CLIENTS)
    relay = not args.clients or any(c in args.clients.split(",") for c in RELAY_CLIENTS)
    peers = Peers(args.proxy, tls=tls, delay_ms=args.server_delay, relay=relay)
    server = peers.server
    print("proxy measured: %s" % peers.proxy.describe, flush=True)
    if peers.relay is not None:
        print("relay measured: %s" % peers.relay.describe, flush=True)
    elif relay:
        print("no socat command: the floor-relay and relay rows are not run", flush=True)
    if args.server_delay:
        print("the server waits %g ms before each tools/call answer (--server-delay)" % args.server_delay, flush=True)
    if tls and peers.pki is None:
        print("no openssl command: the https and tunnel rows are not run", flush=True)
    results: Dict[str, Dict[str, Dict[str, List[Any]]]] = {}
    try:
        for config in configs:
            clients = MANY_CLIENTS if config == "many" else REMOTE_CLIENTS
            if args.clients:
                clients = [c for c in clients if c in args.clients.split(",") or c == "floor"]
            if not with_sdk:
                clients = [c for c in clients if c != "sdk"]
            if not config.startswith("http-"):
                clients = [c for c in clients if c not in VARIANTS]
            if peers.pki is None:
                clients = [c for c in clients if c not in TLS_CLIENTS]
            if peers.relay is None:
                clients = [c for c in clients if c not in RELAY_CLIENTS]
            res = results[config] = {c: {} for c in clients}
            config_tasks = ["many"] if config == "many" else tasks
            for rnd in range(args.rounds):
                t_round = time.perf_counter()
                for task in config_tasks:
                    order = clients if rnd % 2 == 0 else list(reversed(clients))
                    for name in order:
                        if name in VARIANTS and task != "calls":
                            continue  # auth and proxies cost per call: the calls rows say it
                        out = run_worker(name, config, task, server.port, n, total)
                        if "error" in out:
                            print("  " + out["error"], flush=True)
                            keys = {
                                "calls": ["rt", "p99", "sleeps", "c1", "c8", "c64"],
                                "big": ["big_time", "big_rss"],
                            }
                            for key in keys.get(task, [task if task != "many" else "connect"]):
                                res[name].setdefault(key, []).append("failed")
                            continue
                        for key, val in out.items():
                            res[name].setdefault(key, []).append(val)
                print(
                    "  %s round %d/%d done in %.1fs" % (config, rnd + 1, args.rounds, time.perf_counter() - t_round),
                    flush=True,
                )
    finally:
        peers.close()
    print()
    print("proxy measured: %s" % peers.proxy.describe)
    if args.server_delay:
        print("the server waited %g ms before each tools/call answer (--server-delay)" % args.server_delay)
    report(results)
    return 0


class Peers:
    """The bench server (with a TLS port when ``tls`` and ``openssl`` is there) and the proxy of ``proxy_kind``;
    their ports and the CA in the environment the workers inherit."""

    def __init__(self, proxy_kind: str, tls: bool = True, delay_ms: float = 0.0, relay: bool = False) -> None:
        import tempfile

        self.relay: Optional[Relay] = None
        self.tmp = tempfile.TemporaryDirectory(prefix="mcpsync-bench-")
        self.pki = make_pki(self.tmp.name) if tls else None
        self.server = Server(self.pki, delay_ms)
        try:
            self.proxy = start_proxy(proxy_kind)
        except BaseException:
            self.server.close()
            self.tmp.cleanup()
            raise
        os.environ["MCPSYNC_BENCH_PROXY"] = str(self.proxy.port)
        if relay and find_program("socat"):
            try:
                self.relay = Relay(self.server.port)
            except BaseException:
                self.close()
                raise
            os.environ["MCPSYNC_BENCH_RELAY"] = str(self.relay.port)
        if self.pki is not None:
            os.environ["MCPSYNC_BENCH_TLS_PORT"] = str(self.server.tls_port)
            os.environ["MCPSYNC_BENCH_CA"] = self.pki["ca.crt"]

    def close(self) -> None:
        try:
            self.server.close()
        finally:
            if self.relay is not None:
                self.relay.close()
            self.proxy.close()
            self.tmp.cleanup()


def report(results: Dict[str, Dict[str, Dict[str, List[Any]]]]) -> None:
    print()
    print("Medians over the rounds; (x) = ratio to the stdlib floor of the same run; target applies to mcpsync.")
    for config, res in results.items():
        clients = list(res)
        print()
        print("### %s" % config)
        print()
        print("| metric | " + " | ".join(clients) + " | target (mcpsync) | met? |")
        print("|" + "---|" * (len(clients) + 3))
        for key, label, target in METRICS:
            if not any(key in res[c] for c in clients):
                continue
            floor = median_of(res["floor"].get(key, []))
            cells = []
            for c in clients:
                v = median_of(res[c].get(key, []))
                cell = fmt(key, v) if v is not None else "-"
                if c != "floor" and isinstance(v, (int, float)) and isinstance(floor, (int, float)) and floor:
                    cell += " (%.2fx)" % (v / floor)
                cells.append(cell)
            verdict = ""
            if target is not None:
                op, lim = target
                verdicts = []
                for c in ("mcpsync", "manager"):
                    v = median_of(res.get(c, {}).get(key, []))
                    if isinstance(v, (int, float)) and isinstance(floor, (int, float)) and floor:
                        r = v / floor
                        ok = r <= lim if op == "<=" else r >= lim
                        verdicts.append(("%s " % c if c == "manager" else "") + ("yes" if ok else "NO (%.2fx)" % r))
                if key == "connect" and "sdk" in res:
                    sdk = median_of(res["sdk"].get(key, []))
                    for c in ("mcpsync", "manager"):
                        v = median_of(res.get(c, {}).get(key, []))
                        if isinstance(v, (int, float)) and isinstance(sdk, (int, float)):
                            verdicts.append("%s %s SDK" % (c, "below" if v < sdk else "NOT below"))
                verdict = ", ".join(verdicts)
            tgt = "%s %.2fx floor" % target if target else ""
            print("| %s | %s | %s | %s |" % (label, " | ".join(cells), tgt, verdict))
        report_variants(config, res)


# (label, client, against, target): ratios of two clients measured in the same rounds
RATIOS: List[Tuple[str, str, str, bool]] = [
    ("mcpsync / floor (the http.client floor)", "mcpsync", "floor", False),
    ("urllib3 / floor (a bare urllib3 client)", "urllib3", "floor", False),
    ("mcpsync / urllib3 (what mcpsync adds to the library it sends with)", "mcpsync", "urllib3", True),
    ("oauth / mcpsync", "oauth", "mcpsync", True),
    ("floor-relay / floor (a bare TCP relay: the least any hop costs)", "floor-relay", "floor", False),
    ("relay / mcpsync (mcpsync through the same bare relay)", "relay", "mcpsync", False),
    ("relay / floor-relay (what mcpsync adds through the same relay)", "relay", "floor-relay", False),
    ("proxy / mcpsync (target: within 1.1x)", "proxy", "mcpsync", True),
    ("floor-proxy / floor (what the hop itself costs)", "floor-proxy", "floor", False),
    ("proxy / floor-proxy (what mcpsync adds behind the same proxy)", "proxy", "floor-proxy", False),
    ("https / floor-https (mcpsync over TLS, direct)", "https", "floor-https", False),
    ("tunnel / https (CONNECT; target: within 1.1x)", "tunnel", "https", True),
    ("floor-tunnel / floor-https (what the tunnel itself costs)", "floor-tunnel", "floor-https", False),
    ("tunnel / floor-tunnel (what mcpsync adds in the same tunnel)", "tunnel", "floor-tunnel", False),
]
RATIO_KEYS = ("rt", "c1", "c8", "c64")


def round_ratios(values: List[Any], bases: List[Any]) -> List[float]:
    """``value / base`` of each round in which both were measured."""
    return [v / b for v, b in zip(values, bases) if isinstance(v, (int, float)) and isinstance(b, (int, float)) and b]


def report_variants(config: str, res: Dict[str, Dict[str, List[Any]]]) -> None:
    """The :data:`RATIOS` of the clients that ran: per round, then the median and the range over the rounds.

    "within 1.1x" of a target row: round trip at most 1.1x, calls/s at least 1/1.1 = 0.91x."""
    rows = [r for r in RATIOS if r[1] in res and r[2] in res]
    if not rows:
        return
    print()
    print(
        "%s, ratios per round: median (min-max) over the rounds (round trip: lower is better; calls/s: higher)" % config
    )
    print()
    print("| ratio | " + " | ".join(label for key, label, _ in METRICS if key in RATIO_KEYS) + " | within 1.1x? |")
    print("|---|---|---|---|---|---|")
    for label, c, against, target in rows:
        cells = []
        met: List[Tuple[str, bool]] = []
        for key in RATIO_KEYS:
            ratios = round_ratios(res[c].get(key, []), res[against].get(key, []))
            if not ratios:
                cells.append("-")
                continue
            med = statistics.median(ratios)
            cells.append("%.2fx (%.2f-%.2f)" % (med, min(ratios), max(ratios)))
            met.append(("round trip" if key == "rt" else key[1:], med <= 1.1 if key == "rt" else med >= 1 / 1.1))
        verdict = ""
        if target and met:
            missed = [name for name, ok in met if not ok]
            verdict = "yes" if not missed else "NO: " + ", ".join(missed)
            if missed and missed[-1] != "round trip":
                verdict += " in flight"
        print("| %s | %s | %s |" % (label, " | ".join(cells), verdict))
    refreshes = [v for v in res.get("oauth", {}).get("refreshes", []) if isinstance(v, int)]
    if refreshes:
        print()
        print("oauth: access tokens refreshed %s times per calls run (each round)" % "/".join(map(str, refreshes)))


def profile(client: str, config: str, proxy_kind: str = "auto") -> int:
    """cProfile every thread of one calls run of a client (1 and 64 in flight), top functions."""
    import cProfile
    import pstats

    peers = Peers(proxy_kind, tls=client in TLS_CLIENTS, relay=client in RELAY_CLIENTS)
    server = peers.server
    if client in VARIANTS and client != "oauth":
        print("proxy: %s" % peers.proxy.describe)
    try:
        url = url_for(server.port, config)
        c = sync_client(client, url, config)
        profiles: List[cProfile.Profile] = []
        lock = threading.Lock()

        def profiled(fn: Callable[[], Any]) -> Callable[[], Any]:
            def run() -> Any:
                p = cProfile.Profile()
                with lock:
                    profiles.append(p)
                p.enable()
                try:
                    return fn()
                finally:
                    p.disable()

            return run

        for _ in range(50):
            c.call("echo", {"message": "warm"})
        threading.setprofile(None)
        for k, calls in ((1, 2000), (64, 3200)):
            profiles.clear()
            per = calls // k

            def loop(per: int = per) -> None:
                for _ in range(per):
                    c.call("echo", {"message": "p"})

            ts = [threading.Thread(target=profiled(loop)) for _ in range(k)]
            t0 = time.perf_counter()
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            dt = time.perf_counter() - t0
            print("== %s %s, %d in flight: %.0f calls/s (profiled)" % (client, config, k, per * k / dt))
            stats = pstats.Stats(profiles[0])
            for p in profiles[1:]:
                stats.add(p)
            stats.sort_stats("tottime").print_stats(25)
        c.close()
    finally:
        peers.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
