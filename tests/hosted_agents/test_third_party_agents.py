"""melgui's ACP client (AcpHost) hosting real third-party agents, OpenCode and Codex,
offline against the scripted server on loopback: their text, tool calls and permission
requests arrive as melgui's loop events and approvals, with each agent's own options."""

from __future__ import annotations

import asyncio
from pathlib import Path

from melgui.core.protocol.approval import ApprovalRequest
from melgui.core.rules.policy import RulePolicy
from melgui.desk.hosted_agents.host import AcpHost
from tests.fakes import ScriptedOpenAI, done, text, tool_call, tool_calls
from tests.fakes.acp_host import Events
from tests.fakes.third_party_agents import answer_titles, codex_agent, opencode_agent

LIMIT = 90  # seconds; a third-party agent starts slowly on a busy machine
PATCH = "*** Begin Patch\n*** Add File: hello.txt\n+Hello world\n*** End Patch"
CODEX_COMMAND = {
    "cmd": "echo ran > ran.txt",
    "sandbox_permissions": "require_escalated",
    "justification": "Write ran.txt?",
}


def answering(kind: str, asked: list[ApprovalRequest]) -> object:
    def ask(request: ApprovalRequest) -> None:
        asked.append(request)
        request.choose(next(o for o in request.options if o.kind == kind).option_id)

    return ask


async def test_opencode_edits_and_runs_a_command_through_melguis_approvals(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    answer_titles(scripted_openai)
    scripted_openai.script(
        [text("Writing."), tool_calls(tool_call("apply_patch", {"patchText": PATCH}, id="c1"))],
        [tool_calls(tool_call("bash", {"command": "echo ran > ran.txt"}, id="c2"))],
        [text("Both done."), done()],
    )
    agent = opencode_agent(scripted_openai, tmp_path)
    asked: list[ApprovalRequest] = []
    events = Events()
    host = AcpHost(
        agent.command(), str(agent.cwd), policy=RulePolicy(),
        ask=answering("allow_once", asked), source="pane 2", start_timeout=LIMIT,
    )  # fmt: skip
    host.subscribe(events)
    try:
        await asyncio.wait_for(host.start(), LIMIT)
        assert host.state.agent_info.startswith("OpenCode")
        assert await asyncio.wait_for(host.prompt("make two files"), LIMIT) == "end_turn"
    finally:
        await host.aclose()
    assert events.text() == "Writing.Both done."
    assert [(r.call.id, r.source) for r in asked] == [("c1", "pane 2"), ("c2", "pane 2")]
    # OpenCode's own options, as offered (it has no "reject always").
    assert [o.kind for o in asked[0].options] == ["allow_once", "allow_always", "reject_once"]
    finished = {e.call.id: e.status for e in events.of("tool_call_finished")}
    assert finished == {"c1": "ok", "c2": "ok"}
    # Its fs/write_text_file ("hello.txt", relative) went through melgui's workspace.
    assert (agent.cwd / "hello.txt").read_text() == "Hello world\n"
    assert (agent.cwd / "ran.txt").read_text() == "ran\n"
    assert host.conversation.pending_call_ids() == []
    assert host.failure == ""


async def test_codex_runs_a_command_once_allowed_and_not_when_aborted(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    scripted_openai.script(
        [tool_calls(tool_call("exec_command", CODEX_COMMAND, id="c1"))],
        [text("Ran it."), done()],
        [tool_calls(tool_call("exec_command", {**CODEX_COMMAND, "cmd": "rm ran.txt"}, id="c2"))],
    )
    agent = codex_agent(scripted_openai, tmp_path)
    asked: list[ApprovalRequest] = []
    answers = iter(["allow_once", "reject_once"])

    def ask(request: ApprovalRequest) -> None:
        asked.append(request)
        kind = next(answers)
        request.choose(next(o for o in request.options if o.kind == kind).option_id)

    events = Events()
    host = AcpHost(agent.command(), str(agent.cwd), ask=ask, start_timeout=LIMIT)
    host.subscribe(events)
    try:
        await asyncio.wait_for(host.start(), LIMIT)
        assert await asyncio.wait_for(host.prompt("run it"), LIMIT) == "end_turn"
        assert (agent.cwd / "ran.txt").read_text() == "ran\n"
        # Codex's reject option is "abort": the turn ends cancelled, the command not run.
        assert await asyncio.wait_for(host.prompt("remove it"), LIMIT) == "cancelled"
    finally:
        await host.aclose()
    assert (agent.cwd / "ran.txt").exists()
    assert [r.call.id for r in asked] == ["c1", "c2"]
    assert [(o.option_id, o.kind) for o in asked[0].options] == [
        ("approved", "allow_once"),
        ("approved-execpolicy-amendment", "allow_always"),
        ("abort", "reject_once"),
    ]
    assert "Ran it." in events.text()
    assert host.conversation.pending_call_ids() == []
