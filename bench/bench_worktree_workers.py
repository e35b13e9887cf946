"""Eight workers, each in its own git worktree of a 10,000-file repository, streaming at
once in the real main window with the agents board open.

Each worker is started the way the person or the orchestrator starts one
(`PaneManager.start_worker`, worktrees on), against the scripted relay over loopback
HTTP. Its legs stream paced prose and end with file tools (`write_file`, `edit_file`),
so after every leg the board counts the worktree's files with git and, every half
second, `read_agent` asks git what each worker changed. Measured while they stream: the
longest event-loop stall (target ≤ 1 frame) and the 99th percentile lateness of a 10 ms
timer, as bench_panes measures workers in the shared folder. Run alone, the workers'
sessions are in the window's process, as only a window that could start no host runs
them: the rows print as notes; bench_host.py runs them in a real host ("worktrees via
host"), where the targets are.

    python bench/bench_worktree_workers.py [--files N] [--workers 8] [--deltas 300]
    MELGUI_BENCH_WHY=1 python bench/bench_host.py --only worktrees   # why each stall
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import scratch  # noqa: E402  (bench/scratch.py: temporary folders removed at exit)

sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# The worktrees go under melgui's data folder: a throwaway one, not the person's.
_SANDBOX = scratch.folder(prefix="melgui-bench-worktree-workers-")
os.environ["MELGUI_CONFIG_DIR"] = os.path.join(_SANDBOX, "config")
os.environ["MELGUI_DATA_DIR"] = os.path.join(_SANDBOX, "data")
os.environ["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent"  # no desktop popups

import budget  # noqa: E402  (bench/budget.py: the frame-budget table)
import stall_why  # noqa: E402  (MELGUI_BENCH_WHY=1: why each stall, printed)
from bench_panes import GcMeter, LatenessMeter  # noqa: E402
from bench_worktrees import make_repository  # noqa: E402

from melgui.core.config.settings import Settings, save_settings  # noqa: E402
from melgui.core.protocol.catalog import DEFAULT_MODES  # noqa: E402
from melgui.ui.panes.agent_pane import AgentPane  # noqa: E402
from melgui.ui.panes.orchestration import Orchestration  # noqa: E402
from melgui.ui.runtime.qt_loop import QtEventLoop  # noqa: E402
from melgui.ui.window.host_view.view import HostView  # noqa: E402
from melgui.ui.window.main_window import MainWindow, build_main_window  # noqa: E402
from tests.fakes import (  # noqa: E402
    RecordedRequest,
    ScriptedRelay,
    Step,
    done,
    hold,
    pause,
    text,
    tool_call,
    tool_calls,
)

TOOL_LEGS = 3  # legs ending in file tools, before the last one's answer
CHUNK = "Streaming **markdown** with `code` and words, "


def _file_of(worker: int, leg: int, files: int) -> tuple[str, int]:
    """A committed file of the repository for this worker's leg to edit."""
    i = (worker * 97 + leg * 13) % files
    return f"pkg{i // 100:03d}/mod{i // 10 % 10}/file{i:05d}.py", i


class WorkerScript:
    """The relay's side of every worker: paced prose, then two file tools per leg; the
    first leg waits at `gate` until every worker's pane is open."""

    def __init__(self, deltas: int, gap: float, files: int) -> None:
        self.gate = threading.Event()
        self.files = files
        self.prose = [CHUNK + (f"{n}.\n\n" if n % 10 == 9 else f"{n} ") for n in range(deltas)]
        self.gap = gap

    def leg(self, request: RecordedRequest) -> list[Any]:
        task = next(m.get("content", "") for m in request.messages if m.get("role") == "user")
        worker = int(str(task).split()[-1])
        leg = sum(1 for m in request.messages if m.get("role") == "tool") // 2
        steps: list[Step] = [hold(self.gate, timeout=600)] if leg == 0 else []
        for piece in self.prose:
            steps += [text(piece), pause(self.gap)]
        if leg >= TOOL_LEGS:
            return [*steps, done()]
        path, i = _file_of(worker, leg, self.files)
        edit = {"path": path, "old_string": f"VALUE = {i}\n", "new_string": f"VALUE = -{i}\n"}
        note = {"path": f"notes/worker-{worker}-{leg}.md", "content": f"leg {leg}\n" * 20}
        return [
            *steps,
            tool_calls(tool_call("write_file", note), tool_call("edit_file", edit)),
        ]


def _settings(relay: ScriptedRelay) -> Settings:
    modes = {**DEFAULT_MODES, "write_file": "auto", "edit_file": "auto"}
    return Settings(
        connection="relay",
        relay_url=relay.url,
        model="bench",
        approval_modes=modes,
        worker_worktrees=True,
    )


async def _read_agents(orchestration: Orchestration, panes: list[int], stop: asyncio.Event) -> int:
    """read_agent on every worker, twice a second, as an orchestrator polling them."""
    reads = 0
    while not stop.is_set():
        for pane in panes:
            await orchestration.read_agent(pane)
            reads += 1
        await asyncio.sleep(0.5)
    return reads


