"""A hosted ACP agent's permission requests pass through the project's PreToolUse hooks,
in Claude Code's names: Claude Code's documented validator rejects an agent's `grep`, and
a hook's allow answers what the rules would have asked."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

from melgui.core.config.trust import FolderTrust
from melgui.core.hooks.hooks import HookFiles, Hooks
from melgui.core.rules.policy import RulePolicy
from melgui.desk.hosted_agents.host import AcpHost
from tests.fakes.acp_host import scripted_agent
from tests.hosted_agents.test_command_permissions import LIMIT, Person, execute, play

DATA = Path(__file__).parents[1] / "data" / "claude_hooks"
ALLOWED = '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}'
ALLOW_LS = f"jq -r .tool_input.command | grep -q '^ls' && echo '{ALLOWED}' || true"


async def test_the_projects_hooks_answer_an_agents_commands(tmp_path: Path) -> None:
    hooks_dir = tmp_path / ".claude" / "hooks"
    hooks_dir.mkdir(parents=True)
    shutil.copy(DATA / "bash_command_validator.py", hooks_dir)
    block = {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [
                        {"command": "python3 .claude/hooks/bash_command_validator.py"},
                        {"command": ALLOW_LS},
                    ],
                }
            ]
        }
    }
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(block))
    FolderTrust().trust(tmp_path)
    person = Person("allow_once")
    policy = RulePolicy(project=str(tmp_path))
    host = AcpHost(scripted_agent(name="bot"), str(tmp_path), policy=policy, ask=person)
    told: list[str] = []
    host.gate.tell = told.append
    host.gate.hooks = Hooks(HookFiles(str(tmp_path)), cwd=str(tmp_path))
    await asyncio.wait_for(host.start(), LIMIT)
    try:
        events = await play(host, execute("grep -r TODO ."), execute("ls"), execute("make"))
    finally:
        await host.aclose()
    # grep: rejected by the validator; ls: allowed by the hook; make: asked the person
    assert events.text() == "permission:nopermission:yespermission:yes"
    assert [json.loads(r.call.arguments)["command"] for r in person.asked] == ["make"]
    assert any("Use 'rg' (ripgrep)" in r for r in host.gate.answered_by_rules)
    assert any("allowed by a PreToolUse hook" in r for r in host.gate.answered_by_rules)
    assert any(t.startswith("PreToolUse hook `python3") and "denied" in t for t in told)
