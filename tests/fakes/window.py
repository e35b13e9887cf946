"""Driving the real main window from tests: opening and closing it, typing, pointing,
waiting, relay settings."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from PySide6.QtCore import QEvent, QPoint, QPointF, QRect, Qt
from PySide6.QtGui import QMouseEvent, QTextDocument
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QApplication,
    QMenu,
    QMessageBox,
    QPushButton,
    QToolButton,
    QWidget,
)
from pytestqt.qtbot import QtBot

from melgui.core.config.settings import Settings
from melgui.ui.chat.blocks.approval_card import action_href
from melgui.ui.chat.transcript.hover_actions import HoverBar
from melgui.ui.window.main_window import MainWindow, build_main_window
from tests.fakes.scripted_server import ScriptedRelay
from tests.fakes.wait_log import note_wait

T = TypeVar("T")
ROOT = str(Path(__file__).resolve().parents[2]) + os.sep
# The `run` fixture (tests/ui/conftest.py): a coroutine run to its end on the Qt loop.
Runner = Callable[[Coroutine[Any, Any, T]], T]


class Windows:
    """Real main windows on `project`, shown (the `make_window` fixture's,
    tests/ui/conftest.py); `close` closes each as quitting does, its panes first."""

    def __init__(self, project: Path, run: Runner[Any], loop: asyncio.AbstractEventLoop) -> None:
        self.project, self.run, self.loop = project, run, loop
        self.made: list[MainWindow] = []

    def make(self, settings: Settings, api_key: str | None = "test-key") -> MainWindow:
        window = build_main_window(
            str(self.project), settings, api_key=api_key, persist_settings=False
        )
        window.show()
        self.made.append(window)
        return window

    def close(self) -> None:
        for window in self.made:
            self.run(window.aclose())
            window.guard.allow()  # a test's leftover panes end without the question
            window.close()
            window.deleteLater()
        self.loop.run_until_complete(asyncio.sleep(0.05))


async def wait_until(condition: Callable[[], object], timeout: float = 10.0) -> None:
    """Let the loop run until `condition()` is true; fail after `timeout` seconds, naming
    where the loop's other tasks wait (what the condition was waiting for)."""
    started = time.monotonic()
    deadline = started + timeout
    while not condition():
        if time.monotonic() > deadline:
            note_wait(time.monotonic() - started, timeout, met=False)
            raise AssertionError(f"condition not met within {timeout} s; {tasks_waiting()}")
        await asyncio.sleep(0.01)
    note_wait(time.monotonic() - started, timeout, met=True)


async def settled(window: QWidget, timeout: float = 10.0) -> None:
    """Until the window's layout has settled: its shown widgets keep their geometry
    across a turn of the loop (posted layout requests and 0 ms timers run in between).
    What a test measures after opening or closing panes, not after a fixed sleep."""
    last: list[tuple[QWidget, QRect]] = []

    def unchanged() -> bool:
        QApplication.sendPostedEvents()  # pending layout requests are handled first
        now = [(w, w.geometry()) for w in window.findChildren(QWidget) if w.isVisible()]
        same = bool(last) and now == last
        last[:] = now
        return same

    await wait_until(unchanged, timeout)


def tasks_waiting() -> str:
    me = asyncio.current_task()
    places = [
        f"{task.get_name()} at {_innermost(task.get_coro())}"
        for task in asyncio.all_tasks()
        if task is not me and not task.done()
    ]
    return "tasks waiting: " + ("; ".join(sorted(places)) or "none")


def _innermost(awaitable: object) -> str:
    """Where a coroutine waits, followed down what it awaits: the last of melgui's (or
    the tests') frames, then the innermost one."""
    ours = inner = "?"
    while awaitable is not None:
        frame = getattr(awaitable, "cr_frame", None) or getattr(awaitable, "gi_frame", None)
        frame = frame or getattr(awaitable, "ag_frame", None)
        if frame is None:
            break
        inner = f"{frame.f_code.co_filename}:{frame.f_lineno} ({frame.f_code.co_name})"
        if frame.f_code.co_filename.startswith(ROOT):
            ours = inner[len(ROOT) :]
        awaitable = (
            getattr(awaitable, "cr_await", None)
            or getattr(awaitable, "gi_yieldfrom", None)
            or getattr(awaitable, "ag_await", None)
        )
    return ours if ours == inner[len(ROOT) :] else f"{ours} in {inner}"


def relay_settings(relay: ScriptedRelay, **changes: Any) -> Settings:
    values: dict[str, Any] = {"connection": "relay", "relay_url": relay.url, "model": "relay-model"}
    return Settings(**{**values, **changes})


def type_prompt(qtbot: QtBot, window: MainWindow, prompt: str) -> None:
    window.chat.input.setFocus()
    qtbot.keyClicks(window.chat.input, prompt)
    qtbot.keyClick(window.chat.input, Qt.Key.Key_Return)


