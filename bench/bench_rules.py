"""Deciding a command against 200 rules, over real-world commands, per frame.

    python bench/bench_rules.py

Reads bench/data/tldr_commands.txt (14,905 example commands of tldr-pages, CC-BY 4.0)
and decides each against 200 rules (180 allow rules for the programs the commands use
most, 20 deny rules) the way RulePolicy does for run_command: parse with tree-sitter,
unwrap, match, check redirections. Prints the cost per command as a fraction of a
16.7 ms frame (60 Hz), cold (first sight of a command line) and the parse alone, side
by side in the same run, and the same line decided again (the parse cached).
Cold decisions run with the parse cache emptied before each one.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import budget  # bench/budget.py: the frame-budget table

from melgui.core.rules.command_check import judge_command, judge_parsed
from melgui.core.rules.rule_scopes import Rule
from melgui.core.rules.shell_parse import parse_shell

FRAME_MS = 1000 / 60
DATA = Path(__file__).resolve().parent / "data" / "tldr_commands.txt"
DENIED = ("rm", "dd", "mkfs", "shred", "curl", "wget", "ssh", "scp", "sudo", "su")
DENIED += ("chmod", "chown", "kill", "pkill", "reboot", "shutdown", "mount", "umount")
DENIED += ("crontab", "passwd")


def rules_for(commands: list[str]) -> tuple[list[Rule], list[Rule]]:
    """180 allow rules for the most used programs (half with their first subcommand),
    and 20 deny rules."""
    programs: Counter[str] = Counter()
    pairs: Counter[str] = Counter()
    for command in commands:
        words = command.split()
        if words and words[0].isidentifier():
            programs[words[0]] += 1
            if len(words) > 1 and words[1].isalpha():
                pairs[f"{words[0]} {words[1]}"] += 1
    chosen = [p for p, _ in programs.most_common(120) if p not in DENIED][:90]
    chosen += [p for p, _ in pairs.most_common(200) if p.split()[0] not in DENIED][:90]
    allow = [Rule.parse(f"allow run_command: {words}") for words in chosen]
    deny = [Rule.parse(f"deny run_command: {program}") for program in DENIED]
    assert len(allow) + len(deny) == 200, len(allow) + len(deny)
    return allow, deny


def main() -> int:
    commands = [line for line in DATA.read_text(encoding="utf-8").splitlines() if line]
    allow, deny = rules_for(commands)
    project = "/home/user/project"
    parse_ns: list[int] = []
    cold_ns: list[int] = []
    cached_ns: list[int] = []
    verdicts: Counter[str] = Counter()
    parse_shell("ls")  # tree-sitter's grammar loaded once, as the app has it
    for command in commands:
        # Cold: the decision parses the line, as a first sight of it does.
        started = time.perf_counter_ns()
        verdict = judge_command(command, allow, deny, project).verdict
        cold_ns.append(time.perf_counter_ns() - started)
        # Cached: the line already read, judged against the rules again (the policy does
        # this for the scopes of "Always allow" when a narrower rule covered a part).
        started = time.perf_counter_ns()
        parsed = parse_shell(command)
        parse_ns.append(time.perf_counter_ns() - started)
        started = time.perf_counter_ns()
        judge_parsed(parsed, allow, deny, project)
        cached_ns.append(time.perf_counter_ns() - started)
        verdicts[verdict] += 1

    def report(name: str, samples: list[int]) -> None:
        ms = sorted(s / 1e6 for s in samples)
        median, p99 = statistics.median(ms), ms[int(len(ms) * 0.99)]
        print(
            f"{name:34} median {median:.3f} ms = {median / FRAME_MS:6.2%} of a frame;"
            f" p99 {p99:.3f} ms = {p99 / FRAME_MS:6.2%}; max {ms[-1]:.2f} ms"
        )

    print(f"{len(commands)} tldr-pages commands, {len(allow)} allow + {len(deny)} deny rules")
    print("verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())))
    report("parse only (tree-sitter), cold", parse_ns)
    report("decide cold (parse + 200 rules)", cold_ns)
    report("decide cached (same line again)", cached_ns)
    share = statistics.median(cold_ns) / max(1, statistics.median(parse_ns))
    print(f"deciding cold costs {share:.1f}x the parse alone")
    cold, cached = sorted(cold_ns), sorted(cached_ns)
    rows = [
        budget.stall_row(
            "rules: deciding a command cold, 200 rules (median)",
            cold[len(cold) // 2] / 1e6,
            frames=0.1,
        ),
        budget.stall_row(
            "rules: deciding a command cold, 200 rules (99th pct)",
            cold[int(len(cold) * 0.99)] / 1e6,
        ),
        budget.stall_row(
            "rules: deciding a command cached, 200 rules (99th pct)",
            cached[int(len(cached) * 0.99)] / 1e6,
            frames=0.1,
        ),
    ]
    print(budget.table(rows))
    return budget.verdict()


if __name__ == "__main__":
    raise SystemExit(main())
