"""Where panes live: tabs, each holding a tree of splitters with panes as leaves.

`right` and `down` split the focused pane (the one last clicked or last opened),
`tab` opens a new tab; anything else is treated as `tab` (docs/tools.md).
"""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import QEvent, QSize, Qt, Signal
from PySide6.QtWidgets import QApplication, QSplitter, QTabWidget, QVBoxLayout, QWidget

from melgui.core.protocol.tools.panes import normalize_layout
from melgui.ui.panes.pane_frame import PaneFrame
from melgui.ui.panes.splitter import Splitter


class PaneTabs(QTabWidget):
    """The pane area's tabs. Qt's tab widget answers every layout request from its page
    (any pane's layout settling: a composer's Send and Stop, a Thinking row, a scroll
    bar) by placing its page again and repainting itself whole: every pane of the tab,
    8-20 ms with eight of them, at each turn's start and end. A request that changes
    nothing the tab widget places (its size, its bar, its minimum) is taken here: the
    page has already laid out what changed inside it, and repaints only that."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._placed_for: tuple[object, ...] = ()
        self._hint = QSize()

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:
            bar = self.tabBar()
            inputs = (self.size(), bar.isVisibleTo(self), bar.sizeHint(), self.minimumSizeHint())
            if inputs == self._placed_for:
                if self.sizeHint() != self._hint:  # the area's layout hears of it still
                    self._hint = self.sizeHint()
                    self.updateGeometry()
                return True
            self._placed_for, self._hint = inputs, self.sizeHint()
        return super().event(event)


class PaneArea(QWidget):
    """Tabs of split panes. Emits `focusedPaneChanged(id)` (0 when none)."""

    focusedPaneChanged = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tabs = PaneTabs(self)
        self.tabs.setDocumentMode(True)
        self.tabs.setTabsClosable(False)
        self.tabs.setMovable(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)
        self._frames: dict[int, PaneFrame] = {}
        self._focused: PaneFrame | None = None
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._on_focus_changed)

    # -- queries -----------------------------------------------------------------------

    def frames(self) -> list[PaneFrame]:
        return list(self._frames.values())

    def frame(self, pane_id: int) -> PaneFrame | None:
        return self._frames.get(pane_id)

    @property
    def focused_id(self) -> int:
        return self._focused.pane_id if self._focused is not None else 0

    def tab_of(self, pane_id: int) -> int:
        """Index of the tab holding the pane, or -1."""
        frame = self._frames.get(pane_id)
        widget: QWidget | None = frame
        while widget is not None:
            index = self.tabs.indexOf(widget)
            if index >= 0:
                return index
            widget = widget.parentWidget()
        return -1

    # -- adding ------------------------------------------------------------------------

    def add(self, frame: PaneFrame, layout: object, *, front: bool = True) -> None:
        """Place `frame` by `layout` ("right", "down", "tab"; others mean "tab"); not
        `front`: a new tab stays behind the current one (unless it is the first)."""
        where = normalize_layout(layout)
        target = self._focused if self._focused in self._frames.values() else None
        if target is not None and self.tab_of(target.pane_id) != self.tabs.currentIndex():
            target = None
        if where == "tab" or target is None:
            self._add_tab(frame, front)
        else:
            orientation = Qt.Orientation.Horizontal if where == "right" else Qt.Orientation.Vertical
            self._split(target, frame, orientation)
        self._frames[frame.pane_id] = frame
        if front or self._focused is None:
            self._set_focused(frame)
        frame.show()

    def _add_tab(self, frame: PaneFrame, front: bool = True) -> None:
        root = Splitter(Qt.Orientation.Horizontal)
        root.setChildrenCollapsible(False)
        root.addWidget(frame)
        index = self.tabs.addTab(root, _with_badge(frame.title, root))
        if front:
            self.tabs.setCurrentIndex(index)

    def _split(self, target: PaneFrame, frame: PaneFrame, orientation: Qt.Orientation) -> None:
        parent = target.parentWidget()
        assert isinstance(parent, QSplitter)
        index = parent.indexOf(target)
        sizes = parent.sizes()
        if parent.orientation() == orientation or parent.count() == 1:
            parent.setOrientation(orientation)
            parent.insertWidget(index + 1, frame)
            if len(sizes) == parent.count() - 1:
                half = max(1, sizes[index] // 2)
                sizes[index : index + 1] = [half, half]
                parent.setSizes(sizes)
            return
        # Never leave the target parentless (PySide would delete it): move it directly.
        nested = Splitter(orientation)
        nested.setChildrenCollapsible(False)
        parent.insertWidget(index, nested)
        nested.addWidget(target)
        nested.addWidget(frame)
        target.show()
        nested.show()
        parent.setSizes(sizes)
        nested.setSizes([1000, 1000])

    # -- removing and moving -----------------------------------------------------------

    def take(self, pane_id: int) -> PaneFrame | None:
        """Detach a pane from the area (the caller owns it now); tidies empty splits/tabs."""
        frame = self._frames.pop(pane_id, None)
        if frame is None:
            return None
        parent = frame.parentWidget()
        frame.hide()
        frame.setParent(None)
        if isinstance(parent, QSplitter):
            self._collapse(parent)
        if self._focused is frame:
            remaining = list(self._frames.values())
            self._set_focused(remaining[-1] if remaining else None)
        return frame

    def remove(self, pane_id: int) -> None:
        frame = self.take(pane_id)
        if frame is not None:
            frame.deleteLater()

    def move_to_tab(self, pane_id: int) -> None:
        frame = self.take(pane_id)
        if frame is None:
            return
        self._add_tab(frame)
        self._frames[pane_id] = frame
        frame.show()
        self._set_focused(frame)

    def _collapse(self, splitter: QSplitter) -> None:
        """Drop splitters left with one child or none, up to the tab's root."""
        while True:
            parent = splitter.parentWidget()
            is_root = self.tabs.indexOf(splitter) >= 0
            if splitter.count() == 0:
                if is_root:
                    self.tabs.removeTab(self.tabs.indexOf(splitter))
                    splitter.deleteLater()
                    return
                splitter.setParent(None)
                splitter.deleteLater()
                if isinstance(parent, QSplitter):
                    splitter = parent
                    continue
                return
            if splitter.count() == 1 and not is_root and isinstance(parent, QSplitter):
                child = splitter.widget(0)
                assert child is not None
                sizes = parent.sizes()
                parent.insertWidget(parent.indexOf(splitter), child)
                child.show()
                splitter.setParent(None)
                splitter.deleteLater()
                parent.setSizes(sizes)
                splitter = parent
                continue
            if is_root:
                self._retitle(splitter)
            return

    def _retitle(self, root: QSplitter) -> None:
        first = root.findChild(PaneFrame)
        if first is not None:
            self.tabs.setTabText(self.tabs.indexOf(root), _with_badge(first.title, root))

    def set_tab_title(self, pane_id: int, title: str) -> None:
        index = self.tab_of(pane_id)
        if index >= 0:
            root = self.tabs.widget(index)
            first = root.findChild(PaneFrame) if root is not None else None
            if first is not None and first.pane_id == pane_id:
                self.tabs.setTabText(index, _with_badge(title, root))

    def set_badge(self, pane_id: int, count: int, why: str = "") -> None:
        """A pane's count of unseen signals, on its header and summed on its tab."""
        frame = self._frames.get(pane_id)
        index = self.tab_of(pane_id)
        if frame is None or index < 0:
            return
        frame.set_badge(count, why)
        root = self.tabs.widget(index)
        if isinstance(root, QSplitter):
            self._retitle(root)

    # -- focus -------------------------------------------------------------------------

    def _on_focus_changed(self, _old: QWidget | None, new: QWidget | None) -> None:
        widget = new
        while widget is not None and not isinstance(widget, PaneFrame):
            widget = widget.parentWidget()
        if isinstance(widget, PaneFrame) and widget.pane_id in self._frames:
            self._set_focused(widget)

    def focus_pane(self, pane_id: int) -> None:
        frame = self._frames.get(pane_id)
        if frame is not None:
            self.tabs.setCurrentIndex(self.tab_of(pane_id))
            self._set_focused(frame)
            frame.content.setFocus()

    def _set_focused(self, frame: PaneFrame | None) -> None:
        if frame is self._focused:
            return
        if (
            self._focused is not None
            and self._focused.pane_id in self._frames
            and shiboken6.isValid(self._focused)  # its window may be gone already
        ):
            self._focused.set_focused(False)
        self._focused = frame
        if frame is not None:
            frame.set_focused(True)
        self.focusedPaneChanged.emit(frame.pane_id if frame is not None else 0)


def _with_badge(title: str, root: QWidget | None) -> str:
    """A tab's text: its first pane's title, then the unseen signals of all its panes."""
    frames = root.findChildren(PaneFrame) if root is not None else []
    count = sum(frame.badge for frame in frames)
    return f"{title}  ● {count}" if count else title
