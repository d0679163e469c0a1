"""``python -m mcpsync.example_server``: run the example server over stdio."""

from __future__ import annotations

import os
import sys

from .stdio import main

if __name__ == "__main__":
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    # Exit without waiting for daemon tool threads (they may hold the stdout/stderr locks).
    os._exit(code)
