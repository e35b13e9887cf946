"""Panes must not freeze the window, however much their programs print.

1. Emulators side by side on the same mixed text + colour codes: avt (what the panes
   use) against pyte's Screen and HistoryScreen (the usual pure-Python choice).
2. Flood a real terminal pane: `cat` of 50 MB of mixed text and colour codes in a real
   pty, drained by the pane's relay process (core/terminal/pty_drain.py), read, interpreted
   and painted by the pane; its throughput against the emulator
   alone on the same bytes (both clocks start before anything is read: the pane's before
   it is made), checked to have read every byte and to end on the same screen; and the
   longest event-loop stall, measured by a 10 ms timer on the same loop.
3. Eight worker panes opened, then streaming at once from the scripted relay over
   loopback HTTP, each with its own chat view: the longest stall opening them (up to
   their first paints), then streaming at 50 deltas/s each, then unpaced (a flood). One
   pane is opened and closed first, unmeasured: what a process sets up once (fonts,
   icons, Markdown, Pygments) the window's own chat has set up before any worker opens.
   These sessions run in the window's process, as only a window that could start no
   host runs them: printed as notes; bench_host.py's "panes via host" rows, the same
   panes viewing a real host, carry the targets.

    python bench/bench_panes.py [--megabytes 50] [--workers 8] [--deltas 1500]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import budget  # noqa: E402  (bench/budget.py: the frame-budget table)
import stall_why  # noqa: E402  (MELGUI_BENCH_WHY=1: why each stall, printed)
from PySide6.QtCore import QEvent, QEventLoop, QObject, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QWidget  # noqa: E402
from relay_process import RelayProcess  # noqa: E402  (the relay in its own process)

from melgui.core.agent.session import AgentSession  # noqa: E402
from melgui.core.protocol.tooling import ToolRegistry  # noqa: E402
from melgui.core.rules.policy import FixedPolicy  # noqa: E402
from melgui.core.terminal.screen import TerminalScreen  # noqa: E402
from melgui.core.transports.relay import RelayTransport  # noqa: E402
from melgui.ui.panes.agent_pane import AgentPane  # noqa: E402
from melgui.ui.panes.manager import PaneManager, WorkerSpec  # noqa: E402
from melgui.ui.panes.pane_area import PaneArea  # noqa: E402
from melgui.ui.panes.terminal.pane import TerminalPane  # noqa: E402
from tests.fakes import done, pause, text  # noqa: E402

WORDS = [
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "the",
    "lazy",
    "dog",
    "while",
    "tests",
    "run",
    "in",
    "parallel",
]


def make_flood(path: Path, megabytes: float) -> int:
    """Lines of words, a fifth of them coloured (16, 256 and RGB), some bold/underlined."""
    rng = random.Random(5)
    target = int(megabytes * 1_000_000)
    lines: list[str] = []
    size = 0
    while size < target:
        parts = []
        for _ in range(rng.randint(3, 16)):
            word = rng.choice(WORDS)
            roll = rng.random()
            if roll < 0.12:
                word = f"\x1b[{rng.randint(31, 37)}m{word}\x1b[0m"
            elif roll < 0.17:
                word = f"\x1b[1;38;5;{rng.randint(0, 255)}m{word}\x1b[0m"
            elif roll < 0.20:
                r, g, b = (rng.randint(0, 255) for _ in range(3))
                word = f"\x1b[4;38;2;{r};{g};{b}m{word}\x1b[0m"
            parts.append(word)
        line = " ".join(parts) + "\n"
        lines.append(line)
        size += len(line)
        if len(lines) >= 20000:
            with path.open("a") as handle:
                handle.write("".join(lines))
            lines.clear()
    with path.open("a") as handle:
        handle.write("".join(lines))
    return path.stat().st_size


class StallMeter:
    """A 10 ms timer on the loop; the worst lateness of a tick is the longest stall."""

    def __init__(self, interval_ms: int = 10) -> None:
        self.interval = interval_ms / 1000
        self.worst = 0.0
        self._last = time.perf_counter()
        self._timer = QTimer()
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._tick)

    def start(self) -> None:
        self.worst = 0.0
        self._last = time.perf_counter()
        self._timer.start()

    def stop(self) -> float:
        """The longest stall, counting the one running now (since the last tick)."""
        self._timer.stop()
        self._tick()
        return self.worst

    def _tick(self) -> None:
        now = time.perf_counter()
        self.worst = max(self.worst, now - self._last - self.interval)
        self._last = now


def bench_emulators(sample: bytes) -> None:
    import pyte

    print("1. Emulators on the same %.1f MB of mixed text and colour codes" % (len(sample) / 1e6))
    results: dict[str, float] = {}

    def run(name: str, feed: Any) -> None:
        started = time.perf_counter()
        for offset in range(0, len(sample), 65536):
            feed(sample[offset : offset + 65536])
        results[name] = len(sample) / (time.perf_counter() - started) / 1e6

    screen = TerminalScreen(120, 40)
    run("avt (melgui TerminalScreen)", screen.feed)
    pyte_screen = pyte.Screen(120, 40)
    run("pyte Screen", pyte.ByteStream(pyte_screen).feed)
    history = pyte.HistoryScreen(120, 40, history=5000)
    run("pyte HistoryScreen", pyte.ByteStream(history).feed)
    best = results["avt (melgui TerminalScreen)"]
    for name, rate in results.items():
        print(f"   {name:<30} {rate:8.2f} MB/s   ({best / rate:5.1f}x slower than avt)")


def bench_flood(app: QApplication, path: Path, size: int) -> None:
    print(f"2. Terminal pane flooded with `cat` of {size / 1e6:.0f} MB")
    started = time.perf_counter()
    subprocess.run(["cat", str(path)], stdout=subprocess.DEVNULL, check=True)
    cat_time = time.perf_counter() - started

    alone = TerminalScreen(120, 40)  # the emulator alone on the same bytes, no pane
    cpu = time.process_time()
    started = time.perf_counter()
    with path.open("rb") as source:
        while chunk := source.read(65536):
            alone.feed(chunk.replace(b"\n", b"\r\n"))
    alone_time = time.perf_counter() - started
    alone_cpu = time.process_time() - cpu

    expected = size + path.read_bytes().count(b"\n")  # the pty turns each \n into \r\n
    worst = {"paint": 0.0}

    def timed(name: str, function: Any) -> Any:
        def run(*args: Any) -> Any:
            started = time.perf_counter()
            try:
                return function(*args)
            finally:
                worst[name] = max(worst[name], time.perf_counter() - started)

        return run

    # A pane opened and closed first: fonts, the row painter and Qt's first paint are
    # set up once per process (a window opening its first terminal), not per flood.
    warm = TerminalPane("true", path.parent, columns=120, rows=40)
    warm.show()
    app.processEvents()
    warm.view.repaint()
    warm.close_now(0.2)
    app.processEvents()
    gc.collect()  # part 1's pyte screens: their garbage is not this flood's stall

    meter = StallMeter()
    # The window's own event loop, sleeping until something happens (a loop polling
    # with processEvents would wake thousands of times a second and fight the reader
    # thread for the GIL, which the window never does).
    loop = QEventLoop()
    meter.start()
    cpu = time.process_time()
    started = time.perf_counter()  # before the pane exists: its reader starts with it
    pane = TerminalPane(f"cat {path}", path.parent, columns=120, rows=40)
    pane.view.paintEvent = timed("paint", pane.view.paintEvent)  # type: ignore[method-assign]
    pane.resize(1000, 640)
    pane.show()
    pane.stateChanged.connect(lambda _state: loop.quit())
    QTimer.singleShot(600_000, loop.quit)
    if pane.state.name == "running":
        loop.exec()
    pane_time = time.perf_counter() - started
    pane_cpu = time.process_time() - cpu
    stall = meter.stop()
    fed = pane.catch_up()  # every byte the reader interpreted
    last_line = next(line for line in reversed(alone.screen_text().splitlines()) if line.strip())
    complete = fed == expected and last_line in pane.emulator.screen_text()
    state = pane.state
    pane.close_now(0.2)
    print(
        f"   terminal pane        {pane_time:7.2f} s   {fed / pane_time / 1e6:9.1f} MB/s"
        f"   ({pane_time / cat_time:.0f}x cat's time; {pane.view.paints} paints)"
    )
    print(f"   emulator alone       {alone_time:7.2f} s   {expected / alone_time / 1e6:9.1f} MB/s")
    print(f"   cat > /dev/null      {cat_time:7.2f} s   {size / cat_time / 1e6:9.1f} MB/s")
    print(
        f"   CPU of this process: pane {pane_cpu:.2f} s, emulator alone {alone_cpu:.2f} s"
        f" ({pane_cpu / alone_cpu:.2f}x; `cat`, the kernel's pty and the pane's relay"
        " process run beside it, on the other core when there is one free)"
    )
    print(
        f"   the pane read {fed:,} of {expected:,} bytes, ended {state.name}, "
        f"{'on' if complete else 'NOT on'} the emulator's last screen"
    )
    print(f"   longest event-loop stall: {stall * 1000:.1f} ms")
    budget.stall_row(f"terminal: longest stall in a {size / 1e6:.0f} MB flood", stall * 1000)
    budget.report(  # a pane that stopped early (or lost bytes) gets nothing
        "terminal: pane throughput / emulator alone",
        alone_time / pane_time if complete else 0.0,
        target=0.8,
        better="higher",
    )
    if complete:  # how far the pane is from the floor: the bytes read and thrown away
        budget.limit("terminal: flood time / cat > /dev/null (floor)", pane_time / cat_time)
    print(f"   longest paint {worst['paint'] * 1000:.1f} ms; load average {_load()}")


def _load() -> str:
    try:
        return " ".join(f"{value:.1f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


class LatenessMeter(StallMeter):
    """Also keeps every tick's lateness: how often the loop stalls, not only the worst."""

    def __init__(self) -> None:
        super().__init__()
        self.lateness: list[float] = []

    def start(self) -> None:
        self.lateness = []
        if stall_why.ENABLED:
            stall_why.begin()
        super().start()

    def _tick(self) -> None:
        now = time.perf_counter()
        self.lateness.append(now - self._last - self.interval)
        if stall_why.ENABLED:
            stall_why.tick(self._last, now, self.interval)
        super()._tick()

    def p99(self) -> float:
        late = sorted(self.lateness) or [0.0]
        return late[min(len(late) - 1, int(len(late) * 0.99))]

    def summary(self) -> str:
        over = sum(1 for value in self.lateness if value > 0.02)
        return f"99th percentile {self.p99() * 1000:.1f} ms, {over} stalls over 20 ms"


