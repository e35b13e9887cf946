"""grep and find_files against `rg` run directly and `git grep`, on a large real source tree.

The tree is built here: several copies of the Python standard library that this
interpreter ships, committed to a fresh git repository, with a .gitignore. Each
measurement is the best of a few runs, interleaved, in one process; the ratios are
what matter (targets: find_files' CPU within 1.1x of `rg --files --threads=1` with the
same glob, counting rg's own process on both sides; grep's CPU within 1.3x of rg).

    python bench/bench_search.py [--copies N] [--repeat N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import budget

from melgui.tools.context import ToolContext
from melgui.tools.search.glob_match import GlobMatcher
from melgui.tools.search.project_search import FIND_FILES_TOOL, GREP_TOOL
from melgui.tools.search.ripgrep import IGNORE_FLAGS, files_argv, find_ripgrep
from melgui.tools.settings import ToolSettings
from melgui.tools.workspace import Workspace

GREP_PATTERNS = {
    "no match": "ZQXJ_never_matches_anything",
    "rare literal": "def __init_subclass__",
    "regex": r"class \w+Error\(\w*Exception\)",
    "common (capped)": "import",
}
# Names only, then paths: rg matches each (-g, the project's rules as overrides after it).
FIND_PATTERNS = {
    "*.py": "*.py",
    "test_*.py": "**/test_*.py",
    "copy1/**/test_*.py": "copy1/**/test_*.py",
    "**/test/**": "**/test/**",
}


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


Sample = tuple[float, float]  # (wall seconds, CPU seconds of this process and its children)


def _cpu() -> float:
    own = time.process_time()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own + children.ru_utime + children.ru_stime


def time_process(argv: list[str], cwd: Path) -> Sample:
    """A command whose output is read (to /dev/null rg would stop at the first match)."""
    wall, cpu = time.perf_counter(), _cpu()
    subprocess.run(argv, cwd=cwd, capture_output=True, check=False)
    return time.perf_counter() - wall, _cpu() - cpu


LOOP = asyncio.new_event_loop()  # one loop for every call, as in the app


def time_tool(call: Callable[[], Awaitable[object]]) -> Sample:
    wall, cpu = time.perf_counter(), _cpu()
    LOOP.run_until_complete(call())
    return time.perf_counter() - wall, _cpu() - cpu


def best_of(runs: list[Callable[[], Sample]], repeat: int) -> list[Sample]:
    """Interleaved runs, best of `repeat`: on a shared machine noise only adds time."""
    samples: list[list[Sample]] = [[] for _ in runs]
    for _ in range(repeat):
        for index, run in enumerate(runs):
            samples[index].append(run())
    return [(min(s[0] for s in values), min(s[1] for s in values)) for values in samples]


HEADER = f"{'':<18} {'melgui':>8} {'rg':>8} {'git':>8} {'wall/rg':>8} {'wall/git':>9} {'cpu/rg':>7}"


def report(label: str, ours: Sample, direct: Sample, git: Sample) -> tuple[float, float]:
    wall, cpu = ours[0] / direct[0], ours[1] / max(direct[1], 1e-6)
    print(
        f"{label:<18} {ours[0] * 1000:>6.0f}ms {direct[0] * 1000:>6.0f}ms "
        f"{git[0] * 1000:>6.0f}ms {wall:>7.2f}x {ours[0] / git[0]:>8.2f}x {cpu:>6.2f}x"
    )
    return wall, cpu


def main() -> int:
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
        worst_wall = worst_cpu = 0.0
        print("\ngrep (git = git grep)\n" + HEADER)
        for label, pattern in GREP_PATTERNS.items():
            ours, direct, git = best_of(
                [
                    lambda p=pattern: time_tool(
                        lambda: GREP_TOOL.run(ToolContext(workspace, settings), {"pattern": p})
                    ),
                    lambda p=pattern: time_process(
                        [rg, *IGNORE_FLAGS, "--null", "-n", "-e", p, "."], root
                    ),
                    lambda p=pattern: time_process(["git", "grep", "-n", "-E", "-e", p], root),
                ],
                options.repeat,
            )
            wall, cpu = report(label, ours, direct, git)
            if label != "common (capped)":  # capped: melgui stops early, not comparable
                worst_wall, worst_cpu = max(worst_wall, wall), max(worst_cpu, cpu)
        # melgui lists with one rg thread (files_argv): the reference gets one thread too,
        # the stricter comparison; rg's default (all threads) stands beside it.
        print(
            "\nfind_files (rg1 = rg --files --threads=1 -g, rgN = the same on all threads, "
            "git = git ls-files, rgT = the listing melgui falls back to when the project's "
            "rules cannot be given to rg as -g overrides: rg --files --threads=1 with its file "
            "type); CPU counts rg's own process\n"
            f"{'':<18} {'melgui':>8} {'rg1':>8} {'rgN':>8} {'git':>8} {'cpu/rg1':>8} "
            f"{'cpu/rgN':>8} {'wall/rg1':>9} {'cpu/rgT':>8}"
        )
        find_cpu: list[float] = []
        find_floor: list[float] = []  # wall time against rg's own fastest listing
        for label, glob in FIND_PATTERNS.items():
            listing = files_argv(rg, GlobMatcher(glob).name_globs)
            ours, single, default, git, same = best_of(
                [
                    lambda g=glob: time_tool(
                        lambda: FIND_FILES_TOOL.run(
                            ToolContext(workspace, settings), {"pattern": g}
                        )
                    ),
                    lambda g=glob: time_process(
                        [rg, *IGNORE_FLAGS, "--files", "--threads=1", "-g", g, "."], root
                    ),
                    lambda g=glob: time_process([rg, *IGNORE_FLAGS, "--files", "-g", g, "."], root),
                    lambda g=glob: time_process(["git", "ls-files", "--", g], root),
                    lambda argv=listing: time_process(argv, root),
                ],
                options.repeat * 4,  # milliseconds each: more runs to see past the noise
            )
            cpu = ours[1] / max(single[1], 1e-6)
            print(
                f"{label:<18} {ours[0] * 1000:>6.0f}ms {single[0] * 1000:>6.0f}ms "
                f"{default[0] * 1000:>6.0f}ms {git[0] * 1000:>6.0f}ms {cpu:>7.2f}x "
                f"{ours[1] / max(default[1], 1e-6):>7.2f}x {ours[0] / single[0]:>8.2f}x "
                f"{ours[1] / max(same[1], 1e-6):>7.2f}x"
            )
            print(
                f"{'':<18} CPU ms: melgui {ours[1] * 1000:.1f}, rg1 {single[1] * 1000:.1f}, "
                f"rgN {default[1] * 1000:.1f}, rgT {same[1] * 1000:.1f}"
            )
            find_cpu.append(cpu)
            find_floor.append(ours[0] / min(single[0], default[0]))
        print(f"grep: worst melgui/rg wall {worst_wall:.2f}x, CPU {worst_cpu:.2f}x")
        rows = [
            budget.report(
                "find_files: CPU / rg --threads=1 (worst pattern)", max(find_cpu), target=1.1
            ),
            # The floor: the wait for the list against rg alone, one thread or all.
            budget.limit("find_files: wall / rg --files alone (floor), worst", max(find_floor)),
            budget.report("grep: CPU / rg (worst pattern)", worst_cpu, target=1.3),
        ]
        print(budget.table(rows))
    return budget.verdict()


if __name__ == "__main__":
    raise SystemExit(main())
