"""An ACP agent pane on a configured host (Settings.hosts) from a window on a folder here:
the agent (tests/fakes/acp_scripted_agent.py, on the official SDK) runs on that host,
through a local command that behaves like `docker exec -i box` (tests/remote/
local_target.py), in the host's folder; its files, terminals and checkpoints are there,
its pane and approvals here, its permission requests judged by that folder's own
hooks there. The orchestrator opens it with open_pane and `@NAME `, and
the person with New agent pane…'s `@NAME command`."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from melgui.core.config.settings import RemoteHost
from melgui.core.store.checkpoints.checkpointer import Checkpointer
from melgui.ui.panes.acp_dialogs import open_agent
from melgui.ui.panes.acp_pane import AcpPane
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.acp_host import SCRIPTED_AGENT
from tests.fakes.window import relay_settings, wait_until
from tests.remote.local_target import box_host

AGENT = f"{sys.executable} {SCRIPTED_AGENT}"


def box_settings(relay: ScriptedRelay, tmp_path: Path, folder: Path, **more: Any) -> Any:
    runtime = tmp_path / "run"
    box = f"env XDG_RUNTIME_DIR={runtime} MELGUI_DATA_DIR={tmp_path / 'box-data'}"
    hosts = [RemoteHost(name="box", target=box, folder=str(folder))]
    return relay_settings(relay, hosts=hosts, acp_agents=[AGENT], **more)


def said(pane: AcpPane) -> str:
    return "".join(m.content for m in pane.acp.conversation.messages if m.role == "assistant")


def test_the_orchestrator_opens_an_agent_pane_on_a_host_and_it_works_there(
    scripted_relay: ScriptedRelay,
    make_window: Any,
    qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    project: Path,
) -> None:
    folder = tmp_path / "box-folder"
    folder.mkdir()
    (folder / "notes.txt").write_text("only on the box\n")
    guard = "echo \"$(pwd)\" > hooked; echo 'not on the box' >&2; exit 2"
    (folder / ".melgui").mkdir()
    (folder / ".melgui" / "hooks.json").write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": guard}]}]}}))  # fmt: skip
    scripted_relay.script(
        [tool_calls(tool_call("open_pane", {"layout": "right", "command": f"@box {AGENT}"},
                              id="o1"))],
        [text("Opened."), done()],
    )  # fmt: skip
    settings = box_settings(
        scripted_relay, tmp_path, folder, role="orchestrator",
        approval_modes={"open_pane": "auto"},
    )  # fmt: skip
    steps = [
        {"read": str(folder / "notes.txt")},
        {"write": "made.txt", "content": "written by the agent\n"},
        {"run": ["sh", "-c", "echo ran-in-$(pwd)"]},
        {"ask": "execute", "title": "Run make", "command": "make deploy"},
        {"say": "done on the box"},
    ]
    with box_host(tmp_path / "run"):
        window = make_window(settings)
        manager = window.pane_manager

        async def scenario() -> None:
            window.bridge.submit("Open an agent on the box.")
            await wait_until(lambda: not window.bridge.busy and window.session.loop.legs == 2, 120)
            pane = manager.pane(1)
            assert isinstance(pane, AcpPane)
            await wait_until(lambda: pane.state.name == "idle", 60)
            pane.acp.submit(json.dumps(steps))
            await wait_until(lambda: "done on the box" in said(pane), 60)
            await wait_until(lambda: pane.state.name == "idle", 30)

        qloop.run_until_complete(asyncio.wait_for(scenario(), 240))
        pane = manager.pane(1)
        assert isinstance(pane, AcpPane)
        text_said = said(pane).replace("\r\n", "\n")
        window.resize(1300, 800)
        assert window.grab().save(str(tmp_path / "agent-on-host.png"))
        (info,) = manager.registry.all()
        result = [m for m in scripted_relay.legs_received[1].messages if m.get("role") == "tool"]
    assert "read:only on the box" in text_said
    assert f"ran-in-{folder}" in text_said
    # its permission request met the host folder's own hook, run there: rejected
    assert "permission:no" in text_said and (folder / "hooked").read_text() == f"{folder}\n"
    assert (folder / "made.txt").read_text() == "written by the agent\n"
    assert not (project / "made.txt").exists()
    assert info.where == "box" and info.title.endswith("@box")
    assert "Opened ACP agent pane 1 on box" in result[0]["content"]
    there = Checkpointer(str(folder), data_folder=tmp_path / "box-data")
    try:
        records = there.records()
    finally:
        there.close()
    assert [(r.tool, [f.path for f in r.files]) for r in records] == [
        ("write_file", ["made.txt"])
    ]  # checkpointed there, by the box's host


def test_new_agent_pane_with_a_host_word_starts_it_there(
    scripted_relay: ScriptedRelay,
    make_window: Any,
    qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> None:
    folder = tmp_path / "box-folder"
    folder.mkdir()
    with box_host(tmp_path / "run"):
        window = make_window(box_settings(scripted_relay, tmp_path, folder))
        opening = open_agent(window, f"@box {AGENT}")
        assert opening is not None
        qloop.run_until_complete(asyncio.wait_for(opening, 120))
        (info,) = window.pane_manager.registry.all()
        pane = window.pane_manager.pane(info.id)
        assert isinstance(pane, AcpPane)
        qloop.run_until_complete(wait_until(lambda: pane.state.name == "idle", 60))
        wrong = open_agent(window, f"@nowhere {AGENT}")  # not a host: a command here
    assert info.where == "box"
    assert wrong is None
