"""`melgui acp` as a real process, driven by the ACP SDK's client side over stdio, against
the scripted OpenAI-compatible server on loopback."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.schema import EnvVariable, McpServerStdio

from melgui.tools.mcp.config import user_path
from tests.fakes import ScriptedOpenAI, done, hold, http_error, text, tool_call, tool_calls
from tests.fakes.acp_client import AcpAgentProcess
from tests.fakes.mcp import fake_entry

LIMIT = 30  # seconds any one exchange may take
PLAN = "Steps:\n\n- [x] read a.txt\n- [~] answer\n1. check\n"


def agent_for(server: ScriptedOpenAI) -> AcpAgentProcess:
    return AcpAgentProcess(
        ["--transport", "openai", "--url", server.base_url, "--model", "m1"],
        env={"OPENAI_API_KEY": "k-1"},
    )


async def start(agent: AcpAgentProcess, folder: Path) -> str:
    reply = await asyncio.wait_for(agent.initialize(), LIMIT)
    assert reply.agent_info is not None and reply.agent_info.name == "melgui"
    session = await asyncio.wait_for(agent.connection.new_session(cwd=str(folder)), LIMIT)
    return session.session_id


async def prompt(agent: AcpAgentProcess, session_id: str, words: str) -> Any:
    return await asyncio.wait_for(
        agent.connection.prompt(session_id=session_id, prompt=[text_block(words)]), LIMIT
    )


async def test_prompt_streams_text_and_a_tool_call_with_its_updates(
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
    async with agent_for(scripted_openai) as agent:
        session_id = await start(agent, tmp_path)
        reply = await prompt(agent, session_id, "what is in a.txt?")
        assert reply.stop_reason == "end_turn"
        assert reply.usage is not None
        assert (reply.usage.input_tokens, reply.usage.output_tokens) == (9, 3)
        client = agent.client
        assert client.text() == "Let me look.It says hello."
        start_, *rest = client.tool_updates("c1")
        assert start_.session_update == "tool_call"
        assert start_.title == "read_file: a.txt" and start_.kind == "read"
        assert start_.status == "pending" and start_.raw_input == {"path": "a.txt"}
        assert start_.locations[0].path == str(tmp_path.resolve() / "a.txt")
        assert [u.status for u in rest] == ["in_progress", "completed"]
        assert "hello world" in rest[-1].content[-1].content.text
        # The read ran without asking (read-only tools are "auto" by default).
        assert client.permissions == []
        # Order on the wire: first text, then the call, then the second leg's text.
        kinds = client.kinds()
        assert kinds.index("tool_call") > kinds.index("agent_message_chunk")
        # write_plan's plan reaches the client as a plan update, before the call's result.
        plans = [u for u in client.updates if u.session_update == "plan"]
        assert [(e.content, e.status) for e in plans[0].entries] == [
            ("read a.txt", "completed"), ("answer", "in_progress"), ("check", "pending"),
        ]  # fmt: skip
        assert client.updates.index(plans[0]) < client.updates.index(client.tool_updates("p1")[-1])
    sent = scripted_openai.legs_received[1].messages
    assert sent[0]["role"] == "system" and sent[1] == {
        "role": "user",
        "content": "what is in a.txt?",
    }
    assert [(m["role"], m.get("tool_call_id")) for m in sent[-2:]] == [
        ("tool", "c1"),
        ("tool", "p1"),
    ]


async def test_permission_allowed_writes_and_rejected_does_not(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    (tmp_path / "b.txt").write_text("old\n")
    scripted_openai.script(
        [tool_calls(tool_call("write_file", {"path": "b.txt", "content": "new\n"}, id="w1"))],
        [text("Written."), done()],
        [tool_calls(tool_call("write_file", {"path": "c.txt", "content": "no\n"}, id="w2"))],
        [text("Not written."), done()],
    )
    async with agent_for(scripted_openai) as agent:
        session_id = await start(agent, tmp_path)
        agent.client.choose("allow_once")
        assert (await prompt(agent, session_id, "write b")).stop_reason == "end_turn"
        assert (tmp_path / "b.txt").read_text() == "new\n"
        subject, options = agent.client.permissions[0]
        assert subject.tool_call_id == "w1" and subject.title == "write_file: b.txt (2 lines)"
        assert subject.content is not None and subject.content[0].new_text == "new\n"
        assert [o.kind for o in options] == [
            "allow_once", "allow_always", "reject_once", "reject_always",
        ]  # fmt: skip
        first = agent.client.tool_updates("w1")
        diff = first[0].content[0]
        assert first[0].kind == "edit" and diff.type == "diff"
        assert (diff.old_text, diff.new_text) == ("old\n", "new\n")
        assert diff.path == str(tmp_path.resolve() / "b.txt")
        assert first[-1].status == "completed"

        agent.client.choose("reject_once")
        assert (await prompt(agent, session_id, "write c")).stop_reason == "end_turn"
        assert not (tmp_path / "c.txt").exists()
        second = agent.client.tool_updates("w2")
        assert second[-1].status == "failed"
        assert "denied" in second[-1].content[-1].content.text
    result = scripted_openai.legs_received[3].messages[-1]
    assert result["tool_call_id"] == "w2" and "The user denied" in result["content"]


async def test_always_options_last_for_the_session(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    def writes(*paths: str) -> Any:
        return tool_calls(
            *(tool_call("write_file", {"path": p, "content": "x"}, id=p) for p in paths)
        )

    def command(call_id: str) -> Any:
        return tool_calls(tool_call("run_command", {"command": f"echo hi > {call_id}"}, id=call_id))

    scripted_openai.script(
        [writes("a1", "a2")], [done()], [command("r1")], [done()], [command("r2")], [done()]
    )
    async with agent_for(scripted_openai) as agent:
        session_id = await start(agent, tmp_path)
        agent.client.choose("allow_always")
        await prompt(agent, session_id, "two writes")
        assert (tmp_path / "a1").exists() and (tmp_path / "a2").exists()
        assert [s.tool_call_id for s, _ in agent.client.permissions] == ["a1"]
        agent.client.choose("reject_always")
        await prompt(agent, session_id, "a command")
        agent.client.choose("allow_once")  # not asked again: rejected for the session
        await prompt(agent, session_id, "another command")
        assert [s.tool_call_id for s, _ in agent.client.permissions] == ["a1", "r1"]
        assert not (tmp_path / "r1").exists() and not (tmp_path / "r2").exists()
        assert agent.client.tool_updates("r2")[-1].status == "failed"
    result = scripted_openai.legs_received[5].messages[-1]
    assert "always reject run_command" in result["content"]


async def test_cancel_while_a_permission_is_open(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    scripted_openai.script(
        [tool_calls(tool_call("write_file", {"path": "w.txt", "content": "x"}, id="w1"))],
        [text("after cancel"), done()],
    )
    async with agent_for(scripted_openai) as agent:
        session_id = await start(agent, tmp_path)
        agent.client.choose(None)
        running = asyncio.ensure_future(prompt(agent, session_id, "write"))
        await asyncio.wait_for(agent.client.asked.wait(), LIMIT)
        await agent.connection.cancel(session_id=session_id)
        # The turn ends without waiting for the client to answer the open request...
        assert (await running).stop_reason == "cancelled"
        agent.client.cancel_held()  # ...and the late "cancelled" answer changes nothing.
        assert not (tmp_path / "w.txt").exists()
        assert agent.client.tool_updates("w1")[-1].status == "failed"
        # The session goes on: the next prompt sends a conversation with every call answered.
        assert (await prompt(agent, session_id, "again")).stop_reason == "end_turn"
    sent = scripted_openai.legs_received[1].messages
    results = [m for m in sent if m["role"] == "tool"]
    assert [r["tool_call_id"] for r in results] == ["w1"]


async def test_cancel_while_the_model_streams(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    gate = threading.Event()
    scripted_openai.script([text("Thinking"), hold(gate), text(" never sent"), done()])
    async with agent_for(scripted_openai) as agent:
        session_id = await start(agent, tmp_path)
        first_text = asyncio.Event()
        agent.client.on_update = lambda u: first_text.set()
        running = asyncio.ensure_future(prompt(agent, session_id, "go"))
        await asyncio.wait_for(first_text.wait(), LIMIT)
        await agent.connection.cancel(session_id=session_id)
        assert (await running).stop_reason == "cancelled"
        assert agent.client.text() == "Thinking"
        gate.set()


async def test_a_failed_turn_is_an_error_the_client_sees(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    scripted_openai.script([http_error(400, {"error": {"message": "no such model m1"}})])
    async with agent_for(scripted_openai) as agent:
        session_id = await start(agent, tmp_path)
        with pytest.raises(RequestError) as caught:
            await prompt(agent, session_id, "hi")
        assert "no such model m1" in str(caught.value.data)
        with pytest.raises(RequestError):
            await agent.connection.new_session(cwd="relative/path")


async def test_killed_agent_ends_the_prompt_without_a_hang(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    gate = threading.Event()
    scripted_openai.script([text("working"), hold(gate), done()])
    async with agent_for(scripted_openai) as agent:
        session_id = await start(agent, tmp_path)
        first_text = asyncio.Event()
        agent.client.on_update = lambda u: first_text.set()
        running = asyncio.ensure_future(prompt(agent, session_id, "go"))
        await asyncio.wait_for(first_text.wait(), LIMIT)
        agent.process.kill()
        with pytest.raises(Exception) as caught:
            await running
        assert not isinstance(caught.value, TimeoutError)
        assert await asyncio.wait_for(agent.process.wait(), LIMIT) != 0
        gate.set()


async def test_a_session_is_kept_in_history_and_loads_in_a_new_process(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    scripted_openai.script(
        [text("Reading."), tool_calls(tool_call("read_file", {"path": "a.txt"}, id="c1"))],
        [text("It says hello."), done()],
        [text("Still hello."), done()],
    )
    async with agent_for(scripted_openai) as agent:
        reply = await asyncio.wait_for(agent.initialize(), LIMIT)
        assert reply.agent_capabilities is not None and reply.agent_capabilities.load_session
        session_id = await start(agent, tmp_path)
        await prompt(agent, session_id, "what is in a.txt?")
    async with agent_for(scripted_openai) as agent:
        await asyncio.wait_for(agent.initialize(), LIMIT)
        await asyncio.wait_for(
            agent.connection.load_session(cwd=str(tmp_path), session_id=session_id), LIMIT
        )
        replayed = agent.client.updates
        assert [u.session_update for u in replayed] == [
            "user_message_chunk", "agent_message_chunk", "tool_call", "tool_call_update",
            "agent_message_chunk",
        ]  # fmt: skip
        assert replayed[0].content.text == "what is in a.txt?"
        assert replayed[3].status == "completed" and "hello" in replayed[3].content[-1].content.text
        assert (await prompt(agent, session_id, "and now?")).stop_reason == "end_turn"
        with pytest.raises(RequestError):
            await agent.connection.load_session(cwd=str(tmp_path), session_id="no-such-id")
    sent = scripted_openai.legs_received[2].messages
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert sent[-1]["content"] == "and now?"


async def test_an_agent_that_cannot_start_fails_initialize_with_its_reason(
    tmp_path: Path,
) -> None:
    # A relay without a URL is a usage error: the process exits before it answers.
    async with AcpAgentProcess(["--transport", "relay"]) as agent:
        with pytest.raises(Exception) as caught:
            await asyncio.wait_for(agent.initialize(), LIMIT)
        assert not isinstance(caught.value, TimeoutError)
        assert await asyncio.wait_for(agent.process.wait(), LIMIT) == 2
        assert "--transport relay needs --url" in await agent.stderr()


async def test_custom_slash_commands_are_offered_and_expand(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    commands = tmp_path / ".melgui" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("description: Review a file\nReview $ARGUMENTS closely.\n")
    scripted_openai.script([text("Looks fine."), done()])
    async with agent_for(scripted_openai) as agent:
        session_id = await start(agent, tmp_path)
        await prompt(agent, session_id, "/review a.txt")
        offered = agent.client.updates[0]
        assert offered.session_update == "available_commands_update"
        assert [(c.name, c.description) for c in offered.available_commands] == [
            ("review", "Review a file")
        ]
    assert scripted_openai.legs_received[0].last_user_text == "Review a.txt closely."


async def test_configured_mcp_servers_serve_the_session(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    config = user_path()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"mcpServers": {"fake": fake_entry()}}), encoding="utf-8")
    scripted_openai.script(
        [tool_calls(tool_call("mcp__fake__echo", {"text": "from mcp"}, id="m1"))],
        [text("Echoed."), done()],
    )
    async with agent_for(scripted_openai) as agent:
        session_id = await start(agent, tmp_path)
        agent.client.choose("allow_once")
        assert (await prompt(agent, session_id, "echo")).stop_reason == "end_turn"
        assert [s.tool_call_id for s, _ in agent.client.permissions] == ["m1"]
        assert agent.client.tool_updates("m1")[-1].status == "completed"
    reply = scripted_openai.legs_received[1].json["messages"][-1]
    assert (reply["tool_call_id"], reply["content"]) == ("m1", "from mcp")


async def test_mcp_servers_the_client_passes_serve_that_session(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    entry = fake_entry()
    passed = McpServerStdio(
        name="passed",
        command=entry["command"],
        args=entry["args"],
        env=[EnvVariable(name=k, value=v) for k, v in entry["env"].items()],
    )
    scripted_openai.script(
        [tool_calls(tool_call("mcp__passed__echo", {"text": "from the client's"}, id="m1"))],
        [text("Echoed."), done()],
    )
    agent = AcpAgentProcess(
        ["--transport", "openai", "--url", scripted_openai.base_url, "--model", "m1", "--no-mcp"],
        env={"OPENAI_API_KEY": "k-1"},
    )
    async with agent:
        reply = await asyncio.wait_for(agent.initialize(), LIMIT)
        capabilities = reply.agent_capabilities.mcp_capabilities
        assert (capabilities.http, capabilities.sse) == (True, False)
        session = await asyncio.wait_for(
            agent.connection.new_session(cwd=str(tmp_path), mcp_servers=[passed]), LIMIT
        )
        agent.client.choose("allow_once")
        assert (await prompt(agent, session.session_id, "echo")).stop_reason == "end_turn"
    offered = [t["function"]["name"] for t in scripted_openai.legs_received[0].json["tools"]]
    assert "mcp__passed__echo" in offered  # started for the session, under --no-mcp too
    reply_to_model = scripted_openai.legs_received[1].json["messages"][-1]
    assert (reply_to_model["tool_call_id"], reply_to_model["content"]) == (
        "m1",
        "from the client's",
    )


async def test_pane_tools_are_refused_in_words_under_an_acp_client(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    scripted_openai.script(
        [tool_calls(tool_call("read_pane", {"pane": 1}, id="r1"))],
        [text("No panes."), done()],
    )
    agent = AcpAgentProcess(
        ["--transport", "openai", "--url", scripted_openai.base_url, "--model", "m1",
         "--role", "orchestrator"],
        env={"OPENAI_API_KEY": "k-1"},
    )  # fmt: skip
    async with agent:
        session_id = await start(agent, tmp_path)
        reply = await prompt(agent, session_id, "read pane 1")
        assert reply.stop_reason == "end_turn"
    sent = scripted_openai.legs_received[1].messages[-1]
    assert sent["tool_call_id"] == "r1"
    assert sent["content"] == (
        "read_pane needs panes, which only the melgui window has; this session runs "
        "under an ACP client (melgui acp). Do the work with the other tools."
    )