def bench(
    files: int, workers: int, deltas: int, rate: float, *, host: Any = None
) -> dict[str, float]:
    """The rows' stalls in ms, by what they measure. `host`: a running `melgui host`
    process (bench_host.py); the workers' sessions then run in it, in their worktrees,
    and the window only draws what it sends (rows named "worktrees via host")."""
    app = stall_why.application()  # MELGUI_BENCH_WHY=1: why each stall, printed
    loop = QtEventLoop(app)
    asyncio.set_event_loop(loop)
    gap = 1 / rate
    print(
        f"{workers} workers in their own worktrees of a {files:,}-file repository, "
        f"{TOOL_LEGS + 1} legs of {deltas} deltas each ({rate:.0f} deltas/s), board open"
    )
    with tempfile.TemporaryDirectory(prefix="melgui-bench-project-") as temp:
        project = Path(temp) / "project"
        project.mkdir()
        started = time.perf_counter()
        make_repository(project, files)
        print(f"   repository made in {time.perf_counter() - started:.1f} s")
        script = WorkerScript(deltas, gap, files)
        with ScriptedRelay() as relay:
            relay.on(lambda r: r.tool_role == "worker", script.leg)
            settings = _settings(relay)
            if host is not None:  # the host reads the approval modes from its settings file
                save_settings(settings, Path(host.env["MELGUI_CONFIG_DIR"]) / "settings.json")
            window = build_main_window(
                str(project), settings, api_key="bench", persist_settings=False
            )
            window.resize(1400, 900)
            window.show()
            window.signals.dock.show()
            client = None
            if host is not None:  # shown first: a quit of qasync's loop ends a hidden one's panes
                client = loop.run_until_complete(host.client("bench window"))
                window.host_view = HostView(window, client)
            gc.freeze()  # as run_app does once the window shows
            try:
                # With a host the rows have their targets (every window is the view of a
                # host); workers in the window itself, which only a window that could
                # start no host runs, are printed as notes.
                label = (
                    "worktrees via host"
                    if host is not None
                    else "worktrees in the window (no host)"
                )
                stalls = _run(loop, window, script, workers, label, targets=host is not None)
            finally:
                script.gate.set()
                loop.run_until_complete(window.aclose())
                if client is not None:
                    loop.run_until_complete(client.aclose())
                window.guard.allow()
                window.close()
    asyncio.set_event_loop(None)
    loop.close()
    return stalls


def _run(
    loop: QtEventLoop,
    window: MainWindow,
    script: WorkerScript,
    workers: int,
    label: str,
    *,
    targets: bool,
) -> dict[str, float]:
    manager = window.pane_manager
    orchestration = Orchestration(manager)
    meter = LatenessMeter()

    async def scenario() -> tuple[float, float, int]:
        meter.start()
        started = time.perf_counter()
        layouts = ["right" if n % 2 else "down" for n in range(workers)]
        opened = await asyncio.gather(
            *(
                manager.start_worker(f"task {n}", None, layouts[n], own_worktree=True)
                for n in range(workers)
            )
        )
        assert all(prepared is not None for _info, prepared in opened)
        opening = time.perf_counter() - started
        opening_stall = meter.stop()
        stall_why.report(f"{label}, opening")
        print(
            f"   {workers} worktrees made and panes opened in {opening:.1f} s;"
            f" longest stall meanwhile {opening_stall * 1000:.0f} ms"
        )
        panes = [info.id for info, _prepared in opened]
        gc.collect()
        stop = asyncio.Event()
        meter.start()  # from here on: the workers stream
        streamed = time.perf_counter()
        script.gate.set()
        reading = asyncio.ensure_future(_read_agents(orchestration, panes, stop))
        await asyncio.sleep(0.5)
        agents = [p for p in (manager.pane(i) for i in panes) if isinstance(p, AgentPane)]
        while any(pane.session.busy for pane in agents):
            await asyncio.sleep(0.05)
        stop.set()
        reads = await reading
        return time.perf_counter() - streamed, opening_stall, reads

    with GcMeter() as collector:
        elapsed, opening_stall, reads = loop.run_until_complete(scenario())
    stall = meter.stop()
    stall_why.report(f"{label}, streaming")
    rows = window.signals.board.rows()
    counted = [row.files_changed for row in rows if row.branch]
    print(
        f"   streamed for {elapsed:.1f} s; {reads} read_agent calls; the board counts"
        f" {counted} files changed per worktree"
    )
    print(
        f"   longest event-loop stall while streaming: {stall * 1000:.1f} ms;"
        f" {meter.summary()}; longest garbage-collector pause {collector.worst * 1000:.1f} ms"
    )

    def row(name: str, stall_ms: float, frames: float = 1.0) -> None:
        if targets:
            budget.stall_row(name, stall_ms, frames=frames)
        else:
            budget.stall_note(name, stall_ms)

    row(f"{label}: longest stall opening {workers} workers", opening_stall * 1000, 2)
    row(f"{label}: longest stall, {workers} workers streaming", stall * 1000)
    row(f"{label}: 99th percentile lateness, {workers} workers", meter.p99() * 1000, 0.5)
    return {
        "opening": opening_stall * 1000,
        "streaming": stall * 1000,
        "p99": meter.p99() * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--deltas", type=int, default=300)
    parser.add_argument("--rate", type=float, default=50.0, help="deltas per second per worker")
    options = parser.parse_args()
    bench(options.files, options.workers, options.deltas, options.rate)


if __name__ == "__main__":
    main()
