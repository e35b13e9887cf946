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

from melgui.ui.runtime.qt_loop import QtEventLoop
from melgui.ui.runtime.theme import apply_theme
from melgui.ui.window.main_window import MainWindow
from tests.fakes.host_process import HostProcess, running_host
from tests.fakes.host_windows import Hosts, HostWindows
from tests.fakes.scripted_server import ScriptedRelay
from tests.fakes.wait_log import note_wait
from tests.fakes.window import Runner, Windows, tasks_waiting

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


@pytest.fixture(autouse=True, scope="session")
def themed_app(qapp: QApplication) -> None:
    """The light theme on the test's QApplication from the first window test on, as the
    app applies it before its window (ui/app.py): its font and padding make every
    minimum wider. Before, windows were laid out unthemed until a test applied a theme,
    and a layout test passed or failed with the order it ran in."""
    apply_theme(qapp, "light")


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
    windows = Windows(project, run, qloop)
    yield windows.make
    windows.close()


@pytest.fixture
def host_windows(
    host: HostProcess,
    scripted_relay: ScriptedRelay,
    qloop: QtEventLoop,
    run: Runner[Any],
    project: Path,
) -> Iterator[HostWindows]:
    """Real windows on `project` as views of `host` (tests/fakes/host_windows.py), closed
    with their panes before `host` stops, whatever order the test names its fixtures in."""
    windows = HostWindows(host, scripted_relay, project, run, qloop)
    yield windows
    windows.close()


@pytest.fixture
def hosts(monkeypatch: pytest.MonkeyPatch) -> Iterator[Hosts]:
    """A real host; a new one the window starts finds the same runtime directory, data
    folder and key (the window's own environment, as `melgui --with-host` has it), and
    is ended when the test ends. A module whose windows view it overrides `host` with
    `hosts.first`."""
    with running_host() as first:
        for name, value in first.env.items():
            if name in ("XDG_RUNTIME_DIR", "PYTHONPATH", "MELIAI_API_KEY"):
                monkeypatch.setenv(name, value)
        kept = Hosts(first)
        try:
            yield kept
        finally:
            first.stop()
            kept.end()
