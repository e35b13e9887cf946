"""One file of a worker's changes: its hunks one under the other, each with its line
numbers (base and now), coloured lines (hunk_lines.py), and Apply and Discard buttons of
its own."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFontDatabase, QPalette
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from melgui.core.protocol.views.review_findings import Finding
from melgui.core.worktrees.changes.diff import FileChange, Hunk
from melgui.ui.changes.hunk_lines import HunkLines
from melgui.ui.runtime.look.tokens import SPACE_S, SPACE_XS
from melgui.ui.runtime.theme import Colors

PAGE = 25  # hunks shown at once
# A page's hunks are made SLICE at a time, a slice per turn of the event loop, the first
# at once (about a screenful): each hunk is a few widgets to make and style, and a page
# of them at once stalled the window for a frame.
SLICE = 5


class HunkView(QFrame):
    """A hunk's header, its Apply and Discard buttons, and its lines."""

    applyRequested = Signal(int)
    discardRequested = Signal(int)

    def __init__(
        self,
        index: int,
        hunk: Hunk,
        colors: Colors,
        parent: QWidget | None = None,
        *,
        whole_only: bool = False,
        actions: bool = True,
    ) -> None:
        super().__init__(parent)
        self.index = index
        self.whole_only = whole_only
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setObjectName(f"hunk-{index}")
        header = QLabel(hunk.header, self)
        header.setTextFormat(Qt.TextFormat.PlainText)
        header.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        palette = header.palette()
        palette.setColor(QPalette.ColorRole.WindowText, QColor(colors.accent))
        header.setPalette(palette)
        self.button = QPushButton("Apply hunk", self)
        self.button.setObjectName(f"apply-hunk-{index}")
        self.button.setToolTip(
            "A renamed file is applied whole: Apply file"
            if whole_only
            else "Apply only this hunk to the main folder"
        )
        self.button.setEnabled(not whole_only)
        self.button.clicked.connect(lambda: self.applyRequested.emit(self.index))
        self.discard = QPushButton("Discard hunk…", self)
        self.discard.setObjectName(f"discard-hunk-{index}")
        self.discard.setToolTip(
            "A renamed file is discarded whole: Discard file…"
            if whole_only
            else "Put these lines back as they were at the base, in the worker's worktree"
        )
        self.discard.setEnabled(not whole_only)
        self.discard.clicked.connect(lambda: self.discardRequested.emit(self.index))
        self.body = HunkLines(hunk, colors, self)
        # The button first: a long line scrolls the page sideways, the button stays in view.
        header.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        header.setToolTip(hunk.header)
        top = QHBoxLayout()
        top.addWidget(self.button)
        top.addWidget(self.discard)
        top.addWidget(header, 1)
        self.button.setVisible(actions)  # the project folder's own changes: nowhere to apply
        self.discard.setVisible(actions)
        self.comments = QLabel(self)
        self.comments.setObjectName(f"hunk-comments-{index}")
        self.comments.setTextFormat(Qt.TextFormat.RichText)
        self.comments.setWordWrap(True)
        self.comments.hide()
        self.colors = colors
        layout = QVBoxLayout(self)
        layout.setContentsMargins(SPACE_S, SPACE_XS, SPACE_S, SPACE_XS)
        layout.addLayout(top)
        layout.addWidget(self.comments)
        layout.addWidget(self.body)

    def show_comments(self, findings: list[Finding]) -> None:
        """A review's findings on this hunk, each with its severity and line."""
        color = {"error": self.colors.error, "warning": self.colors.warn, "note": self.colors.muted}
        lines = [
            f'<span style="color:{color[f.severity]}"><b>{f.severity}</b></span> '
            f"line {f.line}: {html.escape(f.text)}"
            for f in findings
        ]
        self.comments.setText("<br>".join(lines))
        self.comments.setVisible(bool(lines))

    def mark_in_main(self, in_main: bool) -> None:
        """The main folder has this hunk already: say so instead of offering it again."""
        self.button.setText("In the main folder ✓" if in_main else "Apply hunk")
        self.button.setEnabled(not in_main and not self.whole_only)


