"""Point tests that use a test-only example-server flag at tests/peers/misbehaving_server.py.

``python tests/peers/convert_flags.py [FILE...]`` (default: every ``tests/**/*.py``) rewrites, on each line that
names a test-only flag, ``server_cmd(`` to ``misbehaving_cmd(`` and adds ``misbehaving_cmd`` to the file's
``conftest`` import; then run ``ruff check --fix --select I,F401`` and ``ruff format`` on the files it lists.
Lines it cannot rewrite (the flag without ``server_cmd(`` on the same line), in files that do not mention the helper
yet, are listed for a hand edit (``--version`` hits in other commands' arguments are false alarms).
Re-runnable: converted lines no longer match.
"""

from __future__ import annotations

import pathlib
import re
import sys

from mcpsync.example_server.stdio import TEST_ONLY_FLAGS

FLAG = re.compile(r"""["'](%s)["']""" % "|".join(re.escape(f) for f in TEST_ONLY_FLAGS))
IMPORT = re.compile(r"^(\s*from (?:\.|tests\.)conftest import )(.*\bserver_cmd\b.*)$", re.M)


def convert(path: pathlib.Path) -> bool:
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    changed = False
    for i, line in enumerate(lines):
        if not FLAG.search(line) or "misbehaving_server" in line or "MISBEHAVING" in line:
            continue
        if "server_cmd(" in line:
            lines[i] = line.replace("server_cmd(", "misbehaving_cmd(")
            changed = True
        elif "misbehaving" not in text.lower():  # a file that already uses the helper is taken as converted
            print("%s:%d: convert by hand: %s" % (path, i + 1, line.strip()))
    if not changed:
        return False
    text = "\n".join(lines)
    if "misbehaving_cmd" not in "".join(m.group(2) for m in IMPORT.finditer(text)):
        text = IMPORT.sub(lambda m: m.group(1) + "misbehaving_cmd, " + m.group(2), text, count=1)
    path.write_text(text, encoding="utf-8")
    print(path)
    return True


def main() -> int:
    root = pathlib.Path(__file__).resolve().parents[1]
    files = [pathlib.Path(a) for a in sys.argv[1:]] or sorted(root.rglob("*.py"))
    for path in files:
        if path.name in ("misbehaving_server.py", "convert_flags.py"):
            continue
        convert(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
