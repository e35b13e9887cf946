"""The side panel folded: a thin column of its tabs' icons at the window's right edge.

Folded (by the person, or by the window for room), the panel leaves its icons behind in
a strip (a toolbar in the window's right toolbar area, so it keeps the window's edge
whatever the docks do). A click on an icon brings the panel back on that tab: docked
when the chat and the panes keep their minimum beside it, else over the panes (never
the chat), as an overlay at the window's right edge, until the person folds it again
(the same icon, its fold button, Esc) or the panes close and it docks again. The
inspector's icon carries a dot while a call of the main conversation waits.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QRect, QSize, Qt, Signal, SignalInstance
from PySide6.QtGui import QAction, QColor, QIcon, QKeySequence, QPainter, QPixmap, QShortcut
from PySide6.QtWidgets import (
    QDockWidget,
    QFrame,
    QMainWindow,
    QToolBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from melgui.ui.runtime.look.icons import icon
from melgui.ui.runtime.look.tokens import CHAT_COLUMN_MIN, HAIRLINE, ICON, PANE_HEADER_DOT
from melgui.ui.runtime.theme import Colors

PANEL_SHARE = 0.28  # of the window's width, for the panel over the panes
PANEL_MAX = 420


def badged(base: QIcon, colour: str) -> QIcon:
    """`base` with a dot in `colour` at its top right corner."""
    ratio = 2  # drawn at twice the size: sharp on high-density screens too
    pixmap = QPixmap(ICON * ratio, ICON * ratio)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    base.paint(painter, QRect(0, 0, ICON * ratio, ICON * ratio))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor(colour))
    dot = PANE_HEADER_DOT * ratio
    painter.drawEllipse(ICON * ratio - dot, 0, dot, dot)
    painter.end()
    pixmap.setDevicePixelRatio(ratio)
    return QIcon(pixmap)


class SideStrip(QToolBar):
    """The folded panel's icons, one per tab, top to bottom; `picked` names the tab."""

    picked = Signal(str)

    def __init__(
        self, window: QMainWindow, colors: Colors, name: str = "sidePanel", left: bool = False
    ) -> None:
        super().__init__("Side panel icons", window)
        self.setObjectName(f"{name}Strip")  # saveState() keys toolbars by name
        self.setAccessibleName("History, folded" if left else "Side panel, folded")
        self.setOrientation(Qt.Orientation.Vertical)
        self.setMovable(False)
        self.setFloatable(False)
        self.setIconSize(QSize(ICON, ICON))
        self.toggleViewAction().setVisible(False)  # it follows the panel, not a menu
        self.setStyleSheet("QToolBar { padding: 0; }")  # thin: its buttons' own width
        self.colors = colors
        self._icons: dict[str, str] = {}
        self._actions: dict[str, QAction] = {}
        self._badged: set[str] = set()
        edge = Qt.ToolBarArea.LeftToolBarArea if left else Qt.ToolBarArea.RightToolBarArea
        window.addToolBar(edge, self)

    def add(self, name: str, icon_name: str, words: str) -> None:
        action = QAction(icon(icon_name, self.colors.muted), words, self)
        action.setToolTip(f"{words}: open the side panel on it")
        action.setCheckable(True)  # checked while the panel shows that tab over the panes
        action.triggered.connect(lambda _checked=False: self.picked.emit(name))
        self.addAction(action)
        self._icons[name] = icon_name
        self._actions[name] = action
        button = self.button(name)
        button.setAccessibleName(words)
        button.setObjectName(f"sideStrip-{name}")

    def button(self, name: str) -> QToolButton:
        button = self.widgetForAction(self._actions[name])
        assert isinstance(button, QToolButton)
        return button

    def names(self) -> list[str]:
        return list(self._actions)

    def set_current(self, name: str | None) -> None:
        """`name`'s icon checked (the tab shown over the panes); None: none."""
        for key, action in self._actions.items():
            action.setChecked(key == name)

    def set_badge(self, name: str, on: bool) -> None:
        """A dot on `name`'s icon (a call waiting), or none."""
        if (name in self._badged) != on:
            self._badged.symmetric_difference_update({name})
            self._paint(name)

    def badge(self, name: str) -> bool:
        return name in self._badged

    def set_colors(self, colors: Colors) -> None:
        self.colors = colors
        for name in self._actions:
            self._paint(name)

    def _paint(self, name: str) -> None:
        plain = icon(self._icons[name], self.colors.muted)
        shown = badged(plain, self.colors.badge) if name in self._badged else plain
        self._actions[name].setIcon(shown)


