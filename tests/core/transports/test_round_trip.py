"""A full round-trip over loopback: the loop, the relay transport, the real workspace tools."""

from __future__ import annotations

import json
from pathlib import Path

from melgui.core.agent.loop import AgentLoop
from melgui.core.protocol.catalog import tools_for_role
from melgui.core.protocol.messages import Message
from melgui.core.rules.policy import FixedPolicy
from melgui.core.transports.relay import RelayTransport
from melgui.tools.memory.store import LocalMemory
from melgui.tools.settings import ToolSettings
from melgui.tools.toolbox import build_workspace_tools
from melgui.tools.workspace import Workspace
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls


async def test_text_two_calls_results_in_order_final_answer(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("alpha\nbeta\n")
    scripted_relay.script(
        [
            text("Let me look."),
            tool_calls(
                tool_call("read_file", {"path": "notes.txt"}, id="call_1"),
                tool_call("list_dir", {}, id="call_2"),
                usage={"prompt_tokens": 50, "completion_tokens": 10},
            ),
        ],
        [text("It has two lines."), done(usage={"prompt_tokens": 90, "completion_tokens": 5})],
    )
    tools = build_workspace_tools(
        Workspace(project),
        settings=ToolSettings(),
        memory=LocalMemory(tmp_path / "memory.sqlite3"),
        plans=lambda title, markdown: None,
    )
    transport = RelayTransport(scripted_relay.base_url, "secret-key")
    loop = AgentLoop(
        transport, tools, FixedPolicy("reads"), model="mel-1", role="worker", cwd=str(project)
    )
    try:
        result = await loop.run_turn("What is in notes.txt?")
    finally:
        await transport.aclose()

    assert result.outcome == "done"
    assert loop.legs == 2 and loop.usage.total_tokens == 155
    assert loop.conversation.messages[-1] == Message.assistant("It has two lines.")

    first, second = scripted_relay.legs_received
    assert first.path == "/v1/agent/stream"
    assert first.authorization == "Bearer secret-key"
    body = second.json
    assert set(body) == {"model", "messages", "tools", "tool_role", "tool_choice", "cwd"}
    assert body["model"] == "mel-1"
    assert body["tool_role"] == "worker"
    assert body["tool_choice"] == "auto"
    assert body["cwd"] == str(project.resolve())
    assert body["tools"] == [tool.to_relay() for tool in tools_for_role("worker")]
    user, assistant, result_1, result_2 = body["messages"]
    assert user == {"role": "user", "content": "What is in notes.txt?"}
    assert assistant == {
        "role": "assistant",
        "content": "Let me look.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "read_file", "arguments": json.dumps({"path": "notes.txt"})},
            },
            {
                "id": "call_2",
                "type": "function",
                "function": {"name": "list_dir", "arguments": "{}"},
            },
        ],
    }
    assert result_1["role"] == "tool" and result_1["tool_call_id"] == "call_1"
    assert "alpha" in result_1["content"] and "beta" in result_1["content"]
    assert result_2["role"] == "tool" and result_2["tool_call_id"] == "call_2"
    assert "notes.txt" in result_2["content"]
    assert set(result_1) == set(result_2) == {"role", "content", "tool_call_id"}
