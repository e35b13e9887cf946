"""The project's rule files kept current by watching its folders (WatchedRuleFiles over
FolderChanges): unchanged folders cost no walk, and every way a rule file or a folder
can come, go or move between two looks is seen, as a walk that stats every folder sees
it (rule_files without watches, the reference)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from melgui.core.config import folder_changes
from melgui.core.config.folder_changes import FolderChanges
from melgui.core.config.special_files import Listing, RuleFiles, WatchedRuleFiles, rule_files

pytestmark = pytest.mark.skipif(
    FolderChanges.open() is None, reason="no inotify here: rule_files stats every folder"
)


def plain(found: RuleFiles) -> tuple[list[tuple[str, str]], list[str], bool]:
    return sorted(found.special), sorted(found.regular), found.nested_git


def walked(root: Path) -> tuple[list[tuple[str, str]], list[str], bool]:
    """What a fresh walk with no cache and no watch finds: the reference."""
    return plain(rule_files(str(root), {}))


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    for folder in ("src/pkg/deep", "docs/tmp", "build", ".hidden/inner"):
        (root / folder).mkdir(parents=True)
    (root / ".gitignore").write_text("build/\n")
    (root / "src" / "pkg" / "a.py").write_text("")
    return root


@pytest.fixture
def watched(tree: Path) -> Iterator[WatchedRuleFiles]:
    rules = WatchedRuleFiles(str(tree))
    yield rules
    rules.close()


def test_nothing_changed_is_the_last_answer_without_a_walk(
    tree: Path, watched: WatchedRuleFiles
) -> None:
    first = watched.current()
    assert first.unwatched == 0
    assert plain(first) == walked(tree)
    (tree / "src" / "pkg" / "b.py").write_text("x")  # a file: no rule file, no folder
    (tree / "src" / "pkg" / "a.py").write_text("changed")
    again = watched.current()
    assert plain(again) == walked(tree)
    assert watched.current() is watched.current()  # no event since: not walked again


@pytest.mark.parametrize(
    "change",
    [
        "a .gitignore deep down",
        "a .gitignore in a hidden folder",
        "a .gitignore removed",
        "a .gitignore renamed in",
        "a FIFO .gitignore",
        "a new folder with a .gitignore",
        "a nested repository",
        "a folder deleted",
        "a folder moved away, another made in its place",
        "a folder moved in from outside",
        "a folder renamed within",
    ],
)
def test_each_change_between_two_looks_is_seen(
    tree: Path, watched: WatchedRuleFiles, tmp_path: Path, change: str
) -> None:
    watched.current()
    outside = tmp_path / "outside"
    outside.mkdir()
    if change == "a .gitignore deep down":
        (tree / "src" / "pkg" / "deep" / ".gitignore").write_text("*.log\n")
    elif change == "a .gitignore in a hidden folder":
        (tree / ".hidden" / "inner" / ".gitignore").write_text("x\n")
    elif change == "a .gitignore removed":
        (tree / ".gitignore").unlink()
    elif change == "a .gitignore renamed in":
        (tree / "docs" / "rules").write_text("tmp/\n")
        (tree / "docs" / "rules").rename(tree / "docs" / ".gitignore")
    elif change == "a FIFO .gitignore":
        os.mkfifo(tree / "docs" / "tmp" / ".gitignore")
    elif change == "a new folder with a .gitignore":
        (tree / "src" / "new" / "er").mkdir(parents=True)
        (tree / "src" / "new" / "er" / ".gitignore").write_text("x\n")
    elif change == "a nested repository":
        (tree / "src" / "pkg" / ".git").mkdir()
    elif change == "a folder deleted":
        (tree / "src" / "pkg" / "deep" / ".gitignore").write_text("x\n")
        assert len(watched.current().regular) == 2
        shutil.rmtree(tree / "src" / "pkg")
    elif change == "a folder moved away, another made in its place":
        # The old folders' watches follow them out: their paths must not be trusted.
        (tree / "src" / "pkg" / "deep").rename(outside / "deep")
        (tree / "src" / "pkg" / "deep").mkdir()
        (tree / "src" / "pkg" / "deep" / ".gitignore").write_text("x\n")
    elif change == "a folder moved in from outside":
        (outside / "in" / "sub").mkdir(parents=True)
        (outside / "in" / "sub" / ".gitignore").write_text("x\n")
        (outside / "in").rename(tree / "docs" / "in")
    elif change == "a folder renamed within":
        (tree / "src" / "pkg" / "deep" / ".gitignore").write_text("x\n")
        watched.current()
        (tree / "src" / "pkg").rename(tree / "src" / "pkg2")
        (tree / "src" / "pkg2" / "deep" / "more").mkdir()
        (tree / "src" / "pkg2" / "deep" / "more" / ".gitignore").write_text("y\n")
    assert plain(watched.current()) == walked(tree)
    if change == "a folder moved away, another made in its place":
        # The folder outside changes; the project's answer does not.
        (outside / "deep" / ".gitignore").write_text("z\n")
        assert plain(watched.current()) == walked(tree)


def test_the_project_folder_moved_away_and_another_made_in_its_place(
    tree: Path, watched: WatchedRuleFiles, tmp_path: Path
) -> None:
    """No watch is above the top: only its own event says its path names another
    folder now."""
    watched.current()
    tree.rename(tmp_path / "moved")
    assert plain(watched.current()) == walked(tree) == ([], [], False)
    (tree / "docs").mkdir(parents=True)
    (tree / "docs" / ".gitignore").write_text("x\n")
    assert plain(watched.current()) == walked(tree)
    assert watched.current().regular == [str(tree / "docs" / ".gitignore")]


def test_the_same_walk_with_watches_and_with_stats_only(tree: Path) -> None:
    """rule_files given watches answers what it answers without (the cache is kept by
    the caller: a folder that changed is dropped from it)."""
    changes = FolderChanges.open()
    assert changes is not None
    try:
        cache: dict[bytes, Listing] = {}
        assert plain(rule_files(str(tree), cache, changes)) == walked(tree)
        assert set(changes.watched) == {os.fsencode(p) for p in _folders(tree)}
        assert plain(rule_files(str(tree), cache, changes)) == walked(tree)
    finally:
        changes.close()
    assert changes.watched == {}


def _folders(root: Path) -> list[str]:
    return [folder for folder, _dirs, _files in os.walk(root)]


def test_past_the_watch_budget_folders_are_stated_as_before(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub = folder_changes._hub()
    assert hub is not None
    monkeypatch.setattr(hub, "_budget", len(hub._owners) + 2)  # the top and one more
    rules = WatchedRuleFiles(str(tree))
    try:
        first = rules.current()
        assert first.unwatched == len(_folders(tree)) - 2
        assert plain(first) == walked(tree)
        # A folder past the budget: no watch sees it, the stat of the walk does.
        (tree / "src" / "pkg" / "deep" / ".gitignore").write_text("x\n")
        second = rules.current()
        assert second is not first
        assert plain(second) == walked(tree)
    finally:
        rules.close()


def test_a_closed_tree_gives_its_watches_back(tree: Path) -> None:
    hub = folder_changes._hub()
    assert hub is not None
    before = len(hub._owners)
    rules = WatchedRuleFiles(str(tree))
    rules.current()
    assert len(hub._owners) == before + len(_folders(tree))
    rules.close()
    assert len(hub._owners) == before


def test_two_trees_over_the_same_folders_each_see_a_change(tree: Path) -> None:
    """A project and a folder inside it (two roots, one inotify instance): an event is
    each tree's, not the first reader's."""
    outer = WatchedRuleFiles(str(tree))
    inner = WatchedRuleFiles(str(tree / "src"))
    try:
        outer.current()
        inner.current()
        (tree / "src" / "pkg" / ".gitignore").write_text("x\n")
        assert plain(outer.current()) == walked(tree)  # reads the event first
        assert plain(inner.current()) == walked(tree / "src")
        assert str(tree / "src" / "pkg" / ".gitignore") in inner.current().regular
    finally:
        outer.close()
        inner.close()
