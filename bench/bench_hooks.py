"""What a hook adds to a call: a PreToolUse hook that runs `true`, against a bare
`sh -c true`, alternating, in the same run.

The hook's cost is the whole of what the call's judgement pays for it: reading the hook
files (as they are now, with the folder's trust), matching, the JSON on stdin, the
child, its pipes, reading its answer, and the judgement's own work done after a child
ran. That last part is not nothing: whatever runs after a child (here the policy's
judgement, about 0.07 ms alone) runs slower, its caches cold. So each bare child is
timed at the same point: started, waited for, then the same judgement, and what it adds
to the judgement is its cost. It is started three ways, each timed in the same rounds:
by `os.posix_spawn` and a blocking wait (the fastest there is), by a blocking
`subprocess.run`, and by asyncio as an event-loop program usually starts one. Target:
at most 1.2× the fastest; every ratio is printed, with the bare children's own times.

    python bench/bench_hooks.py
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
import scratch  # noqa: E402  (bench/scratch.py: temporary folders removed at exit)

_SANDBOX = scratch.folder(prefix="melgui-bench-hooks-")
os.environ["MELGUI_CONFIG_DIR"] = os.path.join(_SANDBOX, "config")

import budget  # noqa: E402  (bench/budget.py: the frame-budget table)

from melgui.core.agent.call_judge import judge  # noqa: E402
from melgui.core.agent.plan_mode import PlanMode  # noqa: E402
from melgui.core.config.settings import config_dir  # noqa: E402
from melgui.core.hooks.hooks import HookFiles, Hooks  # noqa: E402
from melgui.core.protocol.events import ToolCall  # noqa: E402
from melgui.core.rules.policy import RulePolicy  # noqa: E402
from melgui.core.runtime.processes import child_preexec  # noqa: E402

ROUNDS = 300
TARGET = 1.2
BARE_ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
BARES = {
    "posix_spawn": "posix_spawn and a blocking waitpid",
    "subprocess.run": "a blocking subprocess.run",
    "asyncio": "asyncio.create_subprocess_exec",
}


def bare_spawn() -> float:
    """`sh -c true` by posix_spawn (vfork and exec, nothing else) and a blocking wait."""
    start = time.perf_counter()
    pid = os.posix_spawn("/bin/sh", ["/bin/sh", "-c", "true"], BARE_ENV, setsid=True)
    os.waitpid(pid, 0)
    return time.perf_counter() - start


def bare() -> float:
    """`sh -c true` by subprocess.run, its own session: the cheapest usual way to run it
    (vfork, a blocking wait, nothing on an event loop)."""
    start = time.perf_counter()
    subprocess.run(
        ["/bin/sh", "-c", "true"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        check=True,
    )
    return time.perf_counter() - start


async def bare_async() -> float:
    """The same through asyncio, as run_command starts its children (for comparison)."""
    start = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        "/bin/sh",
        "-c",
        "true",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=child_preexec(),
    )
    await proc.wait()
    return time.perf_counter() - start


async def judged(hooks: Hooks | None, policy: RulePolicy, plan: PlanMode) -> float:
    call = ToolCall("c1", "run_command", '{"command": "git status"}')
    start = time.perf_counter()
    await judge(call, {"command": "git status"}, policy, tool=None, plan=plan, hooks=hooks)
    return time.perf_counter() - start


async def judged_after(child: float, policy: RulePolicy, plan: PlanMode) -> float:
    """A bare child's time (`child`) and the judgement, without hooks, right after it."""
    return child + await judged(None, policy, plan)


async def main() -> int:
    project = Path(_SANDBOX) / "project"
    project.mkdir()
    hooks_file = config_dir() / "hooks.json"
    hooks_file.parent.mkdir(parents=True, exist_ok=True)
    block = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]}
    hooks_file.write_text(json.dumps({"hooks": block}))
    hooks = Hooks(HookFiles(str(project)), cwd=str(project))
    policy, plan = RulePolicy(project=str(project)), PlanMode()
    for _ in range(20):  # warm up
        bare()
        bare_spawn()
        await judged(hooks, policy, plan)
    times: dict[str, list[float]] = {name: [] for name in (*BARES, "hook", "alone")}
    own: dict[str, list[float]] = {name: [] for name in BARES}
    for _ in range(ROUNDS):
        for name, took in (
            ("posix_spawn", bare_spawn()),
            ("subprocess.run", bare()),
            ("asyncio", await bare_async()),
        ):
            own[name].append(took)
            times[name].append(await judged_after(took, policy, plan))
        times["hook"].append(await judged(hooks, policy, plan))
        times["alone"].append(await judged(None, policy, plan))
    median = {name: statistics.median(values) for name, values in times.items()}
    alone = median["alone"]
    added = median["hook"] - alone
    print(
        f"a call's judgement: {alone * 1e3:.3f} ms alone, {median['hook'] * 1e3:.3f} ms with "
        f"a `true` PreToolUse hook: the hook adds {added * 1e3:.3f} ms"
    )
    print("a bare sh -c true run just before the same judgement adds:")
    costs = {name: median[name] - alone for name in BARES}
    fastest = min(costs.values())
    for name, cost in costs.items():
        mark = f" (the fastest: target ≤ {TARGET})" if cost == fastest else ""
        print(
            f"  by {BARES[name]}: {cost * 1e3:.3f} ms (the child alone "
            f"{statistics.median(own[name]) * 1e3:.3f}) -> the hook {added / cost:.2f}×{mark}"
        )
    ratio = added / fastest
    budget.report("hooks: a `true` PreToolUse hook / bare sh -c true", ratio, target=TARGET)
    return budget.verdict()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
