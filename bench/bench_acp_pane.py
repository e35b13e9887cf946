"""An ACP agent streaming into a pane, against the same text through a worker pane.

The ACP side is a real agent process (tests/fakes/acp_scripted_agent.py, on the SDK)
sending N `agent_message_chunk` updates (default 20,000, a paragraph every ten), one
JSON-RPC message each, read by melgui's client, turned into loop events and drawn by an
AcpPane's chat. The worker
side is melgui's own worker pane streaming the same N text deltas from the scripted relay
over loopback. Rounds alternate, each in a fresh pane; a turn is timed from the message
to idle (the agent process is started, and the last round's garbage collected, before
the clock runs). Reports the median time ratio acp / worker and each side's longest
event-loop stall (a 10 ms timer on the loop).

    python bench/bench_acp_pane.py [--chunks N] [--rounds R]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import budget  # noqa: E402  (bench/budget.py: the frame-budget table)
from bench_panes import StallMeter  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from melgui.core.agent.session import AgentSession  # noqa: E402
from melgui.core.protocol.tooling import ToolRegistry  # noqa: E402
from melgui.core.rules.policy import FixedPolicy  # noqa: E402
from melgui.core.transports.relay import RelayTransport  # noqa: E402
from melgui.desk.hosted_agents.host import AcpHost  # noqa: E402
from melgui.desk.hosted_agents.session import HostedAgentSession  # noqa: E402
from melgui.desk.prompt.kit import PromptKit  # noqa: E402
from melgui.ui.panes.acp_pane import AcpPane  # noqa: E402
from melgui.ui.panes.agent_pane import AgentPane  # noqa: E402
from melgui.ui.runtime.flush_scheduler import shared_scheduler  # noqa: E402
from melgui.ui.runtime.qt_loop import QtEventLoop  # noqa: E402
from tests.fakes import ScriptedRelay, done, text  # noqa: E402
from tests.fakes.acp_host import scripted_agent  # noqa: E402

PIECE = "Streaming **markdown** with `code` and words, "
EVERY = 10  # chunks to a paragraph, as a model writes them


def pieces(chunks: int) -> list[str]:
    return [PIECE + ("\n\n" if n % EVERY == EVERY - 1 else "") for n in range(chunks)]


async def until_idle(pane: AgentPane) -> None:
    """Until the turn is over and its text is drawn: a worker pane ends its turn with the
    rest of a long answer still being drawn in (from the render thread), an ACP pane
    waits for the chat before it ends the turn; both are timed to the last drawn line."""
    transcript = pane.chat.transcript
    scheduler = shared_scheduler()
    await asyncio.sleep(0.05)
    while (
        pane.session.busy
        or pane.bridge.busy
        or transcript.holding()
        or scheduler.is_pending(transcript)
    ):
        await asyncio.sleep(0.01)


async def acp_round(folder: str, chunks: int, meter: StallMeter) -> tuple[float, float, str]:
    session = HostedAgentSession(AcpHost(scripted_agent(), folder))
    pane = AcpPane(session, prompt_for=PromptKit)  # as the manager gives it (Desk.prompt_for)
    pane.resize(900, 700)
    pane.show()
    await session.start()
    gc.collect()  # the last round's pane is garbage: not collected on this round's clock
    meter.start()
    started = time.perf_counter()
    pane.send(json.dumps([{"say": PIECE, "times": chunks, "every": EVERY}]))
    await until_idle(pane)
    elapsed = time.perf_counter() - started
    stall = meter.stop()
    reply = pane.latest_reply().strip()
    closing = pane.close_worker()
    if closing is not None:
        await closing
    pane.deleteLater()
    return elapsed, stall, reply


async def worker_round(
    relay: ScriptedRelay, folder: str, chunks: int, meter: StallMeter
) -> tuple[float, float, str]:
    relay.script([*(text(piece) for piece in pieces(chunks)), done()])
    transport = RelayTransport(relay.base_url, "bench-key")
    session = AgentSession(
        transport, ToolRegistry(), FixedPolicy("all"), model="bench", role="worker", cwd=folder
    )
    gc.collect()
    meter.start()
    started = time.perf_counter()
    pane = AgentPane(session, "go")
    pane.resize(900, 700)
    pane.show()
    await until_idle(pane)
    elapsed = time.perf_counter() - started
    stall = meter.stop()
    reply = pane.latest_reply().strip()
    closing = pane.close_worker()
    if closing is not None:
        await closing
    await transport.aclose()
    pane.deleteLater()
    return elapsed, stall, reply


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    loop = QtEventLoop(app)
    asyncio.set_event_loop(loop)
    meter = StallMeter()
    acp: list[tuple[float, float]] = []
    worker: list[tuple[float, float]] = []
    expected = "".join(pieces(options.chunks)).strip()
    rounds = options.rounds
    print(f"{options.chunks} chunks of {len(PIECE)} characters into a pane, {rounds} rounds")
    with ScriptedRelay() as relay, tempfile.TemporaryDirectory() as folder:
        for n in range(options.rounds):
            a_time, a_stall, a_reply = loop.run_until_complete(
                acp_round(folder, options.chunks, meter)
            )
            w_time, w_stall, w_reply = loop.run_until_complete(
                worker_round(relay, folder, options.chunks, meter)
            )
            assert a_reply == expected, f"ACP pane got {len(a_reply)} of {len(expected)} chars"
            assert w_reply == expected, f"worker pane got {len(w_reply)} of {len(expected)}"
            acp.append((a_time, a_stall))
            worker.append((w_time, w_stall))
            print(
                f"   round {n + 1}: ACP pane {a_time:6.2f} s (stall {a_stall * 1000:5.0f} ms)"
                f"   worker pane {w_time:6.2f} s (stall {w_stall * 1000:5.0f} ms)"
            )
    ratio = statistics.median(a / w for (a, _), (w, _) in zip(acp, worker, strict=True))
    a_stall = statistics.median(s for _, s in acp)
    w_stall = statistics.median(s for _, s in worker)
    print(f"   median time ACP / worker: {ratio:.2f}x; load average {os.getloadavg()[0]:.1f}")
    budget.report(f"acp pane: {options.chunks} chunks, time vs worker pane", ratio, target=2.0)
    budget.stall_row("acp pane: longest stall streaming", a_stall * 1000, frames=3)
    budget.stall_row("worker pane: longest stall, same text", w_stall * 1000, frames=3)


if __name__ == "__main__":
    main()
