"""The diff view makes a page of hunks a slice per turn of the event loop: the first
slice at once, the rest after, and none of a file no longer shown."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from melgui.core.worktrees.changes.diff import FileChange, Hunk
from melgui.ui.changes.diff_view import PAGE, SLICE, FileDiffView
from melgui.ui.runtime.theme import LIGHT


def _file(path: str, hunks: int) -> FileChange:
    made = []
    for n in range(hunks):
        start = n * 10 + 1
        lines = (f" line {start}", f"-line {start + 1}", f"+line {start + 1} (worker)")
        made.append(Hunk(f"@@ -{start},2 +{start},2 @@", start, 2, start, 2, lines))
    return FileChange(path, path, "modified", False, (), tuple(made))


def test_a_page_is_made_a_slice_at_a_time(qtbot: QtBot) -> None:
    view = FileDiffView(LIGHT)
    qtbot.addWidget(view)
    view.show()
    view.show_file(_file("long.txt", 40))
    assert len(view.hunks) == SLICE and view.building and view.more_button is None

    qtbot.waitUntil(lambda: not view.building)
    assert [hunk.index for hunk in view.hunks] == list(range(PAGE))
    assert view.more_button is not None and "15 not shown yet" in view.more_button.text()


def test_a_file_shown_instead_stops_the_last_ones_slices(qtbot: QtBot) -> None:
    view = FileDiffView(LIGHT)
    qtbot.addWidget(view)
    view.show()
    view.show_file(_file("long.txt", 40))
    short = _file("short.txt", 7)
    view.show_file(short)

    qtbot.waitUntil(lambda: not view.building)
    qtbot.wait(50)  # the first file's next slice, had it been left to run
    assert [hunk.body.hunk for hunk in view.hunks] == list(short.hunks)
    assert all(hunk.parent() is view.widget() for hunk in view.hunks)
    assert view.more_button is None
