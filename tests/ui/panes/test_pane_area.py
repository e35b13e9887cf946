"""The pane area: splits right/down of the focused pane, tabs, closing and moving."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSplitter
from pytestqt.qtbot import QtBot

from melgui.core.terminal.panes import PaneRegistry
from melgui.ui.panes.pane_area import PaneArea
from melgui.ui.panes.pane_frame import PaneFrame


def _frame(registry: PaneRegistry, title: str) -> PaneFrame:
    info = registry.add("terminal", title)
    return PaneFrame(info, QLabel(title))


def _area(qtbot: QtBot) -> PaneArea:
    area = PaneArea()
    qtbot.addWidget(area)
    area.resize(800, 600)
    area.show()
    return area


def test_right_and_down_split_the_focused_pane(qtbot: QtBot) -> None:
    registry = PaneRegistry()
    area = _area(qtbot)
    one, two, three = (_frame(registry, name) for name in ("one", "two", "three"))
    area.add(one, "right")  # the first pane gets a tab of its own
    area.add(two, "right")
    area.add(three, "down")  # splits "two", the focused (last opened) pane
    assert area.tabs.count() == 1
    root = area.tabs.widget(0)
    assert isinstance(root, QSplitter) and root.orientation() == Qt.Orientation.Horizontal
    assert root.indexOf(one) == 0
    nested = three.parentWidget()
    assert isinstance(nested, QSplitter) and nested.orientation() == Qt.Orientation.Vertical
    assert nested.indexOf(two) == 0 and nested.indexOf(three) == 1
    assert root.indexOf(nested) == 1
    assert area.focused_id == three.pane_id


def test_tab_and_unknown_layout_open_tabs(qtbot: QtBot) -> None:
    registry = PaneRegistry()
    area = _area(qtbot)
    area.add(_frame(registry, "a"), "tab")
    area.add(_frame(registry, "b"), "sideways")
    area.add(_frame(registry, "c"), None)
    assert area.tabs.count() == 3
    assert [area.tabs.tabText(i) for i in range(3)] == ["a", "b", "c"]


def test_focus_follows_the_person(qtbot: QtBot) -> None:
    registry = PaneRegistry()
    area = _area(qtbot)
    one, two = _frame(registry, "one"), _frame(registry, "two")
    area.add(one, "tab")
    area.add(two, "right")
    area.focus_pane(one.pane_id)
    assert area.focused_id == one.pane_id
    three = _frame(registry, "three")
    area.add(three, "down")
    assert three.parentWidget() is one.parentWidget()
    assert isinstance(one.parentWidget(), QSplitter)


def test_close_collapses_splits_and_empty_tabs(qtbot: QtBot) -> None:
    registry = PaneRegistry()
    area = _area(qtbot)
    one, two, three = (_frame(registry, name) for name in ("one", "two", "three"))
    area.add(one, "tab")
    area.add(two, "right")
    area.add(three, "down")
    area.remove(three.pane_id)
    root = area.tabs.widget(0)
    assert isinstance(root, QSplitter)
    assert root.count() == 2 and root.indexOf(two) == 1  # the nested split is gone
    area.remove(one.pane_id)
    area.remove(two.pane_id)
    assert area.tabs.count() == 0
    assert area.focused_id == 0


def test_move_to_tab(qtbot: QtBot) -> None:
    registry = PaneRegistry()
    area = _area(qtbot)
    one, two = _frame(registry, "one"), _frame(registry, "two")
    area.add(one, "tab")
    area.add(two, "right")
    area.move_to_tab(one.pane_id)
    assert area.tabs.count() == 2
    assert area.tab_of(one.pane_id) == 1 and area.tab_of(two.pane_id) == 0
    assert area.tabs.tabText(0) == "two"
    assert area.frame(one.pane_id) is one
