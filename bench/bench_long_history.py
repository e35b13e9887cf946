"""Long histories, measured side by side in one run (issue 19).

1. Open stored conversations of 1,000 and of 10,000 messages (the same turns) from the
   history sidebar of the real main window, as a click does: the clock runs from the
   click (reading the messages on the reader thread, resuming them, the new session,
   chat view and inspector) to the new transcript's first paint. Alternated, medians.
   Targets: 1,000 messages ≤ 6 frames, 10,000 ≤ 3× the 1,000 of the same run. The CPU
   time of the same span is printed too: on a loaded machine the wall time is mostly
   the wait for a core, so trees are compared on it (run each tree's copy in turn).
2. The chat view alone on 10,000 messages and on 100 (session built before), in a
   process of its own: the longest stall while the rest of the page is drawn in,
   scrolling from the end to the top and back, and "Show earlier" once; the memory the
   view took.
3. The per-leg cost of the context estimate (what compaction checks before every leg)
   on a 200-turn history (1,200 messages) against a 20-turn one: per leg and per message.

    python bench/bench_long_history.py
"""

from __future__ import annotations

import asyncio
import gc
import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import scratch  # noqa: E402  (bench/scratch.py: temporary folders removed at exit)

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
_SANDBOX = scratch.folder(prefix="melgui-bench-")
os.environ["MELGUI_CONFIG_DIR"] = os.path.join(_SANDBOX, "config")
os.environ["MELGUI_DATA_DIR"] = os.path.join(_SANDBOX, "data")

from PySide6.QtCore import QEvent, QEventLoop, QObject, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from melgui.core.agent.session import AgentSession  # noqa: E402
from melgui.core.config.settings import Settings  # noqa: E402
from melgui.core.protocol.catalog import ToolCatalog  # noqa: E402
from melgui.core.protocol.context_window import ContextWindow  # noqa: E402
from melgui.core.protocol.events import ToolCall  # noqa: E402
from melgui.core.protocol.messages import Conversation, Message  # noqa: E402
from melgui.core.protocol.tooling import ToolRegistry  # noqa: E402
from melgui.core.rules.policy import RulePolicy  # noqa: E402
from melgui.core.transports.openai_compat import OpenAITransport  # noqa: E402
from melgui.ui.chat.chat_view import ChatView  # noqa: E402
from melgui.ui.runtime.bridge import SessionBridge  # noqa: E402
from melgui.ui.runtime.theme import apply_theme  # noqa: E402
from melgui.ui.window.main_window import MainWindow, build_main_window  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
import budget  # noqa: E402  (bench/budget.py: the frame-budget table)

PARAGRAPH = (
    "The agent reads `src/app.py`, finds the **bug** in the parser and proposes a fix:\n\n"
    "```python\ndef parse(text):\n    return [line.strip() for line in text.splitlines()]\n```\n"
)


def history(turns: int) -> Conversation:
    """Turns of: request, two read_file calls with their results, an answer (5 messages)."""
    conversation = Conversation()
    for turn in range(turns):
        conversation.append(Message.user(f"Question {turn}: what does module {turn} do?"))
        calls = (
            ToolCall(f"a{turn}", "read_file", f'{{"path": "src/m{turn}.py"}}'),
            ToolCall(f"b{turn}", "read_file", f'{{"path": "tests/test_m{turn}.py"}}'),
        )
        conversation.append(Message.assistant("Let me look.", calls))
        for call in calls:
            conversation.append(Message.tool_result(call.id, f"# {call.id}\n" + "x = 1\n" * 250))
        conversation.append(Message.assistant(PARAGRAPH * 2))
    return conversation


