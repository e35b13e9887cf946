"""melgui's ACP client driving `python -m melgui acp` (both real ends), against the
scripted OpenAI-compatible server on loopback."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from melgui.core.protocol.approval import ApprovalRequest
from melgui.core.rules.policy import RulePolicy
from melgui.core.rules.rule_scopes import Rule
from melgui.desk.hosted_agents.host import AcpHost, AgentFailed
from tests.fakes import ScriptedOpenAI, done, hold, text, tool_call, tool_calls
from tests.fakes.acp_host import Events, melgui_agent

LIMIT = 60
PLAN = "Steps:\n\n- [x] read a.txt\n- [~] answer\n"


def write(path: str, content: str, call_id: str) -> object:
    return tool_calls(tool_call("write_file", {"path": path, "content": content}, id=call_id))


async def started(host: AcpHost, events: Events) -> None:
    host.subscribe(events)
    await asyncio.wait_for(host.start(), LIMIT)


async def test_a_prompt_streams_text_tool_calls_and_a_plan_as_loop_events(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("hello world\n")
    scripted_openai.script(
        [
            text("Let me "),
            text("look."),
            tool_calls(
                tool_call("read_file", {"path": "a.txt"}, id="c1"),
                tool_call("write_plan", {"title": "Plan", "markdown": PLAN}, id="p1"),
            ),
        ],
        [text("It says hello."), done(usage={"prompt_tokens": 9, "completion_tokens": 3})],
    )
    plans: list[tuple[str, str]] = []
    events = Events()
    host = AcpHost(
        melgui_agent(scripted_openai), str(tmp_path), plans=lambda t, m: plans.append((t, m))
    )
    try:
        await started(host, events)
        assert host.state.agent_info.startswith("melgui")
        assert await asyncio.wait_for(host.prompt("what is in a.txt?"), LIMIT) == "end_turn"
    finally:
        await host.aclose()
    assert events.text() == "Let me look.It says hello."
    kinds = events.kinds()
    assert kinds[0] == "message_added" and kinds[-1] == "turn_finished"
    finished = {e.call.id: e for e in events.of("tool_call_finished")}
    assert finished["c1"].status == "ok" and "hello world" in finished["c1"].content
    assert finished["c1"].call.name == "read"
    assert [e.call.id for e in events.of("tool_call_started")][:1] == ["c1"]
    assert events.of("turn_finished")[0].usage.prompt_tokens == 9
    # the plan reached the plans panel's sink as a checklist
    assert plans and "- [x] read a.txt" in plans[0][1] and "- [~] answer" in plans[0][1]
    # the conversation the chat reloads from pairs every call with one result
    roles = [(m.role, m.tool_call_id) for m in host.conversation.messages]
    assert roles[0] == ("user", None) and ("tool", "c1") in roles and ("tool", "p1") in roles
    assert host.conversation.messages[-1].content == "It says hello."
    assert host.conversation.pending_call_ids() == []


async def test_permissions_asked_and_answered_each_way(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    scripted_openai.script(
        [write("a.txt", "once\n", "w1")], [text("ok"), done()],
        [write("b.txt", "no\n", "w2")], [text("ok"), done()],
        [write("c.txt", "always\n", "w3")], [text("ok"), done()],
        [write("d.txt", "again\n", "w4")], [text("ok"), done()],
    )  # fmt: skip
    asked: list[ApprovalRequest] = []
    answers = iter(["allow_once", "reject_once", "allow_always"])

    def ask(request: ApprovalRequest) -> None:
        asked.append(request)
        kind = next(answers)
        option = next(o for o in request.options if o.kind == kind)
        request.choose(option.option_id)

    policy = RulePolicy()
    events = Events()
    host = AcpHost(
        melgui_agent(scripted_openai), str(tmp_path), policy=policy, ask=ask, source="pane 3"
    )
    try:
        await started(host, events)
        for words in ("write a", "write b", "write c", "write d"):
            assert await asyncio.wait_for(host.prompt(words), LIMIT) == "end_turn"
    finally:
        await host.aclose()
    assert (tmp_path / "a.txt").read_text() == "once\n"
    assert not (tmp_path / "b.txt").exists()
    assert (tmp_path / "c.txt").read_text() == "always\n"
    # allow_always: the agent's own grant (and melgui's rule for this agent) -> d not asked
    assert (tmp_path / "d.txt").read_text() == "again\n"
    assert [r.call.id for r in asked] == ["w1", "w2", "w3"]
    first = asked[0]
    assert first.source == "pane 3" and first.call.name == "edit"
    assert [o.kind for o in first.options] == [
        "allow_once", "allow_always", "reject_once", "reject_always",
    ]  # fmt: skip
    assert all(o.label for o in first.options)
    assert [r.text for r in policy.book] == ["allow acp:melgui/edit"]
    statuses = {e.call.id: e.status for e in events.of("tool_call_finished")}
    assert statuses["w1"] == "ok" and statuses["w2"] == "error"


async def test_rules_answer_without_asking_and_only_for_their_agent(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    scripted_openai.script(
        [write("a.txt", "by rule\n", "w1")], [text("ok"), done()],
        [write("b.txt", "other\n", "w2")], [text("ok"), done()],
    )  # fmt: skip
    policy = RulePolicy()
    policy.add_rule(Rule.parse("allow acp:melgui/edit", "conversation"))
    asked: list[ApprovalRequest] = []
    host = AcpHost(melgui_agent(scripted_openai), str(tmp_path), policy=policy, ask=asked.append)
    other = AcpHost(
        melgui_agent(scripted_openai, name="other"),
        str(tmp_path),
        policy=policy,
        ask=lambda r: (asked.append(r), r.choose(r.options[2].option_id)),
    )
    try:
        await started(host, Events())
        assert await asyncio.wait_for(host.prompt("write a"), LIMIT) == "end_turn"
        assert asked == [] and host.gate.answered_by_rules
        await started(other, Events())
        assert await asyncio.wait_for(other.prompt("write b"), LIMIT) == "end_turn"
    finally:
        await host.aclose()
        await other.aclose()
    assert (tmp_path / "a.txt").read_text() == "by rule\n"
    # the grant to acp:melgui does not cover acp:other: it asked, and was rejected
    assert [r.call.id for r in asked] == ["w2"] and not (tmp_path / "b.txt").exists()


async def test_cancel_answers_an_open_permission_cancelled(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    scripted_openai.script([write("w.txt", "x", "w1")], [text("after"), done()])
    asked: list[ApprovalRequest] = []
    got = asyncio.Event()
    host = AcpHost(
        melgui_agent(scripted_openai), str(tmp_path), policy=RulePolicy(),
        ask=lambda r: (asked.append(r), got.set()),
    )  # fmt: skip
    events = Events()
    try:
        await started(host, events)
        running = asyncio.ensure_future(host.prompt("write"))
        await asyncio.wait_for(got.wait(), LIMIT)
        await host.cancel()
        assert await asyncio.wait_for(running, LIMIT) == "cancelled"
        assert not asked[0].pending and asked[0].chosen == "cancelled"
        assert events.kinds()[-1] == "turn_cancelled"
        assert host.conversation.pending_call_ids() == []
        # the session goes on
        assert await asyncio.wait_for(host.prompt("again"), LIMIT) == "end_turn"
    finally:
        await host.aclose()
    assert not (tmp_path / "w.txt").exists()


async def test_cancel_while_the_agent_streams(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    gate = threading.Event()
    scripted_openai.script([text("Thinking"), hold(gate), text(" never"), done()])
    events = Events()
    first = asyncio.Event()
    host = AcpHost(melgui_agent(scripted_openai), str(tmp_path))
    host.subscribe(lambda e: first.set() if e.kind == "assistant_text" else None)
    try:
        await started(host, events)
        running = asyncio.ensure_future(host.prompt("go"))
        await asyncio.wait_for(first.wait(), LIMIT)
        await host.cancel()
        assert await asyncio.wait_for(running, LIMIT) == "cancelled"
    finally:
        gate.set()
        await host.aclose()
    assert events.text() == "Thinking"
    assert host.conversation.messages[-1].content == "Thinking"


async def test_a_session_is_loaded_again_with_its_history(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    scripted_openai.script([text("First answer."), done()], [text("Second answer."), done()])
    command = melgui_agent(scripted_openai)
    with_history = replace(command, argv=tuple(a for a in command.argv if a != "--no-history"))
    first = AcpHost(with_history, str(tmp_path))
    try:
        await started(first, Events())
        assert first.state.can_load
        assert await asyncio.wait_for(first.prompt("first question"), LIMIT) == "end_turn"
        session_id = first.state.session_id
    finally:
        await first.aclose()
    again = AcpHost(with_history, str(tmp_path))
    events = Events()
    again.subscribe(events)
    try:
        await asyncio.wait_for(again.start(resume=session_id), LIMIT)
        shown = [(m.role, m.content) for m in again.conversation.messages]
        assert shown == [("user", "first question"), ("assistant", "First answer.")]
        assert await asyncio.wait_for(again.prompt("second question"), LIMIT) == "end_turn"
    finally:
        await again.aclose()
    assert again.conversation.messages[-1].content == "Second answer."
    sent = scripted_openai.legs_received[1].messages
    assert [m["content"] for m in sent if m["role"] != "system"] == [
        "first question", "First answer.", "second question",
    ]  # fmt: skip


async def test_melgui_acp_killed_mid_prompt_fails_the_host_with_its_exit_and_stderr(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    scripted_openai.script([text("Writing it."), write("w.txt", "x", "w1")])
    command = melgui_agent(scripted_openai)
    # faulthandler: a fatal signal makes Python write its stacks to stderr, as a crash does
    command = replace(command, env={**command.env, "PYTHONFAULTHANDLER": "1"})
    asked: list[ApprovalRequest] = []

    def crash(request: ApprovalRequest) -> None:
        asked.append(request)
        assert host.process is not None
        os.kill(host.process.process.pid, signal.SIGSEGV)

    host = AcpHost(command, str(tmp_path), policy=RulePolicy(), ask=crash)
    events = Events()
    try:
        await started(host, events)
        assert await asyncio.wait_for(host.prompt("write w"), LIMIT) == "failed"
    finally:
        await host.aclose()
    failure = events.of("turn_failed")[0].message
    assert f"the agent exited (code {-signal.SIGSEGV})" in failure
    assert "Fatal Python error: Segmentation fault" in failure  # its stderr tail
    assert host.failure == failure and host.status == "failed"
    # the call open when it died got its one result, and its question was answered
    assert [r.call.id for r in asked] == ["w1"] and not asked[0].pending
    finished = {e.call.id: e.status for e in events.of("tool_call_finished")}
    assert finished == {"w1": "interrupted"}
    assert host.conversation.pending_call_ids() == []
    said = [(m.role, m.tool_call_id) for m in host.conversation.messages]
    assert said[-2:] == [("assistant", None), ("tool", "w1")]
    with pytest.raises(AgentFailed):
        await host.prompt("again")
