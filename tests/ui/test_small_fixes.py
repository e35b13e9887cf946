"""Smaller things a person saw: no green "✓ 0 matched" when no rule matched, and an
export that defaults to the project folder and the conversation's title."""

from __future__ import annotations

from pathlib import Path

from melgui.core.rules.command_check import CommandJudgement, Part
from melgui.ui.approvals.command_parts import parts_summary_html
from melgui.ui.runtime.theme import LIGHT


def test_no_rule_matched_shows_no_green_tick() -> None:
    asked = Part("pytest -q", 0, 9, "ask", "no rule matches")
    judgement = CommandJudgement("pytest -q", "ask", (asked,))
    shown = parts_summary_html(judgement, LIGHT, sandbox=False)
    assert "0 matched" not in shown and "✓" not in shown
    assert "asked" in shown and "no rule matches" in shown
    allowed = Part("ls", 0, 2, "allow", "rule ls")
    both = CommandJudgement("ls; pytest -q", "ask", (allowed, asked))
    assert "✓ 1 matched" in parts_summary_html(both, LIGHT, sandbox=False)


def test_export_defaults_to_the_project_folder_and_the_title(tmp_path: Path) -> None:
    from melgui.ui.history.sidebar import export_default

    named = export_default(str(tmp_path), "Fix the parser: edge cases", ".md")
    assert named == str(tmp_path / "Fix-the-parser-edge-cases.md")
    assert export_default(str(tmp_path), "", ".json") == str(tmp_path / "conversation.json")


def test_the_at_list_leaves_out_python_bytecode(tmp_path: Path) -> None:
    from melgui.desk.prompt.attachments import FileIndex

    (tmp_path / "pkg" / "__pycache__").mkdir(parents=True)
    (tmp_path / "pkg" / "mod.py").write_text("x = 1\n")
    (tmp_path / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\0")
    (tmp_path / "old.pyc").write_bytes(b"\0")
    listed = FileIndex(str(tmp_path)).paths()
    assert "pkg/mod.py" in listed and "pkg/" in listed
    assert not [path for path in listed if "__pycache__" in path or path.endswith(".pyc")]
