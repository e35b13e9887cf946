"""melgui against the agents people pick instead, on the same work, in one run.

A scripted server on loopback plays the same legs to each agent in the API it speaks
(bench/peer_agents.py: melgui and OpenCode over Chat Completions, Codex over the
Responses API, Claude Code over Anthropic Messages). Three workloads:

1. a 50-call turn: reads, greps and edits on a 10,000-file git project;
2. 20,000 streamed tokens;
3. 8 parallel turns (8 processes at once), each of 5 calls.

Each agent's wall time, CPU time (its whole process tree, from wait4) and peak RSS
(its largest process) are printed, and melgui's as a ratio of each peer's. The table's
rows: melgui's wall time and CPU over the best peer's, per workload (target ≤ 1.0).
A peer that is not installed or cannot run offline is named with the reason.

    npm install --prefix bench/peers        # once: the pinned peers (about 1.2 GB)
    python bench/bench_peers.py [--repeat N] [--only melgui,codex] [--keep]
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import budget  # noqa: E402
from anthropic_messages import ScriptedAnthropic  # noqa: E402
from peer_agents import (  # noqa: E402
    AGENTS,
    Agent,
    Step,
    argv,
    base_agent,
    call_for,
    prepare_home,
    tool_results,
)

from tests.fakes import ScriptedOpenAI, done, text, tool_call, tool_calls  # noqa: E402
from tests.fakes.scenario import Step as LegStep  # noqa: E402
from tests.fakes.scripted_server import RecordedRequest, ScriptedServer  # noqa: E402

FILES = 10_000
TOKENS = 20_000
PARALLEL = 8
LIMIT = 600.0  # seconds one run may take before it is stopped and named


def build_project(root: Path, files: int) -> Path:
    """`files` Python files in 100 packages, committed: each has its own token (for a grep
    that finds one line) and a line `value = N` to edit."""
    project = root / "project"
    for index in range(files):
        folder = project / "src" / f"pkg{index // 100:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        body = [f'"""Module {index}."""', "", f"value = {index}", f"TOKEN = 'tok_{index:05d}_z'"]
        body += [f"def f{n}(x):\n    return x * {n} + value" for n in range(6)]
        (folder / f"mod{index % 100:03d}.py").write_text("\n".join(body) + "\n")
    git = ["git", "-C", str(project), "-c", "user.name=bench", "-c", "user.email=b@x"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "project"], check=True)
    return project


def module(index: int) -> str:
    return f"src/pkg{index // 100:03d}/mod{index % 100:03d}.py"


def edit_steps(first: int, rounds: int, extra_reads: int) -> list[Step]:
    """read, grep and edit of one file per round, then `extra_reads` reads."""
    steps: list[Step] = []
    for n in range(rounds):
        index = (first + n * 613) % FILES
        path = module(index)
        steps.append(Step("read", path))
        steps.append(Step("grep", pattern=f"tok_{(index * 7) % FILES:05d}_z"))
        steps.append(Step("edit", path, old=f"value = {index}", new=f"value = {index + 1}"))
    steps += [Step("read", module((first + 5000 + n) % FILES)) for n in range(extra_reads)]
    return steps


WORKLOADS: dict[str, list[list[Step]]] = {
    "50-call turn": [edit_steps(11, 16, 2)],
    "20,000 streamed tokens": [[]],
    "8 parallel turns": [edit_steps(100 + 37 * k, 1, 2) for k in range(PARALLEL)],
}
TAG = re.compile(r"\[turn (\w+) (\d+)\]")
STREAM_LEG: list[LegStep] = [*(text(f"tok{n} ") for n in range(TOKENS)), done()]


class Director:
    """Chooses each request's leg: the tag in the prompt names the agent and its turn,
    the tool results already in the request the step; a request without tools (a title,
    a side question) gets a short answer outside the script."""

    def __init__(self, project: Path, agents: list[Agent]) -> None:
        self.project = project
        self.agents = {a.name: a for a in agents}
        self.turns: dict[tuple[str, int], list[Step]] = {}
        self.stream = False
        self.answered: dict[tuple[str, int], int] = {}
        self.lock = threading.Lock()

    def leg(self, request: RecordedRequest) -> list[Any]:
        body = request.json if isinstance(request.json, dict) else {}
        if request.path.endswith("/messages") and not body.get("stream", False):
            from anthropic_messages import side_answer

            return side_answer(request)
        found = TAG.search(json.dumps(body))
        if not body.get("tools") or found is None:
            return [text("ok"), done()]
        agent = self.agents[found.group(1)]
        key = (agent.name, int(found.group(2)))
        step = tool_results(agent.api, body)
        with self.lock:
            self.answered[key] = max(self.answered.get(key, 0), step)
        if self.stream:
            return STREAM_LEG
        steps = self.turns.get(key, [])
        if step >= len(steps):
            return [text("Done."), done()]
        name, arguments = call_for(agent, steps[step], self.project)
        return [tool_calls(tool_call(name, arguments, id=f"call_{key[1]}_{step}"))]


@dataclass
class Run:
    wall: float
    cpu: float
    rss_mb: float
    problem: str = ""


LIVE: set[int] = set()  # process groups of the agents running now


def _end_live(*_signal: object) -> None:
    """Stopped (SIGTERM): the agents run in sessions of their own, so end them too."""
    for pid in list(LIVE):
        _kill(pid)
    raise SystemExit(1)


def spawn(command: list[str], cwd: Path, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "wb") as out:
        return subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def reap(process: subprocess.Popen[bytes], deadline: float) -> tuple[int, float, float]:
    """(exit status, CPU seconds of its tree, peak RSS MB of its largest process); kills
    the process group at `deadline`."""
    killer = threading.Timer(max(deadline - time.monotonic(), 0.1), _kill, (process.pid,))
    killer.start()
    try:
        _, status, usage = os.wait4(process.pid, 0)
    finally:
        killer.cancel()
    process.returncode = os.waitstatus_to_exitcode(status)
    _kill(process.pid)  # what it left running (a language server, a daemon)
    LIVE.discard(process.pid)
    return process.returncode, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def run_turns(
    agent: Agent, director: Director, workload: str, homes: Path, urls: dict[str, str]
) -> Run:
    """One run of `workload` by `agent`: its turns at once, each a process."""
    turns = WORKLOADS[workload]
    project = director.project
    base_url = urls["anthropic" if agent.api == "messages" else "openai"]
    server_url = base_url.removesuffix("/v1")
    env = prepare_home(agent, homes / agent.name, urls["openai"], server_url)
    director.stream = workload.startswith("20,000")
    with director.lock:
        for number, steps in enumerate(turns):
            director.turns[(agent.name, number)] = steps
            director.answered.pop((agent.name, number), None)
    prompt = "Do the steps the tools give you. [turn {name} {number}]"
    started = time.monotonic()
    processes = []
    for number in range(len(turns)):
        command = argv(agent, prompt.format(name=agent.name, number=number), urls["openai"])
        log = homes / f"{agent.name}-{number}.log"
        process = spawn(command, project, env, log)
        LIVE.add(process.pid)
        processes.append((number, log, process))
    cpu = rss = 0.0
    problems = []
    for number, log, process in processes:
        code, spent, peak = reap(process, started + LIMIT)
        cpu += spent
        rss += peak
        calls = director.answered.get((agent.name, number), 0)
        if code != 0 or (not director.stream and calls < len(turns[number])):
            tail = log.read_text(errors="replace").strip().splitlines()[-1:] or [""]
            problems.append(f"turn {number}: exit {code}, {calls} tool results: {tail[0][:120]}")
    wall = time.monotonic() - started
    subprocess.run(["git", "-C", str(project), "checkout", "-q", "--", "."], check=True)
    subprocess.run(["git", "-C", str(project), "clean", "-fdq"], check=True)
    return Run(wall, cpu, rss, "; ".join(problems))


def median_run(runs: list[Run]) -> Run:
    good = [r for r in runs if not r.problem] or runs
    return Run(
        statistics.median(r.wall for r in good),
        statistics.median(r.cpu for r in good),
        statistics.median(r.rss_mb for r in good),
        next((r.problem for r in runs if r.problem), ""),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="runs of each workload")
    parser.add_argument("--only", default="", help="agents, comma-separated")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--files", type=int, default=FILES, help="files in the project")
    parser.add_argument(
        "--base", type=Path, help="another melgui checkout (e.g. a worktree of main), run beside"
    )
    options = parser.parse_args()
    signal.signal(signal.SIGTERM, _end_live)
    wanted = {name for name in options.only.split(",") if name}
    agents = [a for a in AGENTS if not wanted or a.name in wanted or a.name == "melgui"]
    if options.base is not None:
        agents.insert(1, base_agent(options.base))
    skipped = {a.name: a.missing() for a in agents if a.missing()}
    agents = [a for a in agents if a.name not in skipped]
    temp = Path(tempfile.mkdtemp(prefix="melgui-peers-"))
    try:
        return measure(agents, skipped, temp, options.repeat, options.files)
    finally:
        if options.keep:
            print(f"kept {temp}")
        else:
            shutil.rmtree(temp, ignore_errors=True)


def measure(
    agents: list[Agent], skipped: dict[str, str], temp: Path, repeat: int, files: int
) -> int:
    started = time.perf_counter()
    project = build_project(temp, files)
    print(f"project: {files:,} files, built in {time.perf_counter() - started:.1f} s")
    print("agents: " + ", ".join(f"{a.name} {a.version()}" for a in agents))
    for agent in agents:
        if agent.melgui:
            # An installed melgui has its bytecode (pip compiles it); a checkout run with
            # PYTHONDONTWRITEBYTECODE would compile every module on every run.
            compileall.compile_dir(agent.tree / "melgui", quiet=1)
    for name, why in skipped.items():
        print(f"not measured: {name}: {why}")
    director = Director(project, agents)
    openai, anthropic = ScriptedOpenAI(), ScriptedAnthropic()
    servers: list[ScriptedServer] = [openai, anthropic]
    for server in servers:
        server.strict = False
        server.on(lambda request: True, director.leg)
    with openai, anthropic:
        urls = {"openai": openai.base_url, "anthropic": anthropic.url + "/v1"}
        homes = temp / "homes"
        homes.mkdir()
        for agent in agents:  # first start: each sets up its HOME (databases, caches)
            warm = run_turns(agent, director, "20,000 streamed tokens", homes, urls)
            if warm.problem:
                skipped[agent.name] = f"its first run failed: {warm.problem}"
        agents = [a for a in agents if a.name not in skipped or a.melgui]
        results: dict[str, dict[str, Run]] = {}
        for workload in WORKLOADS:
            runs: dict[str, list[Run]] = {a.name: [] for a in agents}
            for _ in range(repeat):
                for agent in agents:  # interleaved: a load that changes weighs on all
                    runs[agent.name].append(run_turns(agent, director, workload, homes, urls))
            results[workload] = {name: median_run(r) for name, r in runs.items()}
    return report(results, skipped)


def report(results: dict[str, dict[str, Run]], skipped: dict[str, str]) -> int:
    print(f"\nload average {os.getloadavg()[0]:.1f}; melgui / peer: below 1 melgui is ahead")
    if any("base" in runs for runs in results.values()):
        print("base: melgui from the --base checkout, run interleaved with this one")
    header = f"{'workload':<24}{'agent':<10}{'wall s':>8}{'CPU s':>8}{'RSS MB':>8}"
    print(header + f"{'wall':>8}{'CPU':>8}{'RSS':>8}  (melgui / this agent)")
    for workload, runs in results.items():
        ours = runs["melgui"]
        for name, run in runs.items():
            ratios = ""
            if name != "melgui" and not run.problem:
                ratios = (
                    f"{ours.wall / run.wall:>7.2f}×{ours.cpu / run.cpu:>7.2f}×"
                    f"{ours.rss_mb / run.rss_mb:>7.2f}×"
                )
            print(
                f"{workload:<24}{name:<10}{run.wall:>8.2f}{run.cpu:>8.2f}{run.rss_mb:>8.0f}{ratios}"
            )
            if run.problem:
                print(f"{'':<24}  {name} did not finish its work: {run.problem}")
    for name, why in skipped.items():
        print(f"not measured: {name}: {why}")
    for workload, runs in results.items():
        ours = runs["melgui"]
        peers = {n: r for n, r in runs.items() if n not in ("melgui", "base") and not r.problem}
        if not peers or ours.problem:
            continue
        _rows(workload, ours, peers)
    return budget.verdict()


def _rows(workload: str, ours: Run, peers: dict[str, Run]) -> None:
    def best(measure: Callable[[Run], float]) -> tuple[str, float]:
        name = min(peers, key=lambda n: measure(peers[n]))
        return name, measure(peers[name])

    for label, measure in (("wall", _wall), ("CPU", _cpu)):
        name, value = best(measure)
        print(f"{workload}: the best peer on {label} is {name}")
        budget.report(
            f"peers: {workload}, melgui {label} / best peer", measure(ours) / value, target=1.0
        )
    name, value = best(_rss)
    budget.note(f"peers: {workload}, melgui RSS / least peer", ours.rss_mb / value)


def _wall(run: Run) -> float:
    return run.wall


def _cpu(run: Run) -> float:
    return run.cpu


def _rss(run: Run) -> float:
    return run.rss_mb


if __name__ == "__main__":
    raise SystemExit(main())
