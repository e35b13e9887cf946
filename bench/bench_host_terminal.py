"""A terminal pane whose program runs in the melgui host (a window opened with --with-host)
against one whose program runs in the window, side by side: the 50 MB flood of
bench_panes.py (mixed text and colour codes), `cat` in a real pty, read, interpreted and
painted by the same pane, reader and emulator. In the host the pty is the host's, its
output written into a pipe the host passed the window over its socket (protocol 13; in
messages over the socket before, or where no pipe can be passed).

Runs alternate (emulator alone, window, host, emulator alone, …) so a noisy machine
weighs on all three alike; medians are reported. Rows: "terminal via host: …", beside
bench_panes.py's "terminal: …" with the same targets, and the host's flood time over the
window's.

    python bench/bench_host_terminal.py [--megabytes 50] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import budget  # noqa: E402
from bench_panes import StallMeter, make_flood  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from melgui.core.terminal.screen import TerminalScreen  # noqa: E402
from melgui.host.client import HostClient  # noqa: E402
from melgui.remote.remote_pty import HostTerminals  # noqa: E402
from melgui.ui.panes.terminal.pane import TerminalPane  # noqa: E402
from melgui.ui.runtime.qt_loop import QtEventLoop  # noqa: E402
from tests.fakes.host_process import HostProcess, runtime_dir  # noqa: E402

COLUMNS, ROWS = 120, 40
STALL_ROW = "terminal via host: longest stall in a 50 MB flood"
THROUGHPUT_ROW = "terminal via host: pane throughput / emulator alone"
RATIO_ROW = "terminal via host: flood time / the same pane in the window"
Opener = Callable[[str], Awaitable[TerminalPane]]


async def flood(
    open_pane: Opener, command: str, expected: int, last: str
) -> tuple[float, float, float, float]:
    """Seconds from before the pane exists to its program's end read and shown, the
    longest event-loop stall meanwhile, this process's CPU seconds and its GUI thread's
    (what it did beside the reader: painting, and any bytes it handled); raises when the
    pane lost bytes."""
    ended = asyncio.Event()
    gc.collect()  # the last run's garbage is not this one's stall
    meter = StallMeter()
    meter.start()
    cpu = time.process_time()
    gui_cpu = time.thread_time()
    started = time.perf_counter()
    pane = await open_pane(command)
    pane.resize(1000, 640)
    pane.show()
    pane.stateChanged.connect(lambda _state: ended.set())
    if pane.state.name == "running":
        await ended.wait()
    spent = time.perf_counter() - started
    cpu = time.process_time() - cpu
    gui_cpu = time.thread_time() - gui_cpu
    stall = meter.stop()
    fed = pane.catch_up()
    whole = fed == expected and last in pane.emulator.screen_text()
    pane.close_now(0.2)
    if not whole:
        raise AssertionError(f"the pane read {fed:,} of {expected:,} bytes")
    return spent, stall, cpu, gui_cpu


def process_cpu(pid: int) -> float:
    """CPU seconds `pid` has spent (user and system), from /proc."""
    with open(f"/proc/{pid}/stat", "rb") as handle:
        fields = handle.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measure(host: HostProcess, path: Path, size: int, runs: int) -> None:
    folder = str(path.parent)
    client = await HostClient.connect(host.place, client="bench window")
    terminals = HostTerminals("the melgui host", lambda: client, here=True)
    client.on_notification = terminals.heard

    async def in_window(command: str) -> TerminalPane:
        return TerminalPane(command, folder, columns=COLUMNS, rows=ROWS)

    async def in_host(command: str) -> TerminalPane:
        pty = await terminals.open(folder, command, COLUMNS, ROWS)
        return TerminalPane(command, folder, columns=COLUMNS, rows=ROWS, pty=pty)

    def emulator_alone() -> tuple[float, TerminalScreen]:
        """The emulator alone on the same bytes, no pane, no pty."""
        alone = TerminalScreen(COLUMNS, ROWS)
        gc.collect()
        started = time.perf_counter()
        with path.open("rb") as source:
            while chunk := source.read(65536):
                alone.feed(chunk.replace(b"\n", b"\r\n"))
        return time.perf_counter() - started, alone

    _, alone = emulator_alone()
    expected = size + path.read_bytes().count(b"\n")
    last = next(line for line in reversed(alone.screen_text().splitlines()) if line.strip())
    for opener in (in_window, in_host):  # fonts, the row painter, the first paint: once
        pane = await opener("true")
        pane.show()
        await asyncio.sleep(0.3)
        pane.close_now(0.2)
    times: dict[str, list[float]] = {"window": [], "host": [], "alone": []}
    stalls: dict[str, list[float]] = {"window": [], "host": []}
    gui_cpu: dict[str, list[float]] = {"window": [], "host": []}
    assert host.process is not None
    probe = await terminals.open(folder, "true", COLUMNS, ROWS)
    print(f"   the host's output reaches the window "
          f"{'through a pipe' if getattr(probe, 'piped', False) else 'in messages'}")  # fmt: skip
    probe.close()
    for run in range(runs):
        alone_time, _ = emulator_alone()
        times["alone"].append(alone_time)
        print(f"   run {run + 1} emulator alone: {alone_time:6.2f} s; load {load()}", flush=True)
        for name, opener in (("window", in_window), ("host", in_host)):
            host_cpu = process_cpu(host.process.pid)
            spent, stall, cpu, gui = await flood(opener, f"cat {path}", expected, last)
            host_cpu = process_cpu(host.process.pid) - host_cpu
            times[name].append(spent)
            stalls[name].append(stall)
            gui_cpu[name].append(gui)
            print(f"   run {run + 1} {name:6}: {spent:6.2f} s {expected / spent / 1e6:6.1f} MB/s,"
                  f" longest stall {stall * 1000:5.1f} ms, CPU: window {cpu:.2f} s (its GUI thread"
                  f" {gui:.2f} s),"
                  f" host {host_cpu:.2f} s; load {load()}", flush=True)  # fmt: skip
    await client.aclose()
    window, there = statistics.median(times["window"]), statistics.median(times["host"])
    alone_time = statistics.median(times["alone"])
    worst = {name: max(values) for name, values in stalls.items()}
    print(f"   medians: in the window {window:.2f} s, in the host {there:.2f} s "
          f"({there / window:.2f}x); emulator alone {alone_time:.2f} s")  # fmt: skip
    print(f"   the GUI thread's CPU (medians): in the window "
          f"{statistics.median(gui_cpu['window']):.2f} s, in the host "
          f"{statistics.median(gui_cpu['host']):.2f} s")  # fmt: skip
    print(f"   longest stall: in the window {worst['window'] * 1000:.1f} ms, "
          f"in the host {worst['host'] * 1000:.1f} ms")  # fmt: skip
    rows = [
        budget.stall_row(STALL_ROW, worst["host"] * 1000),
        budget.report(THROUGHPUT_ROW, alone_time / there, target=0.8, better="higher"),
        budget.report(RATIO_ROW, there / window, target=1.25),
    ]
    for row in rows:
        print(f"{row.name}: {row.value:.2f} {row.unit} (target {row.target}) "
              f"{'met' if row.met else 'MISSED'}")  # fmt: skip


def load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=50.0)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    loop = QtEventLoop(app)
    asyncio.set_event_loop(loop)
    with tempfile.TemporaryDirectory() as folder, runtime_dir() as runtime:
        path = Path(folder) / "flood.txt"
        size = make_flood(path, args.megabytes)
        print(f"`cat` of {size / 1e6:.0f} MB in a pane, in the window and in the host")
        host = HostProcess(runtime).start()
        try:
            with loop:
                loop.run_until_complete(measure(host, path, size, args.runs))
        finally:
            host.stop()
    return budget.verdict()


if __name__ == "__main__":
    raise SystemExit(main())
