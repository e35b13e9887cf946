"""A real third-party ACP agent, OpenCode (`opencode acp`, npm `opencode-ai`), run offline
against the scripted OpenAI-compatible server on loopback and driven with the ACP SDK's
client side: what it sends is what melgui's client has to host."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from acp import text_block

from tests.fakes import ScriptedOpenAI, done, text, tool_call, tool_calls
from tests.fakes.third_party_acp import AgentProcess, ThirdPartyAgent
from tests.fakes.third_party_agents import (
    answer_titles,
    opencode_agent,
    opencode_version,
    opencode_warnings,
    turn_requests,
)

LIMIT = 90  # seconds one exchange may take (OpenCode's first start migrates its database)
PATCH = "*** Begin Patch\n*** Add File: hello.txt\n+Hello world\n*** End Patch"


async def start(running: AgentProcess) -> str:
    reply = await running.initialize()
    assert reply.agent_info is not None
    assert (reply.agent_info.name, reply.agent_info.version) == ("OpenCode", opencode_version())
    session = await asyncio.wait_for(
        running.connection.new_session(cwd=str(running.agent.cwd), mcp_servers=[]), LIMIT
    )
    return session.session_id


async def prompt(running: AgentProcess, session_id: str, words: str) -> Any:
    return await asyncio.wait_for(
        running.connection.prompt(session_id=session_id, prompt=[text_block(words)]), LIMIT
    )


def agent_on(server: ScriptedOpenAI, tmp_path: Path) -> ThirdPartyAgent:
    answer_titles(server)
    return opencode_agent(server, tmp_path)


async def test_the_scripted_models_text_streams_back_as_message_chunks(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    scripted_openai.script([text("Hello from "), text("the scripted model."), done()])
    agent = agent_on(scripted_openai, tmp_path)
    async with AgentProcess(agent) as running:
        session_id = await start(running)
        reply = await prompt(running, session_id, "say hi")
        assert reply.stop_reason == "end_turn"
        assert running.client.text() == "Hello from the scripted model."
        assert "available_commands_update" in running.client.kinds()
    (request,) = turn_requests(scripted_openai)
    assert request.json["model"] == "gpt-test" and request.json["stream"] is True
    assert request.authorization == "Bearer sk-scripted"
    assert request.last_user_text == "say hi"
    assert {"bash", "read", "apply_patch"} <= set(request.tool_names)
    # Offline: every request it made went to the scripted server's chat endpoint.
    assert {r.path for r in scripted_openai.requests} == {"/v1/chat/completions"}
    assert opencode_warnings(agent) == []
    calls = [m for m in running.wire.methods() if m != "session/update"]
    assert calls == ["initialize", "session/new", "session/prompt"]


async def test_an_edit_and_a_command_ask_permission_and_run_once_allowed(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    scripted_openai.script(
        [
            text("Writing."),
            tool_calls(tool_call("apply_patch", {"patchText": PATCH}, id="c1")),
        ],
        [tool_calls(tool_call("bash", {"command": "echo ran > ran.txt"}, id="c_bash"))],
        [text("Both done."), done()],
    )
    agent = agent_on(scripted_openai, tmp_path)
    async with AgentProcess(agent) as running:
        session_id = await start(running)
        reply = await prompt(running, session_id, "make two files")
        client = running.client
        assert reply.stop_reason == "end_turn"
        assert client.text() == "Writing.Both done."
        (edit, edit_options), (command, command_options) = client.permissions
        # The agent's own options, as offered: allow once/always, reject once.
        kinds = ["allow_once", "allow_always", "reject_once"]
        assert [o.kind for o in edit_options] == [o.kind for o in command_options] == kinds
        assert edit.tool_call_id == "c1" and edit.kind == "edit"
        diff = edit.content[0]
        assert diff.type == "diff" and diff.new_text == "Hello world\n"
        assert diff.path == str(agent.cwd / "hello.txt")
        assert command.tool_call_id == "c_bash" and command.kind == "execute"
        assert command.raw_input == {"command": "echo ran > ran.txt"}
        # The edit also reaches the client as fs/write_text_file, named relative to the
        # project (the repository's top), after the agent wrote the file itself.
        assert client.writes == [("hello.txt", "Hello world\n")]
        assert [u.status for u in client.tool_updates("c_bash")][-1] == "completed"
        asked = [m["method"] for m in running.wire.requests_from_agent()]
        permission, write = "session/request_permission", "fs/write_text_file"
        assert asked == [permission, write, permission]
    assert (agent.cwd / "hello.txt").read_text() == "Hello world\n"
    assert (agent.cwd / "ran.txt").read_text() == "ran\n"
    second, third = turn_requests(scripted_openai)[1:]
    assert second.messages[-1]["role"] == "tool"
    assert second.messages[-1]["tool_call_id"] == "c1"
    assert third.messages[-1]["tool_call_id"] == "c_bash"


async def test_a_rejected_command_does_not_run_and_the_model_hears_so(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    scripted_openai.script(
        [tool_calls(tool_call("bash", {"command": "echo ran > ran.txt"}, id="c_bash"))],
        [text("Understood, not running it."), done()],
    )
    agent = agent_on(scripted_openai, tmp_path)
    async with AgentProcess(agent) as running:
        session_id = await start(running)
        running.client.choose("reject_once")
        reply = await prompt(running, session_id, "run it")
        updates = running.client.tool_updates("c_bash")
        assert updates[-1].status == "failed"
        assert len(running.client.permissions) == 1
        assert reply.stop_reason == "end_turn"
    assert not (agent.cwd / "ran.txt").exists()


async def test_cancel_while_a_permission_waits_ends_the_turn_cancelled(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    scripted_openai.script(
        [tool_calls(tool_call("bash", {"command": "echo ran > ran.txt"}, id="c_bash"))]
    )
    agent = agent_on(scripted_openai, tmp_path)
    async with AgentProcess(agent) as running:
        session_id = await start(running)
        running.client.choose(None)  # hold the request open, as a person who has not answered
        turn = asyncio.ensure_future(prompt(running, session_id, "run it"))
        await asyncio.wait_for(running.client.asked.wait(), LIMIT)
        await running.connection.cancel(session_id=session_id)
        running.client.cancel_held()
        reply = await turn
        assert reply.stop_reason == "cancelled"
    assert not (agent.cwd / "ran.txt").exists()
