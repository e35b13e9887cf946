"""What a remote folder's hooks there cost each call: requests to the host per call, and
the time of a read-only call (PreToolUse, read_file, PostToolUse, as the loop walks it),
through a local command that behaves like a container's exec (tests/remote/
local_target.py: the link and the host as over ssh, with a loopback pipe's round trip).

Three folders, each trusted (the project's hooks run there):
- `none`: no hooks file there;
- `bash`: a PreToolUse hook for Bash only (`true`), as a guard on commands usually is;
- and the same `bash` folder's `run_command` call, whose PreToolUse does run there.

Against it, an untrusted folder (no hooks asked there: the floor). Rounds alternate
between the cases; the medians are printed with each case's requests per call by method.
Not a benchmark with a target: run it in two trees side by side to compare.

    python bench/hooks_there_points.py [--calls 200]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
import scratch  # noqa: E402  (bench/scratch.py: temporary folders removed at exit)

_SANDBOX = Path(scratch.folder(prefix="melgui-bench-hooks-there-"))
os.environ["MELGUI_CONFIG_DIR"] = str(_SANDBOX / "config")

from melgui.core.hooks.hooks import HookFiles, Hooks  # noqa: E402
from melgui.core.protocol.events import ToolCall  # noqa: E402
from melgui.host.client import HostClient  # noqa: E402
from melgui.remote.link import Link  # noqa: E402
from melgui.remote.remote_tools import RemoteTools  # noqa: E402
from tests.remote.local_target import BRIDGE, box_host, box_target  # noqa: E402

SENT: collections.Counter[str] = collections.Counter()
_call = HostClient.call


async def _counted(self: HostClient, method: str, **params: Any) -> Any:
    SENT[method] += 1
    return await _call(self, method, **params)


HostClient.call = _counted  # type: ignore[method-assign]


def folder(name: str, hooks: dict[str, Any] | None) -> Path:
    box = _SANDBOX / name
    box.mkdir()
    (box / "a.txt").write_text("x = 1\n" * 200)
    if hooks is not None:
        (box / ".claude").mkdir()
        (box / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    return box


class Case:
    def __init__(self, name: str, link: Link, box: Path, tool: str, trusted: bool) -> None:
        self.name = name
        self.tool = tool
        self.arguments = {"path": "a.txt"} if tool == "read_file" else {"command": "true"}
        self.tools = RemoteTools(link, str(box), options={"diagnostics": trusted})
        here = _SANDBOX / f"here-{name}"
        here.mkdir()
        self.hooks = Hooks(HookFiles(str(here), project_files=False), cwd=str(box),
                           there=self.tools.hooks_there())  # fmt: skip
        self.times: list[float] = []
        self.sent: collections.Counter[str] = collections.Counter()
        self.count = 0

    async def call(self) -> None:
        self.count += 1
        call = ToolCall(f"c{self.count}", self.tool, json.dumps(self.arguments))
        before = dict(SENT)
        started = time.perf_counter()
        judged = await self.hooks.before_call(call, self.arguments)
        outcome = await self.tools.run(self.tool, self.arguments)
        await self.hooks.after_call(call, self.arguments, outcome.status, outcome.content)
        self.times.append(time.perf_counter() - started)
        assert outcome.status == "ok" and judged.verdict is None, (outcome, judged)
        for method, count in SENT.items():
            self.sent[method] += count - before.get(method, 0)


async def main(calls: int) -> None:
    bash = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]}
    boxes = {"none": folder("none", None), "bash": folder("bash", bash)}
    runtime = _SANDBOX / "run"
    with box_host(runtime):
        target = box_target(runtime, _SANDBOX / "data", boxes["none"])
        link = Link(target, BRIDGE)
        await link.open()
        try:
            cases = [
                Case("untrusted read_file", link, boxes["bash"], "read_file", trusted=False),
                Case("no hooks file, read_file", link, boxes["none"], "read_file", trusted=True),
                Case("Bash hook, read_file", link, boxes["bash"], "read_file", trusted=True),
                Case("Bash hook, run_command", link, boxes["bash"], "run_command", trusted=True),
            ]
            for case in cases:  # warm: the first point of a folder may ask once
                for _ in range(5):
                    await case.call()
                case.times.clear()
                case.sent.clear()
                case.count = 0
            for _ in range(calls):
                for case in cases:
                    await case.call()
        finally:
            await link.aclose()
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, {calls} calls per case")
    floor = statistics.median(cases[0].times)
    for case in cases:
        median = statistics.median(case.times)
        per = ", ".join(f"{m} {n / calls:.2f}" for m, n in sorted(case.sent.items()) if n)
        print(f"{case.name:28} {median * 1000:6.2f} ms  x{median / floor:4.2f}  per call: {per}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    asyncio.run(main(parser.parse_args().calls))
