"""mcpsync: a synchronous, thread-based Model Context Protocol client.

``import mcpsync`` is cheap: it imports neither requests, jsonschema, filelock
nor http.client, and starts no thread.
"""

import logging as _logging

from .__version__ import __version__
from .errors import *  # noqa: F401,F403
from .errors import __all__ as _errors_all
from .types import *  # noqa: F401,F403
from .types import __all__ as _types_all

_logging.getLogger(__name__).addHandler(_logging.NullHandler())

__all__ = sorted(set(_errors_all) | set(_types_all) | {"__version__"})
