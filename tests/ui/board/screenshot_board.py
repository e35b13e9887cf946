"""Renders docs/screenshot-board.png: the real window on a git project with the agents
board open, four agents in different states (finished, waiting for approval, finished
with files changed, failed), two workers in their own worktrees (their branches and git's
count of their files), badges on the panes that need the person, the approval count.

    python -m tests.ui.board.screenshot_board [OUTPUT.png]
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# A throwaway history and config: the demo must not land in the person's own.
_SANDBOX = tempfile.mkdtemp(prefix="melgui-screenshot-")
os.environ["MELGUI_CONFIG_DIR"] = os.path.join(_SANDBOX, "config")
os.environ["MELGUI_DATA_DIR"] = os.path.join(_SANDBOX, "data")
os.environ["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent"  # no desktop popups

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication, QWidget  # noqa: E402

from melgui.core.config.settings import Settings  # noqa: E402
from melgui.ui.runtime.qt_loop import QtEventLoop  # noqa: E402
from melgui.ui.runtime.theme import apply_theme  # noqa: E402
from melgui.ui.window.main_window import build_main_window  # noqa: E402
from tests.fakes import ScriptedRelay  # noqa: E402
from tests.fakes.board_scenario import run_agents, script, settings_overrides  # noqa: E402
from tests.fakes.projects import GIT_ENV  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]


def main(output: Path) -> None:
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    apply_theme(app, "light")
    loop = QtEventLoop(app)
    asyncio.set_event_loop(loop)
    with ScriptedRelay() as relay, tempfile.TemporaryDirectory() as temp:
        folder = os.path.join(temp, "parser")
        _git_project(Path(folder))
        script(relay)
        settings = Settings(
            connection="relay", relay_url=relay.url, model="mel-default", **settings_overrides()
        )
        window = build_main_window(folder, settings, api_key="demo", persist_settings=False)
        window.resize(1400, 860)
        window.show()
        window.signals.dock.show()
        window.resizeDocks([window.signals.dock], [150], Qt.Orientation.Vertical)
        elsewhere = QWidget()  # the person is in another window while the agents work
        elsewhere.show()
        elsewhere.activateWindow()

        async def scenario() -> None:
            workers = await run_agents(window, worktrees=True)
            board = window.signals.board
            await _until(lambda: sum(row.files_changed for row in board.rows()) == 2)
            window.pane_manager.area.focus_pane(workers[1].id)
            window.activateWindow()  # back to melgui: the pane in front loses its badge
            await asyncio.sleep(0.5)

        loop.run_until_complete(asyncio.wait_for(scenario(), 120))
        app.processEvents()
        output.parent.mkdir(parents=True, exist_ok=True)
        window.grab().save(str(output))
        print(f"wrote {output}")
        for request in window.approvals.pending():
            request.deny("screenshot taken")
        loop.run_until_complete(window.aclose())
        window.close()
        elsewhere.close()
    asyncio.set_event_loop(None)
    loop.close()


def _git_project(folder: Path) -> None:
    """A small project under git: the workers get worktrees of it."""
    (folder / "tests").mkdir(parents=True)
    (folder / "clock.py").write_text("import time\n")
    (folder / "tests" / "test_clock.py").write_text("import clock\n")
    env = {**os.environ, **GIT_ENV}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "start"]):
        subprocess.run(["git", *args], cwd=folder, env=env, check=True, capture_output=True)


async def _until(condition: Callable[[], bool]) -> None:
    while not condition():  # git counts the worktrees' files in a thread
        await asyncio.sleep(0.05)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "screenshot-board.png")
