"""What melgui's ACP client serves an agent (files, terminals, sign-in, modes, commands)
and how it survives a broken one, against tests/fakes/acp_scripted_agent.py: a real ACP
agent process built on the SDK that does what each prompt's JSON says."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION

from melgui.core.config.settings import Settings
from melgui.core.protocol.approval import ApprovalRequest
from melgui.core.protocol.views.agent_commands import AgentCommand
from melgui.core.rules.policy import RulePolicy
from melgui.core.rules.rule_scopes import Rule
from melgui.desk.desk import Desk
from melgui.desk.hosted_agents.factory import acp_session
from melgui.desk.hosted_agents.host import AcpHost, AgentFailed, AuthRequired
from melgui.desk.hosted_agents.terminals import AgentTerminal
from tests.fakes.acp_host import Events, scripted_agent

LIMIT = 30


async def run(host: AcpHost, *steps: dict[str, Any]) -> str:
    return await asyncio.wait_for(host.prompt(json.dumps(list(steps))), LIMIT)


@pytest.fixture
async def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "notes.txt").write_text("one\ntwo\nthree\nfour\n")
    (tmp_path / "secret.txt").write_text("outside")
    return folder


async def test_files_are_read_and_written_inside_the_project_only(project: Path) -> None:
    events = Events()
    guarded: list[tuple[str, str]] = []

    def around_write(call: Any, source: str) -> Any:
        import contextlib

        guarded.append((call.parsed["path"], source))
        return contextlib.nullcontext()

    host = AcpHost(scripted_agent(), str(project), around_write=around_write, source="pane 1")
    host.subscribe(events)
    try:
        await asyncio.wait_for(host.start(), LIMIT)
        stop = await run(
            host,
            {"read": "notes.txt", "line": 2, "limit": 2},
            {"read": "../secret.txt"},
            {"read": str(project.parent / "secret.txt")},
            {"write": "sub/new.txt", "content": "made\n"},
            {"write": "../escape.txt", "content": "no"},
            {"write": ".git/config", "content": "no"},
        )
    finally:
        await host.aclose()
    assert stop == "end_turn"
    said = events.text()
    assert "read:two\nthree\n" in said
    assert said.count("refused:") == 4 and "outside the project folder" in said
    assert "secret" not in said.replace("secret.txt", "")
    assert (project / "sub" / "new.txt").read_text() == "made\n"
    assert not (project.parent / "escape.txt").exists() and not (project / ".git").exists()
    assert guarded == [("sub/new.txt", "pane 1")]  # the checkpoint guard saw the write


async def test_terminals_run_in_a_pty_and_are_visible(project: Path) -> None:
    opened: list[AgentTerminal] = []
    events = Events()
    host = AcpHost(scripted_agent(), str(project), on_terminal=opened.append)
    host.subscribe(events)
    try:
        await asyncio.wait_for(host.start(), LIMIT)
        script = "test -t 1 && echo tty; echo out; exit 3"
        assert await run(host, {"run": ["sh", "-c", script]}) == "end_turn"
    finally:
        await host.aclose()
    assert "exit 3:tty\nout\n" in events.text()
    assert [t.title for t in opened] == [f"sh -c {script}"]


async def test_sign_in_modes_commands_and_a_plan(project: Path) -> None:
    plans: list[str] = []
    host = AcpHost(
        scripted_agent("--auth"), str(project), plans=lambda _title, text: plans.append(text)
    )
    try:
        with pytest.raises(AuthRequired) as asked:
            await asyncio.wait_for(host.start(), LIMIT)
        assert [(m.id, m.name) for m in asked.value.methods] == [("token", "Paste a token")]
        await host.authenticate("token")
        commands = asyncio.Event()
        host.state.listen(lambda: commands.set() if host.state.commands else None)
        await asyncio.wait_for(host.open_session(), LIMIT)
        state = host.state
        assert [m.id for m in state.modes] == ["ask", "code"] and state.mode == "ask"
        await host.set_mode("code")
        assert state.mode == "code"
        await run(host, {"plan": [["read", "completed"], ["fix", "in_progress"]]})
        await asyncio.wait_for(commands.wait(), LIMIT)  # sent a moment after session/new
        assert [c.name for c in state.commands] == ["review", "test"]
    finally:
        await host.aclose()
    assert plans == ["- [x] read\n- [~] fix\n"]


async def test_a_crashing_agent_fails_with_its_stderr_tail(project: Path) -> None:
    events = Events()
    host = AcpHost(scripted_agent(), str(project))
    host.subscribe(events)
    try:
        await asyncio.wait_for(host.start(), LIMIT)
        step = {"crash": 3, "stderr": "panic: out of tokens\nat main.rs:12"}
        assert await run(host, {"say": "starting"}, step) == "failed"
        failure = events.of("turn_failed")[0].message
        assert "exited (code 3)" in failure and "at main.rs:12" in failure
        assert host.failure == failure
        with pytest.raises(AgentFailed):
            await host.prompt("[]")
    finally:
        await host.aclose()
    assert host.conversation.messages[-1].content == "starting"


async def test_an_agent_killed_between_turns_fails_at_once(project: Path) -> None:
    events = Events()
    host = AcpHost(scripted_agent(), str(project))
    host.subscribe(events)
    try:
        await asyncio.wait_for(host.start(), LIMIT)
        assert host.process is not None
        os.killpg(host.process.process.pid, signal.SIGKILL)
        while not events.of("turn_failed"):
            await asyncio.sleep(0.01)
    finally:
        await host.aclose()
    assert "the agent exited (code -9)" in events.of("turn_failed")[0].message


async def test_malformed_output_and_a_missing_program_fail_clearly(project: Path) -> None:
    host = AcpHost(scripted_agent(), str(project))
    events = Events()
    host.subscribe(events)
    try:
        await asyncio.wait_for(host.start(), LIMIT)
        assert await run(host, {"garbage": "<html>oops"}, {"hang": 1}) == "failed"
    finally:
        await host.aclose()
    assert "malformed message: '<html>oops'" in events.of("turn_failed")[0].message
    not_rpc = AcpHost(scripted_agent(), str(project))
    events = Events()
    not_rpc.subscribe(events)
    try:
        await asyncio.wait_for(not_rpc.start(), LIMIT)
        # a JSON object, but no JSON-RPC message: as malformed as any other line
        assert await run(not_rpc, {"garbage": '{"id": 7, "result": {}}'}, {"hang": 1}) == "failed"
    finally:
        await not_rpc.aclose()
    assert 'malformed message: \'{"id": 7' in events.of("turn_failed")[0].message
    missing = AcpHost(AgentCommand("nope", ("/nonexistent/agent", "acp")), str(project))
    with pytest.raises(AgentFailed, match="cannot start '/nonexistent/agent'"):
        await missing.start()
    await missing.aclose()


async def test_a_hung_start_times_out(project: Path) -> None:
    sleeper = AgentCommand("sleeper", ("sleep", "30"))
    host = AcpHost(sleeper, str(project), start_timeout=0.5)
    with pytest.raises(AgentFailed, match="did not answer within"):
        await host.start()
    await host.aclose()
    assert host.process is not None and host.process.returncode is not None


async def test_closing_answers_an_open_permission_cancelled(project: Path) -> None:
    asked: list[ApprovalRequest] = []
    got = asyncio.Event()
    host = AcpHost(scripted_agent(), str(project), ask=lambda r: (asked.append(r), got.set()))
    events = Events()
    host.subscribe(events)
    await asyncio.wait_for(host.start(), LIMIT)
    running = asyncio.ensure_future(run(host, {"ask": "execute", "title": "rm -rf build"}))
    await asyncio.wait_for(got.wait(), LIMIT)
    assert [o.label for o in asked[0].options] == ["Yes, once", "Yes, always", "No", "Never"]
    assert asked[0].call.name == "execute"
    host.gate.cancel_all("closing")
    assert await running == "end_turn"
    await host.aclose()
    assert "permission:cancelled" in events.text()


async def ended(pid: int) -> None:
    """Until the process is gone or a zombie (killed, not yet reaped by its new parent)."""
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, IndexError):
            return
        if state in ("Z", "X"):
            return
        await asyncio.sleep(0.01)


async def said_on_stderr(host: AcpHost, text: str) -> None:
    assert host.process is not None
    while text not in host.process.stderr_now():
        await asyncio.sleep(0.01)


async def test_an_agent_that_ignores_cancel_is_ended_after_the_grace(project: Path) -> None:
    events = Events()
    host = AcpHost(scripted_agent(), str(project), cancel_grace=0.5)
    host.subscribe(events)
    try:
        await asyncio.wait_for(host.start(), LIMIT)
        stalled = asyncio.Event()
        host.subscribe(lambda e: stalled.set() if e.kind == "assistant_text" else None)
        running = asyncio.ensure_future(
            run(host, {"say": "working"}, {"stall": "busy: ignoring cancel"})
        )
        await asyncio.wait_for(stalled.wait(), LIMIT)
        await asyncio.wait_for(said_on_stderr(host, "busy: ignoring cancel"), LIMIT)
        await asyncio.wait_for(host.cancel(), LIMIT)
        assert await asyncio.wait_for(running, LIMIT) == "failed"
        failure = events.of("turn_failed")[0].message
        assert "did not end its turn within 0.5 s of session/cancel" in failure
        assert "busy: ignoring cancel" in failure and host.failure == failure
        assert host.status == "failed"
        child = int(failure.split("child ", 1)[1].split()[0])
        await asyncio.wait_for(ended(child), LIMIT)  # the agent's whole group, its child too
        assert host.process is not None and host.process.returncode == -signal.SIGKILL
        with pytest.raises(AgentFailed):
            await host.prompt("[]")
    finally:
        await host.aclose()
    assert events.kinds()[-1] == "turn_failed" and "turn_cancelled" not in events.kinds()
    assert host.conversation.messages[-1].content == "working"


async def test_a_terminal_command_the_rules_deny_is_refused(project: Path) -> None:
    policy = RulePolicy(project=str(project))
    policy.add_rule(Rule.parse("deny run_command: rm", "everywhere"))
    opened: list[AgentTerminal] = []
    events = Events()
    host = AcpHost(scripted_agent(), str(project), policy=policy, on_terminal=opened.append)
    host.subscribe(events)
    try:
        await asyncio.wait_for(host.start(), LIMIT)
        stop = await run(
            host, {"run": ["sh", "-c", "rm notes.txt"]}, {"run": ["/bin/rm", "-f", "notes.txt"]}
        )
    finally:
        await host.aclose()
    assert stop == "end_turn"
    said = events.text()
    assert said.count("refused:") == 2
    assert "denied: its -c code: denied by “rm”" in said
    assert "denied by the rule “deny run_command: rm” (everywhere)" in said
    assert (project / "notes.txt").exists() and opened == []


async def test_terminals_run_in_the_desks_sandbox_when_commands_are_sandboxed(
    project: Path,
) -> None:
    settings = Settings(connection="relay", relay_url="http://127.0.0.1:9", sandbox_commands=True)
    desk = Desk(str(project), settings, api_key=None, plans=lambda title, markdown: None)
    session = acp_session(desk, scripted_agent(), "pane 1")
    host = session.host
    events = Events()
    host.subscribe(events)
    opened: list[AgentTerminal] = []
    host.terminals.on_open = opened.append
    script = "echo in > inside.txt; echo out > ../outside.txt; echo done"
    try:
        await asyncio.wait_for(host.start(), LIMIT)
        assert await run(host, {"run": ["sh", "-c", script]}) == "end_turn"
    finally:
        await session.aclose()
        await desk.aclose()
    assert (project / "inside.txt").read_text() == "in\n"
    assert not (project.parent / "outside.txt").exists()
    # the sandbox's /tmp is its own: what it wrote outside the project is not here
    assert "exit 0:done" in events.text()
    assert opened[0].title == f"sh -c {script} (sandboxed)"


async def test_an_edit_shows_its_diff_in_the_approval_and_its_result(project: Path) -> None:
    asked: list[ApprovalRequest] = []

    def ask(request: ApprovalRequest) -> None:
        asked.append(request)
        request.choose("yes")

    events = Events()
    host = AcpHost(scripted_agent(), str(project), ask=ask)
    host.subscribe(events)
    change = {"path": "notes.txt", "old": "one\ntwo\n", "new": "one\n2\n"}
    try:
        await asyncio.wait_for(host.start(), LIMIT)
        edit = {"ask": "edit", "title": "Edit notes", "diff": change}
        # the diff in the permission request, then only in the tool call's update
        assert await run(host, edit, {**edit, "bare": True}) == "end_turn"
    finally:
        await host.aclose()
    diff = "--- notes.txt\n+++ notes.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n"
    assert [r.preview for r in asked] == [diff, diff]  # shown before the person answered
    finished = events.of("tool_call_finished")[0]
    assert (finished.call.name, finished.status, finished.content) == ("edit", "ok", diff)
    assert [p.text for p in finished.parts] == [diff]
    assert "permission:yes" in events.text()


async def test_initialize_offers_melguis_files_and_terminals_and_thoughts_arrive(
    project: Path,
) -> None:
    record = project.parent / "wire.jsonl"
    events = Events()
    host = AcpHost(scripted_agent("--record", str(record)), str(project))
    host.subscribe(events)
    try:
        await asyncio.wait_for(host.start(), LIMIT)
        steps = ({"think": "Look at "}, {"think": "notes first."}, {"say": "Done."})
        assert await run(host, *steps) == "end_turn"
    finally:
        await host.aclose()
    sent = json.loads(record.read_text().splitlines()[0])
    assert sent["method"] == "initialize"
    assert sent["params"]["protocolVersion"] == PROTOCOL_VERSION
    capabilities = sent["params"]["clientCapabilities"]
    assert capabilities["fs"] == {"readTextFile": True, "writeTextFile": True}
    assert capabilities["terminal"] is True
    assert sent["params"]["clientInfo"]["name"] == "melgui"
    # chunks that waited together arrive as one: the text, not how it was cut, is kept
    reasoning = "".join(e.text for e in events.of("assistant_reasoning"))
    assert reasoning == "Look at notes first."
    said = host.conversation.messages[-1]
    assert (said.role, said.content, said.reasoning) == (
        "assistant",
        "Done.",
        "Look at notes first.",
    )


async def test_an_agents_writes_are_checkpointed_by_the_desk_and_can_be_undone(
    project: Path,
) -> None:
    settings = Settings(connection="relay", relay_url="http://127.0.0.1:9")
    assert settings.checkpoints
    desk = Desk(str(project), settings, api_key=None, plans=lambda title, markdown: None)
    session = acp_session(desk, scripted_agent(), "pane 4")
    try:
        await asyncio.wait_for(session.host.start(), LIMIT)
        write = {"write": "notes.txt", "content": "rewritten\n"}
        assert await run(session.host, write) == "end_turn"
        assert (project / "notes.txt").read_text() == "rewritten\n"
        records = desk.checkpoints.records()
        assert [(r.tool, r.source) for r in records] == [("write_file", "pane 4")]
        assert records[0].summary.startswith("notes.txt")
        assert [c.path for c in records[0].files] == ["notes.txt"]
        await desk.checkpoints.restore([records[0].id])
    finally:
        await session.aclose()
        await desk.aclose()
    assert (project / "notes.txt").read_text() == "one\ntwo\nthree\nfour\n"