class FileDiffView(QScrollArea):
    """The shown file's hunks (or why there are none). Emits applyHunk(hunk index) and
    discardHunk(hunk index)."""

    applyHunk = Signal(int)
    discardHunk = Signal(int)

    def __init__(self, colors: Colors, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.colors = colors
        self.change: FileChange | None = None
        self.hunks: list[HunkView] = []
        self.setWidgetResizable(True)
        self.title = QLabel(self)
        self.findings: dict[str, dict[int, list[Finding]]] = {}  # a review's, by path, hunk
        self.hunk_actions = True  # each hunk's Apply and Discard (off: the changes are in place)
        self.show_file(None)

    def show_file(self, change: FileChange | None) -> None:
        self.change = change
        page = QWidget(self)
        layout = QVBoxLayout(page)
        layout.setContentsMargins(SPACE_S, SPACE_S, SPACE_S, SPACE_S)
        self.title = QLabel(page)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setWordWrap(True)
        self.title.setText(self._title(change))
        layout.addWidget(self.title)
        self.hunks = []
        self._in_main: set[int] = set()
        self._layout = layout
        self._page = page
        self.more_button: QPushButton | None = None
        self._page_end = 0
        if change is not None:
            note = _no_hunks_note(change)
            if note:
                layout.addWidget(_muted(note, self.colors, page))
        layout.addStretch(1)
        self.show_more()
        self.setWidget(page)

    def show_more(self) -> None:
        """Add the next PAGE hunks (hundreds of hunk widgets at once would stall the
        window), SLICE of them now and the rest a slice per turn of the event loop; a
        "Show more" button then offers the rest."""
        change = self.change
        if change is None:
            return
        if self.more_button is not None:
            self.more_button.deleteLater()
            self.more_button = None
        self._page_end = min(len(change.hunks), len(self.hunks) + PAGE)
        self._add_slice(self._page)

    @property
    def building(self) -> bool:
        """Hunks of the page are still being made."""
        return self.change is not None and len(self.hunks) < self._page_end

    def _add_slice(self, page: QWidget) -> None:
        change = self.change
        if page is not self._page or change is None:
            return  # another file is shown now
        start = len(self.hunks)
        end = min(self._page_end, start + SLICE)
        at = self._layout.count() - 1  # before the stretch
        for index in range(start, end):
            whole = change.status == "renamed"  # a rename is applied whole
            hunk = change.hunks[index]
            view = HunkView(
                index, hunk, self.colors, page, whole_only=whole, actions=self.hunk_actions
            )
            view.applyRequested.connect(self.applyHunk.emit)
            view.discardRequested.connect(self.discardHunk.emit)
            view.mark_in_main(index in self._in_main)
            view.show_comments(self.findings.get(change.path, {}).get(index, []))
            self.hunks.append(view)
            self._layout.insertWidget(at, view)
            at += 1
        if end < self._page_end:
            QTimer.singleShot(0, page, lambda: self._add_slice(page))
            return
        left = len(change.hunks) - end
        if left:
            more = QPushButton(f"Show {min(PAGE, left)} more hunks ({left} not shown yet)", page)
            more.setObjectName("more-hunks")
            more.clicked.connect(self.show_more)
            self._layout.insertWidget(at, more, 0, Qt.AlignmentFlag.AlignLeft)
            self.more_button = more

    def set_findings(self, findings: dict[str, dict[int, list[Finding]]]) -> None:
        self.findings = findings
        shown = self.findings.get(self.change.path, {}) if self.change is not None else {}
        for view in self.hunks:
            view.show_comments(shown.get(view.index, []))

    def mark_in_main(self, indexes: set[int]) -> None:
        self._in_main = set(indexes)
        for view in self.hunks:
            view.mark_in_main(view.index in indexes)

    def _title(self, change: FileChange | None) -> str:
        if change is None:
            return f'<span style="color:{self.colors.muted}">Choose a file on the left.</span>'
        name = html.escape(change.path)
        if change.status == "renamed":
            name = f"{html.escape(change.old_path)} → {name}"
        counts = (
            f'<span style="color:{self.colors.ok}">+{change.added}</span> '
            f'<span style="color:{self.colors.error}">−{change.removed}</span>'
        )
        extra = " · <i>not committed in the worktree</i>" if change.uncommitted else ""
        return f"<b>{name}</b> · {change.label} · {counts}{extra}"


def _no_hunks_note(change: FileChange) -> str:
    if change.binary:
        return "A binary file: no lines to show. Apply file copies it as the worker left it."
    if change.hunks:
        return ""
    if change.status == "renamed":
        return "Renamed without changing its content."
    if change.status == "added":
        return "A new empty file."
    return "Only the file's mode changed."


def _muted(text: str, colors: Colors, parent: QWidget) -> QLabel:
    label = QLabel(f'<span style="color:{colors.muted}">{html.escape(text)}</span>', parent)
    label.setWordWrap(True)
    return label
