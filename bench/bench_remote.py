"""A remote folder over ssh on loopback:

- a read-only tool call (read_file) round trip, once connected, against `ssh HOST true`
  (target ≤ 1.5×); also printed: the first connection (ssh, melgui's host started there,
  handshake) against the same;
- after a 20 s outage (a proxy between ssh and sshd black-holes the traffic while a call
  runs; the call ends there during it): from the moment the traffic is let through to the
  call's result being here (target ≤ 2 s).

It runs a real sshd on 127.0.0.1 for a second local user (tests/remote/sshd.py), so it
needs root; without it the row is said missing.

    python bench/bench_remote.py [--calls 50]
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
sys.path.insert(0, str(ROOT / "bench"))
import budget  # noqa: E402
import scratch  # noqa: E402  (bench/scratch.py: temporary folders removed at exit)

from melgui.remote.link import Link  # noqa: E402
from melgui.remote.target import host_argv, parse_folder  # noqa: E402
from tests.remote.fault_proxy import FaultProxy  # noqa: E402
from tests.remote.remote_python import REMOTE_PYTHON, remote_python_path  # noqa: E402
from tests.remote.sshd import TestSshServer  # noqa: E402

ROW = "remote: read-only tool call over ssh / ssh host true"
OUTAGE_ROW = "remote: link back to current after a 20 s outage (s)"


def ssh_true(server: TestSshServer, times: int = 5) -> float:
    spent = []
    for _ in range(times):
        started = time.perf_counter()
        done = subprocess.run(["ssh", "-T", server.alias, "true"], stdin=subprocess.DEVNULL)
        spent.append(time.perf_counter() - started)
        assert done.returncode == 0
    return statistics.median(spent)


async def calls(server: TestSshServer, paths: list[str], count: int) -> tuple[float, float]:
    folder = server.home / "bench"
    folder.mkdir(exist_ok=True)
    (folder / "a.txt").write_text("x = 1\n" * 200)
    server.give(folder)
    argv = host_argv(REMOTE_PYTHON, {"PYTHONPATH": ":".join(paths)})
    link = Link(parse_folder(f"ssh://{server.alias}{folder}"), argv)
    started = time.perf_counter()
    await link.open()
    connect = time.perf_counter() - started
    try:
        spent = []
        for number in range(count):
            started = time.perf_counter()
            outcome = await link.run_call(f"bench/{number}", str(folder), "read_file",
                                          {"path": "a.txt"})  # fmt: skip
            spent.append(time.perf_counter() - started)
            assert outcome["status"] == "ok", outcome
    finally:
        await link.aclose()
    return connect, statistics.median(spent)


async def outage(server: TestSshServer, paths: list[str], seconds: float) -> tuple[float, float]:
    """(link back → connected, link back → the call's result here), in seconds."""
    folder = server.home / "bench-outage"
    folder.mkdir(exist_ok=True)
    server.give(folder)
    argv = host_argv(REMOTE_PYTHON, {"PYTHONPATH": ":".join(paths)})
    with FaultProxy(server.port) as proxy:
        alias = server.alias_through(proxy.port)
        link = Link(parse_folder(f"ssh://{alias}{folder}"), argv)
        await link.open()
        connected = asyncio.Event()
        link.on_state = lambda state: connected.set() if state == "connected" else None
        try:
            command = {"command": "echo s > started; sleep 1; echo x >> counter"}
            running = asyncio.ensure_future(
                link.run_call("bench/outage", str(folder), "run_command", command)
            )
            while not (folder / "started").exists():
                await asyncio.sleep(0.01)
            proxy.black_hole()
            await asyncio.sleep(seconds)
            assert not running.done(), "the result arrived through the black hole"
            back = time.perf_counter()
            proxy.let_through()
            await connected.wait()
            reconnected = time.perf_counter() - back
            outcome = await running
            current = time.perf_counter() - back
            assert outcome["status"] == "ok", outcome
            assert (folder / "counter").read_text() == "x\n"
        finally:
            proxy.let_through()
            await link.aclose()
    return reconnected, current


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--outage", type=float, default=20.0, help="seconds of black hole")
    options = parser.parse_args(argv)
    if os.geteuid() != 0:
        print(budget.missing_row(ROW, "needs root (a second local user and sshd)"))
        return 1
    workdir = Path(scratch.folder(prefix="melgui-bench-sshd-"))
    with TestSshServer.start(workdir) as server:
        paths = remote_python_path(workdir)
        baseline = ssh_true(server)
        connect, call = asyncio.run(calls(server, paths, options.calls))
        reconnected, current = asyncio.run(outage(server, paths, options.outage))
    print(f"ssh {server.alias} true:            {baseline * 1000:7.1f} ms (median of 5)")
    print(f"first connection (host started):  {connect * 1000:7.1f} ms  "
          f"({connect / baseline:.2f}× ssh true)")  # fmt: skip
    print(f"read_file round trip, connected:  {call * 1000:7.1f} ms (median of {options.calls})")
    row = budget.report(ROW, call / baseline, target=1.5)
    print(f"{ROW}: {row.value:.3f}× (target ≤ 1.5×) {'met' if row.met else 'MISSED'}")
    print(f"after a {options.outage:.0f} s outage, from the link back: connected in "
          f"{reconnected:.2f} s, the running call's result here in {current:.2f} s")  # fmt: skip
    row = budget.report(OUTAGE_ROW, current, target=2.0)
    print(f"{OUTAGE_ROW}: {row.value:.2f} s (target ≤ 2 s) {'met' if row.met else 'MISSED'}")
    return budget.verdict()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