class GcMeter:
    """The longest garbage-collector pause while it runs (it stops the event loop too)."""

    def __init__(self) -> None:
        self.worst = 0.0
        self.generation = 0
        self._started = 0.0

    def __enter__(self) -> GcMeter:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *_exc: object) -> None:
        gc.callbacks.remove(self._callback)

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        elif time.perf_counter() - self._started > self.worst:
            self.worst = time.perf_counter() - self._started
            self.generation = info["generation"]


def bench_workers(
    app: QApplication, workers: int, deltas: int, gap: float, *, host: Any = None
) -> None:
    """`host`: a running `melgui host` process (bench_host.py); the panes' sessions then
    run in it and the window only draws what it sends (rows named "panes via host")."""
    from melgui.ui.runtime.qt_loop import QtEventLoop

    # Parts 1 and 2 leave garbage in reference cycles (pyte's screens: ~270,000 objects);
    # collected in the middle of this part, it alone stalled the loop 200-300 ms.
    gc.collect()

    pace = f"{1 / gap:.0f} deltas/s each" if gap else "as fast as the relay can send"
    print(f"3. {workers} worker panes streaming {deltas} deltas each ({pace}), scripted relay")
    loop = QtEventLoop(app)
    asyncio.set_event_loop(loop)
    chunk = "Streaming **markdown** with `code` and words, "
    # Paragraphs of ten deltas, as a model writes them.
    pieces = [chunk + (f"{n}.\n\n" if n % 10 == 9 else f"{n} ") for n in range(deltas)]
    # The relay in a process of its own, as a real server is: one leg per worker.
    leg = [*_paced([text(piece) for piece in pieces], gap), done()]
    with RelayProcess(*[leg] * workers) as relay, tempfile.TemporaryDirectory() as folder:
        transport = RelayTransport(relay.base_url, "bench-key")

        client = loop.run_until_complete(host.client("bench window")) if host else None

        def factory(spec: WorkerSpec) -> AgentSession:
            if client is not None:
                from melgui.host.remote_session import RemoteSession

                settings = {"connection": "relay", "relay_url": relay.base_url}
                remote: Any = RemoteSession.start(
                    client, folder=folder, model="bench", source=spec.source, settings=settings
                )
                return remote
            return AgentSession(
                transport,
                ToolRegistry(),
                FixedPolicy("all"),
                model="bench",
                role="worker",
                cwd=folder,
                source=spec.source,
            )

        warm_pane(app, loop, folder)
        area = PaneArea()
        area.resize(1400, 900)
        area.show()
        manager = PaneManager(area, folder, worker_factory=factory)
        meter = LatenessMeter()

        paints = PaintWatch()

        # The first paints are watched on each pane and the widgets in it as it is made:
        # a filter on the whole application ran Python for every event of the window
        # (about 2,000 a pane opened), the meter's own cost inside the stalls it measures.
        watching = watch_panes(manager, paints)

        async def run() -> tuple[float, float, float]:
            meter.start()
            started = time.perf_counter()
            for n in range(workers):
                manager.spawn_agent(f"task {n}", None, "right" if n % 2 else "down")
                await asyncio.sleep(0)
            opened = time.perf_counter() - started
            # The last pane's layout and first paint come after spawn_agent returns: the
            # meter runs on until every pane has painted and a couple of frames passed.
            frames_waited = 0
            while frames_waited < 3 or not all(paints.saw(p) for p in _agent_panes(manager)):
                await asyncio.sleep(budget.FRAME_MS / 1000)
                frames_waited += 1
                if frames_waited > 600:
                    break
            opening_stall = meter.stop()
            stall_why.report("opening")
            manager.panesChanged.disconnect(watching)
            meter.start()  # from here on: the panes stream
            panes = _agent_panes(manager)
            await asyncio.sleep(0.2)
            while any(pane.session.busy for pane in panes):
                await asyncio.sleep(0.02)
            return time.perf_counter() - started, opened, opening_stall

        with GcMeter() as collector:
            elapsed, opened, opening_stall = loop.run_until_complete(run())
        stall = meter.stop()
        stall_why.report(pace)
        loop.run_until_complete(_close(manager, transport))
        if client is not None:
            loop.run_until_complete(client.aclose())
        total = workers * sum(len(piece) for piece in pieces)
        print(
            f"   opening {workers} panes (chat view + inspector each): {opened * 1000:.0f} ms,"
            f" longest stall while opening {opening_stall * 1000:.0f} ms"
        )
        print(
            f"   {workers} x {deltas} deltas in {elapsed:.2f} s ({total / elapsed / 1e3:.0f} kB/s)"
        )
        # With a host the rows have their targets: every window is the view of a host
        # (the user's, or one of its own). Agents in the window itself, which only a
        # window that could start no host at all runs, are printed as notes beside them.
        label = "panes via host" if host else "panes in the window (no host)"

        def row(name: str, stall_ms: float, frames: float = 1.0) -> None:
            if host:
                budget.stall_row(name, stall_ms, frames=frames)
            else:
                budget.stall_note(name, stall_ms)

        if gap > 0:
            row(f"{label}: longest stall opening {workers} workers", opening_stall * 1000, 2)
            row(f"{label}: longest stall, {workers} workers streaming", stall * 1000)
            row(f"{label}: 99th percentile lateness, {workers} workers", meter.p99() * 1000, 0.5)
        else:
            row(f"{label}: longest stall, {workers} workers flooding (unpaced)", stall * 1000)
        print(
            f"   longest event-loop stall while streaming: {stall * 1000:.1f} ms;"
            f" {meter.summary()}; longest garbage-collector"
            f" pause {collector.worst * 1000:.1f} ms (generation {collector.generation})"
        )
        area.close()
    asyncio.set_event_loop(None)
    loop.close()


