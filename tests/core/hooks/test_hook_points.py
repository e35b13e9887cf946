"""The hooks around turns (prompt, stop, session start, compaction, notification), the
format's edges (matchers, bad files, failures), with real hook processes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from melgui.core.config.settings import Settings, config_dir
from melgui.core.config.trust import FolderTrust
from melgui.core.hooks.config import HookConfig, load, matcher_accepts, read_block
from melgui.core.hooks.hooks import HookFiles, Hooks
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.loop_events import ContextNotice, LoopEvent, TurnFailed
from melgui.desk.desk import Desk
from tests.fakes import ScriptedRelay, done, text

Block = dict[str, list[dict[str, Any]]]


def own_hooks(block: Block) -> None:
    path = config_dir() / "hooks.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": block}))


def hook(event: str, command: str, matcher: str = "") -> Block:
    return {event: [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]}


async def turn(folder: Path, relay: ScriptedRelay, prompt: str) -> list[LoopEvent]:
    settings = Settings(connection="relay", relay_url=relay.base_url)
    desk = Desk(str(folder), settings, api_key="k", plans=lambda title, markdown: None)
    session = desk.session(model="relay-model", role="assistant")
    events: list[LoopEvent] = []
    session.subscribe(events.append)
    session.submit(prompt)
    await session.wait_idle()
    await session.aclose()
    await desk.aclose()
    return events


async def test_a_prompt_hook_adds_context_and_session_start_joins_the_first_message(
    tmp_path: Path,
) -> None:
    own_hooks(
        {
            **hook("UserPromptSubmit", "echo 'Current branch: main'"),
            **hook("SessionStart", "echo 'Open issues: 3'", "startup"),
        }
    )
    with ScriptedRelay() as relay:
        relay.script([text("ok"), done()])
        await turn(tmp_path, relay, "status?")
    sent = relay.legs_received[0].last_user_text
    assert sent == "status?\n\nOpen issues: 3\n\nCurrent branch: main"


async def test_a_prompt_hook_blocks_the_message_and_says_why(tmp_path: Path) -> None:
    block = json.dumps({"decision": "block", "reason": "no secrets in prompts"})
    own_hooks(hook("UserPromptSubmit", f"grep -q password && echo '{block}' || true"))
    with ScriptedRelay() as relay:
        relay.script([text("ok"), done()])
        events = await turn(tmp_path, relay, "my password is hunter2")
    assert relay.legs_received == []
    (failed,) = [e for e in events if isinstance(e, TurnFailed)]
    assert "no secrets in prompts" in failed.message


async def test_a_stop_hook_sends_the_model_back_to_work_once(tmp_path: Path) -> None:
    # Claude Code's pattern: block the stop unless stop_hook_active says we are already
    # going on because of it.
    script = (
        "jq -e .stop_hook_active >/dev/null && exit 0; "
        "echo 'Run the tests before you stop.' >&2; exit 2"
    )
    own_hooks(hook("Stop", script))
    with ScriptedRelay() as relay:
        relay.script([text("done"), done()], [text("tests pass"), done()])
        await turn(tmp_path, relay, "fix it")
    assert len(relay.legs_received) == 2
    assert relay.legs_received[1].last_user_text == "[Stop hook] Run the tests before you stop."


async def test_a_failing_hook_is_told_and_changes_nothing(tmp_path: Path) -> None:
    own_hooks(hook("UserPromptSubmit", "echo 'broken' >&2; exit 1"))
    with ScriptedRelay() as relay:
        relay.script([text("ok"), done()])
        events = await turn(tmp_path, relay, "hello")
    assert relay.legs_received[0].last_user_text == "hello"
    notices = [e for e in events if isinstance(e, ContextNotice) and e.level == "warning"]
    assert any("exit code 1: broken" in n.text for n in notices)


async def test_pre_compact_and_notification_hooks_get_their_fields(tmp_path: Path) -> None:
    seen = tmp_path / "seen.jsonl"
    own_hooks(
        {
            **hook("PreCompact", f"cat >> {seen}; echo >> {seen}", "manual"),
            **hook("Notification", f"cat >> {seen}; echo >> {seen}"),
        }
    )
    hooks = Hooks(HookFiles(str(tmp_path)), cwd=str(tmp_path), session_id="s1")
    await hooks.before_compact("manual")
    await hooks.before_compact("auto")  # the matcher is "manual": not run
    await hooks.notified("melgui needs your permission to use run_command")
    lines = [json.loads(line) for line in seen.read_text().splitlines() if line.strip()]
    assert [(x["hook_event_name"], x.get("trigger")) for x in lines] == [
        ("PreCompact", "manual"),
        ("Notification", None),
    ]
    assert lines[1]["message"].startswith("melgui needs your permission")
    assert lines[0]["session_id"] == "s1" and lines[0]["permission_mode"] == "default"


async def test_a_hook_that_cannot_start_or_answers_badly_leaves_the_call_to_the_rules(
    tmp_path: Path,
) -> None:
    own_hooks(
        {
            "PreToolUse": [
                {
                    "matcher": "Read",
                    "hooks": [
                        {"command": "echo '{not json'"},
                        {"command": "exit 7"},
                    ],
                }
            ]
        }
    )
    hooks = Hooks(HookFiles(str(tmp_path)), cwd=str(tmp_path / "gone"))
    call = ToolCall("c1", "read_file", '{"path": "a"}')
    before = await hooks.before_call(call, {"path": "a"})
    assert before.verdict is None and before.arguments is None
    assert sorted(r.problem for r in before.runs) == ["", "exit code 7: no message"]


def test_matchers_read_as_claude_codes() -> None:
    assert matcher_accepts("", ["Bash"]) and matcher_accepts("*", ["x"])
    assert matcher_accepts("Edit|Write", ["Write", "write_file"])
    assert not matcher_accepts("Edit", ["EditNotebook"])  # a plain name is exact
    assert matcher_accepts("mcp__memory__.*", ["mcp__memory__create"])
    assert matcher_accepts("Notebook.*", ["NotebookEdit"])
    assert not matcher_accepts("[", ["["])


def test_a_bad_file_is_a_problem_in_words(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    config = load([bad, tmp_path / "missing.json"])
    assert config.commands == [] and "not valid JSON" in config.problems[0]
    more = HookConfig()
    read_block(
        {"hooks": {"PreToolUse": [{"matcher": "(", "hooks": []}, {"hooks": [{"type": "prompt"}]}]}},
        "x.json",
        more,
    )
    assert [p.split(":")[1].strip() for p in more.problems] == [
        "matcher '(' is not a pattern (missing ), unterminated subpattern at position 0)",
        "a prompt hook of PreToolUse is not run (only command)",
    ]


async def test_an_identical_command_from_two_files_runs_once(tmp_path: Path) -> None:
    count = tmp_path / "count"
    own_hooks(hook("Notification", f"echo x >> {count}"))
    (tmp_path / ".melgui").mkdir()
    same = {"hooks": hook("Notification", f"echo x >> {count}")}
    (tmp_path / ".melgui" / "hooks.json").write_text(json.dumps(same))
    FolderTrust().trust(tmp_path)
    said = await Hooks(HookFiles(str(tmp_path)), cwd=str(tmp_path)).notified("hi")
    assert len(said.runs) == 1 and count.read_text() == "x\n"