def messages(count: int) -> Conversation:
    whole = history(count // 5 + 1)
    return Conversation(whole.messages[:count])


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class FirstPaint(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.at: float | None = None

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint and self.at is None:
            self.at = time.perf_counter()
        return False


def make_session(conversation: Conversation) -> AgentSession:
    return AgentSession(
        OpenAITransport("http://127.0.0.1:9/v1", None),
        ToolRegistry(),
        RulePolicy(),
        conversation,
        model="bench",
        role="assistant",
        cwd=_SANDBOX,
    )


def timed(app: QApplication, action: object) -> float:
    started = time.perf_counter()
    action() if callable(action) else None
    app.processEvents()
    return time.perf_counter() - started


def _heartbeat_until(app: QApplication, done: Callable[[], bool]) -> float:
    """The longest gap between 5 ms heartbeats until `done()`: the longest stall."""
    beats = [time.perf_counter()]
    heart = QTimer()
    heart.timeout.connect(lambda: beats.append(time.perf_counter()))
    heart.start(5)
    while not done():
        app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 5)
    app.processEvents()
    heart.stop()
    beats.append(time.perf_counter())
    return max(later - sooner for sooner, later in pairwise(beats))


def open_bench(app: QApplication, count: int) -> dict[str, float]:
    conversation = messages(count)
    before = rss_mb()
    session = make_session(conversation)  # the desk's connection exists before: see below
    started = time.perf_counter()
    chat = ChatView(SessionBridge(session))
    painted = FirstPaint()
    chat.transcript.viewport().installEventFilter(painted)
    chat.resize(900, 1000)
    chat.show()
    while painted.at is None and time.perf_counter() - started < 30:
        app.processEvents()
    first_paint = (painted.at or time.perf_counter()) - started
    backfill = _heartbeat_until(app, lambda: not chat.paging.drawing_in)
    bar = chat.transcript.verticalScrollBar()
    worst = backfill
    for target in [
        *range(bar.maximum(), -1, -bar.pageStep()),
        *range(0, bar.maximum(), bar.pageStep()),
    ]:
        worst = max(worst, timed(app, lambda target=target: bar.setValue(target)))
    earlier = 0.0
    if count > 100:  # "show earlier" draws the page a few messages per tick
        beats: list[float] = []
        heart = QTimer()
        heart.timeout.connect(lambda: beats.append(time.perf_counter()))
        heart.start(5)
        started = time.perf_counter()
        beats.append(started)
        chat.paging.show_more()
        while chat.paging.loading:
            app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 5)
        earlier = time.perf_counter() - started
        app.processEvents()
        heart.stop()
        gaps = [later - sooner for sooner, later in pairwise(beats)]
        worst = max(worst, *gaps)
    after = rss_mb()
    chat.close()
    chat.deleteLater()
    app.processEvents()
    asyncio.run(session.loop.transport.aclose())
    return {
        "messages": len(conversation.messages),
        "first_paint_ms": first_paint * 1000,
        "backfill_stall_ms": backfill * 1000,
        "stall_ms": worst * 1000,
        "earlier_ms": earlier * 1000,
        "rss_mb": after - before,
    }


class NewTranscriptPaint(QObject):
    """The first paint of a chat transcript that is not `old` (watching the whole app:
    the transcript a click makes does not exist when the clock starts)."""

    def __init__(self, window: MainWindow, loop: QEventLoop) -> None:
        super().__init__()
        self.window = window
        self.old = window.chat.transcript
        self.loop = loop
        self.at: float | None = None
        self.cpu_at = 0.0  # the process's CPU clock then (every thread's)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if self.at is None and event.type() == QEvent.Type.Paint:
            owner = watched.parent()
            # The new transcript, once the window shows it (not the one it replaced).
            if owner is not self.old and owner is self.window.chat.transcript:
                self.at = time.perf_counter()
                self.cpu_at = time.process_time()
                self.loop.quit()
        return False


def store_conversation(window: MainWindow, conversation: Conversation) -> str:
    """As the journal leaves it: the messages and a record of every call (decision,
    duration, result), which reopening shows in the inspector."""
    store = window.history.store
    cid = store.create_conversation(str(window.kit.folder), title="bench")
    results = {m.tool_call_id: m.content for m in conversation.messages if m.role == "tool"}
    with store.transaction():
        for seq, message in enumerate(conversation.messages):
            store.put_message(cid, seq, message)
            for call in message.tool_calls:
                store.calls.requested(cid, call)
                store.calls.decided(cid, call.id, "auto")
                store.calls.finished(cid, call.id, "ok", results.get(call.id, ""), 0.01)
    return cid


def click_bench(app: QApplication, window: MainWindow, cid: str) -> tuple[float, float]:
    """Seconds from the sidebar's click on `cid` to the first paint of its transcript,
    and the CPU seconds the process spent meanwhile (on a loaded machine the wall time
    is mostly waiting for a core; the CPU time compares trees side by side).

    The GUI thread waits in an event loop, as the app's does (qasync runs `exec`): a
    loop of `processEvents(WaitForMoreEvents, 5)` keeps the GIL while it waits, and the
    reader thread then took twice as long (10,000 messages: ~250 ms instead of ~115)."""
    loop = QEventLoop()
    painted = NewTranscriptPaint(window, loop)
    app.installEventFilter(painted)
    QTimer.singleShot(60_000, loop.quit)
    started, cpu_started = time.perf_counter(), time.process_time()
    window.history.conversationOpened.emit(cid)  # what a click on its row emits
    if painted.at is None:
        loop.exec()
    app.removeEventFilter(painted)
    first_paint = (painted.at or math.inf) - started
    # The rest of the page drawn in, and the calls' records read after the paint (the
    # inspector's): the next click's clock does not run over this one's tail.
    keeper = window.history_keeper
    _heartbeat_until(app, lambda: not window.chat.paging.drawing_in and not keeper.reading_calls)
    return first_paint, painted.cpu_at - cpu_started


Click = tuple[float, float]  # (seconds to the first paint, CPU seconds meanwhile)


def window_bench(app: QApplication, rounds: int) -> tuple[list[Click], list[Click]]:
    """First paints of 1,000 and of 10,000 messages, alternated."""
    folder = scratch.folder(prefix="melgui-bench-project-")
    settings = Settings(connection="relay", relay_url="http://127.0.0.1:9", model="bench")
    window = build_main_window(folder, settings, api_key="bench-key", persist_settings=False)
    window.resize(1400, 1000)
    window.show()
    gc.freeze()  # as run_app does once the window shows
    ids = {count: store_conversation(window, messages(count)) for count in (100, 1_000, 10_000)}
    _heartbeat_until(app, lambda: True)
    click_bench(app, window, ids[100])  # warm-up: the first reopening's imports and fonts
    small: list[Click] = []
    large: list[Click] = []
    for _ in range(rounds):
        small.append(click_bench(app, window, ids[1_000]))
        large.append(click_bench(app, window, ids[10_000]))
    window.guard.allow()
    window.close()
    window.deleteLater()
    app.processEvents()
    return small, large


