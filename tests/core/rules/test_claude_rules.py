"""Claude Code permission rules a project carries, converted for import."""

from __future__ import annotations

import json
from pathlib import Path

from melgui.core.rules.claude_rules import claude_rules


def test_claude_code_rules_become_project_rules_or_say_why_not(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(
        json.dumps(
            {
                "permissions": {
                    "allow": [
                        "Bash(npm run test:*)",
                        "Bash(git status)",
                        "Bash(make *)",
                        "Edit",
                        "Read(~/.zshrc)",
                        "WebFetch(domain:example.com)",
                        "mcp__github__create_issue",
                        "Bash(npm test && rm -rf /)",
                        "Bash",
                    ],
                    "deny": ["Bash(curl:*)", "Write"],
                }
            }
        )
    )
    (tmp_path / ".claude" / "settings.local.json").write_text("{not json")
    found = claude_rules(tmp_path)
    lines = [f.rule.text for f in found if f.rule is not None]
    assert lines == [
        "allow run_command: npm run test",
        "allow run_command: git status",
        "allow run_command: make",
        "allow edit_file",
        "allow mcp:github/create_issue",
        "deny run_command: curl",
        "deny write_file",
    ]
    assert all(f.rule.scope == "project" for f in found if f.rule is not None)
    skipped = {f.source.split(": ", 1)[-1]: f.skipped for f in found if f.rule is None}
    assert "read-only" in skipped["Read(~/.zshrc)"]
    assert "scoped to" in skipped["WebFetch(domain:example.com)"]
    assert "no shell syntax" in skipped["Bash(npm test && rm -rf /)"]
    assert "every command" in skipped["Bash"]
    assert "cannot read it" in skipped[".claude/settings.local.json"]
    assert claude_rules(tmp_path / "nowhere") == []