class PanelFold(QObject):
    """`panel`'s strip while its `dock` is hidden, and its place over the panes;
    `current()` names its shown tab, `reveal(name)` brings it on a tab."""

    def __init__(
        self,
        window: QMainWindow,
        panel: QWidget,
        dock: QDockWidget,
        colors: Colors,
        current: Callable[[], str],
        reveal: Callable[[str], None],
        *,
        left: bool = False,
        widest: int = PANEL_MAX,
    ) -> None:
        """`left`: at the window's left edge (the history), over the chat's side;
        `widest`, the most it takes over the content."""
        super().__init__(panel)
        self._left = left
        self._widest = widest
        self._window = window
        self._panel = panel
        self._dock = dock
        self._current = current
        self._reveal = reveal
        self.panes_host: QWidget | None = None  # over which it opens when there is no room
        self.strip = SideStrip(window, colors, dock.objectName().removesuffix("Dock"), left)
        self.strip.picked.connect(self._picked)
        self.strip.hide()  # the panel is docked at first
        self.frame = QFrame(window)  # the panel over the panes, at the window's right edge
        self.frame.setObjectName("historyOver" if left else "sidePanelOver")
        self.frame.setAccessibleName(f"{dock.windowTitle()}, over the content")
        self.frame.setAutoFillBackground(True)
        self._holder = layout = QVBoxLayout(self.frame)
        # Its border on the content's side shows.
        layout.setContentsMargins(0 if left else HAIRLINE, 0, HAIRLINE if left else 0, 0)
        self.frame.hide()
        escape = QShortcut(QKeySequence(Qt.Key.Key_Escape), self.frame)
        escape.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        escape.activated.connect(self.close)
        # Docked only if the chat and the panes keep their minimum beside it (the
        # LayoutKeeper says); the window sets it.
        self.fits: Callable[[int], bool] = lambda _width: True
        dock.installEventFilter(self)
        self.strip.installEventFilter(self)
        window.installEventFilter(self)

    def add(self, name: str, icon_name: str, words: str) -> None:
        self.strip.add(name, icon_name, words)

    def over(self) -> bool:
        """The panel is shown over the panes."""
        return not self.frame.isHidden()

    def width(self) -> int:
        """The panel's width when it comes back: a share of the window, within bounds."""
        least = self._panel.minimumSizeHint().width()
        return max(least, min(self._widest, int(self._window.width() * PANEL_SHARE)))

    def unfold(self) -> bool:
        """The hidden panel comes back over the panes if docking would squeeze them or
        the chat (True), else not (False: the caller docks it)."""
        if self.over():
            return True
        # The side panel docks narrower than it would open, as long as it is whole: over
        # the panes, it would hide most of them (a pane beside another, all of it). The
        # history goes over the chat's side, not the panes: it docks at its width or not.
        least = self.width() if self._left else self._panel.minimumSizeHint().width()
        if self.fits(least):
            return False
        self._holder.addWidget(self._panel)  # out of the dock, into the frame
        self._panel.show()
        self.frame.show()
        self._place()
        self.frame.raise_()
        self.strip.set_current(self._current())
        return True

    def close(self) -> None:
        """Folded again: the panel goes back into its (hidden) dock."""
        if not self.over():
            return
        self.frame.hide()
        self._dock.setWidget(self._panel)
        self._panel.show()
        self.strip.set_current(None)
        self._window.activateWindow()

    def tab_changed(self, name: str) -> None:
        if self.over():
            self.strip.set_current(name)

    def _picked(self, name: str) -> None:
        if self.over() and self._current() == name:
            self.close()  # its icon again folds it
        else:
            self._reveal(name)

    def _place(self) -> None:
        """At the right edge of the window's centre, over the panes, never the chat (nor
        the bars above and below them: the trust bar and the waiting line stay whole)."""
        central = self._window.centralWidget()
        if central is None:
            return
        area = central.geometry()
        panes = self.panes_host
        if panes is not None and panes.isVisible():
            top = panes.mapTo(self._window, panes.rect().topLeft()).y()
            area.setTop(top)  # and the waiting line under them stays in sight too
            area.setBottom(top + panes.height() - 1)
        width = max(self._panel.minimumSizeHint().width(),
                    min(self.width(), area.width() - CHAT_COLUMN_MIN))  # fmt: skip
        x = area.left() if self._left else area.right() + 1 - width
        self.frame.setGeometry(x, area.top(), width, area.height())

    def _sync(self) -> None:
        """The strip shows while the dock is hidden; a dock shown takes the panel back."""
        hidden = self._dock.isHidden()
        if not hidden and self.over():
            self.close()
        if self.strip.isHidden() != (not hidden):
            self.strip.setVisible(hidden)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if watched is self._window:
            if kind == QEvent.Type.Resize and self.over():
                self._place()
        elif kind in (QEvent.Type.ShowToParent, QEvent.Type.HideToParent):
            self._sync()
        return False


def fold_dock(
    window: QMainWindow,
    dock: QDockWidget,
    colors: Colors,
    recolour: SignalInstance,
    widest: int,
    icon_name: str = "history",
) -> PanelFold:
    """A left dock (the history) that folds to one icon at the window's left edge; the
    icon brings it back, docked where there is room, else over the chat's side (at most
    `widest`); `recolour` brings each theme's Colors."""
    panel = dock.widget()
    assert panel is not None
    name = dock.objectName()

    def reveal(_name: str) -> None:
        if not dock.isHidden() or not fold.unfold():
            dock.show()

    fold = PanelFold(window, panel, dock, colors, lambda: name, reveal, left=True, widest=widest)
    fold.add(name, icon_name, dock.windowTitle())
    recolour.connect(fold.strip.set_colors)
    return fold


def waiting_dot(strip: SideStrip, changed: SignalInstance, waiting: Callable[[], bool]) -> None:
    """The inspector's icon in `strip` carries a dot while `waiting()` (read each time
    `changed` fires)."""
    changed.connect(lambda *_: strip.set_badge("inspector", waiting()))