def estimate_bench(turns: int, legs: int = 50) -> dict[str, float]:
    session = make_session(history(turns))
    session.compactor.host.catalog = ToolCatalog()  # every built-in tool, as a real leg sends
    session.context.window = ContextWindow(128_000, "server")
    compactor = session.compactor
    fit = compactor.fit(session.conversation.messages)  # warm: the tools' size is cached
    batches = []
    for _ in range(7):  # the fastest batch: this machine is shared
        started = time.perf_counter()
        for _ in range(legs):
            compactor.fit(session.conversation.messages)
        batches.append((time.perf_counter() - started) / legs)
    seconds = min(batches)
    count = len(session.conversation.messages)
    asyncio.run(session.loop.transport.aclose())
    return {
        "messages": count,
        "leg_us": seconds * 1e6,
        "per_message_us": seconds * 1e6 / count,
        "tokens": fit.estimate,
    }


def views_alone() -> tuple[dict[str, float], dict[str, float]]:
    """Part 2 in a process of its own: the memory of a view is the growth of the
    process's resident size, and in this one the window part's freed memory (which a
    view reuses without growing it) changed the 100-message view's figure with whatever
    ran before it, not with the view."""
    child = subprocess.run(
        [sys.executable, __file__, "--views-alone"],
        check=True,
        stdout=subprocess.PIPE,  # its warnings and errors go where this one's go
        text=True,
    )
    small, large = json.loads(child.stdout.strip().splitlines()[-1])
    return small, large


def _views_alone() -> int:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    apply_theme(app, "light")
    open_bench(app, 100)  # warm-up: Qt, Markdown and Pygments loaded
    print(json.dumps([open_bench(app, 100), open_bench(app, 10_000)]))
    return 0


def main() -> int:
    if sys.argv[1:] == ["--views-alone"]:
        return _views_alone()
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    apply_theme(app, "light")
    clicks_small, clicks_large = window_bench(app, rounds=3)
    small_paint = statistics.median(wall for wall, _ in clicks_small)
    large_paint = statistics.median(wall for wall, _ in clicks_large)
    for count, clicks in ((1_000, clicks_small), (10_000, clicks_large)):
        shown = ", ".join(f"{wall * 1000:.0f}" for wall, _ in clicks)
        cpu = statistics.median(cpu for _, cpu in clicks) * 1000
        print(f"click on {count:>6,} messages -> first paint: {shown} ms (CPU median {cpu:.0f} ms)")
    small, large = views_alone()
    for run in (small, large):
        print(
            f"view alone on {run['messages']:>6,.0f} messages: first paint "
            f"{run['first_paint_ms']:.0f} ms, rest of the page drawn in with stalls up to "
            f"{run['backfill_stall_ms']:.0f} ms, longest scroll stall {run['stall_ms']:.0f} ms, "
            f"show earlier drawn in {run['earlier_ms']:.0f} ms, memory +{run['rss_mb']:.1f} MB"
        )
    runs = [(estimate_bench(20), estimate_bench(200)) for _ in range(3)]  # interleaved
    short = min((pair[0] for pair in runs), key=lambda run: run["leg_us"])
    long = min((pair[1] for pair in runs), key=lambda run: run["leg_us"])
    for run in (short, long):
        print(
            f"estimate before a leg, {run['messages']:,.0f} messages (~{run['tokens']:,.0f} "
            f"tokens): {run['leg_us']:.0f} µs per leg, {run['per_message_us']:.2f} µs per message"
        )
    leg_ratio = long["leg_us"] / short["leg_us"]
    size_ratio = long["messages"] / short["messages"]
    print(f"200 vs 20 turns: per-leg ratio {leg_ratio:.1f} (messages ratio {size_ratio:.1f})")
    rows = [
        budget.report(
            "history: first paint of 1,000 messages",
            small_paint * 1000 / budget.FRAME_MS,
            target=6,
            unit="frames",
        ),
        budget.report(
            "history: first paint, 10,000 ÷ 1,000 messages", large_paint / small_paint, target=3
        ),
        budget.stall_row(
            "history: longest stall scrolling and showing earlier, 10,000",
            large["stall_ms"],
            frames=2,
        ),
        budget.report(
            "history: memory of the view, 10,000 ÷ 100 messages",
            large["rss_mb"] / max(small["rss_mb"], 0.1),
            target=2.0,
        ),
        budget.report(
            "context estimate per leg: 200-turn cost ÷ size ratio",
            leg_ratio / size_ratio,
            target=1.0,
        ),
    ]
    print(budget.table(rows))
    return budget.verdict()


if __name__ == "__main__":
    raise SystemExit(main())
