"""The history journal must not slow the stream, and the sidebar must open fast.

1. Stream 20,000 tokens through a real AgentSession, without and with the Journal
   (which also keeps the wire log), side by side, alternating runs: median times and
   their ratio (target: the paired wall-time ratio ≤ 1.05, median of 6), over loopback
   HTTP from the scripted relay with the real RelayTransport. Both runs keep the wire
   log in memory as the window's inspector does, so the ratio is what the journal adds.
   Beside it, this process's CPU on / off (every thread's: the journal's wire writer
   too; the relay runs in a process of its own). Also the write rate, the longest
   stall of the event loop (a 2 ms heartbeat), and the same stream in-process (no HTTP,
   no parsing: the journal's bare cost per token, which a real stream hides).
2. Open the history sidebar on 5,000 stored conversations (and on 50, for scale):
   open the database, query the folder's list, build and show the widget, search.

    python bench/bench_journal.py [--tokens N] [--rounds R] [--conversations C] [--escapes E]

`--escapes E`: E of the tokens, spread through the answer, hold a percent sign or an
accented letter (escaped in the relay's JSON), as real answers do: the history's key
hiding then looks for a key's escaped forms in the wire chunks and the answer.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import budget  # noqa: E402  (bench/budget.py: the frame-budget table)
from relay_process import RelayProcess  # noqa: E402  (the relay in its own process)

from melgui.core.agent.session import AgentSession  # noqa: E402
from melgui.core.protocol.events import Done, StreamEvent, TextDelta, WireEntry  # noqa: E402
from melgui.core.protocol.messages import Message  # noqa: E402
from melgui.core.protocol.tooling import ToolRegistry  # noqa: E402
from melgui.core.protocol.transport import LegRequest, ModelInfo, Transport, WireSink  # noqa: E402
from melgui.core.rules.policy import FixedPolicy  # noqa: E402
from melgui.core.store import Store, open_store  # noqa: E402
from melgui.core.store.journal import Journal  # noqa: E402
from melgui.core.transports.relay import RelayTransport  # noqa: E402
from tests.fakes import done, text  # noqa: E402


class LagMonitor:
    """How late a 2 ms heartbeat on the event loop runs: the longest stall the person sees."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _beat(self) -> None:
        while True:
            started = time.perf_counter()
            await asyncio.sleep(0.002)
            self.worst = max(self.worst, time.perf_counter() - started - 0.002)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._beat())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


class InProcess:
    """Yields the tokens as fast as the loop takes them, logging each like an SSE event."""

    name = "in-process"

    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens

    async def stream(
        self, request: LegRequest, wire: WireSink | None = None
    ) -> AsyncIterator[StreamEvent]:
        if wire is not None:
            wire(WireEntry("request", "POST /v1/agent/stream", time.time()))
        for token in self.tokens:
            if wire is not None:
                wire(WireEntry("event", f'delta {{"text": "{token}"}}', time.time()))
            yield TextDelta(token)
            await asyncio.sleep(0)  # a network read would yield to the loop here
        yield Done()

    async def list_models(self) -> list[ModelInfo]:
        return []

    async def aclose(self) -> None:
        return None


async def one_stream(
    transport: Transport, store: Store | None, folder: str
) -> tuple[float, float, Journal | None, float]:
    """Seconds to stream the turn, the worst loop stall, the journal used, and the
    CPU seconds this process spent on the turn (all its threads)."""
    journal = None
    if store is not None:
        cid = store.create_conversation(folder)
        journal = Journal(store, cid)
    # The window always keeps the wire log in memory for the inspector (WireRecorder):
    # both runs pay for the transport's wire lines; the journal adds its own sink.
    in_memory: list[WireEntry] = []
    wire = in_memory.append
    if journal is not None:
        record = journal.record_wire

        def wire(entry: WireEntry) -> None:
            in_memory.append(entry)
            record(entry)

    session = AgentSession(
        transport,
        ToolRegistry(),
        FixedPolicy("none"),
        model="bench",
        role="assistant",
        cwd=folder,
        wire=wire,
    )
    if journal is not None:
        journal.attach(session)
    lag = LagMonitor()
    lag.start()
    # The last turn's garbage is collected now, not in this turn's time: else the
    # second stream of a pair pays for the first's, whichever side it is.
    gc.collect()
    started, cpu = time.perf_counter(), time.process_time()
    session.submit("stream please")
    await session.wait_idle()
    elapsed = time.perf_counter() - started
    await lag.stop()
    if journal is not None:
        journal.close()
    cpu = time.process_time() - cpu
    assert session.last_result is not None and session.last_result.outcome == "done"
    return elapsed, lag.worst, journal, cpu


