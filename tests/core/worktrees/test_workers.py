"""The project's settings decide: own worktree or shared folder, the copy list, the setup
command (its output, its failure, its timeout)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from melgui.core.config.settings import Settings
from melgui.core.config.trust import FolderTrust
from melgui.core.worktrees.setup_command import run_setup
from melgui.core.worktrees.workers import WorkerWorktrees, folder_in
from tests.fakes.projects import git, make_project


def test_a_git_project_gives_workers_worktrees_unless_turned_off(tmp_path: Path) -> None:
    project = make_project(tmp_path, with_git=True)
    worktrees = WorkerWorktrees(str(project), Settings())
    assert worktrees.wanted() and worktrees.wanted(True) and not worktrees.wanted(False)
    worktrees.settings = Settings(worker_worktrees=False)
    assert not worktrees.wanted() and worktrees.wanted(True)


def test_a_folder_without_git_always_shares(tmp_path: Path) -> None:
    plain = make_project(tmp_path, with_git=False)
    worktrees = WorkerWorktrees(str(plain), Settings())
    assert not worktrees.available() and not worktrees.wanted(True)


def test_an_untrusted_folder_runs_no_setup_command(tmp_path: Path) -> None:
    project = make_project(tmp_path, with_git=True)
    settings = Settings(worktree_setup={str(project): "touch ran"})
    prepared = WorkerWorktrees(str(project), settings).create(6, "build it")
    assert not (prepared.worktree.path / "ran").exists()
    assert prepared.setup is not None and prepared.setup.restricted
    assert "not run: the folder is not trusted" in prepared.describe()


def test_copy_list_and_setup_command_of_this_project_run_in_the_new_worktree(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path, with_git=True)
    FolderTrust().trust(project)
    (project / "secret.log").write_text("s\n")
    settings = Settings(
        worktree_copy={str(project): ["secret.log"]},
        worktree_setup={str(project): 'echo "setting up in $PWD"; touch ready; cat secret.log'},
    )
    prepared = WorkerWorktrees(str(project), settings).create(5, "build it")
    folder = prepared.worktree.path
    assert prepared.folder == folder
    assert (folder / "ready").exists() and not (project / "ready").exists()
    assert prepared.setup is not None and prepared.setup.ok
    assert f"setting up in {folder}" in prepared.setup.output
    text = prepared.describe()
    assert "Copied in: secret.log." in text and "finished" in text and "s" in text
    assert prepared.worktree.branch in text


def test_a_trusted_setup_command_gets_a_commands_environment_without_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = ("OPENAI_API_KEY", "MELIAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN_ACCESS_TOKEN")
    for name in keys:
        monkeypatch.setenv(name, "sk-setup-leak-0123456789")
    monkeypatch.setenv("PAGER", "less")
    worktree = tmp_path / "w"
    worktree.mkdir()
    FolderTrust().trust(tmp_path)
    result = run_setup("env", worktree, tmp_path, timeout=30)
    assert result.ok, result.output
    seen = dict(line.split("=", 1) for line in result.output.splitlines() if "=" in line)
    assert "sk-setup-leak" not in result.output
    assert not set(keys) & seen.keys()
    assert seen["MELGUI_WORKTREE"] == str(worktree) and seen["MELGUI_MAIN"] == str(tmp_path)
    assert seen["PATH"] == os.environ["PATH"] and seen["PAGER"] == "cat"  # as run_command


def test_a_failing_setup_command_is_reported_not_hidden(tmp_path: Path) -> None:
    worktree = tmp_path / "w"
    worktree.mkdir()
    FolderTrust().trust(tmp_path)
    result = run_setup("echo broken >&2; exit 3", worktree, tmp_path, timeout=30)
    assert result.exit_code == 3 and not result.ok
    assert (
        result.describe()
        == "Setup command `echo broken >&2; exit 3` failed (exit status 3).\nbroken"
    )


def test_a_setup_command_past_its_timeout_is_stopped_with_its_children(tmp_path: Path) -> None:
    FolderTrust().trust(tmp_path)
    result = run_setup("echo started; sleep 30 & sleep 30", tmp_path, tmp_path, timeout=0.5)
    assert result.timed_out and result.exit_code is None
    assert "stopped after its timeout" in result.describe() and "started" in result.output


def test_a_project_in_a_subfolder_works_in_the_same_subfolder(tmp_path: Path) -> None:
    project = make_project(tmp_path, with_git=True)
    sub = project / "src"
    prepared = WorkerWorktrees(str(sub), Settings()).create(1, "t")
    assert prepared.folder == prepared.worktree.path / "src"
    assert folder_in(prepared.worktree, sub) == prepared.folder
    assert (prepared.folder / "app.py").exists()


def test_no_commit_yet_means_sharing(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    assert not WorkerWorktrees(str(empty), Settings()).wanted()


@pytest.mark.parametrize("carry", [True, False])
def test_carry_over_follows_the_setting_unless_chosen(tmp_path: Path, carry: bool) -> None:
    project = make_project(tmp_path, with_git=True)
    (project / "README.md").write_text("# edited\n")
    worktrees = WorkerWorktrees(str(project), Settings(worker_carry_changes=carry))
    made = worktrees.create(1, "a").worktree
    assert ((made.path / "README.md").read_text() == "# edited\n") is carry
    chosen = worktrees.create(2, "b", carry=not carry).worktree
    assert ((chosen.path / "README.md").read_text() == "# edited\n") is (not carry)
