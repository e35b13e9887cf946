"""The stream parsers alone: events per second, and whether the cost stays linear.

For each transport, an answer of N events is built in memory and read back:
- "parser": the SSE decoder + the transport's leg parser, fed 4 KB slices directly;
- "transport": the real transport's `stream()` over httpx.MockTransport (no sockets),
  the body streamed in 4 KB slices.
Also two shapes that could go quadratic: one tool call whose arguments arrive in N
fragments (OpenAI), and one event of N×100 bytes arriving in 1 KB slices (decoder;
"per event" there means per 100 bytes).

For each row: µs per event at every N, events per second at the largest N, and the
ratio of µs per event at the largest N to the smallest, which stays near 1 when the
cost is linear. Times are CPU seconds of this process, best of `--repeat` runs; exits
1 if a ratio exceeds 2.

    python bench/bench_parsers.py [--sizes 1000,10000,100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from melgui.core.protocol.events import Done, StreamEvent, TextDelta, ToolCalls  # noqa: E402
from melgui.core.protocol.transport import LegRequest  # noqa: E402
from melgui.core.transports.http.leg import LegParser  # noqa: E402
from melgui.core.transports.http.sse import SSEComment, SSEDecoder  # noqa: E402
from melgui.core.transports.openai_compat import OpenAILegParser, OpenAITransport  # noqa: E402
from melgui.core.transports.relay import RelayLegParser, RelayTransport  # noqa: E402

SLICE = 4096
LINEAR_LIMIT = 2.0
REQUEST = LegRequest("bench", [{"role": "user", "content": "go"}], (), "assistant", "/tmp")


def relay_body(events: int) -> bytes:
    parts = [
        f'event: delta\ndata: {{"text": "tok{n % 10} é "}}\n\n'.encode() for n in range(events - 1)
    ]
    call = {"id": "c1", "name": "read_file", "arguments": '{"path": "a.py"}'}
    parts.append(f"event: tool_calls\ndata: {json.dumps({'calls': [call]})}\n\n".encode())
    return b"".join(parts)


def openai_chunk(delta: Mapping[str, object], finish: str | None = None) -> bytes:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "bench",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def openai_body(events: int) -> bytes:
    parts = [openai_chunk({"content": f"tok{n % 10} é "}) for n in range(events - 1)]
    parts.append(openai_chunk({}, "stop"))
    parts.append(b"data: [DONE]\n\n")
    return b"".join(parts)


def openai_arguments_body(fragments: int) -> bytes:
    head = {"index": 0, "id": "c1", "type": "function"}
    parts = [openai_chunk({"tool_calls": [{**head, "function": {"name": "write_file"}}]})]
    parts.append(openai_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"c": "'}}]}))
    piece = {"tool_calls": [{"index": 0, "function": {"arguments": "abcdefgh"}}]}
    parts += [openai_chunk(piece)] * (fragments - 3)
    parts.append(openai_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"}'}}]}))
    parts.append(openai_chunk({}, "tool_calls") + b"data: [DONE]\n\n")
    return b"".join(parts)


def slices(body: bytes, size: int) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


def parse_directly(parser: LegParser, chunks: list[bytes]) -> StreamEvent | None:
    """The decoder and a leg parser, with the driver's per-item work but no HTTP."""
    decoder = SSEDecoder()
    final: StreamEvent | None = None
    for chunk in chunks:
        for item in decoder.feed(chunk):
            item.wire_text()  # what the wire log costs when it is on
            if isinstance(item, SSEComment):
                continue
            for event in parser.on_event(item):
                if not isinstance(event, TextDelta):
                    final = event
    for item in decoder.close():
        if not isinstance(item, SSEComment):
            for event in parser.on_event(item):
                final = event
    return final or parser.on_end()


