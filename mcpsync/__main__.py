"""``python -m mcpsync``: the mcpsync command line (see :mod:`mcpsync.cli`)."""

import sys

from .cli.app import main

if __name__ == "__main__":
    sys.exit(main())
