"""How soon the window shows that two of 8 workers' changes overlap, and what showing it
costs the GUI thread.

Eight workers, each in its own git worktree of a 10,000-file repository, in the real main
window with the agents board open, on the scripted relay. Each streams paced prose and
edits a file of its own (`edit_file`), then streams again and edits a file it shares
with one other worker (pairs 0-1, 2-3, 4-5, 6-7, on touching lines: a conflict to be).
Nothing polls: each tool call's end makes the overlap watch read that worktree with git
in a thread, compare, and tell the board, whose view and the panes' notes redraw.

Measured, per pair: from the second of the two edits (the file's mtime in the worktree)
to the moment both the board's rows and both panes' notes show the conflict to be
(target 1 s); and the GUI thread's own CPU time in the costliest single step of that
path (comparing the worktrees' changes, redrawing the board, updating the notes; target 1
frame). Its wall time is printed beside it: on a loaded machine a step is preempted, and
the wall time then says more about the load than about the step. So is the longest
event-loop stall while they stream.

    python bench/bench_overlaps.py [--files N] [--workers 8] [--deltas 100]
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import scratch  # noqa: E402  (bench/scratch.py: temporary folders removed at exit)

sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
_SANDBOX = scratch.folder(prefix="melgui-bench-overlaps-")
os.environ["MELGUI_CONFIG_DIR"] = os.path.join(_SANDBOX, "config")
os.environ["MELGUI_DATA_DIR"] = os.path.join(_SANDBOX, "data")
os.environ["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent"  # no desktop popups

import budget  # noqa: E402  (bench/budget.py: the frame-budget table)
from bench_panes import StallMeter  # noqa: E402
from bench_worktrees import make_repository  # noqa: E402
from PySide6.QtWidgets import QApplication, QLabel  # noqa: E402

from melgui.core.config.settings import Settings  # noqa: E402
from melgui.core.protocol.catalog import DEFAULT_MODES  # noqa: E402
from melgui.ui.board.overlap_notes import NOTE_NAME  # noqa: E402
from melgui.ui.panes.agent_pane import AgentPane  # noqa: E402
from melgui.ui.runtime.qt_loop import QtEventLoop  # noqa: E402
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

CHUNK = "Streaming **markdown** with `code` and words, "


def own_file(worker: int, files: int) -> int:
    return (worker * 97 + 11) % files


def shared_file(worker: int, files: int) -> int:
    return (worker // 2 * 89 + 5_003) % files


def path_of(i: int) -> str:
    return f"pkg{i // 100:03d}/mod{i // 10 % 10}/file{i:05d}.py"


class WorkerScript:
    """Prose then an edit of the worker's own file; prose then an edit of the file it
    shares with its pair; prose and done. The first leg waits at `gate`."""

    def __init__(self, deltas: int, gap: float, files: int) -> None:
        self.gate = threading.Event()
        self.files = files
        self.prose = [CHUNK + (f"{n}.\n\n" if n % 10 == 9 else f"{n} ") for n in range(deltas)]
        self.gap = gap

    def leg(self, request: RecordedRequest) -> list[Any]:
        task = next(m.get("content", "") for m in request.messages if m.get("role") == "user")
        worker = int(str(task).split()[-1])
        leg = sum(1 for m in request.messages if m.get("role") == "tool")
        steps: list[Step] = [hold(self.gate, timeout=600)] if leg == 0 else []
        for piece in self.prose:
            steps += [text(piece), pause(self.gap)]
        if leg >= 2:
            return [*steps, done()]
        i = own_file(worker, self.files) if leg == 0 else shared_file(worker, self.files)
        old = f"VALUE = {i}\n" if worker % 2 == 0 or leg == 0 else f"VALUE = {i}\n# line\n"
        new = old.replace(f"VALUE = {i}", f"VALUE = {i + 1_000_000 * (worker + 1)}")
        if worker % 2 and leg == 1:
            new = new.replace("# line", "# line changed too")
        edit = {"path": path_of(i), "old_string": old, "new_string": new}
        return [*steps, tool_calls(tool_call("edit_file", edit))]


class Timings:
    """The GUI-thread steps of the overlap path, each timed; when each pair was shown."""

    def __init__(self) -> None:
        self.steps: list[tuple[float, float, str]] = []  # (wall, CPU of the thread, what)
        self.shown: dict[int, float] = {}  # pair -> time.time() when both sides showed it

    def timed(self, step: Callable[[], None], what: str) -> Callable[[], None]:
        def run() -> None:
            started, cpu = time.perf_counter(), time.thread_time()
            step()
            self.steps.append((time.perf_counter() - started, time.thread_time() - cpu, what))

        return run


def _settings(relay: ScriptedRelay) -> Settings:
    modes = {**DEFAULT_MODES, "edit_file": "auto"}
    return Settings(
        connection="relay", relay_url=relay.url, model="bench", approval_modes=modes,
        worker_worktrees=True,
    )  # fmt: skip


def _instrument(window: MainWindow, timings: Timings, panes: list[int]) -> None:
    view, notes = window.signals.view, window.parallel.notes
    watch = window.signals.board.overlaps
    assert watch is not None
    watch._compare = timings.timed(watch._compare, "compare")  # type: ignore[method-assign]
    view_refresh, notes_refresh = view.refresh, notes.refresh

    def shown_check() -> None:
        for pair in range(len(panes) // 2):
            if pair in timings.shown:
                continue
            sides = panes[2 * pair : 2 * pair + 2]
            items = [view.item(f"pane-{pane}") for pane in sides]
            frames = [window.pane_manager.area.frame(pane) for pane in sides]
            labels = [f.findChild(QLabel, NOTE_NAME) if f is not None else None for f in frames]
            if all(i is not None and "conflict" in i.text(5) for i in items) and all(
                label is not None and not label.isHidden() and "Conflicts to be" in label.text()
                for label in labels
            ):
                timings.shown[pair] = time.time()

    def view_step() -> None:
        view_refresh()
        shown_check()

    def notes_step() -> None:
        notes_refresh()
        shown_check()

    view.refresh = timings.timed(view_step, "board")  # type: ignore[method-assign]
    notes.refresh = timings.timed(notes_step, "notes")  # type: ignore[method-assign]


def bench(files: int, workers: int, deltas: int, rate: float) -> int:
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    loop = QtEventLoop(app)
    asyncio.set_event_loop(loop)
    print(
        f"{workers} workers in their own worktrees of a {files:,}-file repository, "
        f"3 legs of {deltas} deltas each ({rate:.0f} deltas/s), board open"
    )
    with tempfile.TemporaryDirectory(prefix="melgui-bench-project-") as temp:
        project = Path(temp) / "project"
        project.mkdir()
        make_repository(project, files)
        script = WorkerScript(deltas, 1 / rate, files)
        with ScriptedRelay() as relay:
            relay.on(lambda r: r.tool_role == "worker", script.leg)
            window = build_main_window(
                str(project), _settings(relay), api_key="bench", persist_settings=False
            )
            window.resize(1400, 900)
            window.show()
            window.signals.dock.show()
            gc.freeze()
            try:
                return _run(loop, window, script, workers, files)
            finally:
                script.gate.set()
                loop.run_until_complete(window.aclose())
                window.guard.allow()
                window.close()
                # Closed, the loop waits for its executor's threads (QThreads under qasync):
                # one still counting at exit aborted the process ("QThread: Destroyed while
                # thread is still running", exit -6, once in three rounds).
                loop.close()


def _run(
    loop: QtEventLoop, window: MainWindow, script: WorkerScript, workers: int, files: int
) -> int:
    manager = window.pane_manager
    timings = Timings()
    meter = StallMeter()

    async def scenario() -> list[int]:
        opened = [
            await manager.start_worker(f"task {n}", None, "right" if n % 2 else "down",
                                       own_worktree=True)
            for n in range(workers)
        ]  # fmt: skip
        panes = [info.id for info, _prepared in opened]
        _instrument(window, timings, panes)
        gc.collect()
        meter.start()
        script.gate.set()
        await asyncio.sleep(0.5)
        agents = [p for p in (manager.pane(i) for i in panes) if isinstance(p, AgentPane)]
        while any(pane.session.busy for pane in agents):
            await asyncio.sleep(0.05)
        deadline = time.monotonic() + 10
        while len(timings.shown) < workers // 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        return panes

    panes = loop.run_until_complete(scenario())
    stall = meter.stop()
    latencies = []
    for pair in range(workers // 2):
        sides = [manager.pane(pane) for pane in panes[2 * pair : 2 * pair + 2]]
        edited = max(
            (p.worktree.path / path_of(shared_file(2 * pair, files))).stat().st_mtime
            for p in sides
            if isinstance(p, AgentPane) and p.worktree is not None
        )
        shown = timings.shown.get(pair)
        latencies.append(shown - edited if shown is not None else float("nan"))
    walls = sorted(timings.steps)
    worst_step, worst_cpu, worst_what = walls[-1] if walls else (0.0, 0.0, "")
    cpu = max((step[1] for step in walls), default=0.0)
    print(
        "   edit to overlap shown (board and both panes), per pair: "
        + ", ".join(f"{x * 1000:.0f} ms" for x in latencies)
    )
    print(
        f"   GUI-thread steps of the overlap path: {len(walls)}, worst {worst_step * 1000:.2f} ms"
        f" ({worst_what}, of which CPU {worst_cpu * 1000:.2f} ms), median "
        f"{walls[len(walls) // 2][0] * 1000:.2f} ms; the most CPU one step took "
        f"{cpu * 1000:.2f} ms; longest event-loop stall while streaming {stall * 1000:.1f} ms"
    )
    worst = max(latencies) if all(x == x for x in latencies) else float("nan")
    rows = [
        budget.report(f"overlaps: edit to overlap shown, {workers} workers (worst) / 1 s",
                      worst, target=1.0),
        budget.stall_row(
            f"overlaps: GUI-thread CPU of the costliest step showing one, {workers} workers",
            cpu * 1000,
        ),
    ]  # fmt: skip
    print(budget.table(rows))
    return budget.verdict()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--deltas", type=int, default=100)
    parser.add_argument("--rate", type=float, default=50.0, help="deltas per second per worker")
    options = parser.parse_args()
    return bench(options.files, options.workers, options.deltas, options.rate)


if __name__ == "__main__":
    raise SystemExit(main())
