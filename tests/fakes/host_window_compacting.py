"""Runs the real app as a view of the melgui host (`melgui --with-host FOLDER`), says N
prompts in its main conversation, one after another, then asks to compact it, as a person
would with the status bar's Compact.

    python -m tests.fakes.host_window_compacting FOLDER N     (from the checkout)

Prints {"session": id} once the main conversation runs in the host, then
{"preview": [item labels]} when the preview before the compaction is shown; a test kills
it there.
"""

from __future__ import annotations

import json
import sys

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from melgui.host.remote_session import RemoteSession
from melgui.ui.app import run_app
from melgui.ui.context.preview_dialog import CompactionPreview
from melgui.ui.window.main_window import MainWindow


def _say(data: object) -> None:
    sys.stdout.write(json.dumps(data) + "\n")
    sys.stdout.flush()


def main(folder: str, prompts: int) -> int:
    app = QApplication(sys.argv)

    def start() -> None:
        windows = [w for w in app.topLevelWidgets() if isinstance(w, MainWindow)]
        session = windows[0].session if windows else None
        if not isinstance(session, RemoteSession) or not session.session_id:
            QTimer.singleShot(50, start)
            return
        window = windows[0]
        _say({"session": session.session_id})

        def shown(dialog: CompactionPreview) -> None:
            _say({"preview": [item.label for item in dialog.question.items]})

        window.context.previewOpened.connect(shown)
        said = [0]

        def next_prompt() -> None:
            if window.bridge.busy:
                QTimer.singleShot(50, next_prompt)
            elif said[0] < prompts:
                said[0] += 1
                window.bridge.submit(f"question {said[0]}")
                QTimer.singleShot(50, next_prompt)
            else:
                window.bridge.compact()

        next_prompt()

    QTimer.singleShot(0, start)
    return run_app(folder, host="user")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2])))
