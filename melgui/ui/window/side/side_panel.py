"""The right-hand side panel: the inspector, plans and MCP servers as tabs of one panel,
shown and hidden as one (View menu, their keys, the toolbar's panel button, a call
card's panel icon); brought back from folded, it slides in. Folded, its tabs' icons
stay in a strip at the window's right edge (fold.py); brought back where docking would
squeeze the chat or the panes, it opens over the panes instead.

It lives in one dock on the right, without a title bar: its tab bar is its header, with
a button that folds it away. The window folds it too (LayoutKeeper) before the chat
would drop below its width. Its minimum is its shown page's, not its widest page's, so a
hidden tab never holds it wide; narrow, its tabs keep their icons and drop their words
(their tooltips keep them).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QDockWidget,
    QHBoxLayout,
    QMainWindow,
    QStackedWidget,
    QTabBar,
    QVBoxLayout,
    QWidget,
)

from melgui.ui.chat.call_cards import REVEAL_TICK_MS
from melgui.ui.runtime.look.icons import icon, icon_button
from melgui.ui.runtime.look.tokens import ICON_S, SPACE_XS
from melgui.ui.runtime.theme import Colors
from melgui.ui.window.side.fold import PanelFold

SLIDE_STEPS = 3  # ticks of REVEAL_TICK_MS: it slides in in about 150 ms


class SidePanel(QWidget):
    """Named pages (`add`), one shown at a time; `dock` holds the panel in the window."""

    shownChanged = Signal(bool)  # the panel came on screen (True) or went away

    def __init__(self, window: QMainWindow, colors: Colors) -> None:
        self.dock = QDockWidget("Side panel", window)
        self.dock.setObjectName("sidePanelDock")  # saveState() keys docks by name
        self.dock.setTitleBarWidget(QWidget(self.dock))  # its tabs are its header
        self.dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetClosable)
        super().__init__(self.dock)
        self.setObjectName("sidePanel")
        self._names: list[str] = []
        self._empty: dict[str, Callable[[], bool]] = {}
        self._icons: list[str] = []
        self._titles: list[str] = []
        self._worded = True  # the tabs show their words (False: icons only)
        self._widths: tuple[int, int] | None = None  # the tab bar with words, without
        self._slide: tuple[QMainWindow, int, int] | None = None  # (window, width, step)
        self._slide_timer = QTimer(self)
        self._slide_timer.setInterval(REVEAL_TICK_MS)
        self._slide_timer.timeout.connect(self._slide_step)
        self.tabs = QTabBar(self)
        self.tabs.setDrawBase(False)
        self.tabs.setExpanding(False)
        self.tabs.setUsesScrollButtons(False)  # narrow, its tabs drop their words
        self.tabs.setIconSize(QSize(ICON_S, ICON_S))
        self.colors = colors
        self.tabs.setAccessibleName("Side panel tabs")
        self.tabs.setObjectName("sidePanelTabs")  # tighter tabs (the stylesheet)
        self.fold_button = icon_button("x", "Hide the side panel", colors.muted)
        self.fold_button.setParent(self)
        self.fold_button.clicked.connect(self.fold_away)
        self.stack = QStackedWidget(self)  # pages are made in it: moved, a widget is restyled
        header = QHBoxLayout()
        header.setContentsMargins(0, 0, SPACE_XS, 0)
        header.setSpacing(0)
        header.addWidget(self.tabs, 1)
        header.addWidget(self.fold_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(header)
        layout.addWidget(self.stack, 1)
        self.tabs.currentChanged.connect(self._on_tab)
        self.dock.setWidget(self)
        self.dock.visibilityChanged.connect(self.shownChanged)
        self.toggle_action = self.dock.toggleViewAction()  # checked while it is shown
        self.toggle_action.setIcon(icon("panel-right", colors.muted))
        self.toggle_action.setToolTip("Show or hide the side panel: inspector, plans, MCP servers")
        window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.dock)
        # Its icons while folded, its place over the panes.
        self.fold = PanelFold(window, self, self.dock, colors, self.current, self.reveal)

    # --- pages --------------------------------------------------------------------------

    def add(
        self,
        name: str,
        title: str,
        icon_name: str,
        page: QWidget,
        empty: Callable[[], bool] | None = None,
        tip: str = "",
    ) -> None:
        """A tab `title` (Lucide icon `icon_name`) showing `page`; `empty()` says it has
        nothing to show (the panel folds first for panes when its shown page is empty);
        `tip`, the tab's tooltip (its title if not given)."""
        self._names.append(name)
        self._icons.append(icon_name)
        self._titles.append(title)
        self.stack.addWidget(page)
        self.tabs.addTab(icon(icon_name, self.colors.muted), title if self._worded else "")
        self.tabs.setTabToolTip(self.tabs.count() - 1, tip or title)
        self._widths = None  # measured again
        self._fit_tabs()
        self.fold.add(name, icon_name, tip or title)
        if empty is not None:
            self._empty[name] = empty

    def set_page(self, name: str, page: QWidget) -> None:
        """`page` in place of `name`'s (a new conversation's inspector); the old one goes."""
        index = self._names.index(name)
        old = self.stack.widget(index)
        self.stack.insertWidget(index, page)
        if old is not None:
            self.stack.removeWidget(old)
            old.deleteLater()
        self.stack.setCurrentIndex(self.tabs.currentIndex())

    def page(self, name: str) -> QWidget:
        page = self.stack.widget(self._names.index(name))
        assert page is not None
        return page

    def current(self) -> str:
        index = self.tabs.currentIndex()
        return self._names[index] if 0 <= index < len(self._names) else ""

    def is_empty(self) -> bool:
        """The shown page has nothing to show (an inspector without calls, no plans)."""
        empty = self._empty.get(self.current())
        return empty is not None and empty()

    # --- showing ----------------------------------------------------------------------

    def on_screen(self, name: str | None = None) -> bool:
        """The panel is shown, docked or over the panes (on `name`'s tab, if given)."""
        docked = self.dock.isVisible() and not self.dock.visibleRegion().isEmpty()
        shown = docked or (self.fold.over() and self.isVisible())
        return shown and (name is None or self.current() == name)

    def reveal(self, name: str) -> None:
        """The panel on `name`'s tab, slid in if it was folded away (or over the panes
        if docking it would squeeze them or the chat)."""
        self.tabs.setCurrentIndex(self._names.index(name))
        folded = self.dock.isHidden()
        if folded and self.fold.unfold():
            return
        self.dock.show()
        self.dock.raise_()
        if folded and self.window().isVisible():
            self._slide_in()

    def _slide_in(self) -> None:
        """From a third of its width to all of it in SLIDE_STEPS ticks (as a card unfolds)."""
        window = self.dock.parentWidget()
        layout = window.layout() if window is not None else None
        if not isinstance(window, QMainWindow) or layout is None:
            return
        layout.activate()  # the width the window gives it back
        self._slide = (window, self.dock.width(), 1)
        window.resizeDocks(
            [self.dock], [self.dock.width() // SLIDE_STEPS], Qt.Orientation.Horizontal
        )
        self._slide_timer.start()

    def sliding(self) -> bool:
        """It is sliding in now."""
        return self._slide is not None

    def _slide_step(self) -> None:
        if self._slide is None:
            self._slide_timer.stop()
            return
        window, width, step = self._slide
        step += 1
        self._slide = (window, width, step) if step < SLIDE_STEPS else None
        if self.dock.isVisible():
            window.resizeDocks(
                [self.dock], [width * step // SLIDE_STEPS], Qt.Orientation.Horizontal
            )

    def bring(self, name: str) -> None:
        """`name`'s tab in front if the panel is shown (it is not brought in for this)."""
        if self.dock.isVisible() or self.fold.over():
            self.tabs.setCurrentIndex(self._names.index(name))

    def toggle(self, name: str) -> None:
        """`name`'s tab shown, or the panel folded away if that tab is what it shows."""
        if (self.dock.isVisible() or self.fold.over()) and self.current() == name:
            self.fold_away()
        else:
            self.reveal(name)

    def fold_away(self) -> None:
        """Folded to its strip of icons (from docked or from over the panes)."""
        if self.fold.over():
            self.fold.close()
        else:
            self.dock.hide()

    def set_colors(self, colors: Colors) -> None:
        self.colors = colors
        for index, icon_name in enumerate(self._icons):
            self.tabs.setTabIcon(index, icon(icon_name, colors.muted))
        self.fold_button.setIcon(icon("x", colors.muted))
        self.toggle_action.setIcon(icon("panel-right", colors.muted))
        self.fold.strip.set_colors(colors)

    def _word_tabs(self, worded: bool) -> None:
        if worded != self._worded:
            self._worded = worded
            for index, title in enumerate(self._titles):
                self.tabs.setTabText(index, title if worded else "")
        self.tabs.updateGeometry()  # a hidden tab bar does not say its size changed

    def _fit_tabs(self) -> None:
        """Words on the tabs when they fit beside the fold button, else icons alone."""
        if self._widths is None:
            self._word_tabs(True)
            wide = self.tabs.sizeHint().width()
            self._word_tabs(False)
            self._widths = (wide, self.tabs.sizeHint().width())
        room = self.width() - self.fold_button.sizeHint().width() - SPACE_XS
        self._word_tabs(room >= self._widths[0])

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.StyleChange, QEvent.Type.FontChange):
            self._widths = None  # the tabs are measured again in the new look

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_tabs()

    def _on_tab(self, index: int) -> None:
        self.stack.setCurrentIndex(index)
        self.fold.tab_changed(self.current())
        self.updateGeometry()  # its minimum is the shown page's

    def minimumSizeHint(self) -> QSize:
        page = self.stack.currentWidget()
        inner = page.minimumSizeHint() if page is not None else QSize(0, 0)
        if self._widths is None:
            self._fit_tabs()
        assert self._widths is not None
        bar = self.tabs.sizeHint().height()
        button = self.fold_button.sizeHint()
        width = max(inner.width(), self._widths[1] + button.width() + SPACE_XS)
        return QSize(width, inner.height() + max(bar, button.height()))
