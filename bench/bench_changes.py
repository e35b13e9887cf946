"""Reviewing a worker's changes on a big tree: reading them against git run directly, and
how long the window stalls while the Changes view shows them.

A 10,000-file repository and a worker worktree that committed edits to 100 files, left
100 more edited and 50 new files uncommitted, and rewrote every tenth line of a
3,000-line file (300 hunks). Measured side by side in one run, alternating, medians:

1. `read_changes` (commits, files, hunks, new files' diffs) against `git diff <base>` +
   `git status` + `git log` run directly on the same worktree (target: ratio ≤ 3);
2. the longest event-loop stall while the Changes view opens (a second time: the first
   pays Qt's start-up) and reads it, and while it shows the 300-hunk file (its first
   page of hunks) (targets: 3 frames, 6 frames).

    python bench/bench_changes.py [--files N] [--rounds R]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import budget  # noqa: E402
from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from melgui.core.worktrees.changes.reading import read_changes  # noqa: E402
from melgui.core.worktrees.model import Worktree  # noqa: E402
from melgui.ui.changes.view import ChangesView, open_changes  # noqa: E402
from melgui.ui.runtime.qt_loop import QtEventLoop  # noqa: E402
from melgui.ui.runtime.theme import LIGHT  # noqa: E402

GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@example.invalid",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@example.invalid",
}
BIG = "big/long.txt"


def git(folder: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=folder, check=True, capture_output=True, text=True
    ).stdout


def make(root: Path, files: int) -> Worktree:
    main = root / "main"
    for i in range(files):
        folder = main / f"pkg{i // 100:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{i:05d}.txt").write_text("".join(f"{i} line {n}\n" for n in range(20)))
    (main / "big").mkdir()
    (main / BIG).write_text("".join(f"line {n}\n" for n in range(3000)))
    git(main, "init", "-q", "-b", "main")
    git(main, "add", "-A")
    git(main, "commit", "-qm", "tree")
    base = git(main, "rev-parse", "HEAD").strip()
    path = root / "worktree"
    git(main, "worktree", "add", "-q", "-b", "melgui/bench", str(path), base)
    for i in range(0, 200):
        target = path / f"pkg{i // 100 * 7:03d}" / f"file{i // 100 * 700 + i % 100:05d}.txt"
        target.write_text(target.read_text().replace(" line 3\n", " line three\n"))
        if i == 99:
            git(path, "commit", "-qam", "the worker's first half")
    for i in range(50):
        (path / "pkg000" / f"new{i:02d}.txt").write_text(f"new file {i}\n")
    (path / BIG).write_text(
        "".join(f"line {n}{' (worker)' if n % 10 == 5 else ''}\n" for n in range(3000))
    )
    return Worktree(path, "melgui/bench", base, main)


def direct(worktree: Worktree) -> None:
    for args in (
        ("diff", "--binary", worktree.base),
        ("status", "--porcelain", "--untracked-files=all"),
        ("log", "--oneline", f"{worktree.base}..{worktree.branch}"),
    ):
        git(worktree.path, *args)


def bench_read(worktree: Worktree, rounds: int) -> None:
    ours, theirs = [], []
    for _ in range(rounds):
        start = time.perf_counter()
        changes = asyncio.run(read_changes(worktree))
        ours.append(time.perf_counter() - start)
        start = time.perf_counter()
        direct(worktree)
        theirs.append(time.perf_counter() - start)
    ratio = statistics.median(ours) / statistics.median(theirs)
    print(
        f"1. read_changes: {statistics.median(ours) * 1000:.0f} ms for {len(changes.files)} "
        f"files, {sum(len(f.hunks) for f in changes.files)} hunks; git diff + status + log "
        f"directly: {statistics.median(theirs) * 1000:.0f} ms; ratio {ratio:.2f} (target ≤ 3)"
    )
    budget.report("changes: reading a worker's worktree vs git diff+status+log", ratio, target=3)


class StallMeter:
    """A 10 ms timer on the loop; the worst lateness of a tick is the longest stall."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._last = time.perf_counter()
        self._timer = QTimer()
        self._timer.setInterval(10)
        self._timer.timeout.connect(self._tick)

    def start(self) -> None:
        self.worst, self._last = 0.0, time.perf_counter()
        self._timer.start()

    def stop(self) -> float:
        """The longest stall, counting the one running now (since the last tick)."""
        self._timer.stop()
        self._tick()
        return self.worst

    def _tick(self) -> None:
        now = time.perf_counter()
        self.worst = max(self.worst, now - self._last - 0.010)
        self._last = now


async def _settled(view: ChangesView) -> None:
    await asyncio.sleep(0.05)
    while not (view.idle and view.changes is not None and not view.diff.building):
        await asyncio.sleep(0.01)


def bench_view(app: QApplication, worktree: Worktree) -> None:
    loop = QtEventLoop(app)
    asyncio.set_event_loop(loop)
    meter = StallMeter()
    view: ChangesView | None = None

    async def opening() -> float:
        nonlocal view
        # Once first: Qt's one-time start-up (styles, fonts) is not the view's.
        first = open_changes(None, worktree, LIGHT)
        await _settled(first)
        first.close()
        await asyncio.sleep(0.1)
        meter.start()
        view = open_changes(None, worktree, LIGHT)
        await _settled(view)
        await asyncio.sleep(0.1)
        return meter.stop()

    async def showing_big() -> float:
        assert view is not None
        count = view.files.topLevelItemCount()
        view.files.setCurrentItem(view.files.topLevelItem(count - 1))  # a small file first
        await _settled(view)
        meter.start()
        for row in range(count):
            item = view.files.topLevelItem(row)
            if item is not None and item.text(1) == BIG:
                view.files.setCurrentItem(item)
        await _settled(view)
        await asyncio.sleep(0.1)
        return meter.stop()

    opened = loop.run_until_complete(opening())
    shown = loop.run_until_complete(showing_big())
    assert view is not None
    hunks = len(view.diff.change.hunks) if view.diff.change is not None else 0
    shown_hunks = len(view.diff.hunks)
    view.close()
    loop.close()
    print(
        f"2. longest stall opening the view: {opened * 1000:.0f} ms; showing the file with "
        f"{hunks} hunks (the first {shown_hunks}): {shown * 1000:.0f} ms"
    )
    budget.stall_row("changes: longest stall opening the Changes view", opened * 1000, frames=3)
    budget.stall_row(f"changes: longest stall showing a {hunks}-hunk file", shown * 1000, frames=6)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args(argv)
    os.environ.update(GIT_ENV)
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)  # closing the warm-up view must not end the loop
    with tempfile.TemporaryDirectory(prefix="melgui-bench-changes-") as folder:
        worktree = make(Path(folder), options.files)
        bench_read(worktree, options.rounds)
        bench_view(app, worktree)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
