"""In a trusted folder too, a `.gitignore`, `.gitattributes` or `info/exclude` git would
block on (a FIFO: git opens it and waits for a writer) is named, never waited on until
git's timeout: the repository's `info/` files before git starts, the tree's rules files
once git has stalled for STALL_S seconds (a trusted folder's every call does not pay for
a walk of its tree). Trust lets the folder's hooks run; it does not make a FIFO
readable."""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

import pytest

from melgui.core.config.trust import FolderTrust
from melgui.core.git import GitError, run, run_async
from melgui.core.worktrees.changes.reading import read_changes
from melgui.desk.board.branch_files import changed_files
from tests.fakes.worktree_repos import make_repo_with_worktree, use_test_identity

SHORT = 10.0  # seconds: git would block far longer; the refusal comes within STALL_S


def _plant(kind: str, main: Path, worktree: Path) -> str:
    """A FIFO where git reads rules; the path the refusal must name."""
    places = {
        "subfolder .gitignore": worktree / "sub" / ".gitignore",
        "top .gitattributes": worktree / ".gitattributes",
        "info/exclude": main / ".git" / "info" / "exclude",
        "info/attributes": main / ".git" / "info" / "attributes",
    }
    path = places[kind]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    return str(path.relative_to(main.parent))


@pytest.mark.parametrize(
    "kind", ["subfolder .gitignore", "top .gitattributes", "info/exclude", "info/attributes"]
)
async def test_a_trusted_folders_fifo_rules_file_is_named_not_waited_on(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_test_identity(monkeypatch)
    worktree = make_repo_with_worktree(tmp_path)
    FolderTrust().trust(tmp_path)
    (worktree.path / "numbers.txt").write_text("changed\n")
    named = _plant(kind, worktree.main, worktree.path)
    pattern = f"{named} is a FIFO"
    async with asyncio.timeout(60):
        with pytest.raises(GitError, match=pattern):
            await asyncio.to_thread(run, ["status", "--porcelain"], worktree.path, timeout=SHORT)
        try:  # diff reads no ignore rules: it may finish; it never waits out SHORT
            await run_async(["diff", "HEAD"], worktree.path, timeout=SHORT)
        except GitError as exc:
            assert re.search(pattern, str(exc)), exc
        with pytest.raises(GitError, match=pattern):
            await read_changes(worktree)
        assert await asyncio.to_thread(changed_files, worktree) is None
