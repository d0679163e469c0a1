"""Issue 19 item 6 where it was reported: a module-level client opened in gunicorn's master (``--preload``) and
used by the forked workers. Every request succeeds; each worker talks to a server of its own (reopened in the
worker on first use), never to the master's. A real gunicorn, real workers, the bundled example server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Dict, List

import pytest

from tests.peers.authserver import free_port
from tests.conftest import server_cmd

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="gunicorn forks its workers (POSIX only)")

BOUND = 120.0  # hang guard for the whole test, never a measurement

APP = """
import json, os
import mcpsync

client = mcpsync.connect({command!r}, timeout=60)  # opened in the master: gunicorn --preload imports us there
MASTER_SERVER = client.call_tool("pid").text

def app(environ, start_response):
    body = json.dumps({{
        "echo": client.call_tool("echo", {{"message": environ["PATH_INFO"]}}).text,
        "server": client.call_tool("pid").text,
        "master_server": MASTER_SERVER,
        "worker": os.getpid(),
    }}).encode()
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
    return [body]
"""


def _gunicorn_available() -> None:
    try:
        import gunicorn  # noqa: F401
    except ImportError:
        if os.environ.get("CI", "").strip().lower() in ("true", "1", "yes"):
            pytest.fail("gunicorn is required under CI=true (pip install -e '.[test]')", pytrace=False)
        pytest.skip("gunicorn is not installed (pip install -e '.[test]')")


def test_a_client_opened_in_the_gunicorn_master_works_in_every_worker(tmp_path: Path) -> None:
    _gunicorn_available()
    import requests

    (tmp_path / "preloaded_app.py").write_text(textwrap.dedent(APP.format(command=server_cmd())))
    port = free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "--preload", "-w", "2", "-b", "127.0.0.1:%d" % port,
         "--graceful-timeout", "10", "preloaded_app:app"],
        cwd=str(tmp_path),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    answers: List[Dict[str, object]] = []
    try:
        deadline = time.monotonic() + BOUND
        while not answers:  # the first answer also tells us gunicorn is up
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "gunicorn did not answer"
            try:
                with requests.get("http://127.0.0.1:%d/first" % port, timeout=30) as resp:
                    assert resp.status_code == 200, resp.text
                    answers.append(resp.json())
            except requests.ConnectionError:
                time.sleep(0.2)  # gunicorn is still starting (a readiness poll, not a timing assertion)
        for i in range(20):
            with requests.get("http://127.0.0.1:%d/r%d" % (port, i), timeout=60) as resp:
                assert resp.status_code == 200, resp.text
                answers.append(resp.json())
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate(timeout=30)
    assert len(answers) == 21
    assert [a["echo"] for a in answers[1:]] == ["/r%d" % i for i in range(20)]
    master_server = answers[0]["master_server"]
    servers = {a["worker"]: a["server"] for a in answers}
    assert master_server not in set(servers.values()), "a worker used the master's server"
    assert len(set(servers.values())) == len(servers)  # one server per worker
    assert b"Traceback" not in (err or b""), err.decode(errors="replace")