def bench_stream(
    label: str,
    make: Callable[[], Transport],
    rounds: int,
    data: Path,
    folder: str,
    target: bool,
) -> None:
    store = open_store(data)
    without: list[float] = []
    with_journal: list[float] = []
    cpu: dict[bool, list[float]] = {False: [], True: []}
    stalls: dict[bool, list[float]] = {False: [], True: []}
    journals: list[Journal] = []

    async def run_all() -> None:
        await one_stream(make(), None, folder)  # warm up imports, sockets, caches
        for round_ in range(rounds):
            # Pairs, in alternating order: a load that rises or falls through the run
            # weighs on both sides alike.
            for journaled in (False, True) if round_ % 2 == 0 else (True, False):
                elapsed, stall, journal, spent = await one_stream(
                    make(), store if journaled else None, folder
                )
                (with_journal if journaled else without).append(elapsed)
                cpu[journaled].append(spent)
                stalls[journaled].append(stall)
                if journal is not None:
                    journals.append(journal)

    asyncio.run(run_all())
    base, journaled = statistics.median(without), statistics.median(with_journal)
    fastest = min(with_journal) / min(without)
    partial_writes = sum(j.flushes for j in journals) / len(journals)
    wire_rows = len(store.wire.read(journals[-1].conversation_id))
    size = os.path.getsize(data / "history.sqlite3") + os.path.getsize(data / "history.sqlite3-wal")
    print(f"\n[{label}] {rounds} rounds each, median seconds to stream the turn")
    print(f"  without journal : {base:8.3f} s")
    print(f"  with journal    : {journaled:8.3f} s")
    print(f"  ratio           : {journaled / base:8.3f}   (fastest runs: {fastest:.3f})")
    paired = statistics.median(w / o for w, o in zip(with_journal, without, strict=True))
    goal = "the table's row: ≤ 1.05" if target else "no target: nothing else runs"
    print(f"  paired ratio    : {paired:8.3f}   ({goal}; median of the rounds' own ratios)")
    paired_cpu = statistics.median(w / o for w, o in zip(cpu[True], cpu[False], strict=True))
    goal = "the table shows it, no target" if target else "no target: nothing else runs"
    print(
        f"  CPU on / off    : {paired_cpu:8.3f}   ({goal}; median of the rounds' own ratios; "
        f"{statistics.median(cpu[False]):.3f} s off, {statistics.median(cpu[True]):.3f} s on)"
    )
    if target:
        budget.report("journal: streaming wall time on / off", paired, target=1.05)
        budget.note("journal: streaming CPU on / off (no target)", paired_cpu)
    tokens = len(store.messages(journals[-1].conversation_id)[-1].message.content.split())
    per_token = (journaled - base) / max(tokens, 1) * 1e6
    print(f"  journal cost    : {per_token:8.2f} µs per token (median difference)")
    print(
        f"  writes per turn : {partial_writes:.1f} partial-text flushes, {wire_rows} wire rows "
        f"({wire_rows / journaled:,.0f} rows/s while streaming)"
    )
    print(
        f"  longest loop stall: {statistics.median(stalls[False]) * 1000:.1f} ms without, "
        f"{statistics.median(stalls[True]) * 1000:.1f} ms with the journal (median of rounds)"
    )
    print(f"  database + WAL  : {size / 1e6:.1f} MB after {rounds} journaled turns")
    store.close()


