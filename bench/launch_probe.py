"""`melgui [--no-host] FOLDER` as a real process, with lines on stdout for bench_host's
launch rows: `painted S` when the window first painted and `attached S` when it attached
to its melgui host, S in seconds since MELGUI_PROBE_T0 (epoch seconds, taken by the
launcher just before it started this process), and `host PID` for a host of the window's
own (`--no-host`: its child).

`--alone` (the probe's, not melgui's) launches the window with no host at all, its agents
in itself: the baseline of bench_host's launch and idle-RSS rows, "the window alone"
(what `--no-host` was before it started a host of its own). The command line has no
such mode; the tests' and benches' harnesses reach it through `run_app(host="none")`.

    MELGUI_PROBE_T0=$(date +%s.%N) python bench/launch_probe.py [--alone] FOLDER
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
T0 = float(os.environ.get("MELGUI_PROBE_T0") or time.time())

from PySide6.QtCore import QEvent, QObject, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QWidget  # noqa: E402

from melgui.cli import main  # noqa: E402
from melgui.ui import app as app_module  # noqa: E402


def say(what: str) -> None:
    print(f"{what} {time.time() - T0:.4f}", flush=True)


class FirstPaint(QObject):
    """Says when anything in `window` first painted, then when it has a host view."""

    def __init__(self, window: Any) -> None:
        super().__init__()
        self.window = window
        self.timer = QTimer()
        self.timer.setInterval(5)
        self.timer.timeout.connect(self._attached)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.Paint
            and isinstance(watched, QWidget)
            and watched.window() is self.window
        ):
            say("painted")
            app = QApplication.instance()
            if app is not None:
                app.removeEventFilter(self)
            self.timer.start()
        return False

    def _attached(self) -> None:
        view = getattr(self.window, "host_view", None)
        if view is not None:
            say("attached")
            private = getattr(view, "private", None)
            if private is not None and private.pid is not None:
                print(f"host {private.pid}", flush=True)
            self.timer.stop()


build_main_window = app_module.build_main_window
probes: list[FirstPaint] = []


def probed(*args: Any, **kwargs: Any) -> Any:
    window = build_main_window(*args, **kwargs)
    probe = FirstPaint(window)
    probes.append(probe)
    app = QApplication.instance()
    assert app is not None
    app.installEventFilter(probe)
    return window


app_module.build_main_window = probed  # type: ignore[assignment]
argv = sys.argv[1:]
if "--alone" in argv:  # no host at all: the window runs its agents in itself
    argv.remove("--alone")
    run_app = app_module.run_app

    def alone(folder: str, **_: Any) -> int:
        return run_app(folder, host="none")

    app_module.run_app = alone
raise SystemExit(main(argv))
