"""The chat view under load, measured side by side in one run.

1. Stream 20,000 tokens of Markdown with code blocks from the scripted relay (real
   HTTP over loopback from a process of its own, real RelayTransport, AgentSession,
   bridge and ChatView) as fast as it sends them.
   - Cost per character (event handling + render + paint, CPU time of the GUI thread)
     over the first and the last 8,000 characters (about 2,000 tokens), and their ratio
     (target < 1.2). Per character, not per delta: the transport hands the view what
     one socket read holds as one delta, a few hundred characters on a fast stream.
     These runs render once 160 characters are pending (a delta larger than that alone)
     on the GUI thread and paint at once, so the whole cost is counted on one thread.
   - The longest stall as shipped (segments rendered on the render thread, inserted by
     the shared timer under its time budget), target ≤ 1 frame: how long an event
     posted to the GUI thread from outside waits to be handled, as a key press does
     (bench/input_probe.py; the panes benchmarks' Qt timer measures the same). Beside
     it, how late an asyncio heartbeat wakes (two passes of the loop under qasync), and
     the turn's longest garbage collection (a full one walks every object the process
     holds: a stall of that length is the collector's, not the view's).
2. Stream 20,000 tokens of reasoning, then 20,000 tokens of answer, the same way:
   the reasoning grows in an open Thinking block that folds when the answer starts.
   Cost per character over the first and last 8,000 of each, their ratios, and the
   longest stall as shipped.

(Opening conversations of 1,000 and 10,000 messages is bench_long_history.py.)

    python bench/bench_chat_view.py [--tokens N] [--runs N] [--reasoning N]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
import scratch  # noqa: E402  (bench/scratch.py: temporary folders removed at exit)

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
_SANDBOX = scratch.folder(prefix="melgui-bench-")
os.environ["MELGUI_CONFIG_DIR"] = os.path.join(_SANDBOX, "config")
os.environ["MELGUI_DATA_DIR"] = os.path.join(_SANDBOX, "data")

import budget  # noqa: E402  (bench/budget.py: the frame-budget table)
from input_probe import InputProbe  # noqa: E402
from PySide6.QtCore import QEvent, QObject  # noqa: E402
from PySide6.QtWidgets import QApplication, QTextBrowser  # noqa: E402
from relay_process import RelayProcess  # noqa: E402

from melgui.core.agent.session import AgentSession  # noqa: E402
from melgui.core.protocol.events import ToolCall  # noqa: E402
from melgui.core.protocol.messages import Conversation, Message  # noqa: E402
from melgui.core.protocol.tooling import ToolRegistry  # noqa: E402
from melgui.core.rules.policy import RulePolicy  # noqa: E402
from melgui.core.thread.changes import Change, EntryAdded, TextAppended  # noqa: E402
from melgui.core.thread.entries import AssistantEntry, ReasoningEntry  # noqa: E402
from melgui.core.transports.relay import RelayTransport  # noqa: E402
from melgui.ui.chat.chat_view import ChatView  # noqa: E402
from melgui.ui.chat.transcript.document import FLUSH_BUDGET_S, ChatTranscript  # noqa: E402
from melgui.ui.runtime.bridge import SessionBridge  # noqa: E402
from melgui.ui.runtime.qt_loop import QtEventLoop  # noqa: E402
from melgui.ui.runtime.theme import apply_theme  # noqa: E402
from tests.fakes import done, sse, text  # noqa: E402

WINDOW = 2000  # tokens in markdown_tokens' repeated unit
WINDOW_CHARS = WINDOW * 4  # characters measured at each end of the stream
BATCH_CHARS = 160  # characters pending before a render in the cost runs (40 tokens)
WORDS = tuple(
    [
        "the",
        "agent",
        "reads",
        "a",
        "file",
        "then",
        "edits",
        "it",
        "and",
        "runs",
        "the",
        "tests",
        "with",
        "**care**",
        "and",
        "`pytest",
        "-q`",
        "so",
        "each",
        "change",
        "is",
        "small",
        "reviewed",
        "and",
        "easy",
        "to",
        "undo",
        "later",
    ]
)


def markdown_tokens(count: int, seed: int = 7) -> list[str]:
    """`count` tokens (~4 characters each) of mixed Markdown with code blocks.

    One WINDOW of tokens repeated, so the first and the last window hold the same
    content and their costs differ only by where they come in the message.
    """
    rng = random.Random(seed)
    parts: list[str] = []
    size = 0
    while size < WINDOW * 4:
        kind = rng.random()
        if kind < 0.25:
            lines = "".join(
                f"    value_{i} = compute({i}, name='x{i}')  # step {i}\n"
                for i in range(rng.randint(4, 20))
            )
            part = f"```python\ndef block_{len(parts)}():\n{lines}    return value_0\n```\n\n"
        elif kind < 0.4:
            part = "".join(f"- {' '.join(rng.choices(WORDS, k=7))}\n" for _ in range(5)) + "\n"
        elif kind < 0.45:
            part = f"## Section {len(parts)}\n\n"
        else:
            part = " ".join(rng.choices(WORDS, k=45)) + ".\n\n"
        parts.append(part)
        size += len(part)
    unit = "".join(parts)[: WINDOW * 4]
    unit = unit[: unit.rindex("\n\n") + 2]  # whole blocks, so every repeat starts clean
    whole = unit * (count // (len(unit) // 4) + 1)
    return [whole[i : i + 4] for i in range(0, len(whole), 4)][:count]


def rss_mb() -> float:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class StallMeter:
    """How late a 5 ms heartbeat on the event loop fires: the longest stall.

    Also the GUI thread's CPU time during that stall: a stall much longer than its CPU
    time is the machine (other processes), not the app.
    """

    def __init__(self) -> None:
        self.worst = 0.0
        self.worst_cpu = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _beat(self) -> None:
        while True:
            started, cpu = time.perf_counter(), time.thread_time()
            await asyncio.sleep(0.005)
            lag = time.perf_counter() - started - 0.005
            if lag > self.worst:
                self.worst, self.worst_cpu = lag, time.thread_time() - cpu

    def reset(self) -> None:
        self.worst = self.worst_cpu = 0.0

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._beat())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()


class CollectorMeter:
    """The longest pause of Python's garbage collector while on: a full collection walks
    every object the process holds, so it shows as a stall whatever the view does."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._started = 0.0

    def __enter__(self) -> CollectorMeter:
        gc.callbacks.append(self._phase)
        return self

    def __exit__(self, *_: object) -> None:
        gc.callbacks.remove(self._phase)

    def _phase(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.longest = max(self.longest, time.perf_counter() - self._started)


def streamed_piece(change: Change) -> tuple[bool, int] | None:
    """A streamed delta's change: (reasoning, characters); None for other changes."""
    match change:
        case TextAppended(reasoning=reasoning, text=piece):
            return reasoning, len(piece)
        case EntryAdded(entry=AssistantEntry(streaming=True, text=piece)):
            return False, len(piece)
        case EntryAdded(entry=ReasoningEntry(streaming=True, text=piece)):
            return True, len(piece)
        case _:
            return None


def per_character(costs: list[float], sizes: list[int], *, last: bool) -> float:
    """Seconds per character over the first (or last) WINDOW_CHARS of a stream's deltas."""
    pairs = list(zip(costs, sizes, strict=True))
    if last:
        pairs.reverse()
    spent = 0.0
    chars = 0
    for cost, size in pairs:
        if chars >= WINDOW_CHARS:
            break
        spent += cost
        chars += size
    if chars < WINDOW_CHARS or sum(sizes) < 2 * WINDOW_CHARS:
        raise SystemExit(f"the stream was too short to measure: {sum(sizes):,} characters")
    return spent / chars


class TimedView:
    """Re-wires a ChatView so each token's handling, render and paint are timed.

    CPU time of the GUI thread, so other processes on a busy machine do not count. A
    render's time is shared by the tokens it drew; a paint's (Qt merges paints, as in
    the app) by the tokens drawn since the previous paint.
    """

    def __init__(self, chat: ChatView, bridge: SessionBridge, *, whole_renders: bool) -> None:
        self.chat = chat
        # Cost runs draw once BATCH_CHARS are pending, everything pending, and paint at
        # once: each render's cost goes to exactly the deltas it drew. (The shipped timer
        # and time budget only move the same work in time.)
        self.batch = BATCH_CHARS if whole_renders else 0
        self.budget = None if whole_renders else FLUSH_BUDGET_S
        self.costs: list[float] = []  # per delta, seconds
        self.sizes: list[int] = []  # per delta, characters
        self.thinking: list[bool] = []  # per delta: reasoning (True) or answer
        self._unrendered: list[int] = []  # deltas not drawn yet
        self._pending_chars = 0
        self._unpainted: list[int] = []  # deltas drawn, not painted yet
        bridge.threadChange.disconnect(chat.on_change)
        bridge.threadChange.connect(self.on_change)
        transcript = chat.transcript
        transcript.scheduled_flush = self.scheduled  # type: ignore[method-assign]
        _PAINT_LISTENERS[transcript] = self.painted

    def on_change(self, change: Change) -> None:
        started = time.thread_time()
        self.chat.on_change(change)
        spent = time.thread_time() - started
        piece = streamed_piece(change)
        if piece is not None:
            self.costs.append(spent)
            self.thinking.append(piece[0])
            self.sizes.append(piece[1])
            self._unrendered.append(len(self.costs) - 1)
            self._pending_chars += piece[1]
            if self.batch and self._pending_chars >= self.batch:
                self.flush()
                started = time.thread_time()
                self.chat.transcript.viewport().repaint()
                self.painted(time.thread_time() - started)
        elif self._unrendered:  # the message ended: its last tokens are drawn now
            self._share(spent, self._unrendered)
            self._unpainted.extend(self._unrendered)
            self._unrendered = []
            self._pending_chars = 0

    def flush(self) -> None:
        started = time.thread_time()
        self.chat.transcript.flush(self.budget)
        self._share(time.thread_time() - started, self._unrendered)
        self._unpainted.extend(self._unrendered)
        self._unrendered = []
        self._pending_chars = 0

    def scheduled(self, deadline: float) -> bool:
        """What the shared flush scheduler calls; cost runs draw only in whole batches."""
        if self.batch:
            return False
        started = time.thread_time()
        more = ChatTranscript.scheduled_flush(self.chat.transcript, deadline)
        self._share(time.thread_time() - started, self._unrendered)
        self._unpainted.extend(self._unrendered)
        self._unrendered = []
        self._pending_chars = 0
        return more

    def painted(self, spent: float) -> None:
        self._share(spent, self._unpainted)
        self._unpainted = []

    def _share(self, spent: float, deltas: list[int]) -> None:
        """A render's or paint's time, shared by its deltas by their characters."""
        chars = sum(self.sizes[index] for index in deltas)
        for index in deltas:
            self.costs[index] += spent * (self.sizes[index] / chars if chars else 1 / len(deltas))


_PAINT_LISTENERS: dict[object, Any] = {}


def _timed_paint(self: ChatTranscript, event: Any) -> None:
    started = time.thread_time()
    QTextBrowser.paintEvent(self, event)
    listener = _PAINT_LISTENERS.get(self)
    if listener is not None:
        listener(time.thread_time() - started)


ChatTranscript.paintEvent = _timed_paint  # type: ignore[method-assign, assignment]


def bare_stream(url: str) -> float:
    """Seconds to read a leg's whole stream with httpx alone: no parsing, no view."""
    import httpx

    started = time.perf_counter()
    with (
        httpx.Client(timeout=60) as client,
        client.stream("POST", f"{url}/v1/agent/stream", json={"messages": []}) as reply,
    ):
        for _ in reply.iter_raw():
            pass
    return time.perf_counter() - started


def stream_bench(
    app: QApplication, tokens: int, *, whole_renders: bool, reasoning: int = 0
) -> dict[str, float]:
    """`reasoning` tokens of reasoning first (the relay's delta `reasoning` field)."""
    loop = QtEventLoop(app)
    asyncio.set_event_loop(loop)
    pieces = markdown_tokens(tokens)
    thoughts = [sse({"reasoning": piece}, event="delta") for piece in markdown_tokens(reasoning)]
    # The relay in a process of its own, as a real server is (in a thread here, its
    # Python would take the GIL from the window and count as the window's stall).
    leg = [*thoughts, *(text(piece) for piece in pieces), done()]
    # The same leg twice: the second is read with httpx alone, the transport's floor.
    with RelayProcess(leg, leg) as relay:
        transport = RelayTransport(relay.url, "bench-key")
        session = AgentSession(
            transport,
            ToolRegistry(),
            RulePolicy(),
            model="bench",
            role="assistant",
            cwd=_SANDBOX,
        )
        bridge = SessionBridge(session)
        chat = ChatView(bridge)
        chat.resize(900, 1000)
        chat.show()
        timed = TimedView(chat, bridge, whole_renders=whole_renders)
        stalls = StallMeter()
        keys = InputProbe()
        collector = CollectorMeter()

        async def run() -> float:
            stalls.start()
            await asyncio.sleep(0.2)  # let the window settle before measuring
            stalls.reset()
            keys.start()
            started = time.perf_counter()
            with collector:
                bridge.submit("Write a long answer with code.")
                await session.wait_idle()
            elapsed = time.perf_counter() - started
            await asyncio.sleep(0.1)
            stalls.stop()
            keys.stop()
            return elapsed

        elapsed = loop.run_until_complete(run())
        bare = bare_stream(relay.url)
        keys.close()
        loop.run_until_complete(session.aclose())
        loop.run_until_complete(transport.aclose())
        chars = len(chat.transcript.toPlainText())
        chat.close()
        # Deleted, as the window deletes a chat view it replaces: else every run's view,
        # session and thread stay in the heap and each full collection walks them all.
        _PAINT_LISTENERS.pop(chat.transcript, None)
        chat.deleteLater()
        QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    loop.close()
    deltas = list(zip(timed.costs, timed.sizes, timed.thinking, strict=True))
    answer = [c for c, _, thought in deltas if not thought]
    answer_sizes = [n for _, n, thought in deltas if not thought]
    thought = [c for c, _, thought in deltas if thought]
    thought_sizes = [n for _, n, thought in deltas if thought]
    received = len(answer)
    extra: dict[str, float] = {}
    if whole_renders:
        first = per_character(answer, answer_sizes, last=False)
        last = per_character(answer, answer_sizes, last=True)
    else:
        first = last = 1.0  # the stall runs measure no cost
    if thought and whole_renders:
        t_first = per_character(thought, thought_sizes, last=False)
        t_last = per_character(thought, thought_sizes, last=True)
        extra = {
            "thought_deltas": len(thought),
            "thought_first_us": t_first * 1e6,
            "thought_last_us": t_last * 1e6,
            "thought_ratio": t_last / t_first,
        }
    return {
        **extra,
        "deltas": received,
        "first_us": first * 1e6,
        "last_us": last * 1e6,
        "ratio": last / first,
        "stall_ms": max(keys.delays, default=0.0) * 1000,
        "key_p99_ms": keys.percentile(0.99) * 1000,
        "heartbeat_ms": stalls.worst * 1000,
        "heartbeat_cpu_ms": stalls.worst_cpu * 1000,
        "gc_ms": collector.longest * 1000,
        "seconds": elapsed,
        "bare_seconds": bare,
        "chars": chars,
    }


def long_conversation(messages: int) -> Conversation:
    rng = random.Random(3)
    conversation = Conversation()
    for n in range(messages // 4):
        conversation.append(Message.user(f"Question {n}: " + " ".join(rng.choices(WORDS, k=12))))
        call = ToolCall(f"c{n}", "read_file", f'{{"path": "src/file_{n}.py"}}')
        conversation.append(Message.assistant("Let me look.", (call,)))
        conversation.append(Message.tool_result(call.id, "x = 1\n" * 20))
        conversation.append(
            Message.assistant(
                " ".join(rng.choices(WORDS, k=40))
                + f"\n\n```python\ndef answer_{n}():\n    return {n}\n```\n"
            )
        )
    return conversation


class FirstPaint(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.at: float | None = None

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint and self.at is None:
            self.at = time.perf_counter()
        return False


def open_bench(app: QApplication, messages: int) -> dict[str, float]:
    conversation = long_conversation(messages)
    before = rss_mb()
    # The session (and its HTTP client) exists before the clock starts: in the app every
    # session streams through the desk's one connection, made once, not per conversation.
    session = AgentSession(
        RelayTransport("http://127.0.0.1:9", None),
        ToolRegistry(),
        RulePolicy(),
        conversation,
        model="bench",
        role="assistant",
        cwd=_SANDBOX,
    )
    started = time.perf_counter()
    bridge = SessionBridge(session)
    chat = ChatView(bridge)
    painted = FirstPaint()
    chat.transcript.viewport().installEventFilter(painted)
    chat.resize(900, 1000)
    chat.show()
    while painted.at is None and time.perf_counter() - started < 30:
        app.processEvents()
    first_paint = (painted.at or time.perf_counter()) - started
    after = rss_mb()
    chat.close()
    asyncio.run(session.loop.transport.aclose())
    return {
        "messages": len(conversation.messages),
        "first_paint_ms": first_paint * 1000,
        "rss_mb": after - before,
    }


def median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tokens", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--reasoning", type=int, default=20_000, help="reasoning tokens")
    options = parser.parse_args(argv)
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    apply_theme(app, "light")
    # Markdown, Pygments and Qt's text classes loaded first, as in the app (its window
    # has a chat view before any conversation is opened): a small one opened once.
    open_bench(app, 8)
    stream_bench(app, 1000, whole_renders=False)  # warm-up: Qt, Markdown, Pygments loaded
    costs = [stream_bench(app, options.tokens, whole_renders=True) for _ in range(options.runs)]
    for n, run in enumerate(costs, 1):
        print(
            f"cost run {n}: {options.tokens:,} tokens in {run['deltas']:,.0f} deltas "
            f"({run['chars']:,.0f} characters shown) in {run['seconds']:.1f} s; per character "
            f"first {WINDOW_CHARS:,} {run['first_us']:.2f} µs, last {WINDOW_CHARS:,} "
            f"{run['last_us']:.2f} µs, ratio {run['ratio']:.2f}"
        )
    stalls = [stream_bench(app, options.tokens, whole_renders=False) for _ in range(3)]
    for n, run in enumerate(stalls, 1):
        print(
            f"stall run {n} (as shipped): {run['seconds']:.1f} s, a key press waited at most "
            f"{run['stall_ms']:.0f} ms (99th percentile {run['key_p99_ms']:.0f} ms); asyncio "
            f"heartbeat late by {run['heartbeat_ms']:.0f} ms ({run['heartbeat_cpu_ms']:.0f} ms "
            f"of it CPU); longest garbage collection {run['gc_ms']:.0f} ms"
        )
    thinking_runs = [
        stream_bench(app, options.tokens, whole_renders=True, reasoning=options.reasoning)
        for _ in range(max(1, options.runs // 2))
    ]
    for n, run in enumerate(thinking_runs, 1):
        print(
            f"reasoning run {n}: {options.reasoning:,} reasoning tokens in "
            f"{run['thought_deltas']:,.0f} deltas then {options.tokens:,} answer tokens in "
            f"{run['deltas']:,.0f} in {run['seconds']:.1f} s; reasoning per character first "
            f"{WINDOW_CHARS:,} {run['thought_first_us']:.2f} µs, last {WINDOW_CHARS:,} "
            f"{run['thought_last_us']:.2f} µs, ratio {run['thought_ratio']:.2f}; answer first "
            f"{run['first_us']:.2f} µs, last {run['last_us']:.2f} µs, ratio {run['ratio']:.2f}"
        )
    thinking_stall = stream_bench(
        app, options.tokens, whole_renders=False, reasoning=options.reasoning
    )
    ratio = median([run["ratio"] for run in costs])
    stall = median([run["stall_ms"] for run in stalls])
    heartbeat = median([run["heartbeat_ms"] for run in stalls])
    heartbeat_cpu = median([run["heartbeat_cpu_ms"] for run in stalls])
    thought_ratio = median([run["thought_ratio"] for run in thinking_runs])
    after_ratio = median([run["ratio"] for run in thinking_runs])
    print(
        f"view cost per character, last {WINDOW_CHARS:,} / first {WINDOW_CHARS:,} "
        f"(median of {len(costs)}): "
        f"{ratio:.2f}"
    )
    print(
        f"longest stall, as a key press posted to the GUI thread waits (median of "
        f"{len(stalls)}): {stall:.1f} ms; an asyncio heartbeat (a timer pass, then the "
        f"task's pass) was late by {heartbeat:.1f} ms, {heartbeat_cpu:.1f} ms of it this "
        f"thread's CPU (load {os.getloadavg()[0]:.1f})"
    )
    print(
        f"reasoning cost per character, last / first {WINDOW_CHARS:,} (median of "
        f"{len(thinking_runs)}): "
        f"{thought_ratio:.2f}; answer after it: {after_ratio:.2f}; longest stall as shipped "
        f"{thinking_stall['stall_ms']:.0f} ms (asyncio heartbeat "
        f"{thinking_stall['heartbeat_ms']:.0f} ms)"
    )
    rows = [
        budget.stall_row(f"chat: longest stall streaming {options.tokens:,} tokens", stall),
        budget.report(
            f"chat: per-character cost, last/first {WINDOW_CHARS:,} characters",
            ratio,
            target=1.2,
            strict=True,
        ),
        budget.stall_row(
            f"chat: longest stall, {options.reasoning:,} reasoning then {options.tokens:,} tokens",
            thinking_stall["stall_ms"],
        ),
        budget.report(
            f"chat: reasoning per-character cost, last/first {WINDOW_CHARS:,} characters",
            thought_ratio,
            target=1.2,
            strict=True,
        ),
        budget.report(
            f"chat: answer after reasoning, last/first {WINDOW_CHARS:,} characters",
            after_ratio,
            target=1.2,
            strict=True,
        ),
    ]
    turn = median([run["seconds"] for run in stalls])
    floor = median([run["bare_seconds"] for run in stalls])
    print(f"the turn took {turn:.2f} s; a bare httpx stream of the same leg {floor:.2f} s")
    rows.append(budget.limit("chat: turn time / bare httpx stream (floor)", turn / floor))
    print(budget.table(rows))
    return budget.verdict()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
