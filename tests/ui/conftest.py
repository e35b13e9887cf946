"""Fixtures for window tests: a qasync loop on the test's QApplication, and helpers to
drive the real window from inside that loop."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from melgui.core.config.settings import Settings
from melgui.ui.runtime.qt_loop import QtEventLoop
from melgui.ui.window.main_window import MainWindow, build_main_window
from tests.fakes.wait_log import note_wait
from tests.fakes.window import Runner

T = TypeVar("T")
RUN_LIMIT_S = 30


@pytest.fixture(autouse=True, scope="session")
def noted_qtbot_waits() -> Iterator[None]:
    """With MELGUI_WAIT_LOG set, qtbot.waitUntil's waits are written there too
    (tests/fakes/wait_log.py)."""
    if not os.environ.get("MELGUI_WAIT_LOG"):
        yield
        return
    original = QtBot.waitUntil

    def wait_until(self: QtBot, callback: Callable[[], Any], *, timeout: int = 5000) -> None:
        started = time.monotonic()
        try:
            original(self, callback, timeout=timeout)
        except BaseException:
            note_wait(time.monotonic() - started, timeout / 1000, met=False)
            raise
        note_wait(time.monotonic() - started, timeout / 1000, met=True)

    QtBot.waitUntil = wait_until  # type: ignore[method-assign]
    try:
        yield
    finally:
        QtBot.waitUntil = original  # type: ignore[method-assign]


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
        started = time.monotonic()
        try:
            result = qloop.run_until_complete(asyncio.wait_for(coro, RUN_LIMIT_S))
        except TimeoutError:
            note_wait(time.monotonic() - started, RUN_LIMIT_S, met=False)
            raise
        note_wait(time.monotonic() - started, RUN_LIMIT_S, met=True)
        return result

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
