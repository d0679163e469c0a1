"""Issue 18 defect 6d: a writer killed mid-write never leaves tokens behind in a temp file.

A real child process writes the credential store and is held at the one dangerous point (its 0600
temporary file written and fsync-ed, ``os.replace`` not yet called) by a pause hook: it creates a
marker file and waits in ``signal.pause()``. The test SIGKILLs it there. No sleeps: the marker is
the event.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from typing import List

import pytest

from mcpsync.auth.store import CredentialStore

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and signal.pause are POSIX")

SECRET = "refresh-token-SECRET-7f3a"

_CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from mcpsync.auth.store import CredentialStore

    path, marker = sys.argv[1], sys.argv[2]
    real_replace = os.replace

    def held_replace(src, dst):  # the pause hook: the temp file is complete, the replace not yet done
        if src.endswith(".tmp"):
            with open(marker, "w") as fh:
                fh.write(src)
            while True:
                signal.pause()
        real_replace(src, dst)

    os.replace = held_replace
    CredentialStore(path).update("srv", lambda e: e.update(tokens={"accessToken": "a", "refreshToken": %r}))
    """
    % SECRET
)


def _held_writer(path: str, marker: str) -> "subprocess.Popen[bytes]":
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, path, marker], env=dict(os.environ))
    deadline = time.monotonic() + 60
    while not (os.path.exists(marker) and os.path.getsize(marker)):  # the child's own signal that it is held
        assert proc.poll() is None, "the writer exited before reaching the pause hook"
        assert time.monotonic() < deadline, "the writer never reached the pause hook"
        time.sleep(0.01)
    return proc


def _temps(directory: str) -> List[str]:
    return sorted(n for n in os.listdir(directory) if n.endswith(".tmp"))


def test_a_killed_writers_temp_file_is_removed_by_the_next_open(tmp_path: "os.PathLike[str]") -> None:
    d = str(tmp_path)
    path = os.path.join(d, "mcp-auth.json")
    marker = os.path.join(d, "held")
    proc = _held_writer(path, marker)
    with open(marker) as fh:
        tmp = fh.read()
    # while the writer lives (and holds the lock), its temp file is live: opening a store leaves it alone
    CredentialStore(path)
    assert os.path.exists(tmp)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    assert _temps(d) == [os.path.basename(tmp)]
    assert stat.S_IMODE(os.stat(tmp).st_mode) == 0o600
    with open(tmp, "rb") as fh:
        assert SECRET.encode() in fh.read()  # the secret the kill left behind ...
    store = CredentialStore(path)  # ... is gone once a store is opened (the lock is free now)
    assert _temps(d) == []
    assert store.get("srv") is None  # the killed write never happened; the store is intact and usable
    store.update("srv", lambda e: e.update(tokens={"accessToken": "b"}))
    assert store.get("srv")["tokens"]["accessToken"] == "b"


def test_three_killed_writers_then_one_write_leaves_no_temp_file(tmp_path: "os.PathLike[str]") -> None:
    """Each kill -9 leaves a temp file; the next writer's write (under the lock) removes it first, so they never
    pile up, and the surviving process's write removes the last one."""
    d = str(tmp_path)
    path = os.path.join(d, "mcp-auth.json")
    store = CredentialStore(path)
    for i in range(3):
        marker = os.path.join(d, "held-%d" % i)
        proc = _held_writer(path, marker)
        with open(marker) as fh:
            tmp = fh.read()
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        assert _temps(d) == [os.path.basename(tmp)]  # only the last killed writer's
    other = os.path.join(d, ".other-store.json.1.2.tmp")  # another store's temp file is not ours to touch
    with open(other, "w") as fh:
        fh.write("{}")
    store.update("srv", lambda e: e.update(tokens={"accessToken": "c"}))
    assert _temps(d) == [os.path.basename(other)]
    assert store.get("srv")["tokens"]["accessToken"] == "c"
