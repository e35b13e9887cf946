"""`melgui [--no-host] FOLDER` as a real process, with two lines on stdout for
bench_host's launch rows: `painted S` when the window first painted and `attached S`
when it attached to the melgui host, S in seconds since MELGUI_PROBE_T0 (epoch seconds,
taken by the launcher just before it started this process).

    MELGUI_PROBE_T0=$(date +%s.%N) python bench/launch_probe.py FOLDER
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
        if getattr(self.window, "host_view", None) is not None:
            say("attached")
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
raise SystemExit(main(sys.argv[1:]))
