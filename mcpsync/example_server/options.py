"""The example server's behaviour knobs: :class:`Options` (the keyword arguments of ``ExampleServer``)."""

from __future__ import annotations

from typing import Any

__all__ = ["INSTRUCTIONS", "Options"]

INSTRUCTIONS = (
    "The mcpsync example server. Tools: echo, add, slow (progress), fail, sample, elicit, roots, "
    "payload, log, touch, task_work and more; prompts greet and summarize; resources under example://."
)


class Options:
    """Behaviour knobs of :class:`ExampleServer` (all keyword arguments of its constructor)."""

    era: str = "auto"
    page_size: int = 0  # 0 = everything on one page
    ttl_ms: int = 0
    cache_scope: str = "public"
    mrtr_rounds: int = 1
    refuse_resource_subscriptions: bool = False
    strict_init: bool = False
    tasks: bool = True
    apps: bool = False  # MCP Apps: the counter App, its tools and ui:// pages (example_server/apps.py)
    task_poll_interval_ms: int = 100
    task_ttl_ms: int = 300000
    instructions: str = INSTRUCTIONS

    def __init__(self, **kwargs: Any) -> None:
        for key, value in kwargs.items():
            if not hasattr(Options, key) or key.startswith("_"):
                raise TypeError("unknown ExampleServer option %r" % key)
            setattr(self, key, value)
        if self.era not in ("auto", "legacy", "modern"):
            raise ValueError("era must be auto, legacy or modern")
