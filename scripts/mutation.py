"""Mutation testing over the modules fixed in pyproject.toml's [tool.mutmut]: run mutmut,
then print each module's score and every surviving mutant.

    pip install -e ".[mutation]"
    python scripts/mutation.py              # run (results are cached in mutants/), then report
    python scripts/mutation.py --survivors  # re-test only the last run's survivors (new tests)
    python scripts/mutation.py --module melgui/core/store/store.py   # one module's mutants
    python scripts/mutation.py --report     # only report the last run
    python scripts/mutation.py --diffs      # report with each survivor's diff

A mutant is killed when a test fails on it (a timeout or a type-check failure counts as
killed too); one with no test reaching it counts as surviving. mutmut keeps a result
until the function's code changes, so after adding tests re-test the survivors
(--survivors). Survivors judged harmless are listed with the reason in
docs/mutation-survivors.md (`- name: reason` lines); the score counts them as surviving,
and they may be at most 5% of the mutants.

The threshold is on the total: it passes when all modules' mutants together score at
least 85%, at most 5% are judged harmless, and every mutant has a result. Modules under
85% on their own are listed. Exits 1 when it does not pass, 2 when mutmut failed.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HARMLESS_FILE = ROOT / "docs" / "mutation-survivors.md"
MIN_SCORE = 0.85
MAX_HARMLESS = 0.05
# mutmut's exit codes (mutmut/stats.py): what counts as a kill.
KILLED_CODES = {1, 3, 36, 37, 24, -24, 152, 255}
NOT_CHECKED = None
HARMLESS_LINE = re.compile(r"^- `?(?P<name>[\w.ǁ]+__mutmut_\d+)`?\s*:\s*(?P<reason>.+)$")


@dataclass
class ModuleScore:
    path: str
    killed: int = 0
    survivors: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)  # mutants without a result yet

    @property
    def not_checked(self) -> int:
        return len(self.pending)

    @property
    def total(self) -> int:
        return self.killed + len(self.survivors)

    @property
    def score(self) -> float:
        return self.killed / self.total if self.total else 1.0


def modules(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """The module files [tool.mutmut] mutates."""
    config = tomllib.loads(pyproject.read_text("utf-8"))["tool"]["mutmut"]
    return list(config["only_mutate"])


def tally(path: str, exit_codes: Mapping[str, int | None]) -> ModuleScore:
    """One module's result from its mutants' exit codes (mutmut's .meta file)."""
    result = ModuleScore(path)
    for name, code in sorted(exit_codes.items(), key=lambda item: _natural(item[0])):
        if code is NOT_CHECKED:
            result.pending.append(name)
        elif code in KILLED_CODES:
            result.killed += 1
        else:  # survived, no tests, skipped, suspicious, segfault
            result.survivors.append(name)
    return result


def _natural(name: str) -> tuple[str, int]:
    head, _, number = name.rpartition("__mutmut_")
    return head, int(number) if number.isdigit() else 0


def load_scores(paths: Iterable[str], root: Path = ROOT) -> list[ModuleScore]:
    scores = []
    for path in paths:
        meta = root / "mutants" / f"{path}.meta"
        codes = json.loads(meta.read_text("utf-8"))["exit_code_by_key"] if meta.exists() else {}
        scores.append(tally(path, codes))
    return scores


def harmless(text: str) -> dict[str, str]:
    """Survivors judged harmless: `- name: reason` lines of the survivors file."""
    found = {}
    for line in text.splitlines():
        match = HARMLESS_LINE.match(line.strip())
        if match:
            found[match["name"]] = match["reason"].strip()
    return found


def report(scores: list[ModuleScore], judged: Mapping[str, str]) -> tuple[list[str], bool]:
    """The lines to print, and whether the set passes (the total's score, the harmless
    share, and a result for every mutant)."""
    lines = [f"{'module':44} {'mutants':>8} {'killed':>7} {'survived':>9} {'score':>7}"]
    for s in scores:
        lines.append(
            f"{s.path:44} {s.total:8} {s.killed:7} {len(s.survivors):9} {s.score:7.1%}"
            + (f"  ({s.not_checked} not checked)" if s.not_checked else "")
            + ("  (no results: never run)" if not s.total and not s.not_checked else "")
        )
    total = sum(s.total for s in scores)
    killed = sum(s.killed for s in scores)
    survivors = [name for s in scores for name in s.survivors]
    known = [name for name in survivors if name in judged]
    score = killed / total if total else 0.0
    share = len(known) / total if total else 0.0
    lines.append(f"{'all':44} {total:8} {killed:7} {len(survivors):9} {score:7.1%}")
    lines.append(
        f"score {score:.1%} of all mutants together (needs {MIN_SCORE:.0%}); judged harmless "
        f"{len(known)} = {share:.1%} of mutants (at most {MAX_HARMLESS:.0%})"
    )
    low = [s for s in scores if s.total and s.score < MIN_SCORE]
    if low:
        lines.append(
            f"modules under {MIN_SCORE:.0%} on their own: "
            + ", ".join(f"{s.path} {s.score:.1%}" for s in low)
        )
    unchecked = sum(s.not_checked for s in scores)
    never_run = [s.path for s in scores if not s.total and not s.not_checked]
    if unchecked or never_run:
        lines.append(
            f"INCOMPLETE: {unchecked} mutants not checked"
            + (f", no results for {', '.join(never_run)}" if never_run else "")
            + ": run again (`python scripts/mutation.py`) before trusting the score"
        )
    unexplained = [name for name in survivors if name not in judged]
    if unexplained:
        lines.append(f"survivors not judged harmless ({len(unexplained)}):")
        lines.extend(f"  {name}" for name in unexplained)
    pending = {name for s in scores for name in s.pending}
    stale = sorted(set(judged) - set(survivors) - pending)
    if stale:
        lines.append(f"listed as harmless but killed or gone ({len(stale)}): {', '.join(stale)}")
    complete = not unchecked and not never_run
    return lines, total > 0 and score >= MIN_SCORE and share <= MAX_HARMLESS and complete


def mutant_glob(path: str) -> str:
    """The mutmut name pattern of every mutant of one module file."""
    return path.removesuffix(".py").replace("/", ".") + ".*"


def run_mutmut(jobs: int, names: Sequence[str] = ()) -> int:
    """mutmut run: every mutant without a result, or (given names or patterns) those again."""
    command = [sys.executable, "-m", "mutmut", "run", "--max-children", str(jobs), *names]
    log = ROOT / "mutants" / "run.log"
    log.parent.mkdir(exist_ok=True)
    shown = " ".join(command[1:7]) + (f" … ({len(names)} names)" if len(names) > 2 else "")
    print(f"running {shown} (progress in {log.relative_to(ROOT)})", flush=True)
    with log.open("w") as out:
        return subprocess.run(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT).returncode


def diff(name: str) -> str:
    shown = subprocess.run(
        [sys.executable, "-m", "mutmut", "show", name], cwd=ROOT, capture_output=True, text=True
    )
    return shown.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", action="store_true", help="only report the last run")
    parser.add_argument("--diffs", action="store_true", help="show each survivor's diff")
    parser.add_argument("--jobs", type=int, default=2, help="mutants tested at once")
    parser.add_argument(
        "--survivors", action="store_true", help="re-test the last run's survivors only"
    )
    parser.add_argument(
        "--module", action="append", default=[], help="re-test this module's mutants only"
    )
    args = parser.parse_args(argv)
    started = time.monotonic()
    judged = harmless(HARMLESS_FILE.read_text("utf-8")) if HARMLESS_FILE.exists() else {}
    paths = modules()
    if not args.report:
        names = [mutant_glob(path) for path in args.module]
        if args.survivors:
            chosen = [s for s in load_scores(args.module or paths)]
            names = [name for s in chosen for name in s.survivors]
            if not names:
                print("no survivors to re-test")
        if (names or not args.survivors) and run_mutmut(args.jobs, names) != 0:
            print(f"mutmut failed; see {ROOT / 'mutants' / 'run.log'}", file=sys.stderr)
            return 2
    scores = load_scores(paths)
    lines, passed = report(scores, judged)
    print("\n".join(lines))
    if args.diffs:
        for name in (n for s in scores for n in s.survivors if n not in judged):
            print(diff(name))
    if not args.report:
        print(f"took {time.monotonic() - started:.0f} s")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
