"""A real third-party ACP agent, Codex through Zed's adapter (`codex-acp`, npm
`@zed-industries/codex-acp`), run offline against the scripted server's Responses API on
loopback and driven with the ACP SDK's client side."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from acp import text_block

from tests.fakes import ScriptedOpenAI, done, text, tool_call, tool_calls
from tests.fakes.third_party_acp import AgentProcess
from tests.fakes.third_party_agents import codex_agent, codex_version

LIMIT = 90  # seconds one exchange may take on a busy machine
COMMAND = {
    "cmd": "echo ran > ran.txt",
    "sandbox_permissions": "require_escalated",  # outside Codex's sandbox: it asks first
    "justification": "Write ran.txt?",
}


async def start(running: AgentProcess) -> str:
    reply = await running.initialize()
    assert reply.agent_info is not None
    assert (reply.agent_info.name, reply.agent_info.version) == ("codex-acp", codex_version())
    session = await asyncio.wait_for(
        running.connection.new_session(cwd=str(running.agent.cwd), mcp_servers=[]), LIMIT
    )
    return session.session_id


async def prompt(running: AgentProcess, session_id: str, words: str) -> Any:
    return await asyncio.wait_for(
        running.connection.prompt(session_id=session_id, prompt=[text_block(words)]), LIMIT
    )


async def test_the_scripted_models_text_streams_back_over_the_responses_api(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    scripted_openai.script([text("Hello from "), text("the scripted model."), done()])
    agent = codex_agent(scripted_openai, tmp_path)
    async with AgentProcess(agent) as running:
        session_id = await start(running)
        reply = await prompt(running, session_id, "say hi")
        assert reply.stop_reason == "end_turn"
        # Codex first says (as a message chunk) that it has no metadata for this model.
        assert running.client.text().endswith("Hello from the scripted model.")
    (request,) = scripted_openai.legs_received
    assert request.path == "/v1/responses" and request.json["model"] == "gpt-test"
    assert request.authorization == "Bearer sk-scripted"
    assert request.json["input"][-1]["content"] == [{"type": "input_text", "text": "say hi"}]
    assert {r.path for r in scripted_openai.requests} == {"/v1/responses"}


async def test_a_command_asks_permission_with_codexs_options_and_runs_once_allowed(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    scripted_openai.script(
        [tool_calls(tool_call("exec_command", COMMAND, id="c1"))],
        [text("Ran it."), done()],
    )
    agent = codex_agent(scripted_openai, tmp_path)
    async with AgentProcess(agent) as running:
        session_id = await start(running)
        reply = await prompt(running, session_id, "run it")
        assert reply.stop_reason == "end_turn"
        ((call, options),) = running.client.permissions
        assert call.tool_call_id == "c1" and call.kind == "execute"
        assert call.raw_input["command"][-1] == "echo ran > ran.txt"
        assert [(o.option_id, o.kind) for o in options] == [
            ("approved", "allow_once"),
            ("approved-execpolicy-amendment", "allow_always"),
            ("abort", "reject_once"),
        ]
        assert running.client.tool_updates("c1")[-1].status == "completed"
        assert running.client.text().endswith("Ran it.")
    assert (agent.cwd / "ran.txt").read_text() == "ran\n"
    second = scripted_openai.legs_received[1].json["input"]
    output = next(item for item in second if item["type"] == "function_call_output")
    assert output["call_id"] == "c1" and "exited with code 0" in output["output"]
    assert (
        json.loads(next(i for i in second if i["type"] == "function_call")["arguments"]) == COMMAND
    )


async def test_a_rejected_command_does_not_run_and_ends_the_turn(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    scripted_openai.script([tool_calls(tool_call("exec_command", COMMAND, id="c1"))])
    agent = codex_agent(scripted_openai, tmp_path)
    async with AgentProcess(agent) as running:
        session_id = await start(running)
        running.client.choose("reject_once")
        reply = await prompt(running, session_id, "run it")
        # Codex's reject option is "abort": the turn ends without asking the model again.
        assert reply.stop_reason == "cancelled"
        assert len(running.client.permissions) == 1
        assert running.client.tool_updates("c1") == []
    assert len(scripted_openai.legs_received) == 1
    assert not (agent.cwd / "ran.txt").exists()
