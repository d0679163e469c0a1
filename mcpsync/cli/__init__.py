"""The ``mcpsync`` command line: argument parsing and dispatch (:mod:`.main`), single-server commands
(:mod:`.commands`), ``mcpsync demo`` (:mod:`.demo`), output formatting (:mod:`.output`), ``mcpsync auth``
(:mod:`.auth`) and the multi-server commands (:mod:`.servers`)."""

from .app import main

__all__ = ["main"]
