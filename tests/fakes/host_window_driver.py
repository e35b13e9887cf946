"""Runs the real app as `melgui FOLDER` does, a view of the melgui host, and opens
one worker pane with TASK, as a person would from the Panes menu.

    python -m tests.fakes.host_window_driver FOLDER TASK     (from the checkout)

Prints {"session": id} with the first batch of the worker session's changes the window
hears, then {"seq": n, "text": streamed} for each batch; a test kills it mid-turn.
"""

from __future__ import annotations

import json
import sys

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from melgui.cli import main as melgui
from melgui.host.changes import Record
from melgui.host.records import streamed_text
from melgui.host.remote_session import RemoteSession
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.window.main_window import MainWindow


def _say(data: object) -> None:
    sys.stdout.write(json.dumps(data) + "\n")
    sys.stdout.flush()


def main(folder: str, task: str) -> int:
    app = QApplication(sys.argv)

    def open_worker() -> None:
        windows = [w for w in app.topLevelWidgets() if isinstance(w, MainWindow)]
        if not windows or windows[0].host_view is None:
            QTimer.singleShot(50, open_worker)
            return
        window = windows[0]
        assert window.host_view is not None
        client = window.host_view.client
        window.pane_manager.spawn_agent(task, None, "right")
        pane = next(p for _, p in window.pane_manager.panes() if isinstance(p, AgentPane))
        session = pane.session
        assert isinstance(session, RemoteSession)
        announced: list[str] = []

        def heard(sid: str, changes: list[Record]) -> None:
            # The session's id is set before it attaches, so before any change of it comes.
            if sid != session.session_id:
                return
            if not announced:
                announced.append(sid)
                _say({"session": sid})
            _say({"seq": changes[-1]["seq"], "text": streamed_text(changes)})

        # Listening before the session opens, not once its id is seen: a poll for the id
        # could run after the turn's first changes, and they would never be said.
        client.on_changes = heard

    QTimer.singleShot(0, open_worker)
    return melgui([folder])  # the command line's default: the window is the host's view


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
