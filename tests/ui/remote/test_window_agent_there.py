"""A remote folder's ACP agent pane in the real window, over the real sshd (a second local
user): the agent (tests/fakes/acp_scripted_agent.py, on the official SDK) runs there, as
the remote user, in the folder there; its file requests read and write the folder there;
its terminal runs there and shows in the pane; its chat, its rules and its pane stay here."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path
from typing import Any

from melgui.core.protocol.views.agent_commands import AgentCommand
from melgui.ui.panes.acp_pane import AcpPane
from tests.fakes import ScriptedRelay
from tests.fakes.acp_host import SCRIPTED_AGENT
from tests.fakes.window import relay_settings, wait_until
from tests.remote.fixtures import Remote

SHOTS = os.environ.get("MELGUI_SCREENSHOTS")


def test_a_remote_folders_agent_pane_runs_its_agent_there(
    scripted_relay: ScriptedRelay,
    remote: Remote,
    remote_window: Any,
    qloop: asyncio.AbstractEventLoop,
) -> None:
    folder = remote.folder("window-agent")
    (folder / "notes.txt").write_text("only on the remote\n")
    shutil.copy(SCRIPTED_AGENT, folder / "agent.py")
    remote.server.give(folder)
    url = f"ssh://{remote.server.alias}{folder}"
    window = remote_window(url, relay_settings(scripted_relay))
    window.resize(1300, 800)
    command = AgentCommand(
        "scripted", (remote.python, str(folder / "agent.py")), {"PYTHONPATH": remote.python_path}
    )
    steps = [
        {"read": str(folder / "notes.txt")},
        {"write": str(folder / "made.txt"), "content": "written by the agent\n"},
        {"run": ["sh", "-c", "echo ran-as-$(id -un)-in-$(pwd)"]},
        {"say": "done there"},
    ]
    info = window.pane_manager.open_agent(command, "right", task=json.dumps(steps))
    pane = window.pane_manager.pane(info.id)
    assert isinstance(pane, AcpPane)

    def said() -> str:
        return "".join(m.content for m in pane.acp.conversation.messages if m.role == "assistant")

    async def scenario() -> None:
        await wait_until(lambda: "done there" in said(), 120)
        await wait_until(lambda: pane.state.name == "idle", 30)

    qloop.run_until_complete(asyncio.wait_for(scenario(), 180))
    text = said().replace("\r\n", "\n")
    user = remote.server.user.pw_name
    assert "read:only on the remote" in text
    assert f"ran-as-{user}-in-{folder}" in text
    made = folder / "made.txt"
    assert made.read_text() == "written by the agent\n"
    assert Path(made).stat().st_uid == remote.server.user.pw_uid  # written there, by it
    assert window.pane_manager.registry.all()[0].where == remote.server.alias  # list_panes
    assert list(pane.terminal_views) == ["term-1"]
    screen = pane.terminal_views["term-1"]
    assert screen.isVisibleTo(pane)
    if SHOTS:
        window.grab().save(os.path.join(SHOTS, "screenshot-remote-agent.png"))
