"""A wrapper like ``npx``: runs the real stdio server (argv) as its child on the same pipes and waits for it.

``python tests/peers/stdiowrapper.py <server command...>``: the server is then a grandchild of the host.
"""

from __future__ import annotations

import subprocess
import sys

if __name__ == "__main__":
    sys.exit(subprocess.call(sys.argv[1:]))
