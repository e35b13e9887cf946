"""Issue 38: the inspector, plans and MCP servers are one right-hand panel, shown and
hidden as one (View menu, keys, the toolbar's panel button, its own fold button); a
call card's panel icon opens it on that call, and the inspector's waiting line goes
back to the card. The window's saved state, old (three docks) or new, opens."""

from __future__ import annotations

import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QByteArray, QPointF, QSettings, QSize, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QDockWidget, QLabel, QMainWindow, QWidget
from pytestqt.qtbot import QtBot

from melgui.ui.chat.blocks.links import CALL_SCHEME
from melgui.ui.window.main_window import MainWindow, build_main_window
from melgui.ui.window.side.side_panel import SLIDE_STEPS
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.window import click_in, relay_settings, settled, type_prompt, wait_until

RIGHT = Qt.DockWidgetArea.RightDockWidgetArea


def right_docks(window: QMainWindow) -> list[QDockWidget]:
    return [
        d
        for d in window.findChildren(QDockWidget)
        if window.dockWidgetArea(d) == RIGHT and not d.isHidden()
    ]


def test_inspector_plans_and_mcp_are_tabs_of_one_panel_shown_as_one(
    scripted_relay: ScriptedRelay, make_window: Any, run: Any, qtbot: QtBot
) -> None:
    window: MainWindow = make_window(relay_settings(scripted_relay))
    window.resize(1366, 768)
    run(wait_until(lambda: window.width() == 1366))
    side = window.side_panel
    assert right_docks(window) == [side.dock]  # one panel on the right, not three docks
    assert [side.tabs.tabText(i) for i in range(side.tabs.count())] == [
        "Inspector",
        "Plans",
        "MCP",
    ]
    assert side.tabs.tabToolTip(2) == "MCP servers"
    assert side.on_screen("inspector") and side.page("inspector") is window.inspector
    assert side.tabs.isVisible() and side.tabs.height() >= side.tabs.sizeHint().height() > 0
    assert side.page("plans") is window.plans_panel and side.page("mcp") is window.mcp_panel
    actions = window.actions_by_name
    keys = {name: actions[name].shortcut() for name in ("inspector", "plans", "mcp")}
    assert keys == {
        "inspector": QKeySequence("Ctrl+Shift+I"),
        "plans": QKeySequence("Ctrl+Shift+L"),
        "mcp": QKeySequence("Ctrl+Shift+M"),
    }

    actions["plans"].trigger()  # View → Plans: the panel on its Plans tab
    assert side.on_screen("plans") and window.plans_panel.isVisible()
    assert not window.inspector.isVisible()
    actions["plans"].trigger()  # again, on that tab: the panel folds away whole
    assert not side.dock.isVisible() and not window.plans_panel.isVisible()
    actions["mcp"].trigger()  # MCP servers brings the panel in on its tab
    assert side.on_screen("mcp") and window.mcp_panel.isVisible()
    actions["mcp"].trigger()  # and it stays: MCP servers shows, it does not toggle
    assert side.on_screen("mcp")
    side.tabs.setCurrentIndex(0)  # the person clicks the Inspector tab
    assert side.on_screen("inspector") and window.inspector.isVisible()
    # Its minimum is the shown page's: a wide hidden page never holds the panel wide.
    assert side.minimumSizeHint().width() <= max(
        window.inspector.minimumSizeHint().width(), side.tabs.minimumSizeHint().width() + 64
    )

    toggle = side.toggle_action  # the toolbar's panel button, checked while it is shown
    assert toggle in window.toolbar.actions() and toggle.isChecked()
    toggle.trigger()
    assert not side.dock.isVisible() and not toggle.isChecked()
    toggle.trigger()
    assert side.on_screen("inspector") and toggle.isChecked()
    run(wait_until(lambda: not side.sliding()))  # from the MCP servers shown above
    run(settled(window))
    width = side.dock.width()
    qtbot.mouseClick(side.fold_button, Qt.MouseButton.LeftButton)  # its own ×
    assert not side.dock.isVisible() and not toggle.isChecked()
    actions["inspector"].trigger()
    assert side.on_screen("inspector")
    layout = window.layout()
    assert layout is not None and side.sliding()
    layout.activate()  # it slides in: a third as wide first (or its minimum) …
    assert side.dock.width() <= max(width // SLIDE_STEPS, side.dock.minimumSizeHint().width())
    run(wait_until(lambda: not side.sliding()))  # … then as wide as it was
    run(settled(window))
    assert side.dock.width() == width
    actions["inspector"].trigger()
    assert not side.dock.isVisible()


def test_a_card_opens_the_panel_on_its_call_and_the_waiting_line_goes_to_the_card(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, tmp_path: Path
) -> None:
    scripted_relay.script(
        [tool_calls(tool_call("write_file", {"path": "m.txt", "content": "m"}, id="w1"))],
        [text("done"), done()],
    )
    window: MainWindow = make_window(relay_settings(scripted_relay))
    window.resize(1366, 768)
    side, transcript = window.side_panel, window.chat.transcript

    async def waiting() -> None:
        await wait_until(lambda: window.width() == 1366)
        type_prompt(qtbot, window, "write m")
        await wait_until(lambda: len(window.approvals.pending()) == 1)

    run(waiting())
    side.dock.hide()  # folded away, the person reading the chat
    window.actions_by_name["plans"].trigger()
    side.dock.hide()  # and on another tab when it last showed
    click_icon(transcript, "w1", f"{CALL_SCHEME}:{urllib.parse.quote('w1')}")
    run(wait_until(lambda: side.on_screen("inspector")))  # slid in, on the Inspector tab
    record = window.inspector.current_record()
    assert record is not None and record.call.id == "w1"
    detail = window.inspector.detail
    waiting_line: QLabel = detail.waiting
    assert waiting_line.isVisible() and "Go to its card" in waiting_line.text()
    window.grab().save(str(tmp_path / "side-panel-waiting.png"))

    transcript.verticalScrollBar().setValue(0)
    detail.arguments.setFocus()  # the keyboard in the panel, away from the card
    assert window.chat.answers.focused() is None
    requested: list[str] = []
    detail.cardRequested.connect(requested.append)
    waiting_line.linkActivated.emit("card:")  # what a click on the link sends
    assert requested == ["w1"]
    assert window.chat.answers.focused() == "w1"  # its card in view, its Allow in focus


def click_icon(transcript: Any, call_id: str, href: str) -> None:
    """Click the middle of a card's icon link `href` (one image: its start is its left
    edge, where a click would fall beside it)."""
    cursor = transcript.link_cursor(call_id, href)
    assert cursor is not None, f"no {href} on the card of {call_id}"
    start, end = cursor.selectionStart(), cursor.selectionEnd()
    transcript.setTextCursor(cursor)
    transcript.ensureCursorVisible()
    edges = []
    for position in (start, end):
        cursor.setPosition(position)
        edges.append(transcript.cursorRect(cursor).center())
    click_in(transcript.viewport(), QPointF((edges[0] + edges[1]) / 2))


def _old_state(path: Path) -> None:
    """window.ini as melgui wrote it with three right-hand docks (before the panel)."""
    old = QMainWindow()
    old.setCentralWidget(QWidget(old))
    docks = {}
    for name, area in [
        ("historyDock", Qt.DockWidgetArea.LeftDockWidgetArea),
        ("inspectorDock", RIGHT),
        ("plansDock", RIGHT),
        ("mcpDock", RIGHT),
    ]:
        dock = QDockWidget(name, old)
        dock.setObjectName(name)
        dock.setWidget(QWidget(dock))
        old.addDockWidget(area, dock)
        docks[name] = dock
    old.tabifyDockWidget(docks["inspectorDock"], docks["plansDock"])
    old.tabifyDockWidget(docks["inspectorDock"], docks["mcpDock"])
    old.resize(1200, 800)
    store = QSettings(str(path), QSettings.Format.IniFormat)
    store.setValue("window/geometry", old.saveGeometry())
    store.setValue("window/size", QSize(1200, 800))
    store.setValue("window/state", old.saveState())
    store.sync()
    old.deleteLater()


def test_an_older_saved_state_opens_and_the_panel_is_remembered(
    scripted_relay: ScriptedRelay,
    run: Any,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    config = tmp_path / "config"
    config.mkdir()
    monkeypatch.setenv("MELGUI_CONFIG_DIR", str(config))
    _old_state(config / "window.ini")
    settings = relay_settings(scripted_relay)

    def opened() -> MainWindow:
        window = build_main_window(str(project), settings, api_key="k")
        window.show()
        return window

    def closed(window: MainWindow) -> None:
        window.close()
        run(window.aclose())
        window.deleteLater()

    first = opened()
    try:
        assert (first.width(), first.height()) == (1200, 800)
        assert first.history_dock.isVisible()
        assert right_docks(first) == [first.side_panel.dock]
        assert first.side_panel.on_screen("inspector")
        first.side_panel.dock.hide()  # the person folds it away
    finally:
        closed(first)
    state = QSettings(str(config / "window.ini"), QSettings.Format.IniFormat)
    assert isinstance(state.value("window/state"), QByteArray)
    second = opened()
    try:
        assert not second.side_panel.dock.isVisible()  # remembered folded
        assert not second.side_panel.toggle_action.isChecked()
        second.actions_by_name["mcp"].trigger()
        assert second.side_panel.on_screen("mcp")
    finally:
        second.guard.allow()
        closed(second)
