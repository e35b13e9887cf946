"""Fixtures for window tests: a qasync loop on the test's QApplication, and helpers to
drive the real window from inside that loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from PySide6.QtWidgets import QApplication

from melgui.core.config.settings import Settings
from melgui.ui.runtime.qt_loop import QtEventLoop
from melgui.ui.window.main_window import MainWindow, build_main_window
from tests.fakes.window import Runner

T = TypeVar("T")


@pytest.fixture
def qloop(qapp: QApplication) -> Iterator[QtEventLoop]:
    """The app's own loop (qasync plus its guards), for every UI test.

    Tasks a test leaves running are cancelled and awaited, and unfinished async
    generators closed, before the loop closes.
    """
    loop = QtEventLoop(qapp)
    asyncio.set_event_loop(loop)
    try:
        yield loop
    finally:
        pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        asyncio.set_event_loop(None)
        loop.close()


@pytest.fixture
def run(qloop: QtEventLoop) -> Runner[Any]:
    """Run a coroutine to completion inside the Qt/asyncio loop (30 s at most)."""

    def runner(coro: Coroutine[Any, Any, T]) -> T:
        return qloop.run_until_complete(asyncio.wait_for(coro, 30))

    return runner


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "README.md").write_text("hello\n")
    return folder


@pytest.fixture
def make_window(
    qloop: QtEventLoop, run: Runner[Any], project: Path
) -> Iterator[Callable[..., MainWindow]]:
    """Build the real main window on `project`; closed cleanly after the test."""
    windows: list[MainWindow] = []

    def make(settings: Settings, api_key: str | None = "test-key") -> MainWindow:
        window = build_main_window(str(project), settings, api_key=api_key, persist_settings=False)
        window.show()
        windows.append(window)
        return window

    yield make
    for window in windows:
        run(window.aclose())
        window.guard.allow()  # a test's leftover panes end without the question
        window.close()
        window.deleteLater()
    qloop.run_until_complete(asyncio.sleep(0.05))
