"""Checkpoints on a big tree: the snapshot before a call against `git status`.

A 10,000-file, 200 MB project (a git repository, committed). Measured side by side in one
run, alternating, medians of several rounds:

1. the first checkpoint of the project (every file hashed into the shadow repository);
2. a later checkpoint with nothing changed, and one after a call changed 20 files,
   each against `git status` on the same tree (target: ratio ≤ 2 for a later one);
3. the time to restore (undo) a call that changed 200 files.

    python bench/bench_checkpoints.py [--files N] [--megabytes M] [--rounds R]
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
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import budget  # noqa: E402

from melgui.core.store.checkpoints.checkpointer import Checkpointer  # noqa: E402

GIT_ENV = {
    **os.environ,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@example.invalid",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@example.invalid",
}


def make_tree(project: Path, files: int, total_bytes: int) -> float:
    """Write the tree and commit it to the project's own git; returns the seconds
    `git add -A` + `git commit` took (what a first checkpoint is compared with)."""
    size = total_bytes // files
    for i in range(files):
        folder = project / f"pkg{i // 100:03d}" / f"mod{i // 10 % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        body = os.urandom(size // 2).hex().encode()  # text-like, hardly compressible
        (folder / f"file{i:05d}.txt").write_bytes(body)
    (project / ".gitignore").write_text("*.tmp\n")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True, env=GIT_ENV)
    start = time.perf_counter()
    subprocess.run(["git", "add", "-A"], cwd=project, check=True, env=GIT_ENV)
    subprocess.run(["git", "commit", "-qm", "tree"], cwd=project, check=True, env=GIT_ENV)
    return time.perf_counter() - start


async def git_status(project: Path) -> None:
    process = await asyncio.create_subprocess_exec(
        "git", "status", "--porcelain", cwd=project, env=GIT_ENV,
        stdout=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    await process.wait()


async def timed(action: Callable[[], Awaitable[object]]) -> float:
    start = time.perf_counter()
    await action()
    return time.perf_counter() - start


def touch_files(project: Path, count: int, round_: int) -> list[Path]:
    paths = sorted(project.glob("pkg00*/mod*/file*.txt"))[:count]
    for path in paths:
        path.write_bytes(path.read_bytes()[:100] + f"edit {round_}\n".encode())
    return paths


async def run(files: int, megabytes: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory(prefix="melgui-bench-ckpt-") as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        print(f"building {files} files, {megabytes} MB …", flush=True)
        own = make_tree(project, files, megabytes * 1024 * 1024)
        await git_status(project)  # warm the page cache and git's own index
        checkpoints = Checkpointer(str(project), data_folder=Path(tmp) / "data")
        first = await timed(checkpoints.snapshots.take)
        print(
            f"first checkpoint: {first:.2f} s vs the project's own git add -A + commit "
            f"{own:.2f} s — ratio {first / own:.2f}"
        )

        quiet, quiet_status, busy, busy_status = [], [], [], []
        for round_ in range(rounds):
            quiet_status.append(await timed(lambda: git_status(project)))
            quiet.append(await timed(checkpoints.snapshots.take))
            touch_files(project, 20, round_)
            busy_status.append(await timed(lambda: git_status(project)))
            busy.append(await timed(checkpoints.snapshots.take))
        for label, ours, theirs in (
            ("later checkpoint, nothing changed", quiet, quiet_status),
            ("later checkpoint, 20 files changed", busy, busy_status),
        ):
            a, b = statistics.median(ours), statistics.median(theirs)
            print(f"{label}: {a * 1000:.0f} ms vs git status {b * 1000:.0f} ms — ratio {a / b:.2f}")
            budget.report(f"checkpoint: {label} / git status", a / b, target=2.0)

        restores = []
        for round_ in range(max(1, rounds // 2)):
            async with checkpoints.guard(
                f"r{round_}", "run_command", "edit", source="bench"
            ) as rid:
                touch_files(project, 200, 1000 + round_)
            assert rid is not None
            restores.append(await timed(lambda rid=rid: checkpoints.restore([rid])))
        print(f"restore of a call that changed 200 files: {statistics.median(restores):.2f} s")
        checkpoints.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--megabytes", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=7)
    options = parser.parse_args()
    asyncio.run(run(options.files, options.megabytes, options.rounds))
    return budget.verdict()


if __name__ == "__main__":
    raise SystemExit(main())
