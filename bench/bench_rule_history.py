"""Trying a draft rule set on 10,000 recorded calls, against a 2 s target.

    python bench/bench_rule_history.py

Writes 10,000 calls into a real store through its own API, over 100 conversations: the
commands of bench/data/tldr_commands.txt (tldr-pages, CC-BY 4.0) as run_command calls,
each seen once (the replay judges a repeated call once, so distinct calls are its worst
case), with every tenth call a read_file or write_file, decided as a person would have
(approved, denied, or run without asking). Then reads them back from the store and
replays them through a draft of 200 rules (bench_rules.py's), the way Settings →
Approval's "Try on history" does: the row is that time over 2 s. The proposal (the
rules for the always-approved prompts) is timed and printed beside it.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import budget  # bench/budget.py: the frame-budget table
from bench_rules import DATA, rules_for

from melgui.core.protocol.events import ToolCall
from melgui.core.rules.policy import RulePolicy
from melgui.core.rules.rule_scopes import RuleBook
from melgui.core.rules.rule_trial.proposal import propose
from melgui.core.rules.rule_trial.replay import replay
from melgui.core.rules.shell_parse import parse_shell
from melgui.core.store import Store, open_store

CALLS = 10_000
TARGET_S = 2.0


def record(store: Store, folder: str, commands: list[str]) -> None:
    cids = [store.create_conversation(folder) for _ in range(100)]
    with store.transaction():
        for i in range(CALLS):
            cid = cids[i * len(cids) // CALLS]
            if i % 10 == 9:
                tool, arguments = ("read_file", "write_file")[i % 20 == 19], {"path": f"f{i}.py"}
            else:
                tool, arguments = "run_command", {"command": commands[i % len(commands)]}
            call = ToolCall(f"c{i}", tool, json.dumps(arguments))
            store.calls.requested(cid, call)
            decision = ("approved", "approved", "auto", "approved", "denied")[i % 5]
            store.calls.decided(cid, call.id, decision)
            store.calls.finished(cid, call.id, "denied" if decision == "denied" else "ok", "", 0.1)


def main() -> int:
    commands = [line for line in DATA.read_text(encoding="utf-8").splitlines() if line]
    allow, deny = rules_for(commands)
    parse_shell("ls")  # tree-sitter's grammar loaded once, as the app has it
    with tempfile.TemporaryDirectory(prefix="melgui-bench-") as temp:
        root = Path(temp)
        folder = str(root / "project")
        with open_store(root / "data") as store:
            record(store, folder, commands)
            draft = RulePolicy(project=folder, book=RuleBook(everywhere=[*allow, *deny]))
            started, used = time.perf_counter(), time.process_time()
            done = replay(store.calls.recorded(), draft)
            replay_s = time.perf_counter() - started
            replay_cpu = time.process_time() - used
            started = time.perf_counter()
            proposals = propose(done, draft)
            propose_s = time.perf_counter() - started
    print(
        f"{len(done.calls)} recorded calls, {len(allow)} allow + {len(deny)} deny rules:"
        f" {len(done.removed_prompts)} prompts removed, {len(done.let_run_denied)} denied"
        f" calls let run, {len(done.now_denied)} calls now denied"
    )
    print(
        f"replay (read from the store + judge): {replay_s:.2f} s (CPU {replay_cpu:.2f} s)"
        f" = {replay_s / TARGET_S:.2f}x the 2 s target"
    )
    print(f"proposal: {len(proposals)} rules in {propose_s:.2f} s")
    row = budget.report(
        "rules: replaying 10,000 recorded calls / 2 s", replay_s / TARGET_S, target=1.0
    )
    print(budget.table([row]))
    return budget.verdict()


if __name__ == "__main__":
    raise SystemExit(main())
