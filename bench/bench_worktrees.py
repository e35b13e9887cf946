"""Worker worktrees on a 10,000-file repository: melgui against git run directly.

Measured side by side in one run, alternating, medians of several rounds:

1. creating a worker's worktree through melgui (`create_worktree`: free name, branch,
   `git worktree add`, its note) against `git worktree add -b … HEAD` run directly
   (target: ratio ≤ 1.3);
2. what closing would lose (`work_at_risk`: status and unmerged commits) on a worktree
   with 20 edited files, against `git status --porcelain` there (target: ≤ 2.5).

    python bench/bench_worktrees.py [--files N] [--rounds R]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import budget  # noqa: E402

from melgui.core.worktrees.create import create_worktree  # noqa: E402
from melgui.core.worktrees.risk import work_at_risk  # noqa: E402

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@example.invalid",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@example.invalid",
}


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True, text=True
    )
    return done.stdout


def make_repository(project: Path, files: int) -> None:
    for i in range(files):
        folder = project / f"pkg{i // 100:03d}" / f"mod{i // 10 % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{i:05d}.py").write_text(f"VALUE = {i}\n" + "# line\n" * 20)
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "tree")


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def drop(project: Path, folder: Path, branch: str) -> None:
    git(project, "worktree", "remove", "--force", str(folder))
    git(project, "branch", "-D", branch)


def direct_round(project: Path, folder: Path, branch: str) -> float:
    start = time.perf_counter()
    git(project, "worktree", "add", "-q", "-b", branch, str(folder), "HEAD")
    took = time.perf_counter() - start
    drop(project, folder, branch)
    return took


def melgui_round(project: Path, home: Path, pane: int) -> float:
    start = time.perf_counter()
    made = create_worktree(project, pane, "bench", root=home)
    took = time.perf_counter() - start
    drop(project, made.worktree.path, made.worktree.branch)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="melgui-bench-worktrees-") as temp:
        base = Path(temp)
        project = base / "project"
        project.mkdir()
        make_repository(project, options.files)
        home = base / "worktrees"
        ours: list[float] = []
        theirs: list[float] = []
        for n in range(options.rounds):
            theirs.append(direct_round(project, base / f"direct-{n}", f"d{n}"))
            ours.append(melgui_round(project, home, n))
        ratio = statistics.median(ours) / statistics.median(theirs)
        print(
            f"create a worktree ({options.files} files): "
            f"melgui {statistics.median(ours) * 1000:.0f} ms, git worktree add "
            f"{statistics.median(theirs) * 1000:.0f} ms (median of {options.rounds})"
        )
        budget.report(
            f"worktree: create ({options.files} files) / git worktree add", ratio, target=1.3
        )

        worktree = create_worktree(project, 99, "risk", root=home).worktree
        for k in range(20):
            i = k * (options.files // 20)
            path = worktree.path / f"pkg{i // 100:03d}" / f"mod{i // 10 % 10}" / f"file{i:05d}.py"
            path.write_text(path.read_text() + "# edited\n")
        risk_times: list[float] = []
        status_times: list[float] = []
        for _ in range(options.rounds):
            status_times.append(timed(lambda: git(worktree.path, "status", "--porcelain")))
            risk_times.append(timed(lambda: work_at_risk(worktree)))
        assert len(work_at_risk(worktree).uncommitted) == 20
        ratio = statistics.median(risk_times) / statistics.median(status_times)
        print(
            f"what closing would lose: work_at_risk {statistics.median(risk_times) * 1000:.0f} ms, "
            f"git status {statistics.median(status_times) * 1000:.0f} ms"
        )
        budget.report("worktree: what closing loses / git status", ratio, target=2.5)


if __name__ == "__main__":
    main()
