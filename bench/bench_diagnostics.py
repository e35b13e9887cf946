"""What diagnostics after an edit cost beside what the language server itself takes.

For each installed server (pylsp with pyflakes; typescript-language-server with typescript
from .ci/lsp), a file is edited back and forth between a version with an error and one
without, and each time melgui's whole step after the edit is timed (reading the file,
sending the change, waiting by its settle rule or pull request, formatting the new
errors) beside the server's own time to answer that change (from the change sent to its
first publish, or its pull reply). Target: at most 1.5× the server's time; both printed.

    python bench/bench_diagnostics.py
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
import scratch  # noqa: E402  (bench/scratch.py: temporary folders removed at exit)

_SANDBOX = scratch.folder(prefix="melgui-bench-lsp-")
os.environ["MELGUI_CONFIG_DIR"] = os.path.join(_SANDBOX, "config")

import budget  # noqa: E402  (bench/budget.py: the frame-budget table)

from melgui.core.lsp.diagnostics import ProjectDiagnostics  # noqa: E402
from melgui.core.protocol.events import ToolCall  # noqa: E402

ROUNDS = 30
TARGET = 1.5
NODE_BIN = ROOT / ".ci" / "lsp" / "node_modules" / ".bin"
PATH = os.pathsep.join([str(NODE_BIN), str(Path(sys.executable).parent), os.environ["PATH"]])
CASES = {
    "pylsp": ("app.py", "def f(name):\n    return name\n", "def f(name):\n    return nam\n"),
    "typescript-language-server": (
        "app.ts",
        "export const n: number = 1;\n",
        'export const n: number = "one";\n',
    ),
}


async def measure(server: str, name: str, good: str, bad: str) -> tuple[float, float] | None:
    project = Path(scratch.folder(prefix="proj-", dir=_SANDBOX))
    (project / "tsconfig.json").write_text('{"compilerOptions": {"strict": true}}\n')
    path = project / name
    path.write_text(good)
    diagnostics = ProjectDiagnostics(
        str(project), trusted=lambda: True, env={**os.environ, "PATH": PATH}
    )
    call = ToolCall("c", "write_file", "{}")
    totals, answers = [], []
    try:
        await diagnostics.after_call(call, {"path": name}, "ok", "")  # start, open
        session = diagnostics.servers.get("python" if name.endswith(".py") else "typescript")
        if session is None:
            print(f"{server}: not installed ({'; '.join(diagnostics.problems.values())})")
            return None
        for i in range(ROUNDS):
            path.write_text(bad if i % 2 == 0 else good)
            start = time.perf_counter()
            after = await diagnostics.after_call(call, {"path": name}, "ok", "")
            totals.append(time.perf_counter() - start)
            answers.append(session.answered_in)
            if i % 2 == 0:
                assert "error" in after.context, after
    finally:
        await diagnostics.aclose()
    return statistics.median(totals), statistics.median(answers)


async def main() -> int:
    for server, (name, good, bad) in CASES.items():
        found = await measure(server, name, good, bad)
        if found is None:
            continue
        total, answer = found
        ratio = total / answer
        print(
            f"{server}: diagnostics after an edit {total * 1e3:.1f} ms; the server's own "
            f"answer {answer * 1e3:.1f} ms; ratio {ratio:.2f} (target ≤ {TARGET})"
        )
        budget.report(f"diagnostics after an edit / {server}'s own answer", ratio, target=TARGET)
    return budget.verdict()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
