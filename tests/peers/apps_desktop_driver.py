"""Runs examples/apps_desktop.py's window headless (Qt offscreen) against the example server's counter App and
prints what the App did as one JSON line; used by tests/browser/test_apps_desktop.py in an interpreter that has
pywebview with the Qt backend. The window closes itself once the App reports its last check.

    python tests/peers/apps_desktop_driver.py [--reload]

With ``--reload`` the window's document is loaded again (``DesktopApp.reload()``) once the App has finished, and
the window closes once the reloaded App has finished too."""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import Any, Dict, List
from mcpsync.client import ClientOptions

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

import apps_desktop  # noqa: E402

import mcpsync  # noqa: E402


def main() -> int:
    reloads = 1 if "--reload" in sys.argv[1:] else 0
    seen: Dict[str, Any] = {"checks": {}, "contexts": [], "threads": set(), "done": 0}
    done = threading.Event()
    holder: List[Any] = []

    def report(kind: str, data: Any) -> None:
        seen["threads"].add(threading.current_thread().name)
        if kind == "model-context":
            seen["contexts"].append(data)
        detail = data.get("data") if isinstance(data, dict) else None
        if kind == "log" and isinstance(detail, dict) and "check" in detail:
            seen["checks"][detail["check"]] = detail["ok"]
            if detail["check"] == "done":
                seen["done"] += 1
                if seen["done"] > reloads and not done.is_set():
                    done.set()
                    holder[0].window.destroy()
                elif not done.is_set():  # reload from another thread: this is pywebview's API thread
                    reload = threading.Thread(target=holder[0].reload)
                    reload.daemon = True
                    reload.start()

    with mcpsync.Client(
        [sys.executable, "-m", "mcpsync.example_server", "--apps"], options=ClientOptions(apps=True)
    ) as client:
        app = apps_desktop.make_app(client, "show_counter", report)
        holder.append(app)
        timer = threading.Timer(90, lambda: app.window.destroy())  # a bound, should the App never finish
        timer.daemon = True
        timer.start()
        app.run({"start": 7}, gui="qt")
        timer.cancel()
        pumps = [t.name for t in threading.enumerate() if t.name.startswith("mcpsync-apps-desktop")]
    print(
        json.dumps(
            {
                "checks": seen["checks"],
                "done": seen["done"],
                "views": app.bridge.views,
                "contexts": seen["contexts"],
                "threads": sorted(seen["threads"]),
                "pumps_left": pumps,
            }
        ),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    # Qt WebEngine can hang in interpreter teardown after its loop ended; the window and the client are closed
    # already, so leave at once (the test ends the process group's stragglers)
    os._exit(code)
