"""A Celery worker calling MCP tools, its OAuth credentials shared by the whole fleet through Redis.

Every worker process (on every host) opens its own :class:`mcpsync.Manager` *after* the fork
(``worker_process_init``; a client made before a fork cannot be used in the child), and all
of them keep their OAuth tokens in one :class:`mcpsync.auth.RedisCredentialStore`. When the access
token expires, exactly one process of the fleet refreshes it under the store's Redis lock; the
others wait and reuse the new token, so a server that rotates refresh tokens never sees a
reused one (which would revoke the whole grant).

Log in once, from any machine, into the same store (the browser step is needed only once)::

    MCPSYNC_AUTH_STORE=redis://redis.internal:6379/0 mcpsync auth login linear --url https://mcp.linear.app/mcp

Run a worker (prefork pool; ``--pool solo`` works too)::

    export MCPSYNC_REDIS_URL=redis://redis.internal:6379/0      # the credential store
    export CELERY_BROKER_URL=redis://redis.internal:6379/1      # default: MCPSYNC_REDIS_URL
    export MCPSYNC_CONFIG=/etc/myapp/opencode.json    # {"mcp": {"linear": {"type": "remote", "url": ...}}}
    celery -A celery_worker worker --pool prefork --concurrency 4

and call tools from anywhere::

    from celery_worker import call_tool
    print(call_tool.delay("linear_list_issues", {"first": 5}).get(timeout=60))
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any, Dict, List, Optional

from celery import Celery
from celery.signals import worker_process_init, worker_process_shutdown

import mcpsync
from mcpsync.auth import RedisCredentialStore

log = logging.getLogger(__name__)

REDIS_URL = os.environ.get("MCPSYNC_REDIS_URL", "redis://127.0.0.1:6379/0")
BROKER_URL = os.environ.get("CELERY_BROKER_URL", REDIS_URL)
RESULT_URL = os.environ.get("CELERY_RESULT_BACKEND", BROKER_URL)

app = Celery("mcpsync_example", broker=BROKER_URL, backend=RESULT_URL)
app.conf.update(
    task_serializer="json",
    result_serializer="json",
    accept_content=["json"],
    broker_connection_retry_on_startup=True,
    worker_hijack_root_logger=False,
)

_lock = threading.Lock()
_manager: Optional[mcpsync.Manager] = None
_manager_pid: Optional[int] = None


def _open_manager() -> mcpsync.Manager:
    store = RedisCredentialStore(REDIS_URL)
    manager = mcpsync.Manager.from_file(os.environ.get("MCPSYNC_CONFIG"), oauth_options={"store": store})
    return manager.open()


def manager() -> mcpsync.Manager:
    """This process's Manager, opened on first use in this process (never one inherited over a fork)."""
    global _manager, _manager_pid
    with _lock:
        if _manager is None or _manager_pid != os.getpid():
            _manager, _manager_pid = _open_manager(), os.getpid()
        return _manager


@worker_process_init.connect
def _open_after_fork(**_kwargs: Any) -> None:
    """Prefork pool: each child connects as soon as it starts (the solo pool opens on first task)."""
    global _manager, _manager_pid
    with _lock:
        _manager, _manager_pid = None, None  # anything inherited from the parent belongs to the parent
    manager()


@worker_process_shutdown.connect
def _close(**_kwargs: Any) -> None:
    global _manager
    with _lock:
        current, _manager = _manager, None
    if current is not None and _manager_pid == os.getpid():
        current.close()


@app.task(name="mcpsync_example.call_tool")
def call_tool(tool: str, arguments: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Call ``tool`` (``{server}_{tool}``) and return its text, structured content and error flag."""
    result = manager().call_tool(tool, arguments or {})
    return {
        "text": result.text,
        "structured": result.structured_content,
        "is_error": result.is_error,
        "pid": os.getpid(),
    }


@app.task(name="mcpsync_example.list_tools")
def list_tools() -> List[str]:
    """The names of every tool the configured servers offer."""
    return sorted(tool.name for tool in manager().tools())
