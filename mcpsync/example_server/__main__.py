"""``python -m mcpsync.example_server``: run the example server over stdio."""

from __future__ import annotations

import sys

from .stdio import main

if __name__ == "__main__":
    sys.exit(main())
