"""Clean-up that never loses work: what a worktree holds, refusals, confirmed discards,
merged branches, and the files a worker changed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from melgui.core.worktrees.cleanup import WorkAtRiskError, remove_worktree
from melgui.core.worktrees.create import create_worktree
from melgui.core.worktrees.model import Worktree
from melgui.core.worktrees.risk import changed_files, describe_changes, work_at_risk
from tests.fakes.projects import fingerprint, git, make_project


@pytest.fixture
def worktree(tmp_path: Path) -> Worktree:
    project = make_project(tmp_path, with_git=True)
    return create_worktree(project, 1, "task").worktree


def _branches(worktree: Worktree) -> str:
    return git(worktree.main, "branch", "--list", worktree.branch).strip()


def test_a_fresh_worktree_holds_no_work_and_goes_with_its_branch(worktree: Worktree) -> None:
    assert work_at_risk(worktree).empty
    (worktree.path / "build.log").write_text("ignored output is not work\n")
    assert work_at_risk(worktree).empty
    remove_worktree(worktree)
    assert not worktree.path.exists()
    assert _branches(worktree) == ""
    assert str(worktree.path) not in git(worktree.main, "worktree", "list")


def test_uncommitted_and_untracked_work_is_refused_then_discarded_on_confirmation(
    worktree: Worktree,
) -> None:
    (worktree.path / "src" / "app.py").write_text("print('work')\n")
    (worktree.path / "notes.txt").write_text("mine\n")
    risk = work_at_risk(worktree)
    assert risk.uncommitted == ["src/app.py"] and risk.untracked == ["notes.txt"]
    assert "1 uncommitted change (src/app.py)" in risk.describe()
    with pytest.raises(WorkAtRiskError, match="still holds work") as refused:
        remove_worktree(worktree)
    assert refused.value.risk == risk
    assert (worktree.path / "src" / "app.py").read_text() == "print('work')\n"
    assert (worktree.path / "notes.txt").exists() and _branches(worktree)
    discarded = remove_worktree(worktree, discard=True)
    assert discarded == risk
    assert not worktree.path.exists() and _branches(worktree) == ""


def test_unmerged_commits_keep_the_branch_until_merged(worktree: Worktree) -> None:
    (worktree.path / "src" / "app.py").write_text("print('committed')\n")
    git(worktree.path, "commit", "-qam", "the worker's commit")
    risk = work_at_risk(worktree)
    assert len(risk.unmerged) == 1 and risk.unmerged[0].endswith("the worker's commit")
    assert not risk.uncommitted
    with pytest.raises(WorkAtRiskError, match="1 commit not merged"):
        remove_worktree(worktree)
    git(worktree.main, "merge", "-q", "--ff-only", worktree.branch)
    assert work_at_risk(worktree).empty
    remove_worktree(worktree)
    assert _branches(worktree) == ""
    assert (worktree.main / "src" / "app.py").read_text() == "print('committed')\n"


def test_discarding_unmerged_commits_deletes_the_branch(worktree: Worktree) -> None:
    (worktree.path / "a.txt").write_text("a\n")
    git(worktree.path, "add", "a.txt")
    git(worktree.path, "commit", "-qm", "a")
    with pytest.raises(WorkAtRiskError):
        remove_worktree(worktree)
    remove_worktree(worktree, discard=True)
    assert _branches(worktree) == ""


def test_commits_on_a_detached_head_are_work_and_are_not_removed_unasked(
    worktree: Worktree,
) -> None:
    git(worktree.path, "checkout", "-q", "--detach")
    (worktree.path / "a.txt").write_text("a\n")
    git(worktree.path, "add", "a.txt")
    git(worktree.path, "commit", "-qm", "on no branch")
    sha = git(worktree.path, "rev-parse", "HEAD").strip()
    risk = work_at_risk(worktree)
    assert [c.split(" ", 1)[1] for c in risk.detached] == ["on no branch"]
    assert not (risk.unmerged or risk.uncommitted or risk.untracked)
    assert "1 commit on no branch (detached HEAD) (" in risk.describe()
    with pytest.raises(WorkAtRiskError, match="1 commit on no branch"):
        remove_worktree(worktree)
    assert worktree.path.is_dir()
    assert git(worktree.path, "cat-file", "-t", sha).strip() == "commit"
    remove_worktree(worktree, discard=True)
    assert not worktree.path.exists() and _branches(worktree) == ""


def test_a_detached_head_at_a_commit_a_branch_holds_is_no_work(worktree: Worktree) -> None:
    git(worktree.path, "checkout", "-q", "--detach", "HEAD")
    assert work_at_risk(worktree).empty
    remove_worktree(worktree)
    assert not worktree.path.exists()


def test_a_worktree_whose_folder_vanished_still_reports_its_commits(worktree: Worktree) -> None:
    (worktree.path / "a.txt").write_text("a\n")
    git(worktree.path, "add", "a.txt")
    git(worktree.path, "commit", "-qm", "kept in the branch")
    shutil.rmtree(worktree.path)
    risk = work_at_risk(worktree)
    assert risk.folder_missing and len(risk.unmerged) == 1
    with pytest.raises(WorkAtRiskError):
        remove_worktree(worktree)
    remove_worktree(worktree, discard=True)
    assert str(worktree.path) not in git(worktree.main, "worktree", "list")
    assert _branches(worktree) == ""


def test_changed_files_count_commits_edits_and_new_files_against_the_base(
    worktree: Worktree,
) -> None:
    (worktree.path / "src" / "app.py").write_text("print('committed')\n")
    git(worktree.path, "commit", "-qam", "c")
    (worktree.path / "src" / "util.py").unlink()
    (worktree.path / "new.py").write_text("x = 1\n")
    changes = changed_files(worktree)
    assert [(c.status, c.path) for c in changes] == [
        ("M", "src/app.py"),
        ("D", "src/util.py"),
        ("?", "new.py"),
    ]
    assert describe_changes(changes) == "M src/app.py, D src/util.py, ? new.py"
    # read_agent on a host reading that did not list every file counts those too
    assert describe_changes(changes, 2, unlisted=10) == "M src/app.py, D src/util.py and 11 more"


def test_reading_what_a_worktree_holds_never_writes_the_projects_git(worktree: Worktree) -> None:
    (worktree.path / "src" / "app.py").write_text("print('x')\n")
    (worktree.main / "src" / "app.py").write_text("print('main edit')\n")
    before = fingerprint(worktree.main / ".git")
    work_at_risk(worktree)
    changed_files(worktree)
    assert fingerprint(worktree.main / ".git") == before
