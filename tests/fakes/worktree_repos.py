"""Real git repositories with a worker's worktree, made with plain `git worktree add`,
for the review-and-merge tests (core and UI)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from melgui.core.worktrees.model import Worktree
from tests.fakes.projects import GIT_ENV

# Twelve numbered lines: edits at the top and the bottom give two hunks far apart.
NUMBERED = "".join(f"line {n}\n" for n in range(1, 13))


def run_git(folder: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args],
        cwd=folder,
        env={**os.environ, **GIT_ENV},
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def use_test_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    """melgui's git runs with the process environment: give it a known identity and no
    machine-wide or personal configuration."""
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)


def make_repo_with_worktree(root: Path, name: str = "w1") -> Worktree:
    """A main folder with two committed files and a worker worktree on branch
    `melgui/<name>` made from its HEAD, outside the main folder."""
    main = root / "main"
    main.mkdir()
    run_git(main, "init", "-q", "-b", "main")
    (main / "numbers.txt").write_text(NUMBERED)
    (main / "notes.md").write_text("# notes\n\nfirst\n")
    (main / ".gitignore").write_text("*.log\n")
    run_git(main, "add", "-A")
    run_git(main, "commit", "-q", "-m", "start")
    base = run_git(main, "rev-parse", "HEAD").strip()
    path = root / "worktrees" / name
    branch = f"melgui/{name}"
    run_git(main, "worktree", "add", "-q", "-b", branch, str(path), base)
    return Worktree(path=path, branch=branch, base=base, main=main)


def worker_edits(worktree: Worktree) -> None:
    """A commit (notes.md) plus uncommitted edits (two hunks of numbers.txt) and an
    untracked new file, as a worker would leave them."""
    notes = worktree.path / "notes.md"
    notes.write_text(notes.read_text() + "second, by the worker\n")
    run_git(worktree.path, "commit", "-q", "-am", "worker: add a note")
    lines = NUMBERED.splitlines(keepends=True)
    lines[0] = "line 1 (worker)\n"
    lines[11] = "line 12 (worker)\n"
    (worktree.path / "numbers.txt").write_text("".join(lines))
    (worktree.path / "added.py").write_text("print('new')\n")
    (worktree.path / "debug.log").write_text("ignored\n")


def add_worker(main: Path, name: str) -> Worktree:
    """One more worker worktree on branch `melgui/<name>`, from the main folder's HEAD."""
    base = run_git(main, "rev-parse", "HEAD").strip()
    path = main.parent / "worktrees" / name
    branch = f"melgui/{name}"
    run_git(main, "worktree", "add", "-q", "-b", branch, str(path), base)
    return Worktree(path=path, branch=branch, base=base, main=main)


def change_lines(path: Path, edits: dict[int, str]) -> None:
    """Replace the numbered lines (1-based) of a file with new text."""
    lines = path.read_text().splitlines(keepends=True)
    for number, text in edits.items():
        lines[number - 1] = text + "\n"
    path.write_text("".join(lines))
