"""The melgui window as a crash-test subject: `run_app`'s start-up (QApplication offscreen,
the Qt/asyncio loop, the real MainWindow with its history dock) on the scripted relay,
with the prompt sent as soon as the window shows, since nobody is there to type it.

    python -m tests.ui.history.gui_app --url URL --folder DIR [--reopen-latest] PROMPT

Exits when the turn ends (status 0 when it finished); test_gui_crash.py kills it midway.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication

from melgui.core.config.settings import Settings
from melgui.ui.app import shutdown
from melgui.ui.runtime.qt_loop import QtEventLoop
from melgui.ui.window.main_window import build_main_window


async def drive(window: object, options: argparse.Namespace) -> int:
    from melgui.ui.window.main_window import MainWindow

    assert isinstance(window, MainWindow)
    if options.reopen_latest:
        before = window.session
        while window.history.listing or not window.history.ids():  # listed in a thread
            await asyncio.sleep(0.01)
        window.history.open(window.history.ids()[0])
        while window.session is before:  # its messages are read in a worker thread
            await asyncio.sleep(0.01)
    window.chat.submit(options.prompt)
    await asyncio.sleep(0.05)
    await window.session.wait_idle()
    result = window.session.last_result
    return 0 if result is not None and result.outcome == "done" else 1


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--folder", required=True)
    parser.add_argument("--reopen-latest", action="store_true")
    parser.add_argument("prompt")
    options = parser.parse_args()
    app = QApplication(sys.argv)
    loop = QtEventLoop(app)
    asyncio.set_event_loop(loop)
    settings = Settings(
        connection="relay",
        relay_url=options.url,
        model="relay-model",
        approval_modes={"run_command": "auto"},
    )
    window = build_main_window(options.folder, settings, api_key="k", persist_settings=False)
    window.show()
    with loop:
        status = loop.run_until_complete(drive(window, options))
        loop.run_until_complete(shutdown(window))
    print(f"exit {status}", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
