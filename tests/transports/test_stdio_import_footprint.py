"""What a first stdio connect loads: a fresh interpreter opens the bundled example server over stdio, calls a tool,
and reports ``sys.modules``. Modules for HTTP, OAuth, tasks, apps, skills, warm caches, tracing, token signing and
the optional stacks must stay unloaded (each is imported on first use). No timing: the set of modules is the
contract, ``bench/bench_stdio.py --spawn --no-warmup`` shows what it costs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import json, sys
    import mcpsync

    with mcpsync.connect([sys.executable, "-m", "mcpsync.example_server"], name="example") as client:
        result = client.call_tool("echo", {"message": "hi"})
        assert not result.is_error, result
    print(json.dumps(sorted(sys.modules)))
    """
)

#: mcpsync modules a stdio connect and a tool call never need
NOT_MCPSYNC = [
    "mcpsync.transports.http",
    "mcpsync.auth",
    "mcpsync.httpauth",
    "mcpsync.client.tasks",
    "mcpsync.apps.page",
    "mcpsync.skills.skills",
    "mcpsync.warm.cache",
    "mcpsync.client.tracing",
    "mcpsync.client.retry",
    "mcpsync.client.policy",
    "mcpsync.client.pipeline",
    "mcpsync.input.seen_file",
    "mcpsync.input.seen_redis",
    "mcpsync.apps",
    "mcpsync.tasks",
    "mcpsync.skills",
    "mcpsync.warm",
    "mcpsync.manager",
    "mcpsync.registry",
    "mcpsync.adapters",
    "mcpsync.integrations",
    "mcpsync.middleware",
    "mcpsync.input",
    "mcpsync.cli",
]
#: stdlib and third-party modules a stdio connect and a tool call never need
NOT_OTHERS = [
    "urllib3",
    "requests",
    "jsonschema",
    "filelock",
    "yaml",
    "http.client",
    "ssl",
    "socket",
    "asyncio",
    "hashlib",  # token signing (mcpsync.input, resumable input) loads it on the first token
    "hmac",
    "secrets",
    "random",
    "shutil",  # PATH search: a command with a directory part is not searched
    "ctypes",
    "sqlite3",
    "email",
]


def _modules_after_first_tool_call() -> set[str]:
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stdout.strip().splitlines()[-1]))


def test_first_stdio_tool_call_loads_only_the_stdio_path() -> None:
    loaded = _modules_after_first_tool_call()
    # the stdio path itself is there (the test would prove nothing if the connect went elsewhere)
    assert {"mcpsync.transports.stdio", "mcpsync.session", "mcpsync.client.client"} <= loaded
    unexpected = sorted(
        m for m in loaded for banned in NOT_MCPSYNC + NOT_OTHERS if m == banned or m.startswith(banned + ".")
    )
    assert unexpected == [], "a first stdio connect loaded %s" % unexpected