async def through_transport(make: Callable[[httpx.AsyncClient], object], body: bytes) -> object:
    async def stream() -> AsyncIterator[bytes]:
        for chunk in slices(body, SLICE):
            yield chunk

    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=stream())

    async with httpx.AsyncClient(transport=httpx.MockTransport(reply)) as client:
        transport = make(client)
        final = None
        async for event in transport.stream(REQUEST, lambda entry: None):  # type: ignore[attr-defined]
            final = event
        return final


def best_of(repeat: int, run: Callable[[], object], check: Callable[[object], bool]) -> float:
    """Least CPU time of this process over `repeat` runs (the machine is shared: CPU time
    leaves out the time other processes hold the cores)."""
    times = []
    for _ in range(repeat):
        started = time.process_time()
        result = run()
        times.append(time.process_time() - started)
        if not check(result):
            raise SystemExit(f"wrong result: {result!r}")
    return min(times)


Case = tuple[Callable[[], object], Callable[[object], bool]]


def rows() -> list[tuple[str, Callable[[int], Case]]]:
    is_calls = lambda result: isinstance(result, ToolCalls)  # noqa: E731
    is_done = lambda result: isinstance(result, Done)  # noqa: E731

    def relay_parser(n: int) -> Case:
        chunks = slices(relay_body(n), SLICE)
        return (lambda: parse_directly(RelayLegParser(), chunks)), is_calls

    def openai_parser(n: int) -> Case:
        chunks = slices(openai_body(n), SLICE)
        return (lambda: parse_directly(OpenAILegParser(), chunks)), is_done

    def relay_transport(n: int) -> Case:
        body = relay_body(n)
        make = lambda client: RelayTransport("http://relay", "k", client=client)  # noqa: E731
        return (lambda: asyncio.run(through_transport(make, body))), is_calls

    def openai_transport(n: int) -> Case:
        body = openai_body(n)
        make = lambda client: OpenAITransport("http://oa/v1", "k", client=client)  # noqa: E731
        return (lambda: asyncio.run(through_transport(make, body))), is_done

    def arguments(n: int) -> Case:
        chunks = slices(openai_arguments_body(n), SLICE)
        return (lambda: parse_directly(OpenAILegParser(), chunks)), is_calls

    def one_big_event(n: int) -> Case:
        body = b"data: " + b"x" * (n * 100) + b"\n\n"
        chunks = slices(body, 1024)

        def run() -> object:
            decoder = SSEDecoder()
            return [item for chunk in chunks for item in decoder.feed(chunk)]

        return run, lambda result: isinstance(result, list) and len(result) == 1

    return [
        ("relay    parser (decoder + leg parser)", relay_parser),
        ("openai   parser (decoder + leg parser)", openai_parser),
        ("relay    transport over MockTransport", relay_transport),
        ("openai   transport over MockTransport", openai_transport),
        ("openai   one call, N argument fragments", arguments),
        ("decoder  one event of N×100 bytes, 1 KB", one_big_event),
    ]


def main() -> int:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--sizes", default="1000,10000,100000")
    options.add_argument("--repeat", type=int, default=3)
    args = options.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]

    head = "".join(f"{f'µs/ev N={n:,}':>16}" for n in sizes)
    print(f"{'what':<42}{head}{'events/s':>14}{'last/first':>12}")
    worst = 0.0
    for label, build in rows():
        per_event = []
        for n in sizes:
            run, check = build(n)
            per_event.append(best_of(args.repeat, run, check) / n * 1e6)
        ratio = per_event[-1] / per_event[0]
        worst = max(worst, ratio)
        cells = "".join(f"{value:>16.2f}" for value in per_event)
        print(f"{label:<42}{cells}{1e6 / per_event[-1]:>14,.0f}{ratio:>12.2f}", flush=True)
    verdict = "linear" if worst <= LINEAR_LIMIT else "NOT LINEAR"
    print(f"\nworst last/first ratio {worst:.2f} (limit {LINEAR_LIMIT}): {verdict}")
    return 0 if worst <= LINEAR_LIMIT else 1


if __name__ == "__main__":
    raise SystemExit(main())
