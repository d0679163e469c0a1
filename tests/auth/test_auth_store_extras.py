"""The credential store protocol and the optional extras: without keyring, redis or celery installed,
`import mcpsync` imports none of them (nor requests or filelock), the store classes still resolve, and
creating one says which extra to install."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from mcpsync.auth import CredentialBackend, CredentialStore, OAuthManager
from mcpsync.errors import ConfigError


def test_third_party_backends_satisfy_the_protocol(tmp_path: Any) -> None:
    assert isinstance(CredentialStore(str(tmp_path / "a.json")), CredentialBackend)
    assert not isinstance(object(), CredentialBackend)
    with pytest.raises(ConfigError):
        OAuthManager(store=object())  # type: ignore[arg-type]


BLOCKER = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('keyring', 'redis', 'celery', 'kombu', 'opentelemetry', 'cryptography'):
            raise ImportError('blocked: ' + name)
sys.meta_path.insert(0, Block())
"""


def test_import_stays_cheap_without_the_extras() -> None:
    code = BLOCKER + (
        "import mcpsync, mcpsync.auth\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('keyring', 'redis', 'celery', 'requests',"
        " 'filelock') or m.startswith('mcpsync.auth.'))\n"
        "print(heavy)\n"
        "print(mcpsync.auth.RedisCredentialStore.__name__, mcpsync.auth.KeyringCredentialStore.__name__)\n"
        "from mcpsync.errors import ConfigError\n"
        "for make in (lambda: mcpsync.auth.RedisCredentialStore('redis://127.0.0.1:9/0'),"
        " lambda: mcpsync.auth.KeyringCredentialStore()):\n"
        "    try:\n"
        "        make()\n"
        "    except ConfigError as exc:\n"
        "        print('ConfigError', 'mcpsync[' in str(exc))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    lines = out.stdout.splitlines()
    assert lines[0] == "[]", out.stdout + out.stderr
    assert lines[1:] == ["RedisCredentialStore KeyringCredentialStore", "ConfigError True", "ConfigError True"], (
        out.stdout + out.stderr
    )
