"""A remote folder's terminal pane and find_files, over ssh on loopback (a real sshd for a
second local user, tests/remote/sshd.py; it needs root):

1. The 50 MB flood (bench_panes' mixed text and colour codes) `cat` in a remote terminal
   (the program in a pty there, its output over the link into a pane's reader and
   emulator here), against `ssh HOST cat` of the same file in a local pty read by the same
   reader and emulator. Throughput ratio, target ≥ 0.8×.
2. find_files on a 10,000-file remote tree (one call over the open link), against
   `ssh HOST rg --files` of the same tree. Target ≤ 1.3×.

    python bench/bench_remote_terminal.py [--megabytes 50] [--files 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import scratch  # noqa: E402  (bench/scratch.py: temporary folders removed at exit)

sys.path.insert(0, str(ROOT / "bench"))

import budget  # noqa: E402
from bench_panes import make_flood  # noqa: E402

from melgui.core.terminal.pty_session import Pty, PtySession  # noqa: E402
from melgui.core.terminal.reader import PtyReader  # noqa: E402
from melgui.core.terminal.screen import TerminalScreen  # noqa: E402
from melgui.remote.link import Link  # noqa: E402
from melgui.remote.target import host_argv, parse_folder  # noqa: E402
from tests.remote.remote_python import REMOTE_PYTHON, remote_python_path  # noqa: E402
from tests.remote.sshd import TestSshServer  # noqa: E402

FLOOD_ROW = "remote: 50 MB flood in a remote pane / ssh host cat"
FIND_ROW = "remote: find_files on 10,000 files / ssh host rg --files"
COLUMNS, ROWS = 120, 40


async def read_all(pty: Pty) -> tuple[float, int]:
    """Seconds until the program's end has been read, and the bytes interpreted."""
    screen = TerminalScreen(COLUMNS, ROWS)
    ended = asyncio.Event()
    loop = asyncio.get_running_loop()

    def tell() -> None:
        loop.call_soon_threadsafe(ended.set)

    reader = PtyReader(pty, screen, tell)
    started = time.perf_counter()
    reader.start()
    while reader.exit_code is None and reader.error is None:
        await ended.wait()
        ended.clear()
        reader.acknowledge()  # told once until then, as a pane is
    spent = time.perf_counter() - started
    reader.stop()
    return spent, reader.fed


async def flood(server: TestSshServer, link: Link, path: Path) -> tuple[float, float, int, int]:
    local = PtySession(["ssh", "-T", server.alias, "cat", str(path)], cwd=path.parent,
                       columns=COLUMNS, rows=ROWS)  # fmt: skip
    try:
        ssh_time, ssh_fed = await read_all(local)
    finally:
        local.close(0.5)
    remote = await link.open_terminal(str(path.parent), f"cat {path}", COLUMNS, ROWS)
    try:
        remote_time, remote_fed = await read_all(remote)
    finally:
        remote.close()
    return ssh_time, remote_time, ssh_fed, remote_fed


def make_tree(root: Path, files: int) -> None:
    for number in range(files):
        folder = root / f"pkg{number % 50:02d}" / f"mod{number % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{number}.py").write_text(f"VALUE = {number}\n")


def ssh_rg_files(server: TestSshServer, rg: str, root: Path, times: int = 5) -> float:
    spent = []
    for _ in range(times):
        started = time.perf_counter()
        done = subprocess.run(["ssh", "-T", server.alias, rg, "--files", str(root)],
                              stdin=subprocess.DEVNULL, capture_output=True)  # fmt: skip
        spent.append(time.perf_counter() - started)
        assert done.returncode == 0, done.stderr
    return statistics.median(spent)


async def find_files(link: Link, root: Path, times: int = 5) -> tuple[float, int]:
    spent, found = [], 0
    for number in range(times):
        started = time.perf_counter()
        outcome = await link.run_call(f"bench-find/{number}/{time.time_ns()}", str(root),
                                      "find_files", {"pattern": "**/*.py"})  # fmt: skip
        spent.append(time.perf_counter() - started)
        assert outcome["status"] == "ok", outcome
        found = outcome["content"].count(".py")
    return statistics.median(spent), found


async def measure(server: TestSshServer, paths: list[str], options: argparse.Namespace) -> int:
    work = server.home / "bench-terminal"
    work.mkdir(exist_ok=True)
    path = work / "flood.txt"
    if path.exists():
        path.unlink()
    size = make_flood(path, options.megabytes)
    tree = work / "tree"
    make_tree(tree, options.files)
    server.give(work)
    argv = host_argv(REMOTE_PYTHON, {"PYTHONPATH": ":".join(paths)})
    link = Link(parse_folder(f"ssh://{server.alias}{work}"), argv)
    await link.open()
    try:
        ssh_time, remote_time, ssh_fed, remote_fed = await flood(server, link, path)
        rg = str(Path(paths[1]) / "bin" / "rg")
        baseline = ssh_rg_files(server, rg, tree)
        find_time, found = await find_files(link, tree)
    finally:
        await link.aclose()
    print(f"1. `cat` of {size / 1e6:.0f} MB into a pane's reader and emulator")
    print(f"   ssh {server.alias} cat (local pty): {ssh_time:6.2f} s "
          f"{ssh_fed / ssh_time / 1e6:6.1f} MB/s ({ssh_fed:,} bytes)")  # fmt: skip
    print(f"   remote terminal over the link:  {remote_time:6.2f} s "
          f"{remote_fed / remote_time / 1e6:6.1f} MB/s ({remote_fed:,} bytes)")  # fmt: skip
    whole = remote_fed == ssh_fed
    ratio = ssh_time / remote_time if whole else 0.0  # a pane that lost bytes gets nothing
    row = budget.report(FLOOD_ROW, ratio, target=0.8, better="higher")
    print(f"{FLOOD_ROW}: {row.value:.2f}× (target ≥ 0.8×) {'met' if row.met else 'MISSED'}")
    print(f"2. {options.files:,} files ({found:,} listed)")
    print(f"   ssh {server.alias} rg --files:     {baseline * 1000:7.1f} ms (median of 5)")
    print(f"   find_files over the open link:   {find_time * 1000:7.1f} ms (median of 5)")
    row = budget.report(FIND_ROW, find_time / baseline, target=1.3)
    print(f"{FIND_ROW}: {row.value:.3f}× (target ≤ 1.3×) {'met' if row.met else 'MISSED'}")
    return budget.verdict()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--megabytes", type=float, default=50.0)
    parser.add_argument("--files", type=int, default=10000)
    options = parser.parse_args(argv)
    if os.geteuid() != 0:
        for row in (FLOOD_ROW, FIND_ROW):
            print(budget.missing_row(row, "needs root (a second local user and sshd)"))
        return 1
    workdir = Path(scratch.folder(prefix="melgui-bench-sshd-"))
    with TestSshServer.start(workdir) as server:
        paths = remote_python_path(workdir)
        return asyncio.run(measure(server, paths, options))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
