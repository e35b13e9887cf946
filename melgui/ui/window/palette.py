"""The command palette (every action, filtered as you type) and the shortcuts sheet."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QKeyEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from melgui.ui.runtime.look.tokens import DIALOG_S, PALETTE_H, PALETTE_MIN_W, SPACE_2XL, SPACE_XL
from melgui.ui.window.menus import keys_text, menu_name, plain_text

ACTION_ROLE = Qt.ItemDataRole.UserRole


def matches(query: str, text: str) -> bool:
    """Every word of `query` appears in `text`, ignoring case."""
    lowered = text.lower()
    return all(word in lowered for word in query.lower().split())


class CommandPalette(QDialog):
    """Type to filter; Enter runs the highlighted action; Esc closes."""

    def __init__(self, actions: list[QAction], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Command palette")
        self.setAccessibleName("Command palette")
        self.actions_listed = actions
        self.query = QLineEdit(self)
        self.query.setPlaceholderText("Type a command…")
        self.query.setAccessibleName("Command to find")
        self.list = QListWidget(self)
        self.list.setAccessibleName("Commands")
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # only past the screen's width
        layout = QVBoxLayout(self)
        layout.addWidget(self.query)
        layout.addWidget(self.list)
        self.query.textChanged.connect(self._fill)
        self.query.returnPressed.connect(self.run_current)
        self.query.installEventFilter(self)
        self.list.itemActivated.connect(lambda _item: self.run_current())
        self._fill("")
        self.resize(self._width_for_every_entry(), PALETTE_H)

    def _width_for_every_entry(self) -> int:
        """Wide enough for the longest entry whole, within the window (or the screen)."""
        metrics = self.list.fontMetrics()
        widest = max(
            (
                metrics.horizontalAdvance(self.list.item(row).text())
                for row in range(self.list.count())
            ),
            default=0,
        )
        frame = 2 * self.list.frameWidth() + self.list.verticalScrollBar().sizeHint().width()
        layout = self.layout()
        margins = layout.contentsMargins().left() * 2 if layout is not None else 0
        wanted = widest + frame + margins + SPACE_XL
        host = self.parentWidget()
        screen = self.screen().availableGeometry().width()
        room = min(host.width(), screen) if host is not None else screen
        return max(PALETTE_MIN_W, min(wanted, room - SPACE_2XL))

    def _fill(self, query: str) -> None:
        self.list.clear()
        for action in self.actions_listed:
            label = plain_text(action)
            keys = keys_text(action)
            menu = menu_name(action)
            if not action.isEnabled() or not matches(query, f"{menu} {label} {keys}"):
                continue
            shown = f"{menu} › {label}" if menu else label
            item = QListWidgetItem(f"{shown}    {keys}" if keys else shown, self.list)
            item.setData(ACTION_ROLE, action)
        if self.list.count():
            self.list.setCurrentRow(0)

    def shown(self) -> list[str]:
        return [plain_text(self._action(i)) for i in range(self.list.count())]

    def _action(self, row: int) -> QAction:
        item = self.list.item(row)
        action = item.data(ACTION_ROLE) if item is not None else None
        assert isinstance(action, QAction)
        return action

    def run_current(self) -> None:
        row = self.list.currentRow()
        if row < 0:
            return
        action = self._action(row)
        self.accept()
        action.trigger()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # Up and Down move in the list while the typing stays in the query.
        if isinstance(event, QKeyEvent) and event.type() == QEvent.Type.KeyPress:
            step = {Qt.Key.Key_Down: 1, Qt.Key.Key_Up: -1}.get(Qt.Key(event.key()))
            if step is not None and self.list.count():
                row = (self.list.currentRow() + step) % self.list.count()
                self.list.setCurrentRow(row)
                return True
        return False


class ShortcutsSheet(QDialog):
    """Every action with its keys, and what the terminal panes keep for themselves."""

    def __init__(
        self, actions: list[QAction], terminal_note: str, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        rows = [(plain_text(a), keys_text(a)) for a in actions if keys_text(a)]
        self.table = QTableWidget(len(rows), 2, self)
        self.table.setAccessibleName("Keyboard shortcuts")
        self.table.setHorizontalHeaderLabels(["Command", "Keys"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for row, (label, keys) in enumerate(rows):
            self.table.setItem(row, 0, QTableWidgetItem(label))
            self.table.setItem(row, 1, QTableWidgetItem(keys))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        note = QLabel(terminal_note, self)
        note.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 1)
        layout.addWidget(note)
        layout.addWidget(buttons)
        self.resize(*DIALOG_S)