async def prompt_and_approve(
    qtbot: QtBot, window: MainWindow, prompt: str, shown: Callable[[], object]
) -> None:
    """Send `prompt`, approve the call the model answers with, then wait until `shown()`
    (what the approved call brings up: an MCP server's form, its sampling request…)."""
    type_prompt(qtbot, window, prompt)
    await wait_until(lambda: window.inspector.book.pending(), 20)
    assert window.approve_key()
    await wait_until(shown, 20)


def idle(window: MainWindow, legs: int) -> bool:
    return not window.bridge.busy and window.session.loop.legs >= legs


def keep_running_asked(window: MainWindow) -> tuple[QMessageBox, QPushButton]:
    """Close `window`, which asks first (something still runs): its question, shown, and
    the question's "Keep running in the background" button."""
    window.close()
    box = window.guard.dialog
    assert isinstance(box, QMessageBox) and box.isVisible()
    keep = box.findChild(QPushButton, "keepRunning")
    assert keep is not None
    return box, keep


def answer(box: QMessageBox | None, proceed: bool) -> str:
    """Click "Quit anyway"/"Close pane" (proceed) or Cancel in a loss dialog; returns the
    list of losses it showed."""
    assert box is not None and box.isVisible(), "no loss dialog is open"
    shown = box.informativeText()
    for button in box.buttons():
        role = box.buttonRole(button)
        if (role == QMessageBox.ButtonRole.DestructiveRole) == proceed:
            button.click()
            break
    return shown


def hover_message(transcript: Any, words: str) -> HoverBar:
    """Move the pointer over the last place `words` are drawn in `transcript` (a shown
    ChatTranscript), scrolled into view first; returns its hover bar. The move is sent
    to the page as a mouse event, not through QTest: QTest.mouseMove runs the event
    loop, which must not be entered from inside a running asyncio task."""
    document = transcript.document()
    found = document.find(words, document.characterCount(), QTextDocument.FindFlag.FindBackward)
    assert not found.isNull(), f"{words!r} is not drawn"
    found.clearSelection()  # scrolled to, not selected
    transcript.setTextCursor(found)
    transcript.ensureCursorVisible()
    viewport = transcript.viewport()
    point = QPointF(transcript.cursorRect(found).center())
    move = QMouseEvent(
        QEvent.Type.MouseMove,
        point,
        QPointF(viewport.mapToGlobal(point)),
        Qt.MouseButton.NoButton,
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(viewport, move)
    bar = transcript.hover.bar()
    assert bar.isVisible(), f"no actions shown over {words!r}"
    return bar


def click_card(transcript: Any, call_id: str, verb: str, more: str = "") -> None:
    """Click a card's act: link `verb` (Allow is "approve", Deny "deny", "always",
    "reason", an agent's option "choose" with its number), scrolled into view first; sent
    to the page as mouse events, as in `hover_message`."""
    click_href(transcript, call_id, action_href(verb, call_id, more))


def click_href(transcript: Any, call_id: str, href: str) -> None:
    """Click the link `href` on the card of `call_id` (a file's Accept, Reject, …)."""
    cursor = transcript.link_cursor(call_id, href)
    assert cursor is not None, f"no {href} on the card of {call_id}"
    middle = (cursor.selectionStart() + cursor.selectionEnd()) // 2
    cursor.setPosition(middle)
    transcript.setTextCursor(cursor)
    transcript.ensureCursorVisible()
    click_in(transcript.viewport(), QPointF(transcript.cursorRect(cursor).center()))


def click_in(viewport: QWidget, point: QPointF) -> None:
    """A left click at `point` of `viewport`, sent as the press and release events a
    real pointer makes (links react to the release)."""
    for kind, buttons in (
        (QEvent.Type.MouseButtonPress, Qt.MouseButton.LeftButton),
        (QEvent.Type.MouseButtonRelease, Qt.MouseButton.NoButton),
    ):
        event = QMouseEvent(
            kind,
            point,
            QPointF(viewport.mapToGlobal(point)),
            Qt.MouseButton.LeftButton,
            buttons,
            Qt.KeyboardModifier.NoModifier,
        )
        QApplication.sendEvent(viewport, event)


def open_chip(chip: QToolButton) -> QMenu:
    """Open a composer chip's menu as a click on it does (above the chip), but without
    the click's modal loop, so the test goes on while it is open."""
    menu = chip.menu()
    assert menu is not None and chip.isVisible()
    menu.aboutToShow.emit()  # filled, to know its height
    menu.popup(chip.mapToGlobal(QPoint(0, -menu.sizeHint().height())))
    assert menu.isVisible()
    return menu


def pick_on_chip(chip: QToolButton, words: str) -> None:
    """Open `chip`'s menu and click the entry that reads `words`."""
    menu = open_chip(chip)
    action = next(a for a in menu.actions() if a.text() == words)
    QTest.mouseClick(menu, Qt.MouseButton.LeftButton, pos=menu.actionGeometry(action).center())
    assert not menu.isVisible()
