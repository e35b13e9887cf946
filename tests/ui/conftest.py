"""Fixtures for window tests: a qasync loop on the test's QApplication, and helpers to
drive the real window from inside that loop."""

from __future__ import annotations

import asyncio
import contextlib
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
from tests.fakes.window import Runner, tasks_waiting

T = TypeVar("T")
TEST_LIMIT_S = 120.0  # pytest-timeout's, from pyproject.toml, if it cannot be read
HANG_MARGIN_S = 10.0  # a hung scenario says where before pytest-timeout stops the test


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


class ScenarioHung(AssertionError):
    """A coroutine given to `run` did not end before the test's own limit."""


def _test_limit(request: pytest.FixtureRequest) -> float:
    """The test's own time limit (pytest-timeout's marker or ini value)."""
    marker = request.node.get_closest_marker("timeout")
    if marker is not None and marker.args:
        return float(marker.args[0])
    try:
        return float(request.config.getini("timeout") or TEST_LIMIT_S)
    except (ValueError, TypeError):
        return TEST_LIMIT_S


@pytest.fixture
def run(qloop: QtEventLoop, request: pytest.FixtureRequest) -> Runner[Any]:
    """Run a coroutine to completion inside the Qt/asyncio loop.

    What a scenario waits for, it waits for on state (`wait_until`, each with its own
    timeout, which names where the loop's tasks wait). The scenario as a whole has no
    budget of its own (it had 30 s: a multi-step scenario took 18 s of it under the CPU
    hog, with no single wait near its timeout); a scenario that hangs outside any
    wait_until is stopped a little before the test's own limit, saying where it hung."""
    deadline = time.monotonic() + _test_limit(request) - HANG_MARGIN_S

    async def bounded(coro: Coroutine[Any, Any, T], limit: float) -> T:
        task = asyncio.ensure_future(coro)
        done, _ = await asyncio.wait({task}, timeout=limit)
        if not done:
            where = tasks_waiting()
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            raise ScenarioHung(f"the scenario hung for {limit:.0f} s; {where}")
        return task.result()

    def runner(coro: Coroutine[Any, Any, T]) -> T:
        started = time.monotonic()
        limit = max(1.0, deadline - started)
        try:
            result = qloop.run_until_complete(bounded(coro, limit))
        except ScenarioHung:
            note_wait(time.monotonic() - started, limit, met=False)
            raise
        note_wait(time.monotonic() - started, limit, met=True)
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
