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
NAME = "melgui.core.agent.policy.xǁRulePolicyǁadd_rule__mutmut_"


def test_timeouts_and_type_errors_kill_while_no_tests_survive() -> None:
    codes = {NAME + "1": 1, NAME + "2": 36, NAME + "3": 37, NAME + "10": 0, NAME + "4": 33}
    codes[NAME + "5"] = None
    score = mutation.tally("melgui/core/agent/policy.py", codes)
    assert (score.killed, score.survivors, score.not_checked) == (3, [NAME + "4", NAME + "10"], 1)
    assert score.total == 5 and score.score == 0.6


def test_the_modules_are_the_fixed_set_and_each_has_tests_selected() -> None:
    assert mutation.modules() == [
        "melgui/core/agent/loop.py",
        "melgui/core/agent/policy.py",
        "melgui/core/agent/command_check.py",
        "melgui/core/agent/command_rules.py",
        "melgui/core/config/secrets.py",
        "melgui/tools/workspace.py",
        "melgui/core/store/store.py",
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
