"""A real ``redis-server`` for tests: a free loopback port, a temporary directory, no persistence.

:func:`redis_server_fixture` is a module-scoped pytest fixture factory. Without the
``redis-server`` binary (Debian: ``apt-get install redis-server``) or the ``redis`` Python
package the tests skip with the reason; under ``CI=true`` they fail instead (``.ci/run``
installs both). The server requires a password, so that tests can prove it never leaks.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from typing import Any, Iterator, Optional

import pytest

PASSWORD = "redis-pw-NEVER-LOGGED"


def _ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true")


def _unavailable(reason: str) -> None:
    if _ci():
        pytest.fail("CI=true but %s" % reason)
    pytest.skip(reason, allow_module_level=True)


def optional_module(name: str, extra: str) -> Any:
    """Import ``name`` or skip the module's tests with the reason (fail under CI=true)."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        _unavailable("the %r package is not installed (pip install 'mcpsync[%s]')" % (name, extra))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    """One running redis-server; ``url`` includes the password, ``url_for(db)`` picks a database."""

    def __init__(self, binary: str) -> None:
        self.binary = binary
        self.dir = tempfile.mkdtemp(prefix="mcpsync-redis-")
        self.proc: Optional["subprocess.Popen[bytes]"] = None
        self.port = 0

    def start(self) -> None:
        import redis

        for _attempt in range(5):
            self.port = _free_port()
            self.proc = subprocess.Popen(
                [
                    self.binary,
                    "--port",
                    str(self.port),
                    "--bind",
                    "127.0.0.1",
                    "--dir",
                    self.dir,
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--requirepass",
                    PASSWORD,
                    "--daemonize",
                    "no",
                    "--loglevel",
                    "warning",
                    "--logfile",
                    os.path.join(self.dir, "redis.log"),
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            client = redis.Redis(host="127.0.0.1", port=self.port, password=PASSWORD, socket_timeout=2)
            deadline = time.monotonic() + 15
            try:
                while time.monotonic() < deadline and self.proc.poll() is None:
                    try:
                        if client.ping():
                            return
                    except redis.RedisError:
                        time.sleep(0.05)
            finally:
                client.close()
            self.stop()  # the port was taken meanwhile, or the server did not come up: try another
        raise RuntimeError("redis-server did not start; see %s" % os.path.join(self.dir, "redis.log"))

    def url_for(self, db: int = 0) -> str:
        return "redis://:%s@127.0.0.1:%d/%d" % (PASSWORD, self.port, db)

    @property
    def url(self) -> str:
        return self.url_for(0)

    def client(self, db: int = 0) -> Any:
        import redis

        return redis.Redis.from_url(self.url_for(db))

    def flush(self) -> None:
        client = self.client()
        try:
            client.flushall()
        finally:
            client.close()

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.terminate()
                try:
                    self.proc.wait(10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(10)
            self.proc = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def start_redis() -> Iterator[RedisServer]:
    """Generator body for a fixture: start, yield, stop."""
    try:
        import redis  # noqa: F401
    except ImportError:
        _unavailable("the 'redis' package is not installed (pip install 'mcpsync[redis]')")
    binary = shutil.which("redis-server")
    if binary is None:
        _unavailable("no redis-server binary (Debian/Ubuntu: apt-get install redis-server)")
    assert binary is not None
    server = RedisServer(binary)
    try:
        server.start()
        yield server
    finally:
        server.close()