def warm_pane(app: QApplication, loop: asyncio.AbstractEventLoop, folder: str) -> None:
    """A worker pane opened, painted and closed before the meter starts, as bench_flood's
    terminal pane: fonts, icons, Markdown and Pygments are set up once per process (the
    window's own chat does it as the window opens, before any worker), not by the first
    of the eight panes measured."""
    transport = RelayTransport("http://127.0.0.1:9", "warm")  # never asked: no task
    session = AgentSession(
        transport, ToolRegistry(), FixedPolicy("all"), model="bench", role="worker", cwd=folder
    )
    pane = AgentPane(session, None)
    pane.resize(600, 400)
    pane.show()
    deadline = time.perf_counter() + 0.3  # its warm-up of Markdown runs on the next turn
    while time.perf_counter() < deadline:
        app.processEvents()
    pane.repaint()
    pane.bridge.detach()
    pane.close()
    pane.deleteLater()
    loop.run_until_complete(session.aclose())
    loop.run_until_complete(transport.aclose())
    # Deleted now, not in the meter's time (processEvents leaves deferred deletions).
    app.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    app.processEvents()
    gc.collect()


def watch_panes(manager: PaneManager, paints: QObject) -> Any:
    """`paints` watches each agent pane, and the widgets in it, as the pane is made (its
    panesChanged comes before any paint): the same first paints as a filter on the whole
    application, without filtering the window's every event meanwhile. Returns the slot
    connected to panesChanged."""
    watched: set[int] = set()

    def watch() -> None:
        for pane in _agent_panes(manager):
            if id(pane) not in watched:
                watched.add(id(pane))
                for widget in (pane, *pane.findChildren(QWidget)):
                    widget.installEventFilter(paints)

    manager.panesChanged.connect(watch)
    return watch


