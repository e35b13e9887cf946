"""One file of a worker's changes: its hunks one under the other, each with its line
numbers (base and now), coloured lines, and an Apply button of its own."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
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

from melgui.core.worktrees.changes_diff import FileChange, Hunk
from melgui.ui.theme import Colors

MAX_HUNK_LINES = 1500  # a longer hunk shows its start; Apply still applies all of it
_TINTS = {"light": ("#e6ffec", "#ffebe9"), "dark": ("#12361f", "#4a1c1c")}


def hunk_html(hunk: Hunk, colors: Colors) -> str:
    """The hunk as a <pre>: base and new line numbers, then the line, coloured."""
    added_bg, removed_bg = _TINTS.get(colors.name, _TINTS["light"])
    old, new = hunk.old_start, hunk.new_start
    rows: list[str] = []
    for line in hunk.lines[:MAX_HUNK_LINES]:
        tag, text = line[:1], html.escape(line) or " "
        if tag == "+":
            numbers, style = f"{'':>5} {new:>5}", f"color:{colors.ok}; background-color:{added_bg}"
            new += 1
        elif tag == "-":
            numbers = f"{old:>5} {'':>5}"
            style = f"color:{colors.error}; background-color:{removed_bg}"
            old += 1
        elif tag == "\\":
            numbers, style = " " * 11, f"color:{colors.muted}"
        else:
            numbers, style = f"{old:>5} {new:>5}", ""
            old, new = old + 1, new + 1
        number = f'<span style="color:{colors.muted}">{numbers}</span>'
        rows.append(f'{number}  <span style="{style}">{text}</span>')
    if len(hunk.lines) > MAX_HUNK_LINES:
        more = len(hunk.lines) - MAX_HUNK_LINES
        rows.append(f'<span style="color:{colors.muted}">… {more:,} more lines</span>')
    body = "\n".join(rows)
    return f'<pre style="font-family:monospace; margin:0">{body}</pre>'


class HunkView(QFrame):
    """A hunk's header, its Apply button, and its lines."""

    applyRequested = Signal(int)

    def __init__(
        self,
        index: int,
        hunk: Hunk,
        colors: Colors,
        parent: QWidget | None = None,
        *,
        whole_only: bool = False,
    ) -> None:
        super().__init__(parent)
        self.index = index
        self.whole_only = whole_only
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setObjectName(f"hunk-{index}")
        header = QLabel(
            f'<span style="color:{colors.accent}; font-family:monospace">'
            f"{html.escape(hunk.header)}</span>",
            self,
        )
        header.setTextFormat(Qt.TextFormat.RichText)
        self.button = QPushButton("Apply hunk", self)
        self.button.setObjectName(f"apply-hunk-{index}")
        self.button.setToolTip(
            "A renamed file is applied whole: Apply file"
            if whole_only
            else "Apply only this hunk to the main folder"
        )
        self.button.setEnabled(not whole_only)
        self.button.clicked.connect(lambda: self.applyRequested.emit(self.index))
        self.body = QLabel(hunk_html(hunk, colors), self)
        self.body.setTextFormat(Qt.TextFormat.RichText)
        self.body.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.body.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        # The button first: a long line scrolls the page sideways, the button stays in view.
        header.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        header.setToolTip(hunk.header)
        top = QHBoxLayout()
        top.addWidget(self.button)
        top.addWidget(header, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.addLayout(top)
        layout.addWidget(self.body)

    def mark_in_main(self, in_main: bool) -> None:
        """The main folder has this hunk already: say so instead of offering it again."""
        self.button.setText("In the main folder ✓" if in_main else "Apply hunk")
        self.button.setEnabled(not in_main and not self.whole_only)


class FileDiffView(QScrollArea):
    """The shown file's hunks (or why there are none). Emits applyHunk(hunk index)."""

    applyHunk = Signal(int)

    def __init__(self, colors: Colors, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.colors = colors
        self.change: FileChange | None = None
        self.hunks: list[HunkView] = []
        self.setWidgetResizable(True)
        self.title = QLabel(self)
        self.show_file(None)

    def show_file(self, change: FileChange | None) -> None:
        self.change = change
        page = QWidget(self)
        layout = QVBoxLayout(page)
        layout.setContentsMargins(6, 6, 6, 6)
        self.title = QLabel(page)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setWordWrap(True)
        self.title.setText(self._title(change))
        layout.addWidget(self.title)
        self.hunks = []
        if change is not None:
            note = _no_hunks_note(change)
            if note:
                layout.addWidget(_muted(note, self.colors, page))
            for index, hunk in enumerate(change.hunks):
                whole = change.status == "renamed"  # a rename is applied whole
                view = HunkView(index, hunk, self.colors, page, whole_only=whole)
                view.applyRequested.connect(self.applyHunk.emit)
                self.hunks.append(view)
                layout.addWidget(view)
        layout.addStretch(1)
        self.setWidget(page)

    def mark_in_main(self, indexes: set[int]) -> None:
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
