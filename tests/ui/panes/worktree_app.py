"""The melgui window as a crash-test subject for worker worktrees: `run_app`'s start-up
(QApplication offscreen, the Qt/asyncio loop, the real MainWindow) on the scripted relay.

    python -m tests.ui.panes.worktree_app --url URL --folder DIR start TASK
    python -m tests.ui.panes.worktree_app --url URL --folder DIR recover

`start` starts a worker in its own worktree with TASK and runs until killed (the test
SIGKILLs it mid-turn). `recover` waits for the offer of worktrees an earlier run left,
prints each row (`row: <text>`), keeps them all and quits as the person would.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication, QLabel

from melgui.core.config.settings import Settings
from melgui.ui.app import shutdown
from melgui.ui.panes.worktree_recovery import RecoveryDialog
from melgui.ui.runtime.qt_loop import QtEventLoop
from melgui.ui.window.main_window import MainWindow, build_main_window


async def start(window: MainWindow, task: str) -> int:
    info, prepared = await window.pane_manager.start_worker(task, None, own_worktree=True)
    assert prepared is not None
    print(f"worker {info.id} in {prepared.worktree.path}", flush=True)
    await asyncio.Event().wait()  # until killed
    return 1


async def recover(window: MainWindow) -> int:
    manager = window.pane_manager
    deadline = asyncio.get_running_loop().time() + 30
    while manager.recovery_dialog is None:  # git lists the worktrees in a thread
        if asyncio.get_running_loop().time() > deadline:
            print("no worktrees offered", flush=True)
            return 2
        await asyncio.sleep(0.02)
    dialog = manager.recovery_dialog
    assert isinstance(dialog, RecoveryDialog)
    for branch, row in dialog.rows.items():
        text = " ".join(label.text() for label in row.findChildren(QLabel))
        print(f"row: {branch} | {text}", flush=True)
    dialog.reject()  # Keep all
    return 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--folder", required=True)
    parser.add_argument("mode", choices=["start", "recover"])
    parser.add_argument("task", nargs="?", default="")
    options = parser.parse_args()
    app = QApplication(sys.argv)
    loop = QtEventLoop(app)
    asyncio.set_event_loop(loop)
    settings = Settings(
        connection="relay",
        relay_url=options.url,
        model="relay-model",
        approval_modes={"edit_file": "auto"},
    )
    window = build_main_window(options.folder, settings, api_key="k", persist_settings=False)
    window.show()
    with loop:
        work = start(window, options.task) if options.mode == "start" else recover(window)
        status = loop.run_until_complete(work)
        loop.run_until_complete(shutdown(window))
    print(f"exit {status}", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
