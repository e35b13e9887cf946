"""What serving melgui over ACP costs a stream.

Stream N text chunks (default 20,000) from the scripted OpenAI-compatible server over
loopback: (a) through a `melgui acp` process to the ACP SDK's client in this process
(text as `session/update` messages over stdio, parsed by the client), and (b) through the
same Desk session in this process with a plain observer (what the window gets). Rounds
alternate; the turn is timed from the prompt to its end (the process starts once, before).
Reports the median ratio acp / in-process (target 1.5; before text chunks merged in
the outbox it was 3.3x: one message per chunk).

    python bench/bench_acp.py [--chunks N] [--rounds R]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
import budget  # noqa: E402  (bench/budget.py: the frame-budget table)
import scratch  # noqa: E402  (bench/scratch.py: temporary folders removed at exit)
from acp import text_block  # noqa: E402

from melgui.core.config.settings import Settings  # noqa: E402
from melgui.core.protocol.loop_events import AssistantText, LoopEvent  # noqa: E402
from melgui.desk.desk import Desk  # noqa: E402
from tests.fakes import ScriptedOpenAI, done, text  # noqa: E402
from tests.fakes.acp_client import AcpAgentProcess  # noqa: E402


def leg(chunks: int) -> list[object]:
    return [*(text(f"w{i} ") for i in range(chunks)), done()]


async def in_process(server: ScriptedOpenAI, folder: str, chunks: int) -> float:
    settings = Settings(connection="openai", openai_base_url=server.base_url, model="m")
    desk = Desk(folder, settings, api_key="k", plans=lambda title, markdown: None)
    session = desk.session(model="m", role="assistant")
    seen: list[str] = []  # a socket read's deltas come as one AssistantText

    def count(event: LoopEvent) -> None:
        if isinstance(event, AssistantText):
            seen.append(event.text)

    session.subscribe(count)
    started = time.perf_counter()
    session.submit("go")
    await session.wait_idle()
    elapsed = time.perf_counter() - started
    await session.aclose()
    await desk.aclose()
    assert "".join(seen) == "".join(f"w{i} " for i in range(chunks)), len(seen)
    return elapsed


async def over_acp(agent: AcpAgentProcess, folder: str, chunks: int) -> float:
    session = await agent.connection.new_session(cwd=folder)
    agent.client.updates.clear()
    started = time.perf_counter()
    await agent.connection.prompt(session_id=session.session_id, prompt=[text_block("go")])
    elapsed = time.perf_counter() - started
    assert agent.client.text() == "".join(f"w{i} " for i in range(chunks))
    messages.append(len(agent.client.updates))
    return elapsed


messages: list[int] = []  # session/update messages per acp turn (text chunks merge)


async def main(chunks: int, rounds: int) -> None:
    folder = scratch.folder(prefix="bench-acp-")
    os.environ.setdefault("MELGUI_CONFIG_DIR", os.path.join(folder, ".config"))
    os.environ.setdefault("MELGUI_DATA_DIR", os.path.join(folder, ".data"))
    with ScriptedOpenAI() as server:
        server.on(lambda request: True, leg(chunks))
        args = ["--transport", "openai", "--url", server.base_url, "--model", "m"]
        async with AcpAgentProcess([*args, "--no-history"], {"OPENAI_API_KEY": "k"}) as agent:
            await agent.initialize()
            times: dict[str, list[float]] = {"acp": [], "in-process": []}
            for _ in range(rounds):
                times["in-process"].append(await in_process(server, folder, chunks))
                times["acp"].append(await over_acp(agent, folder, chunks))
    base, acp = statistics.median(times["in-process"]), statistics.median(times["acp"])
    print(f"{chunks:,} chunks, {rounds} rounds, median seconds to stream the turn")
    print(f"  in-process session : {base:.2f} s")
    print(f"  over melgui acp    : {acp:.2f} s ({chunks / acp:,.0f} chunks/s to the client)")
    print(f"  session/update messages per turn: {messages}")
    row = budget.report(f"acp: {chunks:,} chunks over stdio vs in-process", acp / base, target=1.5)
    print(budget.table([row]))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    asyncio.run(main(options.chunks, options.rounds))
