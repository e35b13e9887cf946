"""Issue 38: the side panel folds to a thin strip of its tabs' icons at the window's
right edge, never to nothing; an icon brings it back on its tab, docked where there is
room, else over the panes (the chat keeps its width); the inspector's icon carries a dot
while a call waits."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from melgui.core.protocol.approval import ApprovalRequest
from melgui.core.protocol.events import ToolCall
from melgui.ui.runtime.look.tokens import ICON
from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay, done, text
from tests.fakes.window import relay_settings, wait_until
from tests.ui.test_layout_sizes import CHAT_AT_LEAST, open_panes


def test_at_1024_with_four_panes_the_panel_is_a_strip_and_its_icon_opens_it_over_the_panes(
    scripted_relay: ScriptedRelay, make_window: Any, run: Any, qtbot: QtBot
) -> None:
    scripted_relay.on(lambda r: r.tool_role == "worker", [text("ok"), done()])
    window: MainWindow = make_window(relay_settings(scripted_relay))
    window.resize(1024, 700)
    run(wait_until(lambda: window.width() == 1024))
    side, strip = window.side_panel, window.side_panel.fold.strip
    assert side.dock.isVisible() and not strip.isVisible()  # docked: no strip
    open_panes(window, 4, run)
    assert not side.dock.isVisible() and strip.isVisible()  # folded to its icons
    assert strip.names() == ["inspector", "plans", "mcp"]
    names = [strip.button(n).accessibleName() for n in strip.names()]
    assert names == ["Inspector", "Plans", "MCP servers"]
    assert all(strip.button(n).toolTip() for n in strip.names())
    assert all(not strip.button(n).icon().isNull() for n in strip.names())
    # At the window's right edge, beside the panes, and thin.
    right = strip.mapTo(window, strip.rect().topRight()).x()
    assert right >= window.width() - 2 and strip.width() < 60
    panes = window.pane_manager.area
    assert (
        panes.mapTo(window, panes.rect().topRight()).x()
        < strip.mapTo(window, strip.rect().topLeft()).x()
    )
    chat_before = window.chat.width()

    qtbot.mouseClick(strip.button("inspector"), Qt.MouseButton.LeftButton)
    run(wait_until(lambda: side.on_screen("inspector") and window.inspector.isVisible()))
    assert side.fold.over() and strip.button("inspector").isChecked()
    frame = side.fold.frame
    chat_right = window.chat.mapTo(window, window.chat.rect().topRight()).x()
    assert frame.geometry().left() > chat_right  # over the panes, never the chat
    assert window.chat.width() == chat_before >= CHAT_AT_LEAST  # nothing moved
    assert (window.width(), window.height()) == (1024, 700)

    qtbot.mouseClick(strip.button("plans"), Qt.MouseButton.LeftButton)  # another tab
    assert side.on_screen("plans") and strip.button("plans").isChecked()
    qtbot.mouseClick(strip.button("plans"), Qt.MouseButton.LeftButton)  # again: folds
    assert not side.on_screen() and not frame.isVisible() and strip.isVisible()

    qtbot.mouseClick(strip.button("inspector"), Qt.MouseButton.LeftButton)
    window.inspector.setFocus()
    QTest.keyClick(QApplication.focusWidget() or window.inspector, Qt.Key.Key_Escape)
    assert not frame.isVisible() and not side.on_screen()  # Esc folds it too

    qtbot.mouseClick(strip.button("inspector"), Qt.MouseButton.LeftButton)
    for info in list(window.pane_manager.registry.all()):  # the panes go: it docks again
        window.pane_manager.close_pane(info.id)
    run(wait_until(lambda: side.dock.isVisible() and not frame.isVisible()))
    assert not strip.isVisible()
    assert side.page("inspector") is window.inspector and window.inspector.isVisible()


def test_folded_by_the_person_it_leaves_its_icons_and_one_docks_it_again_where_there_is_room(
    scripted_relay: ScriptedRelay, make_window: Any, run: Any, qtbot: QtBot
) -> None:
    window: MainWindow = make_window(relay_settings(scripted_relay))
    window.resize(1366, 768)
    run(wait_until(lambda: window.width() == 1366))
    side, strip = window.side_panel, window.side_panel.fold.strip
    qtbot.mouseClick(side.fold_button, Qt.MouseButton.LeftButton)
    assert not side.dock.isVisible() and strip.isVisible()
    qtbot.mouseClick(strip.button("plans"), Qt.MouseButton.LeftButton)
    assert side.dock.isVisible() and side.current() == "plans" and not side.fold.over()
    assert not strip.isVisible()
    side.toggle_action.trigger()  # the toolbar's panel button folds it to the strip too
    assert strip.isVisible() and not side.dock.isVisible()


def test_the_inspector_icon_has_a_dot_while_a_call_of_the_conversation_waits(
    scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    window: MainWindow = make_window(relay_settings(scripted_relay))
    strip = window.side_panel.fold.strip
    plain = strip.button("inspector").icon().pixmap(ICON).toImage()

    async def asked() -> None:
        main = ApprovalRequest(ToolCall("c1", "write_file", "{}"), {}, source=window.session.source)
        window.approvals.add(main)
        assert strip.badge("inspector") and not strip.badge("plans")
        assert strip.button("inspector").icon().pixmap(ICON).toImage() != plain
        main.future.cancel()  # answered (here: dropped)
        await wait_until(lambda: not strip.badge("inspector"))
        window.approvals.add(ApprovalRequest(ToolCall("c2", "write_file", "{}"), {}, source="w1"))
        assert len(window.approvals) == 1 and not strip.badge("inspector")  # a worker's

    run(asked())


def test_the_history_folds_to_its_icon_at_the_left_edge_and_opens_over_the_chat_without_room(
    scripted_relay: ScriptedRelay, make_window: Any, run: Any, qtbot: QtBot
) -> None:
    scripted_relay.on(lambda r: r.tool_role == "worker", [text("ok"), done()])
    window: MainWindow = make_window(relay_settings(scripted_relay))
    window.resize(1024, 700)
    run(wait_until(lambda: window.width() == 1024))
    fold, dock = window.history_fold, window.history_dock
    assert dock.isVisible() and not fold.strip.isVisible()
    open_panes(window, 4, run)
    assert not dock.isVisible() and fold.strip.isVisible()
    button = fold.strip.button("historyDock")
    assert button.accessibleName() == "History" and button.toolTip()
    assert fold.strip.mapTo(window, fold.strip.rect().topLeft()).x() <= 2  # the left edge
    chat_before = window.chat.width()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert fold.over() and window.history.isVisible() and not dock.isVisible()
    assert fold.frame.geometry().left() < window.chat.mapTo(window, window.chat.rect().center()).x()
    assert window.chat.width() == chat_before >= CHAT_AT_LEAST
    assert (window.width(), window.height()) == (1024, 700)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)  # again: folded
    assert not fold.over() and not window.history.isVisible()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    for info in list(window.pane_manager.registry.all()):  # the panes go: it docks again
        window.pane_manager.close_pane(info.id)
    run(wait_until(lambda: dock.isVisible() and not fold.over()))
    assert not fold.strip.isVisible()
    assert dock.widget() is window.history and window.history.isVisible()
