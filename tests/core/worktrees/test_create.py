"""Creating worker worktrees on real git repositories: where, which branch, what it holds,
and that the main folder and its `.git` stay as they were."""

from __future__ import annotations

import os
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from melgui.core.config.settings import data_dir
from melgui.core.worktrees.cleanup import remove_worktree
from melgui.core.worktrees.create import WorktreeError, create_worktree
from melgui.core.worktrees.git import head_sha
from melgui.core.worktrees.model import Worktree
from tests.fakes.projects import fingerprint, git, make_project, tree

WORKTREE_RECORDS = (".git/worktrees", ".git/refs/heads/melgui", ".git/logs/refs/heads/melgui")


def _without_worktree_records(found: dict[str, tuple[int, str]]) -> dict[str, tuple[int, str]]:
    return {k: v for k, v in found.items() if not k.startswith(WORKTREE_RECORDS)}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path, with_git=True)


def test_a_worktree_is_made_outside_the_project_on_a_new_branch_at_head(project: Path) -> None:
    before = tree(project)
    created = create_worktree(project, 2, "Fix the parser, please!")
    worktree = created.worktree
    assert worktree.branch == "melgui/2-fix-the-parser-please"
    assert worktree.base == head_sha(project)
    assert worktree.main == project.resolve()
    assert project.resolve() not in worktree.path.resolve().parents
    assert (data_dir() / "worktrees").resolve() in worktree.path.resolve().parents
    assert (worktree.path / "src" / "app.py").read_text() == "print('hello')\n"
    assert not (worktree.path / "build.log").exists()  # ignored files are not there
    assert git(worktree.path, "rev-parse", "--abbrev-ref", "HEAD").strip() == worktree.branch
    assert tree(project) == before


def test_two_workers_edit_the_same_file_without_touching_each_other(project: Path) -> None:
    before = tree(project)
    one = create_worktree(project, 1, "change app").worktree
    two = create_worktree(project, 2, "change app").worktree
    (one.path / "src" / "app.py").write_text("print('one')\n")
    (two.path / "src" / "app.py").write_text("print('two')\n")
    git(one.path, "commit", "-qam", "one")
    assert (one.path / "src" / "app.py").read_text() == "print('one')\n"
    assert (two.path / "src" / "app.py").read_text() == "print('two')\n"
    assert tree(project) == before
    assert git(project, "status", "--porcelain").strip() == ""
    assert one.branch != two.branch and one.path != two.path


def test_names_never_clash_with_an_earlier_worktree_or_branch(project: Path) -> None:
    first = create_worktree(project, 3, "same task").worktree
    git(project, "branch", "melgui/4-same-task")
    second = create_worktree(project, 3, "same task").worktree
    third = create_worktree(project, 4, "same task").worktree
    assert second.branch == "melgui/3-same-task-2" and second.path != first.path
    assert third.branch == "melgui/4-same-task-2"


def test_copy_list_brings_ignored_files_and_folders(project: Path) -> None:
    (project / ".gitignore").write_text("*.log\n.env\n.venv/\n")
    git(project, "commit", "-qam", "ignore more")
    (project / ".env").write_text("TOKEN=1\n")
    (project / ".venv" / "bin").mkdir(parents=True)
    (project / ".venv" / "bin" / "python").write_text("#!/bin/sh\n")
    os.symlink("/usr/bin/env", project / ".venv" / "bin" / "env")
    created = create_worktree(
        project, 1, "t", copy=[".env", ".venv", "*.log", "nothing-here", "../x"]
    )
    path = created.worktree.path
    assert (path / ".env").read_text() == "TOKEN=1\n"
    assert (path / ".venv" / "bin" / "python").exists()
    assert os.readlink(path / ".venv" / "bin" / "env") == "/usr/bin/env"
    assert (path / "build.log").read_text() == "old log\n"
    assert sorted(created.copied) == [".env", ".venv", "build.log"]
    assert created.missing == ["nothing-here", "../x"]


def test_carry_over_brings_uncommitted_changes_and_leaves_the_main_folder_alone(
    project: Path,
) -> None:
    (project / "src" / "app.py").write_text("print('changed')\n")
    (project / "src" / "util.py").unlink()
    (project / "new.txt").write_text("new\n")
    (project / "README.md").write_text("# staged\n")
    git(project, "add", "README.md")
    before = fingerprint(project)
    created = create_worktree(project, 1, "carry", carry=True)
    # Files, index and .git as they were, but for git's record of the new worktree.
    assert _without_worktree_records(fingerprint(project)) == before
    path = created.worktree.path
    assert (path / "src" / "app.py").read_text() == "print('changed')\n"
    assert not (path / "src" / "util.py").exists()
    assert (path / "new.txt").read_text() == "new\n"
    assert (path / "README.md").read_text() == "# staged\n"
    assert sorted(created.carried) == ["README.md", "new.txt", "src/app.py", "src/util.py"]


