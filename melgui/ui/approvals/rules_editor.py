"""The one place for approval rules: every scope listed, edited and removed; per-tool
defaults; the sandbox; the log of calls that ran without asking; and the rules as edited
tried on the recorded history (history_trial).

A command rule is words (`git status`, `npm run *`, `find ... -delete`); the editor shows
which past commands a rule would have allowed on its own, and which commands starting
with it are still asked (compound ones with another part, dangerous forms it does not
name). Claude Code rules found in the project can be imported as project rules.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from melgui.core.config.settings import Settings
from melgui.core.protocol.catalog import ALL_TOOLS, Mode
from melgui.core.protocol.tools.commands import SandboxStatus
from melgui.core.protocol.views.scopes import SCOPE_LABEL, SCOPES, Scope
from melgui.core.rules.claude_rules import Imported
from melgui.core.rules.policy import RulePolicy
from melgui.core.rules.rule_scopes import Rule, RuleBook
from melgui.core.rules.rule_trial import RuleTrial
from melgui.core.store.records import AllowedCall
from melgui.ui.approvals.history_trial import HistoryTrial, Recorded
from melgui.ui.runtime.aio import TaskKeeper
from melgui.ui.runtime.look.tokens import ROW_H, RULE_MATCHES_MAX_H, SPACE_XS


class PolicyEditor(QWidget):
    def __init__(
        self,
        policy: RulePolicy,
        history: list[str],
        *,
        settings: Settings | None = None,
        allowed: Sequence[AllowedCall] = (),
        importable: Sequence[Imported] = (),
        sandbox: SandboxStatus | None = None,
        problems: Sequence[str] = (),
        recorded: Recorded | None = None,
        tasks: TaskKeeper | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.policy = policy
        self._sandbox_available = sandbox is not None and sandbox.available
        self.history = history
        self.trial = RuleTrial(history, policy.project)  # each past command read once
        self.project = policy.project
        self._importable = [i for i in importable if i.rule is not None]
        tabs = QTabWidget(self)
        tabs.addTab(self._rules_tab(policy, importable), "Rules")
        tabs.addTab(self._tools_tab(policy.modes), "Tools")
        tabs.addTab(self._sandbox_tab(settings or Settings(), sandbox), "Sandbox")
        tabs.addTab(self._log_tab(allowed), "Ran without asking")
        self.history_trial: HistoryTrial | None = None
        if recorded is not None and tasks is not None:
            trial = HistoryTrial(self.draft_policy, recorded, tasks, self.adopt, parent=self)
            self.history_trial = trial
            tabs.addTab(trial, "Try on history")
        self.tabs = tabs
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(tabs)
        self._show_matches()
        if problems:
            self.message.setText(
                "Saved rules melgui cannot read (dropped when you press OK): " + "; ".join(problems)
            )

    # -- rules -------------------------------------------------------------------------

    def _rules_tab(self, policy: RulePolicy, importable: Sequence[Imported]) -> QWidget:
        tab = QWidget(self)
        self.rules = QTableWidget(0, 2, tab)
        self.rules.setHorizontalHeaderLabels(["Scope", "Rule"])
        self.rules.verticalHeader().hide()
        self.rules.horizontalHeader().setStretchLastSection(True)
        self.rules.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        for rule in policy.book:
            self._append(rule)
        self.rules.resizeColumnToContents(0)
        self.rules.itemSelectionChanged.connect(self._show_matches)
        self.rules.itemChanged.connect(self._edited)
        self.scope = QComboBox(tab)
        for scope in SCOPES:
            self.scope.addItem(SCOPE_LABEL[scope], scope)
        self.scope.setCurrentIndex(SCOPES.index("project"))
        self.rule_input = QLineEdit(tab)
        self.rule_input.setPlaceholderText(
            "allow run_command: git status · deny run_command: rm · allow write_file"
        )
        self.rule_input.textChanged.connect(self._show_matches)
        self.rule_input.returnPressed.connect(self._add_rule)
        add = QPushButton("Add", tab)
        add.clicked.connect(self._add_rule)
        remove = QPushButton("Remove", tab)
        remove.clicked.connect(self._remove_rule)
        row = QHBoxLayout()
        row.addWidget(self.scope)
        row.addWidget(self.rule_input, 1)
        row.addWidget(add)
        row.addWidget(remove)
        self.message = QLabel(tab)
        self.message.setWordWrap(True)
        self.matches = QPlainTextEdit(tab)
        self.matches.setReadOnly(True)
        self.matches.setMaximumHeight(RULE_MATCHES_MAX_H)
        layout = QVBoxLayout(tab)
        layout.addWidget(self.rules, 1)
        layout.addLayout(row)
        if importable:
            self.import_button = QPushButton(
                f"Import {len(self._importable)} Claude Code rule(s) of this project", tab
            )
            self.import_button.setEnabled(bool(self._importable))
            self.import_button.setToolTip(
                "\n".join(
                    f"{i.source} → {i.rule.text if i.rule else 'skipped: ' + i.skipped}"
                    for i in importable
                )
            )
            self.import_button.clicked.connect(self.import_claude_rules)
            layout.addWidget(self.import_button)
        layout.addWidget(self.message)
        layout.addWidget(self.matches)
        return tab

    def _append(self, rule: Rule) -> None:
        row = self.rules.rowCount()
        self.rules.blockSignals(True)
        self.rules.insertRow(row)
        scope = QTableWidgetItem(SCOPE_LABEL[rule.scope])
        scope.setData(Qt.ItemDataRole.UserRole, rule.scope)
        scope.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
        text = QTableWidgetItem(rule.text)
        text.setData(Qt.ItemDataRole.UserRole, rule.text)
        self.rules.setItem(row, 0, scope)
        self.rules.setItem(row, 1, text)
        self.rules.blockSignals(False)

    def rule_list(self, scope: Scope | None = None) -> list[Rule]:
        """The rules as edited, all or those of one scope."""
        out: list[Rule] = []
        for row in range(self.rules.rowCount()):
            rule_scope, text = self._row(row)
            if scope is None or rule_scope == scope:
                out.append(Rule.parse(text, rule_scope))
        return out

    def _row(self, row: int) -> tuple[Scope, str]:
        scope, text = self.rules.item(row, 0), self.rules.item(row, 1)
        assert scope is not None and text is not None
        return scope.data(Qt.ItemDataRole.UserRole), text.text()

    def rule_lines(self, scope: Scope) -> list[str]:
        return [rule.text for rule in self.rule_list(scope)]

    def _add_rule(self) -> None:
        scope: Scope = self.scope.currentData()
        text = self.rule_input.text().strip()
        if not text:
            return
        if not text.startswith(("allow ", "deny ")):
            text = f"allow run_command: {text}"  # a bare command is an allow rule
        try:
            rule = Rule.parse(text, scope)
        except ValueError as exc:
            self.message.setText(f"Not added: {exc}")
            return
        if rule in self.rule_list():
            self.message.setText(f"“{rule.text}” is already there for {SCOPE_LABEL[scope]}.")
            return
        self._append(rule)
        self.rule_input.clear()
        self.rules.selectRow(self.rules.rowCount() - 1)

    def adopt(self, rule: Rule) -> bool:
        """A rule proposed by the trial on the history joins the draft; False when there."""
        if rule in self.rule_list():
            return False
        self._append(rule)
        return True

    def draft_policy(self) -> RulePolicy:
        """The policy as edited here, not yet saved: what "Try on history" replays."""
        book = RuleBook(
            self.rule_list("conversation"), self.rule_list("project"), self.rule_list("everywhere")
        )
        values = self.sandbox_values()
        sandboxed = values["sandbox_commands"] and self._sandbox_available
        unasked = sandboxed and values["sandbox_without_asking"]
        return replace(
            self.policy,
            modes=dict(self.modes()),
            book=book,
            sandbox_on=lambda: sandboxed,
            sandbox_answers=lambda: unasked,
            on_saved_change=None,
        )

    def _remove_rule(self) -> None:
        row = self.rules.currentRow()
        if row >= 0:
            self.rules.removeRow(row)
            self._show_matches()

    def _edited(self, item: QTableWidgetItem) -> None:
        if item.column() != 1:
            return
        scope, _ = self._row(item.row())
        try:
            rule = Rule.parse(item.text(), scope)
        except ValueError as exc:
            self.message.setText(f"Not changed: {exc}")
            self.rules.blockSignals(True)
            item.setText(item.data(Qt.ItemDataRole.UserRole))
            self.rules.blockSignals(False)
            return
        self.rules.blockSignals(True)
        item.setText(rule.text)
        item.setData(Qt.ItemDataRole.UserRole, rule.text)
        self.rules.blockSignals(False)
        self._show_matches()

    def import_claude_rules(self) -> None:
        present = self.rule_list()
        added = 0
        for found in self._importable:
            if found.rule is not None and found.rule not in present:
                self._append(found.rule)
                present.append(found.rule)
                added += 1
        self.message.setText(f"Imported {added} Claude Code rule(s) as project rules.")

    def _show_matches(self) -> None:
        rule = self._typed_or_selected()
        if rule is None or rule.command is None:
            self.matches.clear()
            if not self.message.text().startswith(("Not", "Imported", "Saved rules")):
                self.message.setText(
                    f"Pick or type a command rule to see which of the {len(self.history)} "
                    "past commands it would have decided on its own."
                )
            return
        matched = self.trial.matched(rule)
        lead = rule.command.words[0]
        asked = [c for c in self.history if c not in matched and c.lstrip().startswith(lead)]
        verb = "allowed" if rule.effect == "allow" else "denied"
        text = f"“{rule.pattern}” would have {verb} {len(matched)} of {len(self.history)} "
        text += "past commands"
        lines = [f"✓ {c}" if rule.effect == "allow" else f"⊘ {c}" for c in matched]
        if asked and rule.effect == "allow":
            text += f"; {len(asked)} starting with “{lead}” would still be asked"
            for command in asked:
                asked_parts = self.trial.asked(rule, command)
                why = "; ".join(f"{' '.join(text.split())}: {r}" for text, r in asked_parts)
                lines.append(f"◆ {command}\n    asked: {why}")
        self.message.setText(text + ":")
        self.matches.setPlainText("\n".join(lines))

    def _typed_or_selected(self) -> Rule | None:
        text = self.rule_input.text().strip()
        if text:
            line = text if text.startswith(("allow ", "deny ")) else f"allow run_command: {text}"
            try:
                return Rule.parse(line)
            except ValueError:
                return None
        row = self.rules.currentRow()
        if row < 0:
            return None
        try:
            return Rule.parse(self._row(row)[1])
        except ValueError:
            return None

    # -- tools, sandbox, log -----------------------------------------------------------

    def _tools_tab(self, modes: dict[str, Mode]) -> QWidget:
        self.table = QTableWidget(len(ALL_TOOLS), 2, self)
        self.table.setHorizontalHeaderLabels(["Tool", "When no rule decides"])
        self.table.verticalHeader().hide()
        self._boxes: dict[str, QComboBox] = {}
        for row, name in enumerate(ALL_TOOLS):
            item = QTableWidgetItem(name)
            item.setFlags(Qt.ItemFlag.ItemIsEnabled)
            self.table.setItem(row, 0, item)
            box = QComboBox(self.table)
            box.addItem("ask me", "ask")
            box.addItem("run without asking", "auto")
            box.setCurrentIndex(0 if modes.get(name, "ask") == "ask" else 1)
            self.table.setCellWidget(row, 1, box)
            self._boxes[name] = box
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setStretchLastSection(True)
        # At least eight tools in view (Settings showed three rows).
        rows = self.table.verticalHeader().defaultSectionSize()
        header = self.table.horizontalHeader().sizeHint().height()
        self.table.setMinimumHeight(rows * ROW_H + header + 2 * self.table.frameWidth() + SPACE_XS)
        return self.table

    def modes(self) -> dict[str, Mode]:
        return {
            name: "auto" if box.currentData() == "auto" else "ask"
            for name, box in self._boxes.items()
        }

    def _sandbox_tab(self, settings: Settings, status: SandboxStatus | None) -> QWidget:
        tab = QWidget(self)
        self.sandbox = QCheckBox("Run commands in a sandbox (bubblewrap)", tab)
        self.sandbox_network = QCheckBox("Let sandboxed commands use the network", tab)
        self.sandbox_unasked = QCheckBox(
            "Run commands no rule covers without asking, since the sandbox contains them", tab
        )
        self.sandbox.setChecked(settings.sandbox_commands)
        self.sandbox_network.setChecked(settings.sandbox_network)
        self.sandbox_unasked.setChecked(settings.sandbox_without_asking)
        available = status is not None and status.available
        self.sandbox_status = QLabel(tab)
        self.sandbox_status.setWordWrap(True)
        if available:
            assert status is not None
            self.sandbox_status.setText(
                f"Available ({status.message}). Inside it only the project is writable, the "
                "rest of the file system is read-only, melgui's settings, history and keys, "
                "the keyring and the session bus are hidden, and there is no network unless "
                "allowed (with the network, abstract sockets of this machine are reachable)."
            )
        else:
            why = status.message if status is not None else "not checked"
            self.sandbox_status.setText(f"Not available here: {why}. Commands run unsandboxed.")
            self.sandbox.setEnabled(settings.sandbox_commands)  # only to turn it off
        layout = QVBoxLayout(tab)
        for widget in (self.sandbox, self.sandbox_network, self.sandbox_unasked):
            layout.addWidget(widget)
        layout.addWidget(self.sandbox_status)
        layout.addStretch(1)
        return tab

    def sandbox_values(self) -> dict[str, bool]:
        return {
            "sandbox_commands": self.sandbox.isChecked(),
            "sandbox_network": self.sandbox_network.isChecked(),
            "sandbox_without_asking": self.sandbox_unasked.isChecked(),
        }

    def _log_tab(self, allowed: Sequence[AllowedCall]) -> QWidget:
        self.log = QPlainTextEdit(self)
        self.log.setReadOnly(True)
        lines = [f"{c.name} {_argument_text(c.arguments)}\n    ← {c.rule or 'tool setting'}"
                 for c in allowed]  # fmt: skip
        self.log.setPlainText("\n".join(lines) or "No call has run without asking yet.")
        return self.log


def _argument_text(arguments: str, limit: int = 90) -> str:
    try:
        data = json.loads(arguments)
    except ValueError:
        data = None
    text = data.get("command") or data.get("path") if isinstance(data, dict) else None
    text = str(text) if text else arguments
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
