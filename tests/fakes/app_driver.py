"""Runs the real app (`melgui FOLDER`) and types one prompt into it, as a person would.

    python -m tests.fakes.app_driver FOLDER PROMPT     (from the checkout)

Prints `streaming` on stdout once the answer's first words arrive and `tool-started`
when a tool starts, so a test knows when to send a signal; everything else is the app
itself (run_app, its loop and shutdown).
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from melgui.core.protocol.loop_events import AssistantText, LoopEvent, ToolCallStarted
from melgui.ui.app import run_app
from melgui.ui.window.main_window import MainWindow


def main(folder: str, prompt: str) -> int:
    app = QApplication(sys.argv)
    said = False

    def observe(event: LoopEvent) -> None:
        nonlocal said
        if isinstance(event, AssistantText) and event.text.strip() and not said:
            said = True
            print("streaming", flush=True)
        if isinstance(event, ToolCallStarted):
            print("tool-started", flush=True)

    def type_prompt() -> None:
        windows = [w for w in app.topLevelWidgets() if isinstance(w, MainWindow)]
        if not windows:
            QTimer.singleShot(50, type_prompt)
            return
        windows[0].session.subscribe(observe)
        windows[0].session.submit(prompt)

    QTimer.singleShot(0, type_prompt)
    return run_app(folder)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