def test_without_carry_over_the_worktree_is_clean(project: Path) -> None:
    (project / "src" / "app.py").write_text("print('changed')\n")
    created = create_worktree(project, 1, "t")
    assert (created.worktree.path / "src" / "app.py").read_text() == "print('hello')\n"
    assert git(created.worktree.path, "status", "--porcelain").strip() == ""


def test_a_folder_without_git_or_without_commits_says_so(tmp_path: Path) -> None:
    plain = make_project(tmp_path / "a", with_git=False)
    with pytest.raises(WorktreeError, match="not in a git repository"):
        create_worktree(plain, 1, "t")
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    with pytest.raises(WorktreeError, match="no commit yet"):
        create_worktree(empty, 1, "t")


def test_a_surrounding_git_dir_does_not_redirect_the_worktree(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # melgui started from a git hook (or a shell that exported GIT_DIR) still works on
    # the project's own repository, never the one the environment names.
    other = make_project(tmp_path / "other", with_git=True)
    (other / "other.txt").write_text("another repository\n")
    git(other, "add", "other.txt")
    git(other, "commit", "-q", "-m", "another history")
    before = fingerprint(other)
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    worktree = create_worktree(project, 3, "check env").worktree
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_WORK_TREE")
    assert worktree.base == git(project, "rev-parse", "HEAD").strip()
    assert (worktree.path / "src" / "app.py").exists() and not (
        worktree.path / "other.txt"
    ).exists()
    assert fingerprint(other) == before


def _watching_git(folder: Path) -> Path:
    """A `git` first on PATH that runs the real one and leaves `overlap` in `folder` when
    a `git worktree add` or `remove` starts while another is still running."""
    real = shutil.which("git")
    assert real is not None
    script = folder / "git"
    busy, overlap = folder / "busy", folder / "overlap"
    script.write_text(
        "#!/bin/sh\n"
        'case " $* " in *" worktree add "*|*" worktree remove "*)\n'
        f'  mkdir "{busy}" 2>/dev/null || : > "{overlap}"\n'
        f'  "{real}" "$@"; code=$?; rmdir "{busy}" 2>/dev/null; exit $code;;\n'
        "esac\n"
        f'exec "{real}" "$@"\n'
    )
    script.chmod(0o755)
    return overlap


def test_eight_workers_made_at_once_all_get_a_worktree(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An orchestrator starting eight workers makes eight worktrees at once; concurrent
    # `git worktree add` calls on one repository race (one reads another's half-made
    # `.git/worktrees/<name>/commondir` and dies: "failed to read ... commondir"), so
    # they run one at a time. The race itself is rare; that two adds overlap is not.
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    overlap = _watching_git(bin_folder)
    monkeypatch.setenv("PATH", f"{bin_folder}{os.pathsep}{os.environ['PATH']}")
    workers = 8
    start = threading.Barrier(workers)

    def make(pane: int) -> str:
        start.wait()
        return create_worktree(project, pane, "at once").worktree.branch

    with ThreadPoolExecutor(workers) as pool:
        branches = list(pool.map(make, range(1, workers + 1)))
    assert len(set(branches)) == workers
    listed = git(project, "worktree", "list", "--porcelain")
    assert listed.count("branch refs/heads/melgui/") == workers
    assert not overlap.exists(), "two `git worktree add` ran at once on one repository"


def test_workers_removed_while_others_are_made_wait_their_turn(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A `git worktree remove` deletes a record in `.git/worktrees/` that an add running
    # at the same time reads (closing a worker's pane while the orchestrator starts
    # others): removes hold the repository's worktree records too.
    made = [create_worktree(project, pane, "early").worktree for pane in range(1, 5)]
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    overlap = _watching_git(bin_folder)
    monkeypatch.setenv("PATH", f"{bin_folder}{os.pathsep}{os.environ['PATH']}")
    start = threading.Barrier(8)

    def remove(worktree: Worktree) -> None:
        start.wait()
        remove_worktree(worktree)

    def make(pane: int) -> None:
        start.wait()
        create_worktree(project, pane, "late")

    with ThreadPoolExecutor(8) as pool:
        done = [pool.submit(remove, w) for w in made]
        done += [pool.submit(make, pane) for pane in range(5, 9)]
        for future in done:
            future.result()
    listed = git(project, "worktree", "list", "--porcelain")
    assert listed.count("branch refs/heads/melgui/") == 4
    assert not overlap.exists(), "a `git worktree remove` ran beside another on one repository"
