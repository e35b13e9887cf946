"""Renders docs/overlap-warning.png and docs/merge-queue.png: the real window on a git
project with three workers in their own worktrees (tests.fakes.parallel_scenario). Two
changed the same line of src/app.py: the agents board and both panes say so. Then the
merge queue, started: the first branch merged, the release notes sent back with their
failed test, the third stopped at its conflict.

    python -m tests.ui.board.screenshot_parallel [OUTPUT_FOLDER]
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
_SANDBOX = tempfile.mkdtemp(prefix="melgui-screenshot-")
os.environ["MELGUI_CONFIG_DIR"] = os.path.join(_SANDBOX, "config")
os.environ["MELGUI_DATA_DIR"] = os.path.join(_SANDBOX, "data")
os.environ["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent"  # no desktop popups

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from melgui.core.config.settings import Settings  # noqa: E402
from melgui.core.config.trust import FolderTrust  # noqa: E402
from melgui.ui.runtime.qt_loop import QtEventLoop  # noqa: E402
from melgui.ui.runtime.theme import apply_theme  # noqa: E402
from melgui.ui.window.main_window import build_main_window  # noqa: E402
from tests.fakes import ScriptedRelay  # noqa: E402
from tests.fakes.parallel_scenario import script, settings_overrides, start_workers  # noqa: E402
from tests.fakes.projects import GIT_ENV, make_project  # noqa: E402
from tests.fakes.window import wait_until  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]


def main(folder: Path) -> None:
    os.environ.update(GIT_ENV)  # the merge commits need an author
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    apply_theme(app, "light")
    loop = QtEventLoop(app)
    asyncio.set_event_loop(loop)
    with ScriptedRelay() as relay, tempfile.TemporaryDirectory() as temp:
        project = make_project(Path(temp), with_git=True).resolve()
        FolderTrust().trust(project)
        script(relay)
        settings = Settings(
            connection="relay", relay_url=relay.url, model="mel-default",
            **settings_overrides(str(project)),
        )  # fmt: skip
        window = build_main_window(str(project), settings, api_key="demo", persist_settings=False)
        window.resize(1600, 1080)
        window.show()
        window.signals.dock.show()
        window.resizeDocks([window.signals.dock], [210], Qt.Orientation.Vertical)

        async def overlap() -> list[int]:
            infos = await start_workers(window, ("right", "down", "tab"))
            view = window.signals.view
            await wait_until(lambda: "conflict to be" in view.summary.text(), 20)
            window.pane_manager.area.focus_pane(infos[0].id)
            await asyncio.sleep(0.3)
            return [info.id for info in infos]

        panes = loop.run_until_complete(asyncio.wait_for(overlap(), 120))
        app.processEvents()
        folder.mkdir(parents=True, exist_ok=True)
        window.grab().save(str(folder / "overlap-warning.png"))
        print(f"wrote {folder / 'overlap-warning.png'}")

        parallel = window.parallel
        parallel.dock.show()
        parallel.dock.raise_()
        window.resizeDocks([parallel.dock], [300], Qt.Orientation.Vertical)

        async def queue() -> None:
            parallel.view.add_finished()
            team = parallel.queue.item(f"pane-{panes[1]}")
            assert team is not None
            parallel.queue.remove(team.key)
            parallel.queue.add(team.key, team.name, team.worktree)
            parallel.view.refresh()
            parallel.view.start_button.click()
            await parallel.queue.wait()
            parallel.view.tree.setCurrentItem(parallel.view.tree.topLevelItem(1))
            await asyncio.sleep(0.3)

        loop.run_until_complete(asyncio.wait_for(queue(), 120))
        app.processEvents()
        window.grab().save(str(folder / "merge-queue.png"))
        print(f"wrote {folder / 'merge-queue.png'}")
        loop.run_until_complete(window.aclose())
        window.guard.allow()
        window.close()
    asyncio.set_event_loop(None)
    loop.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs")
