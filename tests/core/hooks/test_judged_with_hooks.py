"""A call's judgement with PreToolUse hooks: the rules look first (before a hook's child
runs), and the judgement kept is by the rules as they are once the hooks answered, of
the input that runs. Real hook processes, a real RulePolicy."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from melgui.core.agent.call_judge import judge
from melgui.core.agent.plan_mode import PlanMode
from melgui.core.config.settings import config_dir
from melgui.core.hooks.hooks import HookFiles, Hooks
from melgui.core.protocol.events import ToolCall
from melgui.core.rules.policy import RulePolicy
from melgui.core.rules.rule_scopes import BUILTIN, Rule


def own_pre_tool_use(command: str) -> None:
    path = config_dir() / "hooks.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    hook = {"type": "command", "command": command}
    block = {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}
    path.write_text(json.dumps({"hooks": block}))


def watched_policy(project: Path, marker: Path, looks: list[bool]) -> RulePolicy:
    """A RulePolicy that notes, at each look at a call, whether the hook had run yet."""

    def origin_of(name: str) -> str:
        looks.append(marker.exists())
        return BUILTIN

    return RulePolicy(project=str(project), origin_of=origin_of)


async def test_the_rules_look_before_the_hook_runs_and_again_at_its_rewrite(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "ran"
    rewrite = {"hookSpecificOutput": {"updatedInput": {"command": "git log"}}}
    own_pre_tool_use(f"touch {marker}; echo '{json.dumps(rewrite)}'")
    looks: list[bool] = []
    policy = watched_policy(tmp_path, marker, looks)
    policy.add_rule(Rule.parse("allow run_command: git log", "conversation"))
    hooks = Hooks(HookFiles(str(tmp_path)), cwd=str(tmp_path))
    call = ToolCall("c1", "run_command", '{"command": "git status"}')
    judged = await judge(
        call, {"command": "git status"}, policy, tool=None, plan=PlanMode(), hooks=hooks
    )
    assert judged.arguments == {"command": "git log"}
    assert judged.judgement.verdict == "allow"  # judged again: the rewrite is what runs
    assert looks == [False, True]


async def test_rules_changed_while_a_hook_runs_judge_the_call(tmp_path: Path) -> None:
    started, go = tmp_path / "started", tmp_path / "go"
    own_pre_tool_use(f"touch {started}; while [ ! -e {go} ]; do sleep 0.01; done")
    looks: list[bool] = []
    policy = watched_policy(tmp_path, started, looks)
    policy.add_rule(Rule.parse("allow run_command: git status", "conversation"))
    hooks = Hooks(HookFiles(str(tmp_path)), cwd=str(tmp_path))
    call = ToolCall("c1", "run_command", '{"command": "git status"}')
    judging = asyncio.ensure_future(
        judge(call, {"command": "git status"}, policy, tool=None, plan=PlanMode(), hooks=hooks)
    )
    while not started.exists():
        await asyncio.sleep(0.01)
    assert looks == [False]  # the rules allowed it before the hook ran
    policy.add_rule(Rule.parse("deny run_command: git status", "conversation"))
    go.touch()
    judged = await judging
    assert judged.judgement.verdict == "deny" and "deny run_command" in judged.judgement.reason
    assert looks == [False, True]
