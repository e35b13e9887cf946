"""The pane area: splits right/down of the focused pane, tabs, closing and moving."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QApplication, QLabel, QPushButton, QSplitter, QVBoxLayout, QWidget
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


class _Paints(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.count += 1
        return False


def _settle(qtbot: QtBot) -> None:
    """Layout requests and the paints they cause, all handled."""
    for _ in range(3):
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        QApplication.processEvents()


def test_a_pane_laying_itself_out_repaints_no_other(qtbot: QtBot) -> None:
    """A button swapped for another inside one pane (a composer's Send for Stop) lays
    that pane out again; the tab widget above must not repaint every pane of the tab."""
    registry = PaneRegistry()
    area = _area(qtbot)
    content = QWidget()
    column = QVBoxLayout(content)
    send, stop = QPushButton("Send"), QPushButton("Stop")
    column.addWidget(QLabel("words"), 1)
    column.addWidget(send)
    column.addWidget(stop)
    stop.hide()
    one = PaneFrame(registry.add("terminal", "one"), content)
    two = _frame(registry, "two")
    area.add(one, "right")
    area.add(two, "right")
    qtbot.waitExposed(area)
    _settle(qtbot)
    paints = _Paints()
    two.installEventFilter(paints)
    where = send.geometry()
    send.hide()
    stop.show()
    qtbot.waitUntil(lambda: stop.geometry() == where)  # the pane laid itself out
    _settle(qtbot)
    assert paints.count == 0
    # What the tab widget does place still follows: a second tab shows its bar.
    area.add(_frame(registry, "three"), "tab")
    _settle(qtbot)
    page = area.tabs.currentWidget()
    assert area.tabs.tabBar().isVisible() and page is not None
    top = page.mapTo(area.tabs, page.rect().topLeft()).y()
    bottom = page.mapTo(area.tabs, page.rect().bottomLeft()).y()
    assert area.tabs.tabBar().geometry().bottom() < top and bottom == area.tabs.height() - 1
