"""MCP call overhead and server start-up, measured side by side in one run.

1. One call of a trivial tool (echo): a built-in tool through the same ToolRegistry,
   the MCP tool through melgui (stdio server, protocol-log tap, bridge), and the same
   server through the bare SDK (`stdio_client` + `ClientSession`) for reference.
   Median per call, and the ratios.
2. Starting servers: five fake servers started together (`start_all`) against one,
   wall time to all ready, and the ratio (1.0 would be perfectly parallel; this machine
   has few cores, and each server is a Python process importing the SDK).

    python bench/bench_mcp.py [--calls N] [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
import scratch  # noqa: E402  (bench/scratch.py: temporary folders removed at exit)

_SANDBOX = scratch.folder(prefix="melgui-bench-")
os.environ["MELGUI_CONFIG_DIR"] = os.path.join(_SANDBOX, "config")
os.environ["MELGUI_DATA_DIR"] = os.path.join(_SANDBOX, "data")

from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from melgui.core.protocol.tooling import ToolOutcome, ToolRegistry  # noqa: E402
from tests.fakes.mcp import FAKE, fake_stdio, running  # noqa: E402


async def builtin_echo(arguments: dict[str, Any]) -> ToolOutcome:
    return ToolOutcome(str(arguments["text"]))


async def per_call(run: Any, calls: int) -> float:
    for _ in range(20):  # warm up
        await run()
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        await run()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


async def calls_bench(calls: int) -> None:
    registry = ToolRegistry({"echo": builtin_echo})
    builtin = await per_call(lambda: registry.run("echo", {"text": "hi"}), calls)
    folder = scratch.folder(prefix="melgui-bench-mcp-")
    async with running(folder, fake_stdio()) as manager:
        tools = manager.bridge.registry
        melgui = await per_call(lambda: tools.run("mcp__fake__echo", {"text": "hi"}), calls)
    params = StdioServerParameters(command=FAKE[0], args=FAKE[1:], env={"PYTHONPATH": str(ROOT)})
    with open(os.devnull, "w") as quiet:
        async with (
            stdio_client(params, errlog=quiet) as streams,
            ClientSession(*streams) as session,
        ):
            await session.initialize()
            await session.list_tools()
            bare = await per_call(lambda: session.call_tool("echo", {"text": "hi"}), calls)
    print(f"one call, median of {calls}:")
    print(f"  built-in tool (same registry)   {builtin * 1e6:9.1f} µs")
    print(f"  MCP tool via melgui (stdio)     {melgui * 1e6:9.1f} µs")
    print(f"  same server via the bare SDK    {bare * 1e6:9.1f} µs")
    print(f"  overhead of an MCP call over a built-in: {(melgui - builtin) * 1e3:.2f} ms")
    print(f"  melgui / bare SDK: {melgui / bare:.2f}")


async def start(count: int) -> float:
    folder = scratch.folder(prefix="melgui-bench-mcp-")
    configs = [fake_stdio(f"s{n}") for n in range(count)]
    begin = time.perf_counter()
    async with running(folder, *configs) as manager:
        elapsed = time.perf_counter() - begin
        assert all(s.state.status == "ready" for s in manager.servers.values())
    return elapsed


async def start_bench(rounds: int) -> None:
    one, five = [], []
    for _ in range(rounds):  # interleaved, so both see the same machine
        one.append(await start(1))
        five.append(await start(5))
    a, b = statistics.median(one), statistics.median(five)
    print(f"start to ready, median of {rounds} ({os.cpu_count()} cores):")
    print(f"  one server      {a:6.2f} s")
    print(f"  five together   {b:6.2f} s   ratio {b / a:.2f} (5.00 would be one after another)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    asyncio.run(calls_bench(options.calls))
    asyncio.run(start_bench(options.rounds))


if __name__ == "__main__":
    main()
