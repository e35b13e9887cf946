"""A layout that holds: room for the chat when panes open, proportions back when they
close, and the window's geometry, docks and splitter remembered between runs.

The window never resizes itself: its minimum is fixed, not the sum of what it holds.
When the first pane opens, the side panel showing an empty page (an inspector without
calls, no plans) folds away before the chat gives up any width, and the chat keeps at
least MIN_CHAT_WIDTH pixels: docks narrow, then fold (the side panel to its strip of
icons, the history to its View menu toggle), then
split panes move to tabs of their own. When the last pane closes, the folded docks and
the widths from before come back. `save()` writes the window's state to an INI file;
`restore()` reads it (both do nothing without a path).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from PySide6.QtCore import (
    QByteArray,
    QEvent,
    QObject,
    QSettings,
    QSize,
    Qt,
    QTimer,
    SignalInstance,
)
from PySide6.QtWidgets import (
    QBoxLayout,
    QDockWidget,
    QLayout,
    QMainWindow,
    QSplitter,
    QWidget,
)

from melgui.ui.panes.manager import PaneManager
from melgui.ui.panes.pane_area import PaneArea
from melgui.ui.panes.splitter import Splitter
from melgui.ui.runtime.look.tokens import WINDOW_DEFAULT

MIN_CHAT_WIDTH = 480
MIN_PANES_WIDTH = 340
WINDOW_MIN = QSize(720, 480)  # the window's own minimum, whatever it holds
INSPECTOR_SHARE = 0.28  # of the window's width, for a dock that opens with the window
INSPECTOR_MAX = 420
HISTORY_WIDTH = 210
SQUEEZE_LEFT = 16  # the history squeezed by more than this folds rather than truncates
DOCK_GAP = 8  # px beside a dock: its separator, counted generously


def _on_screen(dock: QDockWidget) -> bool:
    """Shown and not a tab behind another dock (those keep a stale size)."""
    return dock.isVisible() and not dock.visibleRegion().isEmpty()


def chat_and_panes(total: int, share: float | None = None) -> tuple[int, int]:
    """How the central splitter's width is shared once panes are open: the chat's `share`
    (the person's last choice) or two fifths, keeping both sides usable."""
    chat = max(MIN_CHAT_WIDTH, int(total * share) if share else total * 2 // 5)
    if total - chat < MIN_PANES_WIDTH:
        chat = max(MIN_CHAT_WIDTH, total - MIN_PANES_WIDTH)
    return chat, max(0, total - chat)


class LayoutKeeper(QObject):
    """Keeps `window`'s proportions; `folds` are the docks that fold away when empty."""

    def __init__(
        self,
        window: QMainWindow,
        splitter: QSplitter,
        *,
        folds: list[tuple[QDockWidget, Callable[[], bool]]],
        side_docks: list[QDockWidget],
        path: Path | None,
    ) -> None:
        super().__init__(window)
        self._window = window
        self._splitter = splitter
        self._folds = folds  # (dock, is_empty callable)
        self._side_docks = side_docks
        self._path = path
        self._folded: list[QDockWidget] = []
        self._before: dict[QDockWidget, int] = {}
        self._refit_due = False  # a `_refit` is queued
        self.panes_open = False
        self.chat_share: float | None = None  # the chat's part beside panes, as last set
        splitter.splitterMoved.connect(lambda _pos, _index: self._remember_share())
        if isinstance(splitter, Splitter):
            splitter.reset = self.reset_share  # a double-click on the handle
        layout = window.layout()
        if layout is not None:  # its contents' minimum would otherwise grow the window
            layout.setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)
        window.setMinimumSize(WINDOW_MIN)
        window.installEventFilter(self)  # resized: the chat's minimum (`_chat_minimum`)

    def follow(self, manager: PaneManager, session_changed: SignalInstance) -> None:
        """Share the width out as `manager`'s panes come and go and as each new chat comes;
        restore the window as it was (or give it its first sizes)."""
        manager.panesChanged.connect(lambda: self.panes_changed(bool(manager.registry.all())))
        manager.area.installEventFilter(self)  # a pane's minimum grown: `_refit`
        session_changed.connect(lambda _session: self.fit())  # a new chat, kept wide
        if not self.restore():
            self._window.resize(*WINDOW_DEFAULT)
            self.first_sizes()

    # -- start-up sizes ------------------------------------------------------------------

    def first_sizes(self) -> None:
        """Modest docks for a window opened without remembered state."""
        self.fit()
        width = self._window.width()
        docks: list[QDockWidget] = []
        for dock in self._side_docks:  # one per tab group: a hidden tab's size is stale
            if not dock.isHidden() and not set(self._window.tabifiedDockWidgets(dock)) & set(docks):
                docks.append(dock)
        wanted = {
            d.objectName(): HISTORY_WIDTH
            if self._window.dockWidgetArea(d) == Qt.DockWidgetArea.LeftDockWidgetArea
            else min(INSPECTOR_MAX, int(width * INSPECTOR_SHARE))
            for d in docks
        }
        self._window.resizeDocks(
            docks, [wanted[d.objectName()] for d in docks], Qt.Orientation.Horizontal
        )

    # -- panes opening and closing -------------------------------------------------------

    def panes_changed(self, has_panes: bool) -> None:
        if has_panes and not self.panes_open:
            self.panes_open = True
            self._before = {d: d.width() for d in self._side_docks if _on_screen(d)}
            keep = {dock for dock, is_empty in self._folds if not is_empty()}
            for dock, _is_empty in self._folds:
                if not dock.isVisible() or dock in keep:
                    continue
                # In front, its tab group folds with it: a tab behind (MCP servers,
                # plans) would otherwise come forward and take the width.
                group = self._window.tabifiedDockWidgets(dock) if _on_screen(dock) else []
                for member in [dock, *group]:
                    if member.isVisible() and member not in self._folded and member not in keep:
                        member.hide()
                        self._folded.append(member)
            layout = self._window.layout()
            if layout is not None:
                layout.activate()  # the central splitter gets the folded docks' width now
            if self._narrow_docks() and layout is not None:
                layout.activate()
            self.fit()
            # A new pane settles in a later layout pass. Each timer here has the splitter
            # for context: none fires once the window is gone.
            QTimer.singleShot(0, self._splitter, self.fit)
        elif has_panes:
            self.fit()
            QTimer.singleShot(0, self._splitter, self.fit)
        elif not has_panes and self.panes_open:
            self.panes_open = False
            self._chat_minimum()  # the chat alone
            for dock in self._folded:
                dock.show()
            for dock in self._before:
                dock.raise_()  # the tabs that were in front before come to the front again
            self._folded.clear()
            self._restore_widths()
            # Shown docks settle in a later layout pass: size them again after it.
            QTimer.singleShot(0, self._splitter, self._restore_widths)

    def _narrow_docks(self) -> bool:
        """Docks that stay (not empty) give up width before the chat does; True if any did."""
        wanted = MIN_CHAT_WIDTH + MIN_PANES_WIDTH
        free = self._splitter.width()
        left = Qt.DockWidgetArea.LeftDockWidgetArea
        staying = [  # the history keeps its width: it folds whole if need be (fit)
            d
            for d in self._before
            if _on_screen(d) and d not in self._folded and self._window.dockWidgetArea(d) != left
        ]
        short = wanted - free
        if short <= 0 or not staying:
            return False
        for dock in staying:  # tabs behind it would hold the group at their own minimum
            for member in self._window.tabifiedDockWidgets(dock):
                if member.isVisible() and not _on_screen(member) and member not in self._folded:
                    member.hide()
                    self._folded.append(member)
        widths = []
        for dock in staying:
            give = min(short, max(0, dock.width() - dock.minimumSizeHint().width()))
            widths.append(dock.width() - give)
            short -= give
        self._window.resizeDocks(staying, widths, Qt.Orientation.Horizontal)
        return True

    def fit(self) -> None:
        """The chat keeps MIN_CHAT_WIDTH beside the panes: side docks fold, then panes
        split side by side (or stacked) move to tabs of their own, before it shrinks.
        Alone, see `_chat_minimum`."""
        self._chat_minimum()
        if not self.panes_open:
            return
        layout = self._window.layout()
        area = self._splitter.widget(1)
        for dock in [*self._side_docks]:  # the history last: it folds first from the left
            if self._room() >= 0:
                break
            if dock.isVisible() and dock not in self._folded:
                dock.hide()
                self._folded.append(dock)
                if layout is not None:
                    layout.activate()
        if isinstance(area, PaneArea):
            self._tab_panes(area)
        self._keep_history_width()
        self._share()

    def _chat_minimum(self) -> None:
        """MIN_CHAT_WIDTH beside panes, and alone while the window has room for it beside
        the docks' minimums; in a narrower window (720 px, the window's own minimum, with
        the history and the side panel) its own (the composer's): a minimum larger than the
        room made the window lay the chat out wider than shown, its welcome and composer
        cut at the right edge."""
        chat = self._splitter.widget(0)
        if chat is None:
            return
        counted: set[QDockWidget] = set()  # a tab group once
        docks = 0
        for dock in self._side_docks:
            if dock.isHidden() or dock.isFloating() or dock in counted:
                continue
            counted.update([dock, *self._window.tabifiedDockWidgets(dock)])
            docks += dock.minimumSizeHint().width() + DOCK_GAP
        room = self._window.width() - docks >= MIN_CHAT_WIDTH + self._splitter.handleWidth()
        wanted = MIN_CHAT_WIDTH if self.panes_open or room else 0
        if chat.minimumWidth() != wanted:
            chat.setMinimumWidth(wanted)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._window and event.type() in (QEvent.Type.Resize, QEvent.Type.Show):
            self._chat_minimum()
        elif (
            isinstance(watched, PaneArea)
            and event.type() == QEvent.Type.LayoutRequest
            and self.panes_open
            and not self._refit_due
        ):
            self._refit_due = True
            QTimer.singleShot(0, self._splitter, self._refit)  # none once it is gone
        return False

    def _refit(self) -> None:
        """The panes' minimum changed after they were placed (a pane settling after the
        layout pass that placed it, a header's words): panes that no longer fit move to
        tabs of their own now. Left to the next pane's change of state, that came as a
        worker ended its turn, with every chat of the tab full of text to lay out again."""
        self._refit_due = False
        area = self._splitter.widget(1)
        if not self.panes_open or not isinstance(area, PaneArea):
            return
        if self._room() >= 0 and area.height() >= area.minimumSizeHint().height():
            return
        tabs = [area.tab_of(frame.pane_id) for frame in area.frames()]
        if len(set(tabs)) < len(tabs):  # a tab holds more than one: one can move
            self.fit()

    def _keep_history_width(self) -> None:
        """A pane's minimum (even a transient one, while it is placed) may have squeezed
        the left docks; they get their width back as far as the room allows, or fold."""
        left = Qt.DockWidgetArea.LeftDockWidgetArea
        for dock, before in self._before.items():
            if self._window.dockWidgetArea(dock) != left or not _on_screen(dock):
                continue
            wanted = min(before, dock.width() + max(0, self._room()))
            layout = self._window.layout()
            if wanted > dock.width():
                self._window.resizeDocks([dock], [wanted], Qt.Orientation.Horizontal)
                if layout is not None:
                    layout.activate()
            if dock.width() < before - SQUEEZE_LEFT:  # too narrow to read: it folds instead
                dock.hide()
                self._folded.append(dock)
                if layout is not None:
                    layout.activate()

    def _room(self) -> int:
        """Width the central splitter has beyond the chat's minimum and the panes'."""
        area = self._splitter.widget(1)
        panes = area.minimumSizeHint().width() if area is not None else 0
        handle = self._splitter.handleWidth()
        return self._splitter.width() - MIN_CHAT_WIDTH - max(panes, MIN_PANES_WIDTH) - handle

    def fits_beside(self, width: int) -> bool:
        """A folded dock `width` wide can come back docked: no panes, or the chat and the
        panes keep their minimum beside it, the history folding to make room if that is
        enough (it comes back with the panes' going, as the other folded docks do)."""
        if not self.panes_open or self._room() >= width:
            return True
        left = Qt.DockWidgetArea.LeftDockWidgetArea
        history = [
            d
            for d in self._side_docks
            if self._window.dockWidgetArea(d) == left and _on_screen(d) and d not in self._folded
        ]
        if not history or self._room() + sum(d.width() + DOCK_GAP for d in history) < width:
            return False
        for dock in history:
            dock.hide()
            self._folded.append(dock)
        layout = self._window.layout()
        if layout is not None:
            layout.activate()
        return self._room() >= width

    def _tab_panes(self, area: PaneArea) -> None:
        """Panes split in one tab that do not fit move to tabs of their own, the last
        placed first."""
        for _ in range(len(area.frames())):
            if self._room() >= 0 and area.height() >= area.minimumSizeHint().height():
                return
            tabs = [area.tab_of(frame.pane_id) for frame in area.frames()]
            crowded = [f for f, tab in zip(area.frames(), tabs, strict=True) if tabs.count(tab) > 1]
            if not crowded:
                return
            area.move_to_tab(crowded[-1].pane_id)
            layout = self._window.layout()
            if layout is not None:
                layout.activate()

    def _restore_widths(self) -> None:
        if self.panes_open:
            return
        docks = [d for d in self._before if _on_screen(d)]
        if docks:
            self._window.resizeDocks(
                docks, [self._before[d] for d in docks], Qt.Orientation.Horizontal
            )

    def _remember_share(self) -> None:
        """The person moved the handle between the chat and the panes: keep their share."""
        sizes = self._splitter.sizes()
        total = sizes[0] + sizes[1] if len(sizes) >= 2 else 0
        if self.panes_open and total > 0 and sizes[1] > 0:
            self.chat_share = sizes[0] / total

    def reset_share(self) -> None:
        """Forget the person's share: the chat and the panes split as they first did."""
        self.chat_share = None
        if self.panes_open:
            self._share()

    def _share(self) -> None:
        sizes = self._splitter.sizes()
        total = sum(sizes) or self._splitter.width()
        if len(sizes) >= 2:
            chat, panes = chat_and_panes(total, self.chat_share)
            self._splitter.setSizes([chat, panes, *([0] * (len(sizes) - 2))])

    # -- remembering -----------------------------------------------------------------------

    def _store(self) -> QSettings | None:
        if self._path is None:
            return None
        self._path.parent.mkdir(parents=True, exist_ok=True)
        return QSettings(str(self._path), QSettings.Format.IniFormat)

    def save(self) -> None:
        store = self._store()
        if store is None:
            return
        # Folded docks are saved as they were before folding.
        for dock in self._folded:
            dock.show()
        store.setValue("window/geometry", self._window.saveGeometry())
        store.setValue("window/size", self._window.size())
        store.setValue("window/state", self._window.saveState())
        if self.chat_share is not None:
            store.setValue("window/chat_share", self.chat_share)
        store.sync()

    def restore(self) -> bool:
        """Apply the remembered geometry and docks; False when nothing was remembered."""
        store = self._store()
        self.fit()
        if store is None or not self._path or not self._path.exists():
            return False
        geometry = store.value("window/geometry")
        state = store.value("window/state")
        done = False
        if isinstance(geometry, QByteArray):
            done = self._window.restoreGeometry(geometry)
        if isinstance(state, QByteArray):
            done = self._window.restoreState(state) or done
        share = store.value("window/chat_share")
        with contextlib.suppress(TypeError, ValueError):
            self.chat_share = float(share) if share is not None else None
        size = store.value("window/size")
        if isinstance(size, QSize) and size.isValid():
            self._window.resize(size)  # restoreGeometry may clamp to a small screen
            done = True
        return done


SIDES = {
    "left": Qt.DockWidgetArea.LeftDockWidgetArea,
    "right": Qt.DockWidgetArea.RightDockWidgetArea,
    "bottom": Qt.DockWidgetArea.BottomDockWidgetArea,
}


def add_dock(
    window: QMainWindow,
    title: str,
    name: str,
    widget: QWidget,
    side: Literal["left", "right", "bottom"],
    tabbed_with: QDockWidget | None = None,
) -> QDockWidget:
    """A dock holding `widget` on `side` (a tab behind `tabbed_with`, which stays in front)."""
    dock = QDockWidget(title, window)
    dock.setObjectName(name)
    dock.setWidget(widget)
    window.addDockWidget(SIDES[side], dock)
    if tabbed_with is not None:
        window.tabifyDockWidget(tabbed_with, dock)
        tabbed_with.raise_()
    return dock


def insert_below(anchor: QWidget, *widgets: QWidget) -> None:
    """`widgets` right under `anchor`, in order, in the layout that holds it."""
    holder = anchor.parentWidget()
    layout = holder.layout() if holder is not None else None
    assert isinstance(layout, QBoxLayout)
    for widget in widgets:
        layout.insertWidget(layout.indexOf(anchor) + 1, widget)
        anchor = widget
