"""The window as a view of `melgui host`: the same eight worker panes as bench_panes.py,
their sessions running in a real host process (its own interpreter, its own GIL) and the
window drawing only what the host sends, one batch per session per frame.

Then the protocol's cost: the CPU of 20,000 streamed tokens through host and view against
the same session in one process; a reattach: a window attaching to a host that runs
8 sessions of 1,000 messages, to the first paint of every pane on screen (target 6
frames; the panes that do not fit wait in tabs), with notes on when every conversation
is whole and the longest stall that costs; and launches of real `melgui` processes,
alone (no host at all: launch_probe.py's `--alone`) and as the host's view (starting a
host), alternated: launch to the first window painted (target 1.1x) and idle RSS of
window + host against the window alone (1.3x). A third launch, `melgui --no-host` (a host
of the window's own, its child), is printed beside them, not a row.

Rows "panes via host: ..." carry the panes' targets (every window is the view of a host);
bench_panes.py prints the same panes with the sessions in the window's process, which
only a window that could start no host runs, as notes. Rows "worktrees via host" are
bench_worktree_workers.py's with each worker's session in the host, in its own worktree;
both sides run here, one after the other, and their ratios are printed.

    python bench/bench_host.py [--workers 8] [--deltas 500] [--rate 50]
    python bench/bench_host.py --only reattach   # parts: panes, cost, reattach, worktrees, launch
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import budget  # noqa: E402
import stall_why  # noqa: E402
from bench_panes import bench_workers, watch_panes  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
from relay_process import RelayProcess  # noqa: E402

from melgui.core.agent.session import AgentSession  # noqa: E402
from melgui.core.protocol.events import ToolCall  # noqa: E402
from melgui.core.protocol.messages import Message  # noqa: E402
from melgui.core.protocol.tooling import ToolRegistry  # noqa: E402
from melgui.core.rules.policy import FixedPolicy  # noqa: E402
from melgui.core.store import open_store  # noqa: E402
from melgui.core.transports.relay import RelayTransport  # noqa: E402
from melgui.desk.recording import start_recording  # noqa: E402
from melgui.host.remote_session import RemoteSession  # noqa: E402
from tests.fakes import done, text  # noqa: E402
from tests.fakes.host_process import HostProcess, runtime_dir  # noqa: E402


def stored_history(store: Any, folder: str, count: int) -> str:
    """A conversation of `count` messages in the history, as the journal leaves it:
    turns of a question, two read_file calls with their results, an answer."""
    messages: list[Message] = []
    turn = 0
    while len(messages) < count:
        calls = (
            ToolCall(f"a{turn}", "read_file", f'{{"path": "src/m{turn}.py"}}'),
            ToolCall(f"b{turn}", "read_file", f'{{"path": "tests/test_m{turn}.py"}}'),
        )
        messages += [
            Message.user(f"Question {turn}: what does module {turn} do?"),
            Message.assistant("Let me look.", calls),
            *[Message.tool_result(c.id, f"# {c.id}\n" + "x = 1\n" * 250) for c in calls],
            Message.assistant("It parses lines. " * 40),
        ]
        turn += 1
    messages = messages[:count]
    while messages[-1].role != "assistant" or messages[-1].tool_calls:
        messages.pop()
    cid = str(store.create_conversation(folder, title="bench"))
    with store.transaction():
        for seq, message in enumerate(messages):
            store.put_message(cid, seq, message)
            for call in message.tool_calls:
                store.calls.requested(cid, call)
                store.calls.decided(cid, call.id, "auto")
                store.calls.finished(cid, call.id, "ok", "x", 0.01)
    return cid


REATTACH_LIMIT = 180.0  # seconds from the attach to every pane painted, at most


def all_painted(manager: Any, paints: Any, sessions: int) -> bool:
    """Every session has its pane and every pane on screen has painted. Panes that do not
    fit side by side move to tabs of their own (the window's layout), where nothing
    paints until the tab is shown."""
    from bench_panes import _agent_panes

    panes = _agent_panes(manager)
    shown = [pane for pane in panes if pane.isVisible()]
    return len(panes) == sessions and bool(shown) and all(paints.saw(p) for p in shown)


def first_paints() -> Any:
    from bench_panes import PaintWatch

    class FirstPaints(PaintWatch):
        """PaintWatch that keeps when each pane first painted (perf_counter seconds)."""

        def __init__(self) -> None:
            super().__init__()
            self.at: dict[int, float] = {}

        def eventFilter(self, watched: Any, event: Any) -> bool:
            seen = set(self.painted)
            super().eventFilter(watched, event)
            for pane in self.painted - seen:
                self.at[pane] = time.perf_counter()
            return False

    return FirstPaints()


def bench_reattach(app: QApplication, host: HostProcess, sessions: int, count: int) -> None:
    """A window attaching to a host that runs `sessions` worker sessions of `count`
    messages each: from the attach to the first paint of the panes on screen (the rest
    wait in tabs of their own), and to every pane built."""
    from bench_panes import StallMeter, _agent_panes

    from melgui.core.config.settings import Settings
    from melgui.ui.runtime.qt_loop import QtEventLoop
    from melgui.ui.window.host_view.view import attach_host
    from melgui.ui.window.main_window import build_main_window

    print(f"5. reattach: a window to a host with {sessions} sessions of {count:,} messages")
    loop = QtEventLoop(app)
    asyncio.set_event_loop(loop)
    notes: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        folder = os.path.realpath(folder)
        store = open_store()
        cids = [stored_history(store, folder, count) for _ in range(sessions)]
        store.close()

        async def run() -> float:
            opener = await host.client("bench opener")
            for cid in cids:
                await opener.call("session/open", folder=folder, conversation=cid, model="bench")
            await opener.aclose()
            window = build_main_window(folder, Settings(model="bench"), persist_settings=False)
            window.resize(1400, 900)
            window.show()
            await asyncio.sleep(0.3)
            client = await host.client("bench window")
            paints = first_paints()
            watch = watch_panes(window.pane_manager, paints)
            started = time.perf_counter()
            await attach_host(window, client)
            while not all_painted(window.pane_manager, paints, sessions):
                if time.perf_counter() - started > REATTACH_LIMIT:  # say so, never hang
                    panes = _agent_panes(window.pane_manager)
                    print(
                        f"   NOT painted after {REATTACH_LIMIT:.0f} s: {len(panes)} of {sessions}"
                        f" panes, {sum(paints.saw(p) for p in panes)} painted; no row"
                    )
                    break
                await asyncio.sleep(0.002)
            built = time.perf_counter() - started
            shown = [p for p in _agent_panes(window.pane_manager) if p.isVisible()]
            elapsed = (
                max((paints.at.get(id(p), built + started) for p in shown), default=built + started)
                - started
            )
            print(
                f"   {len(shown)} panes on screen, the others in tabs of their own;"
                f" all {sessions} built, those on screen painted, {built * 1000:.0f} ms after"
            )
            # Then the rest of each conversation, a session at a time: how long, and the
            # longest stall it costs the window.
            stalls = StallMeter()
            stalls.start()
            panes = _agent_panes(window.pane_manager)
            while (
                any(getattr(p.session, "paged", False) for p in panes)
                and time.perf_counter() - started < 60
            ):
                await asyncio.sleep(0.005)
            whole = (time.perf_counter() - started) * 1000
            fill_stall = stalls.stop() * 1000
            print(
                f"   every conversation whole {whole:.0f} ms after the attach,"
                f" longest stall meanwhile {fill_stall:.0f} ms"
            )
            notes.extend([built * 1000, whole, fill_stall])
            window.pane_manager.panesChanged.disconnect(watch)
            counts = {
                len(p.session.conversation.messages) for p in _agent_panes(window.pane_manager)
            }
            print(f"   the panes on screen first painted {elapsed * 1000:.0f} ms after the attach")
            print(f"   messages per pane: {sorted(counts)}")
            for pane in _agent_panes(window.pane_manager):
                pane.session.keep_running = True
            window.guard.allow()
            window.hide()
            await window.aclose()
            await client.aclose()
            return elapsed

        elapsed = loop.run_until_complete(run())
    asyncio.set_event_loop(None)
    loop.close()
    if elapsed > REATTACH_LIMIT:
        return  # not painted: the row is missing, with the line above as its reason
    budget.stall_row(
        f"host: reattach, {sessions} sessions of {count:,} messages, to the first paint on screen",
        elapsed * 1000,
        frames=6,
    )
    if len(notes) == 3:
        name = f"host: reattach, {sessions} sessions of {count:,} messages"
        budget.note(f"{name}, to every pane built", notes.pop(0) / budget.FRAME_MS, "frames")
        budget.note(f"{name}, to every conversation whole", notes[0] / budget.FRAME_MS, "frames")
        budget.note(f"{name}, longest stall taking the rest", notes[1] / budget.FRAME_MS, "frames")


IDLE_SETTLE = 3.0  # seconds after the window painted (and attached) before its RSS is read
LAUNCH_LIMIT = 120.0


def rss_kib(pid: int) -> int:
    """A process's resident set, from /proc (0 when it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    line = next((line for line in status.splitlines() if line.startswith("VmRSS:")), "")
    return int(line.split()[1]) if line else 0


# How a launch runs: "alone" (no host at all), "hosted" (the user's host, started by the
# window), "own" (`--no-host`: a host of the window's own, its child).
LAUNCH_ARGS = {"alone": ["--alone"], "hosted": [], "own": ["--no-host"]}


def launch_once(folder: str, mode: str) -> tuple[float, float, int, int]:
    """`melgui FOLDER` as a real process on a runtime folder of its own (so hosted, the
    window starts one), as `mode` says: seconds to its first paint and to its attach (nan
    alone), then its RSS and its host's (KiB) after IDLE_SETTLE seconds idle."""
    with_host = mode != "alone"
    with runtime_dir() as runtime:
        env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "QT_QPA_PLATFORM": "offscreen",
               "PYTHONPATH": str(ROOT), "MELGUI_PROBE_T0": repr(time.time())}  # fmt: skip
        args = [sys.executable, str(ROOT / "bench" / "launch_probe.py")]
        window = subprocess.Popen(
            [*args, *LAUNCH_ARGS[mode], folder],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        said: dict[str, float] = {}
        host_pid = 0
        try:
            assert window.stdout is not None
            wanted = {"painted", "attached"} if with_host else {"painted"}
            deadline = time.monotonic() + LAUNCH_LIMIT
            if mode == "own":
                wanted.add("host")
            while not wanted <= said.keys() and time.monotonic() < deadline:
                line = window.stdout.readline()
                if not line:
                    break
                what, _, seconds = line.partition(" ")
                said[what] = float(seconds)
            if not wanted <= said.keys():
                raise RuntimeError(f"the window said only {sorted(said)} ({mode})")
            time.sleep(IDLE_SETTLE)
            if mode == "own":  # the window's child: it ends with the window
                host_pid = int(said["host"])
            elif with_host:
                described = json.loads((runtime / "melgui" / "host.json").read_text())
                host_pid = int(described["pid"])
            memory = rss_kib(window.pid), rss_kib(host_pid) if host_pid else 0
        finally:
            window.terminate()
            window.wait(30)
            if host_pid and mode == "own":
                while rss_kib(host_pid):  # ended by its window
                    time.sleep(0.05)
            elif host_pid:
                subprocess.run(  # the window started it detached: it outlives the window
                    [sys.executable, "-m", "melgui", "host", "--stop"], env=env,
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30,
                )  # fmt: skip
                while rss_kib(host_pid):
                    time.sleep(0.05)
    return said["painted"], said.get("attached", math.nan), *memory


def bench_launch(runs: int) -> None:
    """Launch to the first window painted, and idle memory: the window alone against the
    window starting the melgui host, real processes, alternated `runs` times."""
    print(f"6. launch: the window alone (no host) vs the host's view, {runs} runs each")
    alone: list[tuple[float, float, int, int]] = []
    hosted: list[tuple[float, float, int, int]] = []
    own: list[tuple[float, float, int, int]] = []
    with tempfile.TemporaryDirectory() as folder:
        launch_once(folder, "alone")  # not counted: the first start fills caches
        for _ in range(runs):
            alone.append(launch_once(folder, "alone"))
            hosted.append(launch_once(folder, "hosted"))
            own.append(launch_once(folder, "own"))
    paint_alone = statistics.median(run[0] for run in alone)
    paint_hosted = statistics.median(run[0] for run in hosted)
    attached = statistics.median(run[1] for run in hosted)
    rss_alone = statistics.median(run[2] for run in alone)
    rss_window = statistics.median(run[2] for run in hosted)
    rss_host = statistics.median(run[3] for run in hosted)
    print(
        f"   first paint: alone {paint_alone * 1000:.0f} ms, with host {paint_hosted * 1000:.0f}"
        f" ms (attached to the host it started at {attached * 1000:.0f} ms)"
    )
    print(
        f"   idle RSS: alone {rss_alone / 1024:.0f} MiB; with host window"
        f" {rss_window / 1024:.0f} MiB + host {rss_host / 1024:.0f} MiB"
    )
    paint_own = statistics.median(run[0] for run in own)
    attached_own = statistics.median(run[1] for run in own)
    rss_own = statistics.median(run[2] + run[3] for run in own)
    print(
        f"   --no-host (a host of the window's own): first paint {paint_own * 1000:.0f} ms"
        f" (x{paint_own / paint_alone:.2f} alone), its host attached at"
        f" {attached_own * 1000:.0f} ms; idle RSS window + its host {rss_own / 1024:.0f} MiB"
        f" (x{rss_own / rss_alone:.2f} alone)"
    )
    budget.report(
        "host: launch to first window painted, with host / window alone",
        paint_hosted / paint_alone,
        target=1.1,
    )
    budget.report(
        "host: idle RSS, window + host / window alone",
        (rss_window + rss_host) / rss_alone,
        target=1.3,
    )


def process_cpu(pid: int) -> float:
    """A process's CPU seconds so far (user + system), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_protocol_cost(host: HostProcess, tokens: int) -> None:
    """CPU of one turn of `tokens` streamed deltas: host and view together against the
    same session in one process, recorded in a history as the host records it (the
    relay's own CPU is in neither)."""
    print(f"4. the protocol's cost: {tokens:,} streamed tokens, host + view vs one process")
    leg = [*[text(f"tok{n} ") for n in range(tokens)], done()]
    with RelayProcess(leg, leg) as relay, tempfile.TemporaryDirectory() as folder:

        async def alone() -> float:
            # The same work as the host's: the turn recorded in a history, its wire log too.
            store = open_store(Path(folder) / "alone-data")
            recording = start_recording(store, folder, model="bench", role="worker")
            transport = RelayTransport(relay.base_url, "bench-key")
            session = AgentSession(
                transport, ToolRegistry(), FixedPolicy("all"), recording.conversation,
                model="bench", role="worker", cwd=folder, wire=recording.record_wire,
            )  # fmt: skip
            recording.attach(session)
            seen: list[object] = []
            session.subscribe(seen.append)
            started = time.process_time()
            session.submit("stream")
            await session.wait_idle()
            spent = time.process_time() - started
            await session.aclose()
            await transport.aclose()
            recording.close()
            store.close()
            return spent

        async def through_host() -> tuple[float, float]:
            assert host.process is not None
            client = await host.client("bench view")
            settings = {"connection": "relay", "relay_url": relay.base_url}
            session = RemoteSession.start(client, folder=folder, model="bench", settings=settings)
            seen: list[object] = []
            session.subscribe(seen.append)
            while not session.session_id:
                await asyncio.sleep(0.01)
            host_before, view_before = process_cpu(host.process.pid), time.process_time()
            session.submit("stream")
            await asyncio.sleep(0.1)
            await session.wait_idle()
            view = time.process_time() - view_before
            hosted = process_cpu(host.process.pid) - host_before
            await session.aclose()
            await client.aclose()
            return hosted, view

        one = asyncio.run(alone())
        hosted, view = asyncio.run(through_host())
    print(
        f"   one process {one:.2f} s CPU; host {hosted:.2f} s + view {view:.2f} s ="
        f" {hosted + view:.2f} s ({(hosted + view) / one:.2f}x)"
    )
    budget.report(
        f"host: CPU of {tokens:,} streamed tokens, host + view / one process",
        (hosted + view) / one,
        target=1.2,
    )


def bench_worktrees(host: HostProcess, files: int, workers: int, deltas: int, rate: float) -> None:
    """bench_worktree_workers.py twice in one run, its workers in the window's process and
    then in the host (each in its own worktree), and the ratios side by side."""
    import bench_worktree_workers

    alone = bench_worktree_workers.bench(files, workers, deltas, rate)
    hosted = bench_worktree_workers.bench(files, workers, deltas, rate, host=host)
    print("   worktrees, in the window / via host (ms):")
    for name, ms in alone.items():
        ratio = hosted[name] / ms if ms else float("nan")
        print(f"     {name:<10} {ms:8.0f} {hosted[name]:8.0f}   x{ratio:.2f}")


PARTS = ("panes", "cost", "reattach", "worktrees", "launch")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--deltas", type=int, default=500)
    parser.add_argument("--rate", type=float, default=50.0, help="deltas per second per worker")
    parser.add_argument("--tokens", type=int, default=20_000)
    parser.add_argument("--files", type=int, default=10_000, help="the worktrees' repository")
    parser.add_argument("--launches", type=int, default=3, help="launch runs, each side")
    parser.add_argument("--only", choices=PARTS, action="append", help="run only these parts")
    args = parser.parse_args()
    app = stall_why.application()  # MELGUI_BENCH_WHY=1: why each stall of the panes
    with tempfile.TemporaryDirectory() as data, runtime_dir() as runtime:
        os.environ["MELGUI_DATA_DIR"] = data  # the host's journal and history: thrown away
        os.environ["MELGUI_CONFIG_DIR"] = os.path.join(data, "config")
        host = HostProcess(runtime).start()
        try:
            parts = args.only or PARTS
            if "panes" in parts:
                bench_workers(app, args.workers, args.deltas, 1 / args.rate, host=host)
                bench_workers(app, args.workers, args.deltas, 0.0, host=host)
            if "cost" in parts:
                bench_protocol_cost(host, args.tokens)
            if "reattach" in parts:
                bench_reattach(app, host, args.workers, 1000)
            if "worktrees" in parts:
                bench_worktrees(host, args.files, args.workers, 300, args.rate)
            if "launch" in parts:
                bench_launch(args.launches)
        finally:
            host.stop()
    return budget.verdict()


if __name__ == "__main__":
    raise SystemExit(main())