def _agent_panes(manager: PaneManager) -> list[AgentPane]:
    return [pane for _, pane in manager.panes() if isinstance(pane, AgentPane)]


class PaintWatch(QObject):
    """Which agent panes have had something inside them painted since it was installed.

    Once a pane has painted, the watch takes itself off the pane and the widgets in it:
    left on, it ran Python for every event of every widget of the eight panes while they
    streamed (about 80% of the Python the window ran from Qt's events then), each a
    wait for the GIL while the render thread renders Markdown: the meter's own cost in
    the streaming stalls it measures, which the window itself does not have."""

    def __init__(self) -> None:
        super().__init__()
        self.painted: set[int] = set()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            widget: QObject | None = watched
            while widget is not None and not isinstance(widget, AgentPane):
                widget = widget.parent()
            if widget is not None and id(widget) not in self.painted:
                self.painted.add(id(widget))
                self._unwatch(widget)
        return False

    def _unwatch(self, pane: QObject) -> None:
        """Off the pane and the widgets in it (safe from inside eventFilter, as Qt says)."""
        for widget in (pane, *pane.findChildren(QWidget)):
            widget.removeEventFilter(self)

    def saw(self, pane: QWidget) -> bool:
        return id(pane) in self.painted


async def _close(manager: PaneManager, transport: RelayTransport) -> None:
    """Close panes and streams while the loop runs: httpx's stream finalizers need a
    running loop, and print tracebacks when Qt runs them outside it."""
    manager.shutdown()
    await transport.aclose()
    gc.collect()
    await asyncio.sleep(0.1)


def _paced(steps: list[Any], gap: float) -> list[Any]:
    if not gap:
        return steps
    paced: list[Any] = []
    for step in steps:
        paced += [step, pause(gap)]
    return paced


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=50.0)
    parser.add_argument("--sample-megabytes", type=float, default=1.0)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--deltas", type=int, default=500)
    parser.add_argument("--rate", type=float, default=50.0, help="deltas per second per worker")
    args = parser.parse_args()
    app = stall_why.application()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "flood.txt"
        size = make_flood(path, args.megabytes)
        with path.open("rb") as handle:
            sample = handle.read(int(args.sample_megabytes * 1_000_000)).replace(b"\n", b"\r\n")
        bench_emulators(sample)
        bench_flood(app, path, size)
    bench_workers(app, args.workers, args.deltas, 1 / args.rate)
    bench_workers(app, args.workers, args.deltas, 0.0)  # unpaced: a flood of deltas
    return budget.verdict()


if __name__ == "__main__":
    raise SystemExit(main())
