"""Claude Code's PermissionRequest, SubagentStop and SessionEnd hooks, with real hook
processes: a call that would ask the person is allowed (with new input) or denied for
them; a worker's turn end runs SubagentStop, not Stop; a session that ran closes with
SessionEnd."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from melgui.core.config.settings import Settings, config_dir
from melgui.core.protocol.approval import Approve
from melgui.core.protocol.loop_events import (
    ApprovalNeeded,
    LoopEvent,
    ToolCallFinished,
    ToolCallStarted,
)
from melgui.desk.desk import Desk
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls

Block = dict[str, list[dict[str, Any]]]


def own_hooks(block: Block) -> None:
    path = config_dir() / "hooks.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": block}))


def hook(event: str, command: str, matcher: str = "") -> Block:
    return {event: [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]}


def permission(decision: dict[str, Any]) -> str:
    reply = {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}
    return f"echo '{json.dumps(reply)}'"


async def run(
    folder: Path, relay: ScriptedRelay, prompt: str, *, role: str = "assistant"
) -> list[LoopEvent]:
    """One turn of a main session (or a worker's); a call that asks is approved once."""
    desk = Desk(str(folder), Settings(connection="relay", relay_url=relay.base_url),
                api_key="k", plans=lambda title, markdown: None)  # fmt: skip
    if role == "worker":
        session = desk.worker_session(model="relay-model")
    else:
        session = desk.session(model="relay-model", role="assistant")
    events: list[LoopEvent] = []

    def observe(event: LoopEvent) -> None:
        events.append(event)
        if isinstance(event, ApprovalNeeded):
            event.request.future.set_result(Approve())

    session.subscribe(observe)
    session.submit(prompt)
    await session.wait_idle()
    await session.aclose()
    await desk.aclose()
    return events


def finished(events: list[LoopEvent]) -> list[ToolCallFinished]:
    return [e for e in events if isinstance(e, ToolCallFinished)]


async def test_a_permission_request_hook_allows_with_new_input_and_nobody_is_asked(
    tmp_path: Path,
) -> None:
    moved = str(tmp_path / "b.txt")
    own_hooks(hook("PermissionRequest", permission(
        {"behavior": "allow", "updatedInput": {"file_path": moved}}), "Write"))  # fmt: skip
    write = tool_call("write_file", {"path": "a.txt", "content": "hi\n"})
    with ScriptedRelay() as relay:
        relay.script([tool_calls(write)], [text("written"), done()])
        events = await run(tmp_path, relay, "write it")
    (call,) = finished(events)
    assert not any(isinstance(e, ApprovalNeeded) for e in events)
    assert call.status == "ok" and (tmp_path / "b.txt").read_text() == "hi\n"
    assert not (tmp_path / "a.txt").exists()
    (run_,) = call.hooks
    assert run_.event == "PermissionRequest" and run_.effect == "allowed; rewrote the input"
    (started,) = [e for e in events if isinstance(e, ToolCallStarted)]
    assert started.ran_with is not None and started.ran_with["path"].endswith("b.txt")


async def test_a_permission_request_hook_denies_for_the_person_or_leaves_it_to_them(
    tmp_path: Path,
) -> None:
    seen = tmp_path / "seen.jsonl"
    deny = permission({"behavior": "deny", "message": "secrets are read-only"})
    check = f"tee -a {seen} | jq -r .tool_input.file_path | grep -q secret"
    own_hooks(hook("PermissionRequest", f"{check} && {deny}; echo >> {seen}"))
    calls = (
        tool_call("write_file", {"path": "secret.txt", "content": "x\n"}, id="c1"),
        tool_call("write_file", {"path": "notes.txt", "content": "y\n"}, id="c2"),
    )
    with ScriptedRelay() as relay:
        relay.script([tool_calls(*calls)], [text("one of two"), done()])
        events = await run(tmp_path, relay, "write both")
    denied, written = finished(events)
    assert denied.status == "denied" and "secrets are read-only" in denied.content
    assert "a PermissionRequest hook: secrets are read-only" in denied.content
    assert not (tmp_path / "secret.txt").exists()
    asked = [e.request.call.id for e in events if isinstance(e, ApprovalNeeded)]
    assert asked == ["c2"] and written.status == "ok"
    assert (tmp_path / "notes.txt").read_text() == "y\n"
    sent = [json.loads(line) for line in seen.read_text().splitlines()]
    assert [s["hook_event_name"] for s in sent] == ["PermissionRequest"] * 2
    assert sent[0]["tool_name"] == "Write" and sent[0]["tool_input"]["content"] == "x\n"
    results = [str(m["content"]) for m in relay.legs_received[1].messages if m["role"] == "tool"]
    assert "secrets are read-only" in results[0]


async def test_a_workers_turn_end_runs_subagent_stop_not_stop(tmp_path: Path) -> None:
    marker = tmp_path / "stop-ran"
    again = "jq -e .stop_hook_active >/dev/null && exit 0; echo 'Add a test too.' >&2; exit 2"
    own_hooks({**hook("SubagentStop", again), **hook("Stop", f"touch {marker}")})
    with ScriptedRelay() as relay:
        relay.script([text("fixed"), done()], [text("tested"), done()])
        await run(tmp_path, relay, "fix it", role="worker")
    assert [leg.last_user_text for leg in relay.legs_received] == [
        "fix it",
        "[Stop hook] Add a test too.",
    ]
    assert not marker.exists()
    with ScriptedRelay() as relay:  # the main conversation's turn end is a Stop
        relay.script([text("fixed"), done()])
        await run(tmp_path, relay, "fix it")
    assert marker.exists() and len(relay.legs_received) == 1


async def test_a_session_that_ran_ends_with_its_session_end_hooks(tmp_path: Path) -> None:
    seen = tmp_path / "end.json"
    own_hooks(hook("SessionEnd", f"cat > {seen}"))
    with ScriptedRelay() as relay:
        desk = Desk(str(tmp_path), Settings(connection="relay", relay_url=relay.base_url),
                    api_key="k", plans=lambda title, markdown: None)  # fmt: skip
        idle = desk.session(model="relay-model", role="assistant")
        await idle.aclose()  # never ran a turn: never started
        assert not seen.exists()
        relay.script([text("hi"), done()])
        await run(tmp_path, relay, "hello")
        await desk.aclose()
    ended = json.loads(seen.read_text())
    assert ended["hook_event_name"] == "SessionEnd" and ended["reason"] == "other"
