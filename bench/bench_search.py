"""grep and find_files against `rg` run directly and `git grep`, on a large real source tree.

The tree is built here: several copies of the Python standard library that this
interpreter ships, committed to a fresh git repository, with a .gitignore. Each
measurement is the best of a few runs, interleaved, in one process; the ratios are
what matter (target: melgui's grep within 1.3x of rg on the same tree).

    python bench/bench_search.py [--copies N] [--repeat N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from melgui.tools.ripgrep import IGNORE_FLAGS, find_ripgrep
from melgui.tools.search import find_files, grep
from melgui.tools.settings import ToolSettings
from melgui.tools.workspace import Workspace

GREP_PATTERNS = {
    "no match": "ZQXJ_never_matches_anything",
    "rare literal": "def __init_subclass__",
    "regex": r"class \w+Error\(\w*Exception\)",
    "common (capped)": "import",
}
FIND_PATTERNS = {"*.py": "*.py", "test_*.py": "**/test_*.py"}


def build_tree(target: Path, copies: int) -> int:
    stdlib = Path(sysconfig.get_path("stdlib"))
    files = 0
    for copy in range(copies):
        for folder, dirs, names in os.walk(stdlib):
            dirs[:] = sorted(
                d
                for d in dirs
                if d not in ("site-packages", "__pycache__") and not d.startswith("config-")
            )
            relative = Path(folder).relative_to(stdlib)
            destination = target / f"copy{copy}" / relative
            destination.mkdir(parents=True, exist_ok=True)
            for name in names:
                source = Path(folder) / name
                if source.is_symlink() or source.stat().st_size > 2_000_000:
                    continue
                try:
                    os.link(source, destination / name)
                except OSError:
                    shutil.copyfile(source, destination / name)
                files += 1
    (target / ".gitignore").write_text("*.pyc\n__pycache__/\ncopy0/idlelib/\n")
    git = ["git", "-C", str(target), "-c", "user.name=bench", "-c", "user.email=b@x"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "tree"], check=True)
    return files


def time_process(argv: list[str], cwd: Path) -> float:
    """Wall time of a command whose output is read (to /dev/null rg would stop early)."""
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, capture_output=True, check=False)
    return time.perf_counter() - start


LOOP = asyncio.new_event_loop()  # one loop for every call, as in the app


def time_tool(call: Callable[[], Awaitable[object]]) -> float:
    start = time.perf_counter()
    LOOP.run_until_complete(call())
    return time.perf_counter() - start


def best_of(runs: list[Callable[[], float]], repeat: int) -> list[float]:
    """Interleaved runs, best of `repeat`: on a shared machine noise only adds time."""
    samples: list[list[float]] = [[] for _ in runs]
    for _ in range(repeat):
        for index, run in enumerate(runs):
            samples[index].append(run())
    return [min(values) for values in samples]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=7)
    options = parser.parse_args()
    rg = find_ripgrep()
    if rg is None:
        sys.exit("no rg executable (pip install ripgrep)")
    with tempfile.TemporaryDirectory(prefix="melgui-bench-") as temp:
        root = Path(temp) / "tree"
        root.mkdir()
        started = time.perf_counter()
        files = build_tree(root, options.copies)
        print(
            f"tree: {files} files, {options.copies} copies of the stdlib, built in "
            f"{time.perf_counter() - started:.1f} s; rg: {rg}"
        )
        workspace = Workspace(root)
        settings = ToolSettings(search_engine="ripgrep")
        for _ in range(2):  # warm the page cache
            time_process([rg, "-c", "x", "."], root)
        print(
            f"\n{'grep pattern':<18} {'melgui':>9} {'rg':>9} {'git grep':>9} "
            f"{'melgui/rg':>10} {'melgui/git':>11}"
        )
        worst = 0.0
        for label, pattern in GREP_PATTERNS.items():
            ours, direct, git = best_of(
                [
                    lambda p=pattern: time_tool(lambda: grep(workspace, settings, {"pattern": p})),
                    lambda p=pattern: time_process(
                        [rg, *IGNORE_FLAGS, "--null", "-n", "-e", p, "."], root
                    ),
                    lambda p=pattern: time_process(["git", "grep", "-n", "-E", "-e", p], root),
                ],
                options.repeat,
            )
            if label != "common (capped)":
                worst = max(worst, ours / direct)
            print(
                f"{label:<18} {ours * 1000:>7.0f}ms {direct * 1000:>7.0f}ms {git * 1000:>7.0f}ms "
                f"{ours / direct:>9.2f}x {ours / git:>10.2f}x"
            )
        print(
            f"\n{'find_files glob':<18} {'melgui':>9} {'rg':>9} {'git ls':>9} "
            f"{'melgui/rg':>10} {'melgui/git':>11}"
        )
        for label, glob in FIND_PATTERNS.items():
            ours, direct, git = best_of(
                [
                    lambda g=glob: time_tool(
                        lambda: find_files(workspace, settings, {"pattern": g})
                    ),
                    lambda g=glob: time_process([rg, *IGNORE_FLAGS, "--files", "-g", g, "."], root),
                    lambda g=glob: time_process(["git", "ls-files", "--", g], root),
                ],
                options.repeat,
            )
            worst = max(worst, ours / direct)
            print(
                f"{label:<18} {ours * 1000:>7.0f}ms {direct * 1000:>7.0f}ms {git * 1000:>7.0f}ms "
                f"{ours / direct:>9.2f}x {ours / git:>10.2f}x"
            )
        verdict = "within" if worst <= 1.3 else "OVER"
        print(
            f"\nworst melgui/rg ratio (uncapped searches): {worst:.2f}x — {verdict} the 1.3x target"
        )


if __name__ == "__main__":
    main()
