"""Django views sharing one mcpsync Manager across request threads.

Drop the views into any project: the manager is created on first use (under a
lock, so concurrent first requests create only one) and lives as long as the
process; call ``close_manager()`` at shutdown. Settings::

    MCPSYNC_CONFIG = BASE_DIR / "mcp.json"     # any supported format; or a dict

URLs (see ``urlpatterns``): ``mcp/status``, ``mcp/tools``, ``mcp/call/<tool>``.
Run standalone (minimal in-process settings) with ``python examples/django_view.py``.
"""

from __future__ import annotations

import json
import sys
import threading
from typing import Any, Optional

from django.http import HttpRequest, JsonResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

import mcpsync
import mcpsync.manager

_lock = threading.Lock()
_manager: Optional[mcpsync.manager.Manager] = None


def get_manager() -> mcpsync.manager.Manager:
    """The process-wide manager, created (and connected) on first use from ``settings.MCPSYNC_CONFIG``."""
    global _manager
    with _lock:
        if _manager is None or _manager.closed:
            from django.conf import settings

            config = getattr(settings, "MCPSYNC_CONFIG", None) or {
                "example": {"command": [sys.executable, "-m", "mcpsync.example_server"]}
            }
            _manager = mcpsync.manager.Manager(config).open()
        return _manager


def close_manager() -> None:
    """Close the shared manager (at shutdown, or between tests)."""
    global _manager
    with _lock:
        mgr, _manager = _manager, None
    if mgr is not None:
        mgr.close()


@require_GET
def status(request: HttpRequest) -> JsonResponse:
    return JsonResponse({name: s.to_dict() for name, s in get_manager().status().items()})


@require_GET
def tools(request: HttpRequest) -> JsonResponse:
    provider = request.GET.get("provider", "anthropic")
    return JsonResponse({"tools": get_manager().tools_for(provider)})


@csrf_exempt
@require_POST
def call(request: HttpRequest, name: str) -> JsonResponse:
    try:
        arguments = json.loads(request.body or b"{}")
        result = get_manager().call_tool(name, arguments)
    except ValueError as exc:
        return JsonResponse({"error": "bad JSON: %s" % exc}, status=400)
    except mcpsync.manager.UnknownTool as exc:
        return JsonResponse({"error": str(exc)}, status=404)
    except mcpsync.MCPError as exc:
        return JsonResponse({"error": str(exc)}, status=502)
    return JsonResponse({"text": result.text, "is_error": result.is_error})


urlpatterns = [
    path("mcp/status", status),
    path("mcp/tools", tools),
    path("mcp/call/<str:name>", call),
]


def configure_standalone(config: Any = None) -> None:
    """Minimal in-process Django settings using this module's ``urlpatterns`` (tests and the demo below)."""
    from django.conf import settings

    if not settings.configured:
        settings.configure(
            DEBUG=False,
            ROOT_URLCONF=__name__,
            ALLOWED_HOSTS=["*"],
            SECRET_KEY="example-only",
            MIDDLEWARE=[],
            INSTALLED_APPS=[],
            MCPSYNC_CONFIG=config,
        )
        import django

        django.setup()


if __name__ == "__main__":  # pragma: no cover - manual use
    configure_standalone()
    from django.test import Client as TestClient

    try:
        print(TestClient().get("/mcp/status").json())
        print(
            TestClient()
            .post("/mcp/call/example_echo", data='{"message": "hi"}', content_type="application/json")
            .json()
        )
    finally:
        close_manager()
