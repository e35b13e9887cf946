"""The approval policy editor: auto/ask per tool, saved tools, run_command prefix rules.

A prefix rule matches a command word by word, and only a single simple command: one
joined with &&, ;, |, $(…), backticks or redirection is asked again. The editor shows
which past commands a rule would have allowed.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from melgui.core.agent.policy import commands_matched, is_simple_command
from melgui.core.protocol.catalog import ALL_TOOLS, Mode


class PolicyEditor(QWidget):
    def __init__(
        self,
        modes: dict[str, Mode],
        saved_tools: list[str],
        prefixes: list[str],
        history: list[str],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.history = history
        self.table = QTableWidget(len(ALL_TOOLS), 3, self)
        self.table.setHorizontalHeaderLabels(["Tool", "When called", "Always allowed"])
        self.table.verticalHeader().hide()
        self._boxes: dict[str, QComboBox] = {}
        self._saved: dict[str, QTableWidgetItem] = {}
        for row, name in enumerate(ALL_TOOLS):
            self.table.setItem(row, 0, _readonly(name))
            box = QComboBox(self.table)
            box.addItem("ask me", "ask")
            box.addItem("run without asking", "auto")
            box.setCurrentIndex(0 if modes.get(name, "ask") == "ask" else 1)
            self.table.setCellWidget(row, 1, box)
            self._boxes[name] = box
            saved = _readonly("")
            saved.setFlags(Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEnabled)
            saved.setCheckState(
                Qt.CheckState.Checked if name in saved_tools else Qt.CheckState.Unchecked
            )
            self.table.setItem(row, 2, saved)
            self._saved[name] = saved
        self.table.resizeColumnsToContents()
        self.rules = QListWidget(self)
        self.rules.addItems(prefixes)
        self.rule_input = QLineEdit(self)
        self.rule_input.setPlaceholderText("e.g. git status, pytest, npm test")
        add = QPushButton("Add rule", self)
        remove = QPushButton("Remove", self)
        add.clicked.connect(self._add_rule)
        self.rule_input.returnPressed.connect(self._add_rule)
        remove.clicked.connect(self._remove_rule)
        self.matches_label = QLabel(self)
        self.matches_label.setWordWrap(True)
        self.matches = QPlainTextEdit(self)
        self.matches.setReadOnly(True)
        self.matches.setMaximumHeight(110)
        self.rules.currentTextChanged.connect(self._show_matches)
        self.rule_input.textChanged.connect(self._show_matches)
        buttons = QHBoxLayout()
        buttons.addWidget(self.rule_input, 1)
        buttons.addWidget(add)
        buttons.addWidget(remove)
        rules_box = QGroupBox("run_command: always allow commands starting with", self)
        rules_layout = QVBoxLayout(rules_box)
        rules_layout.addWidget(self.rules)
        rules_layout.addLayout(buttons)
        rules_layout.addWidget(self.matches_label)
        rules_layout.addWidget(self.matches)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 3)
        layout.addWidget(rules_box, 2)
        self._show_matches("")

    def modes(self) -> dict[str, Mode]:
        return {
            name: "auto" if box.currentData() == "auto" else "ask"
            for name, box in self._boxes.items()
        }

    def saved_tools(self) -> list[str]:
        return sorted(
            name for name, item in self._saved.items() if item.checkState() == Qt.CheckState.Checked
        )

    def prefixes(self) -> list[str]:
        return [self.rules.item(i).text() for i in range(self.rules.count())]

    def _add_rule(self) -> None:
        prefix = " ".join(self.rule_input.text().split())
        if not prefix or prefix in self.prefixes():
            return
        if not is_simple_command(prefix):
            self.matches_label.setText(
                "A rule must be a plain command prefix (no &&, ;, |, $(…), backticks or <, >)."
            )
            return
        self.rules.addItem(prefix)
        self.rule_input.clear()
        self.rules.setCurrentRow(self.rules.count() - 1)

    def _remove_rule(self) -> None:
        row = self.rules.currentRow()
        if row >= 0:
            self.rules.takeItem(row)

    def _show_matches(self, _text: str) -> None:
        prefix = self.rule_input.text().strip()
        if not prefix and self.rules.currentItem() is not None:
            prefix = self.rules.currentItem().text()
        if not prefix:
            self.matches_label.setText(
                f"Pick or type a rule to see which of the {len(self.history)} past commands "
                "of this conversation it would have allowed."
            )
            self.matches.clear()
            return
        matched = commands_matched(prefix, self.history)
        asked = [c for c in self.history if c not in matched and c.strip().startswith(prefix)]
        text = f"“{prefix}” would have allowed {len(matched)} of {len(self.history)} past commands"
        if asked:
            text += f"; {len(asked)} compound command(s) starting with it would still be asked"
        self.matches_label.setText(text + ":")
        self.matches.setPlainText("\n".join(matched))


def _readonly(text: str) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    item.setFlags(Qt.ItemFlag.ItemIsEnabled)
    return item
