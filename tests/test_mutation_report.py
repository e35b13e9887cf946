"""scripts/mutation.py's report: what counts as killed, the score, the harmless list."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("melgui_mutation", ROOT / "scripts/mutation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["melgui_mutation"] = module
    spec.loader.exec_module(module)
    return module


mutation = _script()
NAME = "melgui.core.rules.policy.xǁRulePolicyǁadd_rule__mutmut_"


def test_timeouts_and_type_errors_kill_while_no_tests_survive() -> None:
    codes: dict[str, int | None] = {
        NAME + "1": 1,
        NAME + "2": 36,
        NAME + "3": 37,
        NAME + "10": 0,
        NAME + "4": 33,
    }
    codes[NAME + "5"] = None
    score = mutation.tally("melgui/core/rules/policy.py", codes)
    assert (score.killed, score.survivors, score.not_checked) == (3, [NAME + "4", NAME + "10"], 1)
    assert score.total == 5 and score.score == 0.6


def test_the_modules_are_the_fixed_set_and_each_has_tests_selected() -> None:
    assert mutation.modules() == [
        "melgui/core/agent/loop.py",
        "melgui/core/rules/policy.py",
        "melgui/core/rules/command_check.py",
        "melgui/core/rules/command_rules.py",
        "melgui/core/config/secrets.py",
        "melgui/tools/workspace.py",
        "melgui/core/store/store.py",
        "melgui/core/thread/reducer.py",
        "melgui/core/thread/thread.py",
    ]


def test_report_passes_at_85_percent_with_at_most_5_percent_judged_harmless(
    tmp_path: Path,
) -> None:
    meta = tmp_path / "mutants" / "m.py.meta"
    meta.parent.mkdir()
    codes = {f"m.x_f__mutmut_{n}": (0 if n <= 3 else 1) for n in range(1, 21)}
    meta.write_text(json.dumps({"exit_code_by_key": codes}))
    (score,) = mutation.load_scores(["m.py"], tmp_path)
    assert score.score == 0.85
    judged = mutation.harmless("# Survivors\n- `m.x_f__mutmut_1`: prints the same\n")
    assert judged == {"m.x_f__mutmut_1": "prints the same"}
    lines, passed = mutation.report([score], judged)
    assert passed
    assert lines[-3] == "survivors not judged harmless (2):"
    assert lines[-2:] == ["  m.x_f__mutmut_2", "  m.x_f__mutmut_3"]
    assert "judged harmless 1 = 5.0% of mutants" in lines[-4]
    judged["m.x_f__mutmut_2"] = "also harmless"  # 10%: too many excused
    assert mutation.report([score], judged)[1] is False
    codes["m.x_f__mutmut_4"] = 0
    meta.write_text(json.dumps({"exit_code_by_key": codes}))
    assert mutation.report(mutation.load_scores(["m.py"], tmp_path), {})[1] is False


def _scores(tmp_path: Path, modules: dict[str, dict[str, int | None]]) -> list[object]:
    for path, codes in modules.items():
        meta = tmp_path / "mutants" / f"{path}.meta"
        meta.parent.mkdir(parents=True, exist_ok=True)
        meta.write_text(json.dumps({"exit_code_by_key": codes}))
    return mutation.load_scores(list(modules), tmp_path)


def test_the_threshold_is_on_the_total_and_weaker_modules_are_named(tmp_path: Path) -> None:
    strong: dict[str, int | None] = {f"a.x_f__mutmut_{n}": 1 for n in range(1, 19)}
    weak: dict[str, int | None] = {"b.x_g__mutmut_1": 1, "b.x_g__mutmut_2": 0}  # 50% alone
    lines, passed = mutation.report(_scores(tmp_path, {"a.py": strong, "b.py": weak}), {})
    assert passed
    assert lines[1:4] == [
        f"{'a.py':44} {18:8} {18:7} {0:9} {'100.0%':>7}",
        f"{'b.py':44} {2:8} {1:7} {1:9} {'50.0%':>7}",
        f"{'all':44} {20:8} {19:7} {1:9} {'95.0%':>7}",
    ]
    assert lines[4].startswith("score 95.0% of all mutants together (needs 85%)")
    assert lines[5] == "modules under 85% on their own: b.py 50.0%"


def test_mutants_without_a_result_fail_the_report_and_say_so(tmp_path: Path) -> None:
    codes: dict[str, int | None] = {f"a.x_f__mutmut_{n}": 1 for n in range(1, 10)}
    codes["a.x_f__mutmut_10"] = None
    judged = {"a.x_f__mutmut_10": "not run yet, so not stale"}
    lines, passed = mutation.report(_scores(tmp_path, {"a.py": codes, "never.py": {}}), judged)
    assert not passed
    assert lines[1].endswith("(1 not checked)")
    assert lines[2].endswith("(no results: never run)")
    assert (
        "INCOMPLETE: 1 mutants not checked, no results for never.py: run again "
        "(`python scripts/mutation.py`) before trusting the score"
    ) in lines
    assert not any(line.startswith("listed as harmless but killed") for line in lines)
    codes["a.x_f__mutmut_10"] = 1
    lines, passed = mutation.report(_scores(tmp_path, {"a.py": codes}), judged)
    assert passed
    assert lines[-1] == "listed as harmless but killed or gone (1): a.x_f__mutmut_10"


def test_a_module_s_mutants_are_named_by_its_dotted_path() -> None:
    assert mutation.mutant_glob("melgui/core/store/store.py") == "melgui.core.store.store.*"
