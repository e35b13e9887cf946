"""Settings → Approval → Try on history: the rules as edited (not yet saved) replayed on
the calls melgui recorded, side by side with what happened, and the rules that would have
removed the prompts a person always approved, adopted only with a click.

The replay runs in a worker thread (the shell parser keeps one parser per thread); the
recorded calls are read from the store first, on the GUI thread, which owns it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from melgui.core.protocol.calls import summarize
from melgui.core.protocol.judgement import Judgement
from melgui.core.rules.policy import RulePolicy
from melgui.core.rules.rule_scopes import Rule
from melgui.core.rules.rule_trial.proposal import Proposal, propose
from melgui.core.rules.rule_trial.replay import Replay, Replayed, arguments_of, replay
from melgui.core.store.records import RecordedCall
from melgui.ui.runtime.aio import TaskKeeper
from melgui.ui.runtime.look.tokens import SPACE_XS
from melgui.ui.runtime.theme import LIGHT, Colors

Recorded = Callable[[int | None], Sequence[RecordedCall]]  # the last N conversations' calls
SPANS: tuple[tuple[str, int | None], ...] = (
    ("the last 10 conversations", 10),
    ("the last 50 conversations", 50),
    ("the last 200 conversations", 200),
    ("every conversation", None),
)
SHOWN = 300  # calls listed per group; the count says how many there are
RULE = Qt.ItemDataRole.UserRole


@dataclass(frozen=True)
class Trial:
    done: Replay
    proposals: tuple[Proposal, ...]
    seconds: float


def run_trial(calls: Sequence[RecordedCall], draft: RulePolicy) -> Trial:
    started = time.monotonic()
    done = replay(calls, draft)
    proposals = tuple(propose(done, draft))
    return Trial(done, proposals, time.monotonic() - started)


def call_text(replayed: Replayed) -> str:
    call = replayed.call
    return f"{call.name} {summarize(call.name, arguments_of(call), 90)}".strip()


def then_text(replayed: Replayed) -> str:
    words = {
        "ran": "ran without asking",
        "approved": "asked, approved",
        "denied": "asked, denied",
        "denied by rule": "denied by a rule",
    }[replayed.then]
    return words + ("; a hook changed it" if replayed.edited else "")


def now_text(judgement: Judgement) -> str:
    verb = {"allow": "allowed", "deny": "denied", "ask": "asked"}[judgement.verdict]
    return f"{verb}: {judgement.reason}" if judgement.reason else verb


class HistoryTrial(QWidget):
    """`draft()` gives the rules as the editor holds them now; `adopt(rule)` puts a
    proposed rule among them (False when it is there already)."""

    finished = Signal()  # a trial's results are shown

    def __init__(
        self,
        draft: Callable[[], RulePolicy],
        recorded: Recorded,
        tasks: TaskKeeper,
        adopt: Callable[[Rule], bool],
        colors: Colors = LIGHT,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.draft = draft
        self.recorded = recorded
        self.tasks = tasks
        self.adopt = adopt
        self.colors = colors
        self.trial: Trial | None = None
        intro = QLabel(
            "Try the rules of the Rules tab, as edited and not yet saved, on the calls "
            "melgui recorded: what the draft would have asked, allowed or denied, beside "
            "what happened.",
            self,
        )
        intro.setWordWrap(True)
        self.span = QComboBox(self)
        for label, count in SPANS:
            self.span.addItem(label, count)
        self.try_button = QPushButton("Try on history", self)
        self.try_button.clicked.connect(self.start)
        self.status = QLabel("", self)
        self.status.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(QLabel("Replay", self))
        row.addWidget(self.span)
        row.addWidget(self.try_button)
        row.addWidget(self.status, 1)
        self.table = QTableWidget(4, 3, self)
        self.table.setHorizontalHeaderLabels(["", "Back then", "With this draft"])
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QTableWidget.SelectionMode.NoSelection)
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        rows = self.table.verticalHeader().defaultSectionSize()
        self.table.setFixedHeight(
            rows * 4 + self.table.horizontalHeader().sizeHint().height() + SPACE_XS
        )
        self.headline = QLabel("", self)
        self.headline.setWordWrap(True)
        bold = QFont(self.headline.font())
        bold.setBold(True)
        self.headline.setFont(bold)
        self.tree = QTreeWidget(self)
        self.tree.setHeaderLabels(["Call", "Back then → with this draft"])
        self.tree.setColumnWidth(0, 330)
        self.adopt_button = QPushButton("Adopt the checked rules", self)
        self.adopt_button.setEnabled(False)
        self.adopt_button.clicked.connect(self.adopt_checked)
        self.tree.itemChanged.connect(self._checked_changed)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(row)
        layout.addWidget(self.table)
        layout.addWidget(self.headline)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.adopt_button, 0, Qt.AlignmentFlag.AlignRight)

    # -- running -----------------------------------------------------------------------

    def start(self) -> None:
        count = self.span.currentData()
        try:
            calls = list(self.recorded(count))
        except Exception as exc:  # the store's trouble, said plainly; nothing else stops
            self.status.setText(f"Cannot read the recorded calls: {exc}")
            return
        self.try_button.setEnabled(False)
        self.status.setText(f"Replaying {len(calls):,} recorded calls…")
        self.tasks.spawn(self._run(calls, self.draft()), what="trying the rules on the history")

    async def _run(self, calls: list[RecordedCall], draft: RulePolicy) -> None:
        try:
            trial = await asyncio.to_thread(run_trial, calls, draft)
        finally:
            self.try_button.setEnabled(True)
        self.show_trial(trial)

    # -- showing -----------------------------------------------------------------------

    def show_trial(self, trial: Trial) -> None:
        self.trial = trial
        done = trial.done
        calls = done.calls
        conversations = len({r.call.conversation_id for r in calls})
        self.status.setText(
            f"{len(calls):,} calls of {conversations} conversations, in {trial.seconds:.2f} s."
        )
        self._fill_table(done)
        removed, asked = len(done.removed_prompts), sum(r.was_asked for r in calls)
        let_run = done.let_run_denied + [
            r for r in done.let_run_edited if not r.then.startswith("denied")
        ]
        self.headline.setText(
            f"This draft would have removed {removed} of {asked} prompts; it would let "
            f"{len(let_run)} call(s) run that were denied or edited back then, and deny "
            f"{len(done.now_denied)} that ran."
        )
        self.tree.blockSignals(True)
        self.tree.clear()
        self._group("Prompts it removes", done.removed_prompts, self.colors.ok)
        self._group("It would let run: denied or edited back then", let_run, self.colors.warn)
        self._group("It would now deny: they ran back then", done.now_denied, self.colors.error)
        self._proposals(trial.proposals, done)
        self.tree.blockSignals(False)
        self.adopt_button.setEnabled(False)
        self.finished.emit()

    def _fill_table(self, done: Replay) -> None:
        calls = done.calls
        by_rule = sum(r.then == "denied by rule" for r in calls)
        then = {
            "Asked a person": sum(r.was_asked for r in calls),
            "Ran without asking": sum(r.then == "ran" for r in calls),
            "Denied": sum(r.then.startswith("denied") for r in calls),
            "Changed by a hook": sum(r.edited for r in calls),
        }
        now = {
            "Asked a person": sum(r.now.asks for r in calls),
            "Ran without asking": sum(r.now.verdict == "allow" for r in calls),
            "Denied": sum(r.now.verdict == "deny" for r in calls),
            "Changed by a hook": None,
        }
        for row, (label, count) in enumerate(then.items()):
            shown = f"{count:,}" + (
                f" ({by_rule} by a rule)" if label == "Denied" and by_rule else ""
            )
            later = now[label]
            cells = (label, shown, "—" if later is None else f"{later:,}")
            for column, text in enumerate(cells):
                self.table.setItem(row, column, QTableWidgetItem(text))
        self.table.resizeColumnToContents(0)

    def _group(self, title: str, calls: Sequence[Replayed], color: str) -> QTreeWidgetItem:
        group = QTreeWidgetItem(self.tree, [f"{title} ({len(calls):,})"])
        group.setForeground(0, QBrush(QColor(color)))
        for replayed in calls[:SHOWN]:
            text = f"{then_text(replayed)} → {now_text(replayed.now)}"
            item = QTreeWidgetItem(group, [call_text(replayed), text])
            item.setToolTip(1, text)
        if len(calls) > SHOWN:
            QTreeWidgetItem(group, [f"… and {len(calls) - SHOWN:,} more"])
        return group

    def _proposals(self, proposals: Sequence[Proposal], done: Replay) -> None:
        always = sum(r.then == "approved" and r.now.asks for r in done.calls)
        covered = len({id(c) for p in proposals for c in p.covers})
        group = QTreeWidgetItem(
            self.tree,
            [
                f"Proposed rules ({len(proposals)}): they remove {covered} of the {always} "
                "prompts you approved, and none covers a call that was denied",
            ],
        )
        group.setFirstColumnSpanned(True)
        group.setExpanded(True)
        for proposal in proposals[:SHOWN]:
            rule = proposal.rule
            count = len(proposal.covers)
            item = QTreeWidgetItem(group, [rule.text, f"covers {count} prompt(s) you approved"])
            item.setData(0, RULE, rule)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(0, Qt.CheckState.Unchecked)
            for replayed in proposal.covers[:SHOWN]:
                QTreeWidgetItem(item, [call_text(replayed), then_text(replayed)])

    # -- adopting ----------------------------------------------------------------------

    def proposal_items(self) -> list[QTreeWidgetItem]:
        found: list[QTreeWidgetItem] = []
        for index in range(self.tree.topLevelItemCount()):
            group = self.tree.topLevelItem(index)
            assert group is not None
            for child in range(group.childCount()):
                item = group.child(child)
                if item is not None and isinstance(item.data(0, RULE), Rule):
                    found.append(item)
        return found

    def _checked_changed(self, _item: QTreeWidgetItem, _column: int) -> None:
        checked = [i for i in self.proposal_items() if i.checkState(0) == Qt.CheckState.Checked]
        self.adopt_button.setEnabled(bool(checked))

    def adopt_checked(self) -> None:
        adopted: list[str] = []
        self.tree.blockSignals(True)
        for item in self.proposal_items():
            if item.checkState(0) != Qt.CheckState.Checked:
                continue
            rule: Rule = item.data(0, RULE)
            if self.adopt(rule):
                adopted.append(rule.text)
            item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsUserCheckable)
            item.setData(0, Qt.ItemDataRole.CheckStateRole, None)
            item.setText(1, "adopted: in the Rules tab (saved with OK)")
        self.tree.blockSignals(False)
        self.adopt_button.setEnabled(False)
        self.status.setText(
            f"Adopted {len(adopted)} rule(s) as everywhere rules; try again to see the draft "
            "with them."
        )
