"""The Changes view on real worktrees: apply a hunk by clicking, merge the person's edits
back over an apply on request, merge after an apply, merge with a conflict shown and
aborted, discard a hunk, a file or everything, and the worker pane's Changes button."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from melgui.core.terminal.panes import IDLE, PaneInfo
from melgui.ui.changes.actions import ABORT, COMMIT, DISCARD, MERGE, STASH
from melgui.ui.changes.diff_view import PAGE, SLICE
from melgui.ui.changes.questions import Question
from melgui.ui.changes.view import ChangesView, open_changes
from melgui.ui.panes.pane_frame import PaneFrame
from melgui.ui.runtime.theme import LIGHT
from tests.fakes.window import Runner, wait_until
from tests.fakes.worktree_repos import (
    NUMBERED,
    make_repo_with_worktree,
    run_git,
    use_test_identity,
    worker_edits,
)


@pytest.fixture(autouse=True)
def _identity(monkeypatch: pytest.MonkeyPatch) -> None:
    use_test_identity(monkeypatch)


def _choose_file(view: ChangesView, path: str) -> None:
    for row in range(view.files.topLevelItemCount()):
        item = view.files.topLevelItem(row)
        if item is not None and item.text(1) == path:
            view.files.setCurrentItem(item)
            return
    raise AssertionError(f"{path} is not listed")


def _show(run: Runner[Any], view: ChangesView, path: str) -> None:
    _choose_file(view, path)
    run(wait_until(lambda: view.idle and not view.diff.building))


async def _answer(view: ChangesView, label: str) -> None:
    await wait_until(lambda: view.question is not None and view.question.isVisible())
    question = view.question
    assert isinstance(question, Question)
    question.click(label)


def test_apply_one_hunk_by_clicking(qtbot: QtBot, run: Runner[Any], tmp_path: Path) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    worker_edits(worktree)
    view = open_changes(None, worktree, LIGHT)
    qtbot.addWidget(view)
    run(wait_until(lambda: view.changes is not None and view.idle))

    assert [view.commits.topLevelItem(0).text(1)] == ["worker: add a note"]  # type: ignore[union-attr]
    listed = [view.files.topLevelItem(row).text(1) for row in range(3)]  # type: ignore[union-attr]
    assert sorted(listed) == ["added.py", "notes.md", "numbers.txt"]
    _show(run, view, "numbers.txt")
    assert len(view.diff.hunks) == 2
    assert "+line 12 (worker)" in view.diff.hunks[1].body.text()

    qtbot.mouseClick(view.diff.hunks[1].button, Qt.MouseButton.LeftButton)
    run(wait_until(lambda: view.idle and "Applied" in view.status.text()))

    lines = NUMBERED.splitlines(keepends=True)
    lines[11] = "line 12 (worker)\n"
    assert (worktree.main / "numbers.txt").read_text() == "".join(lines)
    # Read again: the applied hunk is marked, the other still offered.
    run(wait_until(lambda: view.idle and not view.diff.hunks[1].button.isEnabled()))
    assert view.diff.hunks[1].button.text() == "In the main folder ✓"
    assert view.diff.hunks[0].button.isEnabled()


def test_a_dirty_main_folder_asks_and_merges_the_persons_edits_back(
    qtbot: QtBot, run: Runner[Any], tmp_path: Path
) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    worker_edits(worktree)
    mine = NUMBERED.replace("line 10\n", "line 10 (mine)\n")  # in the worker's hunk's context
    (worktree.main / "numbers.txt").write_text(mine)
    view = open_changes(None, worktree, LIGHT)
    qtbot.addWidget(view)
    run(wait_until(lambda: view.changes is not None and view.idle))
    _show(run, view, "numbers.txt")

    view.apply_file_button.click()
    run(_answer(view, "Cancel"))
    run(wait_until(lambda: view.idle))
    assert "overlaps your uncommitted edits to numbers.txt" in view.status.text()
    assert (worktree.main / "numbers.txt").read_text() == mine

    view.apply_file_button.click()
    run(_answer(view, STASH))
    run(wait_until(lambda: view.idle and "Applied" in view.status.text()))
    text = (worktree.main / "numbers.txt").read_text()
    assert text.startswith("line 1 (worker)\n") and "line 10 (mine)\n" in text
    assert text.endswith("line 12 (worker)\n")
    assert run_git(worktree.main, "stash", "list") == ""  # nothing left behind in a stash


def test_merge_after_applying_a_hunk_asks_once_and_merges(
    qtbot: QtBot, run: Runner[Any], tmp_path: Path
) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    lines = NUMBERED.splitlines(keepends=True)
    lines[0], lines[11] = "line 1 (worker)\n", "line 12 (worker)\n"
    (worktree.path / "numbers.txt").write_text("".join(lines))  # uncommitted, no commits
    view = open_changes(None, worktree, LIGHT)
    qtbot.addWidget(view)
    run(wait_until(lambda: view.changes is not None and view.idle))
    _show(run, view, "numbers.txt")
    qtbot.mouseClick(view.diff.hunks[1].button, Qt.MouseButton.LeftButton)
    run(wait_until(lambda: view.idle and "Applied" in view.status.text()))

    view.merge_button.click()
    run(wait_until(lambda: view.question is not None and view.question.isVisible()))
    assert view.question is not None
    asked = view.question.text()
    assert "0 commits" not in asked and "uncommitted edits to 1 file" in asked
    assert "The worker's uncommitted edits to numbers.txt" in asked  # the commit's message
    run(_answer(view, COMMIT))
    run(wait_until(lambda: view.idle and "Merged" in view.status.text()))
    assert (worktree.main / "numbers.txt").read_text() == "".join(lines)
    assert run_git(worktree.main, "status", "--porcelain") == ""


def test_merge_conflict_shown_then_aborted(qtbot: QtBot, run: Runner[Any], tmp_path: Path) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    (worktree.path / "notes.md").write_text("# notes\n\nthe worker's line\n")
    run_git(worktree.path, "commit", "-q", "-am", "worker notes")
    (worktree.main / "notes.md").write_text("# notes\n\nthe person's line\n")
    run_git(worktree.main, "commit", "-q", "-am", "person notes")
    view = open_changes(None, worktree, LIGHT)
    qtbot.addWidget(view)
    run(wait_until(lambda: view.changes is not None and view.idle))

    view.merge_button.click()
    run(_answer(view, MERGE))
    run(wait_until(lambda: view.idle and view.conflict_box.isVisible()))

    assert "notes.md" in view.conflict_label.text()
    assert "stopped with conflicts in 1 file" in view.status.text()
    assert "<<<<<<<" in (worktree.main / "notes.md").read_text()
    assert not view.merge_button.isEnabled()

    view.abort_button.click()
    run(_answer(view, ABORT))
    run(wait_until(lambda: view.idle and not view.conflict_box.isVisible()))
    assert (worktree.main / "notes.md").read_text() == "# notes\n\nthe person's line\n"


def test_discard_after_confirmation(qtbot: QtBot, run: Runner[Any], tmp_path: Path) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    worker_edits(worktree)
    view = open_changes(None, worktree, LIGHT)
    qtbot.addWidget(view)
    run(wait_until(lambda: view.changes is not None and view.idle))

    view.discard_button.click()
    run(_answer(view, DISCARD))
    run(wait_until(lambda: view.idle and view.files.topLevelItemCount() == 0))

    assert "back at its base" in view.status.text()
    assert not (worktree.path / "added.py").exists()
    assert not view.discard_button.isEnabled()


def test_discard_one_hunk_then_a_new_file_each_after_asking(
    qtbot: QtBot, run: Runner[Any], tmp_path: Path
) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    worker_edits(worktree)
    main_before = {p: (worktree.main / p).read_bytes() for p in ("numbers.txt", "notes.md")}
    view = open_changes(None, worktree, LIGHT)
    qtbot.addWidget(view)
    run(wait_until(lambda: view.changes is not None and view.idle))
    _show(run, view, "numbers.txt")
    worker_file = (worktree.path / "numbers.txt").read_text()

    # The hunk's own Discard asks, naming what goes; Cancel keeps it.
    qtbot.mouseClick(view.diff.hunks[0].discard, Qt.MouseButton.LeftButton)
    run(wait_until(lambda: view.question is not None and view.question.isVisible()))
    assert view.question is not None
    asked = view.question.text()
    assert "1 hunk of numbers.txt (+1 −1)" in asked and str(worktree.path) in asked
    run(_answer(view, "Cancel"))
    run(wait_until(lambda: view.idle and "Nothing discarded" in view.status.text()))
    assert (worktree.path / "numbers.txt").read_text() == worker_file

    qtbot.mouseClick(view.diff.hunks[0].discard, Qt.MouseButton.LeftButton)
    run(_answer(view, DISCARD))
    run(wait_until(lambda: view.idle and len(view.diff.hunks) == 1))
    assert "worktree: 1 hunk of numbers.txt." in view.status.text()
    lines = NUMBERED.splitlines(keepends=True)
    lines[11] = "line 12 (worker)\n"
    assert (worktree.path / "numbers.txt").read_text() == "".join(lines)

    # A new file the worker made: Discard file says it is deleted, then deletes it.
    _show(run, view, "added.py")
    view.discard_file_button.click()
    run(wait_until(lambda: view.question is not None and view.question.isVisible()))
    assert view.question is not None
    assert "the new file added.py: it is deleted from the worktree" in view.question.text()
    run(_answer(view, DISCARD))
    run(wait_until(lambda: view.idle and view.files.topLevelItemCount() == 2))
    assert not (worktree.path / "added.py").exists()
    assert {p: (worktree.main / p).read_bytes() for p in main_before} == main_before


class _Worker(QWidget):
    worktree: object = None


def test_the_worker_pane_header_opens_the_changes_view(
    qtbot: QtBot, run: Runner[Any], tmp_path: Path
) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    shared, own = _Worker(), _Worker()
    own.worktree = worktree
    plain = PaneFrame(PaneInfo(1, "agent", "worker 1", IDLE), shared)
    frame = PaneFrame(PaneInfo(2, "agent", "worker 2", IDLE), own)
    for widget in (plain, frame):
        qtbot.addWidget(widget)
        widget.show()
    assert not plain.changes_button.isVisible()
    assert frame.changes_button.isVisible()

    qtbot.mouseClick(frame.changes_button, Qt.MouseButton.LeftButton)

    views = frame.findChildren(ChangesView)
    assert len(views) == 1 and views[0].worktree == worktree
    run(wait_until(lambda: views[0].changes is not None and views[0].idle))
    frame.changes_button.click()  # again: the open view comes up, no second one
    assert len(frame.findChildren(ChangesView)) == 1


def test_a_file_of_many_hunks_shows_them_a_page_at_a_time(
    qtbot: QtBot, run: Runner[Any], tmp_path: Path
) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    long = [f"row {n}\n" for n in range(400)]
    (worktree.main / "long.txt").write_text("".join(long))
    run_git(worktree.main, "add", "long.txt")
    run_git(worktree.main, "commit", "-q", "-m", "long")
    base = run_git(worktree.main, "rev-parse", "HEAD").strip()
    worktree = dataclasses.replace(worktree, base=base)
    run_git(worktree.path, "merge", "-q", "--ff-only", "main")
    edited = [
        line.replace("\n", " (worker)\n") if n % 10 == 0 else line for n, line in enumerate(long)
    ]
    (worktree.path / "long.txt").write_text("".join(edited))
    view = open_changes(None, worktree, LIGHT)
    qtbot.addWidget(view)
    run(wait_until(lambda: view.changes is not None and view.idle))
    _show(run, view, "long.txt")
    assert len(view.diff.hunks) == PAGE and view.diff.more_button is not None

    qtbot.mouseClick(view.diff.more_button, Qt.MouseButton.LeftButton)
    assert len(view.diff.hunks) == PAGE + SLICE and view.diff.building  # then a slice a tick
    run(wait_until(lambda: not view.diff.building))
    assert len(view.diff.hunks) == 40 and view.diff.more_button is None
    qtbot.mouseClick(view.diff.hunks[39].button, Qt.MouseButton.LeftButton)
    run(wait_until(lambda: view.idle and "1 hunk of long.txt" in view.status.text()))
    assert (worktree.main / "long.txt").read_text().count("(worker)") == 1
    assert "row 390 (worker)" in (worktree.main / "long.txt").read_text()


def test_coming_back_to_the_view_reads_the_main_folder_again(
    qtbot: QtBot, run: Runner[Any], tmp_path: Path
) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    worker_edits(worktree)
    view = open_changes(None, worktree, LIGHT)
    qtbot.addWidget(view)
    run(wait_until(lambda: view.changes is not None and view.idle))
    _show(run, view, "numbers.txt")
    qtbot.mouseClick(view.diff.hunks[1].button, Qt.MouseButton.LeftButton)
    run(wait_until(lambda: view.idle and not view.diff.hunks[1].button.isEnabled()))

    (worktree.main / "numbers.txt").write_text(NUMBERED)  # reverted in the person's editor
    QApplication.sendEvent(view, QEvent(QEvent.Type.WindowActivate))  # they come back

    run(wait_until(lambda: view.idle and view.diff.hunks[1].button.isEnabled()))
    assert view.diff.hunks[1].button.text() != "In the main folder ✓"
