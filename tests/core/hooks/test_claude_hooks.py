"""A real Claude Code-format hooks file (its documentation's examples) in a trusted
project, through a Desk, the scripted relay, the loop and real hook processes."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from melgui.core.config.settings import Settings, config_dir
from melgui.core.config.trust import FolderTrust
from melgui.core.protocol.loop_events import LoopEvent, ToolCallFinished
from melgui.core.protocol.tooling import HookRun
from melgui.desk.desk import Desk
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls

DATA = Path(__file__).parents[2] / "data" / "claude_hooks"


def claude_project(folder: Path, *, trusted: bool = True) -> Path:
    hooks = folder / ".claude" / "hooks"
    hooks.mkdir(parents=True)
    shutil.copy(DATA / "settings.json", folder / ".claude" / "settings.json")
    for script in ("bash_command_validator.py", "rewrite_input.py"):
        shutil.copy(DATA / script, hooks / script)
    FolderTrust().set(folder, trusted)
    return folder


def desk_for(folder: Path, relay: ScriptedRelay) -> Desk:
    settings = Settings(connection="relay", relay_url=relay.base_url)
    settings.approval_modes = {**settings.approval_modes, "run_command": "auto"}
    return Desk(str(folder), settings, api_key="k", plans=lambda title, markdown: None)


async def run(desk: Desk, prompt: str) -> list[ToolCallFinished]:
    session = desk.session(model="relay-model", role="assistant")
    finished: list[ToolCallFinished] = []

    def observe(event: LoopEvent) -> None:
        if isinstance(event, ToolCallFinished):
            finished.append(event)

    session.subscribe(observe)
    session.submit(prompt)
    await session.wait_idle()
    await session.aclose()
    await desk.aclose()
    return finished


def tool_results(relay: ScriptedRelay, leg: int) -> list[str]:
    messages: list[dict[str, Any]] = relay.legs_received[leg].messages
    return [str(m["content"]) for m in messages if m.get("role") == "tool"]


async def test_the_documented_validator_blocks_a_command_and_the_model_reads_why(
    tmp_path: Path,
) -> None:
    project = claude_project(tmp_path / "p")
    with ScriptedRelay() as relay:
        relay.script(
            [tool_calls(tool_call("run_command", {"command": "grep -r TODO ."}))], [done()]
        )
        finished = await run(desk_for(project, relay), "find the TODOs")
    (call,) = finished
    assert call.status == "denied"
    assert "Use 'rg' (ripgrep) instead of 'grep'" in call.content
    assert "Use 'rg' (ripgrep) instead of 'grep'" in tool_results(relay, 1)[0]
    validator = next(r for r in call.hooks if "bash_command_validator" in r.command)
    assert validator.exit_code == 2 and validator.effect.startswith("denied")
    assert validator.origin == ".claude/settings.json" and validator.matcher == "Bash"
    # The documented logging hook ran beside it and read `tool_input.command`.
    log = (project / "bash-command-log.txt").read_text()
    assert log == "grep -r TODO . - No description\n"


async def test_a_hook_rewrites_a_bash_command_in_claude_codes_names(tmp_path: Path) -> None:
    project = claude_project(tmp_path / "p")
    (project / "src").mkdir()
    (project / "src" / "a.txt").write_text("a\n")
    with ScriptedRelay() as relay:
        relay.script([tool_calls(tool_call("run_command", {"command": "ls src"}))], [done()])
        finished = await run(desk_for(project, relay), "list src")
    (call,) = finished
    assert call.status == "ok" and "a.txt" in call.content
    rewrite = next(r for r in call.hooks if "rewrite_input" in r.command)
    assert "rewrote the input" in rewrite.effect
    log = (project / "bash-command-log.txt").read_text()
    assert log == "ls src - No description\n"  # the hooks saw the model's command
    ran = json.loads(rewrite.stdout)["hookSpecificOutput"]["updatedInput"]
    assert ran == {"command": "ls --color=never src"}


async def test_a_hook_rewrites_an_edit_by_file_path_and_old_string_and_adds_context(
    tmp_path: Path,
) -> None:
    project = claude_project(tmp_path / "p")
    (project / "a.py").write_text("value = 1\n")
    (project / "b.py").write_text("value = 1\n")
    edit = {"path": "a.py", "old_string": "VALUE = 1", "new_string": "# file: b.py\nvalue = 2"}
    with ScriptedRelay() as relay:
        relay.script([tool_calls(tool_call("edit_file", edit))], [text("edited"), done()])
        finished = await run(desk_for(project, relay), "bump the value")
    (call,) = finished
    assert call.status == "ok", call.content
    # The hook answered in Claude Code's names (file_path, old_string, new_string): the
    # edit ran on b.py, with the old string's case fixed, and asked nobody.
    assert (project / "a.py").read_text() == "value = 1\n"
    assert (project / "b.py").read_text() == "value = 2\n"
    # The PostToolUse hook's additionalContext is on the result the model reads next.
    context = "The project formatter ran on the edited file; run the tests next."
    assert context in call.content and context in tool_results(relay, 1)[0]
    events = [(r.event, r.matcher) for r in call.hooks]
    assert ("PreToolUse", "Bash|Edit") in events and (
        "PostToolUse",
        "Edit|MultiEdit|Write",
    ) in events


async def test_the_documented_protection_hook_denies_an_edit_of_dot_env(tmp_path: Path) -> None:
    project = claude_project(tmp_path / "p")
    (project / ".env").write_text("KEY=1\n")
    with ScriptedRelay() as relay:
        write = {"path": ".env", "content": "KEY=2\n"}
        relay.script([tool_calls(tool_call("write_file", write))], [done()])
        finished = await run(desk_for(project, relay), "change the key")
    (call,) = finished
    assert call.status == "denied" and "PreToolUse hook blocked it" in call.content
    assert (project / ".env").read_text() == "KEY=1\n"


async def test_a_hook_that_times_out_is_killed_and_the_call_goes_on(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    pid_file = tmp_path / "hook.pid"
    user_hooks = config_dir() / "hooks.json"
    user_hooks.parent.mkdir(parents=True, exist_ok=True)
    slow = f"echo $$ > {pid_file}; exec sleep 30"
    block = {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": slow, "timeout": 1}]}
        ]
    }
    user_hooks.write_text(json.dumps({"hooks": block}))
    with ScriptedRelay() as relay:
        relay.script([tool_calls(tool_call("run_command", {"command": "echo hi"}))], [done()])
        finished = await run(desk_for(project, relay), "say hi")
    (call,) = finished
    assert call.status == "ok" and "hi" in call.content
    (hook,) = call.hooks
    assert hook.timed_out and hook.failed and "timed out after 1 s" in hook.problem
    assert hook.origin.endswith("hooks.json")
    pid = int(pid_file.read_text())
    assert not Path(f"/proc/{pid}").exists() or _zombie(pid)


def _zombie(pid: int) -> bool:
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split(")")[-1].split()[0] == "Z"


async def test_an_untrusted_projects_hooks_do_not_run_and_melguis_own_do(tmp_path: Path) -> None:
    project = claude_project(tmp_path / "p", trusted=False)
    mark = tmp_path / "own.txt"
    user_hooks = config_dir() / "hooks.json"
    user_hooks.parent.mkdir(parents=True, exist_ok=True)
    own = {"PreToolUse": [{"matcher": "run_command", "hooks": [{"command": f"cat > {mark}"}]}]}
    user_hooks.write_text(json.dumps({"hooks": own}))
    with ScriptedRelay() as relay:
        relay.script([tool_calls(tool_call("run_command", {"command": "grep -r x ."}))], [done()])
        finished = await run(desk_for(project, relay), "search")
    (call,) = finished
    assert call.status == "ok"  # the project's validator would have blocked grep
    assert not (project / "bash-command-log.txt").exists()
    assert [r.origin for r in call.hooks] == [str(user_hooks)]
    sent = json.loads(mark.read_text())
    assert sent["tool_name"] == "Bash" and sent["tool_input"] == {"command": "grep -r x ."}
    assert sent["hook_event_name"] == "PreToolUse" and sent["cwd"] == os.path.realpath(project)


def test_a_hook_run_reads_in_one_line() -> None:
    run = HookRun(
        "PreToolUse", "./check.sh", ".claude/settings.json", "Bash", 0.012, 2, effect="denied: no"
    )
    assert run.headline() == "PreToolUse hook `./check.sh` · 12 ms · denied: no"


def test_exec_runs_melguis_own_hooks_and_prints_each_run(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    from tests.fakes.exec import json_lines, melgui_exec

    config = tmp_path / "config"
    config.mkdir()
    validator = DATA / "bash_command_validator.py"
    own = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"command": f"python3 {validator}"}]}]}
    (config / "hooks.json").write_text(json.dumps({"hooks": own}))
    folder = tmp_path / "p"
    folder.mkdir()
    command = tool_call("run_command", {"command": "grep -r TODO ."}, id="c1")
    scripted_relay.script([tool_calls(command)], [text("Blocked."), done()])
    result = melgui_exec(
        "--url", scripted_relay.base_url, "--folder", str(folder), "--model", "m",
        "--approve", "all", "--json", "find the TODOs",
        env={"MELIAI_API_KEY": "k", "MELGUI_CONFIG_DIR": str(config)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    (finished,) = [e for e in json_lines(result.stdout) if e["kind"] == "tool_result"]
    assert finished["status"] == "denied" and "Use 'rg'" in finished["content"]
    (hook,) = finished["hooks"]
    assert hook["event"] == "PreToolUse" and hook["exit_code"] == 2
    assert hook["origin"] == str(config / "hooks.json") and "Use 'rg'" in hook["stderr"]
