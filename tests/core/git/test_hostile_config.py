"""A folder whose `.git`, nested repository and linked git directory configure a command
for every key git has for one, driven through every path melgui runs git on, untrusted:
no marker ever appears and no API key reaches a git child."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from melgui.core.config.trust import FolderTrust
from melgui.core.git import GitError, run
from melgui.core.worktrees.changes.apply import apply_file
from melgui.core.worktrees.changes.discard import discard_part
from melgui.core.worktrees.changes.reading import read_changes
from melgui.core.worktrees.cleanup import remove_worktree
from melgui.core.worktrees.create import create_worktree
from melgui.core.worktrees.merge import commit_worktree, merge_branch
from melgui.desk.board.branch_files import changed_files
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.hostile_git import API_KEY, hostile_project, leaked_keys, ran
from tests.fakes.worktree_repos import use_test_identity

ROOT = Path(__file__).resolve().parents[3]


def test_the_planted_config_runs_when_nothing_stops_it(tmp_path: Path) -> None:
    """The control: plain git in the folder runs the planted commands, so the other tests
    would see them if melgui let them run."""
    project, markers = hostile_project(tmp_path)
    (project / "README.md").write_text("changed\n")
    run(["status"], project, hardened=False)
    run(["status"], project / "vendor" / "lib", hardened=False)
    seen = ran(markers)
    assert "top-filter-clean" in seen and "top-include-fsmonitor" in seen
    assert any(name.startswith("nested-") for name in seen)


def _melgui(*args: str, data: Path, config: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "MELGUI_DATA_DIR": str(data),
        "MELGUI_CONFIG_DIR": str(config),
        "MELIAI_API_KEY": API_KEY,
        "OPENAI_API_KEY": API_KEY,
        "ANTHROPIC_API_KEY": API_KEY,
        "GIT_DIR": "/nonexistent-leak",
    }
    return subprocess.run(
        [sys.executable, "-m", "melgui", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def test_checkpoints_and_restore_run_nothing_from_the_folder(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    project, markers = hostile_project(tmp_path)
    data, config = tmp_path / "data", tmp_path / "config"
    edit = {"path": "README.md", "old_string": "readme", "new_string": "edited"}
    scripted_relay.script(
        [tool_calls(tool_call("edit_file", edit, id="c1"))],
        [text("done"), done()],
    )
    result = _melgui(
        "exec", "--url", scripted_relay.base_url, "--folder", str(project), "--model", "m",
        "--approve", "all", "edit the readme", data=data, config=config,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (project / "README.md").read_text() == "# edited\n"
    listing = _melgui("checkpoints", "list", "--folder", str(project), data=data, config=config)
    assert listing.returncode == 0, listing.stderr
    checkpoint = listing.stdout.split()[0].lstrip("#")
    restored = _melgui(
        "checkpoints", "restore", checkpoint, "--folder", str(project), data=data, config=config
    )
    assert restored.returncode == 0, restored.stderr
    assert (project / "README.md").read_text() == "# readme\n"
    assert ran(markers) == []
    assert leaked_keys(markers) == []


async def test_worktrees_changes_and_the_board_run_nothing_from_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_test_identity(monkeypatch)
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    project, markers = hostile_project(tmp_path)
    created = create_worktree(project, 1, "edit things", root=tmp_path / "worktrees")
    worktree = created.worktree
    (worktree.path / "README.md").write_text("# readme\nby the worker\n")
    (worktree.path / "notes.txt").write_text("notes\nby the worker\n")
    (worktree.path / "app.cfg").write_text("x=2\n")
    (worktree.path / "new.proc").write_text("new\n")
    (worktree.path / "data.proc").write_text("worker\np\n")  # a real three-way merge
    assert changed_files(worktree) == ["README.md", "app.cfg", "data.proc", "new.proc", "notes.txt"]
    changes = await read_changes(worktree)
    await apply_file(worktree, changes.file("notes.txt"))
    (project / "data.proc").write_text("p\nmain\n")
    run(["commit", "-q", "-am", "applied from the worker"], project)
    await discard_part(worktree, changes.file("app.cfg"))
    await commit_worktree(worktree, "worker: readme")
    outcome = await merge_branch(worktree)
    # The folder's merge driver is replaced by git's own three-way merge.
    assert outcome.merged and outcome.conflicts == ()
    assert (project / "data.proc").read_text() == "worker\np\nmain\n"
    remove_worktree(worktree, discard=True)
    assert ran(markers) == []
    assert leaked_keys(markers) == []


def test_a_trusted_folders_hooks_run_but_see_no_api_key_and_no_git_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_test_identity(monkeypatch)
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.setenv("MELIAI_API_KEY", API_KEY)
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.hookspath'='/nowhere'")
    project, markers = hostile_project(tmp_path)
    FolderTrust().trust(project)
    created = create_worktree(project, 2, "trusted", root=tmp_path / "worktrees")
    assert "top-hook-post-checkout" in ran(markers)  # trusted: the person's hooks run
    seen = (markers / "env-top-hook-post-checkout").read_text()
    assert API_KEY not in seen and "/nowhere" not in seen
    assert leaked_keys(markers) == []
    remove_worktree(created.worktree, discard=True)


async def test_a_fifo_rules_file_in_the_repository_is_named_not_waited_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_test_identity(monkeypatch)
    project, _markers = hostile_project(tmp_path)
    created = create_worktree(project, 3, "fifo", root=tmp_path / "worktrees")
    (created.worktree.path / "sub").mkdir()
    os.mkfifo(created.worktree.path / "sub" / ".gitattributes")
    async with asyncio.timeout(60):
        with pytest.raises(GitError, match=r"sub/\.gitattributes is a FIFO"):
            await read_changes(created.worktree)
        assert await asyncio.to_thread(changed_files, created.worktree) is None