def fill(store: Store, folder: str, count: int) -> None:
    body = "Some question about the project and a reasonably long line of text. " * 3
    with store.transaction():
        for n in range(count):
            cid = store.create_conversation(folder)
            store.put_message(cid, 0, Message.user(f"Question {n}: {body}"))
            store.put_message(cid, 1, Message.assistant(f"Answer {n}: {body}"))
            store.put_message(cid, 2, Message.user(f"Follow-up {n} about token{n}"))
            store.put_message(cid, 3, Message.assistant(body))


def bench_sidebar(counts: list[int], root: Path) -> None:
    from PySide6.QtCore import QEventLoop
    from PySide6.QtWidgets import QApplication

    from melgui.ui.history import HistorySidebar

    app = QApplication.instance() or QApplication([])
    print("\n[sidebar] milliseconds (median of 5)")
    print(f"  {'conversations':>13} {'open db':>9} {'list':>8} {'widget':>8} {'search':>8}")
    results: dict[int, float] = {}
    for count in counts:
        data, folder = root / f"sidebar-{count}", root / f"project-{count}"
        folder.mkdir()
        with open_store(data) as store:
            fill(store, str(folder), count)
        opens, lists, widgets, searches = [], [], [], []
        for _ in range(5):
            started = time.perf_counter()
            store = open_store(data)
            opened = time.perf_counter()
            rows = store.conversations(str(folder))
            listed = time.perf_counter()
            sidebar = HistorySidebar(store, str(folder))
            sidebar.show()
            app.processEvents()
            while sidebar.listing:  # its list is queried on the listing thread
                app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 5)
            shown = time.perf_counter()
            found = store.conversations(str(folder), query="token42")
            searched = time.perf_counter()
            assert len(rows) == count and sidebar.model.rowCount() == count and found
            opens.append(opened - started)
            lists.append(listed - opened)
            widgets.append(shown - listed)
            searches.append(searched - shown)
            sidebar.close()
            sidebar.deleteLater()
            app.processEvents()
            store.close()
        cells = [statistics.median(v) * 1000 for v in (opens, lists, widgets, searches)]
        results[count] = sum(cells[:3])
        print(f"  {count:>13,} " + " ".join(f"{c:8.1f}" for c in cells))
    if len(counts) > 1:
        small, big = counts[0], counts[-1]
        ratio = results[big] / results[small]
        print(
            f"  open-to-shown with {big:,} vs {small:,}: {results[big]:.1f} ms vs "
            f"{results[small]:.1f} ms (ratio {ratio:.1f} for {big // small}x the rows)"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--conversations", type=int, default=5_000)
    parser.add_argument("--escapes", type=int, default=0)
    options = parser.parse_args()
    tokens = [f"tok{n} " for n in range(options.tokens)]
    for k in range(options.escapes):
        tokens[(k + 1) * len(tokens) // (options.escapes + 1)] = "50% " if k % 2 else "café "
    with tempfile.TemporaryDirectory(prefix="melgui-bench-") as temp:
        root = Path(temp)
        folder = root / "project"
        folder.mkdir()
        print(f"streaming {options.tokens:,} tokens per turn")
        # The relay in a process of its own, as a real server is (in a thread it would
        # compete with the loop for the GIL): one leg per stream, the warm-up's too.
        leg = [*(text(t) for t in tokens), done()]
        with RelayProcess(*[leg] * (2 * options.rounds + 1)) as relay:

            def over_http() -> Transport:
                return RelayTransport(relay.base_url, "bench-key")

            bench_stream(
                "loopback relay", over_http, options.rounds, root / "http", str(folder), True
            )
        bench_stream(
            "in-process",
            lambda: InProcess(tokens),
            options.rounds,
            root / "mem",
            str(folder),
            False,
        )
        bench_sidebar([50, options.conversations], root)
    return budget.verdict()


if __name__ == "__main__":
    raise SystemExit(main())
