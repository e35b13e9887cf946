"""An ACP agent the host runs (protocol 13), driven by a plain view: `session/open` with
`agent` starts the scripted agent as the host's child; its state comes as `agent`
records and in a snapshot; its permission request is an approval with the agent's own
options, answered by option; mode and model go to the agent through the host; a new host
closes it instead of reopening it (the agent ended with the host before)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from melgui.host.client import HostClient
from melgui.host.wire import RpcError
from tests.fakes.acp_host import agents_in, scripted_agent
from tests.fakes.host_process import HostProcess, runtime_dir
from tests.host.conftest import wait_for


async def records(view: HostClient, session: str) -> list[dict[str, Any]]:
    heard: list[dict[str, Any]] = []
    view.sessions[session] = heard.extend
    return heard


async def test_an_acp_agent_runs_in_the_host_and_asks_with_its_own_options(
    host: HostProcess, tmp_path: Path
) -> None:
    command = scripted_agent()
    view = await host.client()
    try:
        opened = await view.call(
            "session/open", folder=str(tmp_path), source="scripted 1",
            agent={"name": command.name, "argv": list(command.argv)},
        )  # fmt: skip
        session = opened["id"]
        assert opened["agent"]["name"] == "scripted" and opened["source"] == "scripted 1"
        heard = await records(view, session)
        snapshot = (await view.attach({session: None}))[session]["snapshot"]
        assert snapshot["agent"]["phase"] in ("starting", "ready")
        told = [r for r in heard if r["type"] == "agent"]
        while not (told and told[-1]["phase"] == "ready" and told[-1]["state"]["commands"]):
            await asyncio.sleep(0.05)  # the agent sends its commands after session/new
            told = [r for r in heard if r["type"] == "agent"]
        state = told[-1]["state"]
        assert state["agent_info"] == "scripted 1.0" and state["mode"] == "ask"
        assert len(state["commands"]) == 2 and len(state["models"]) == 2

        # The agent is the host's child, working in the folder.
        status = await view.call("host/status")
        assert list(agents_in(tmp_path).values()) == [status["pid"]]

        await view.call("agent/mode", session=session, mode="code")
        while [r for r in heard if r["type"] == "agent"][-1]["state"]["mode"] != "code":
            await asyncio.sleep(0.05)
        with pytest.raises(RpcError, match="the agent refused"):
            await view.call("agent/model", session=session, model="no-such-model")
        ask = [{"ask": "execute", "title": "rm -rf build"}]
        await view.call("turn/prompt", session=session, text=json.dumps(ask))
        listed = await wait_for(view, session, lambda s: s["approvals"])
        call = listed["approvals"][0]["id"]
        asked = next(r for r in heard if r["type"] == "approval")
        assert [o[1] for o in asked["options"]] == ["Yes, once", "Yes, always", "No", "Never"]
        answer = {"call": call, "decision": "deny", "option": "never"}
        assert await view.call("approval/answer", session=session, **answer) == {"answered": True}
        await wait_for(view, session, lambda s: not s["busy"])
        resolved = next(r for r in heard if r["type"] == "approval_resolved")
        assert resolved["decision"] == "deny"
        said = [r["message"]["content"] for r in heard if r["type"] == "message"]
        assert any("permission:never" in text for text in said)
    finally:
        await view.aclose()

    # A new host does not reopen it: the agent ended with the host before.
    host.stop()
    host.start()
    again = await host.client("after a restart")
    try:
        assert await again.call("session/list") == []
    finally:
        await again.aclose()


async def test_a_host_running_an_agent_does_not_end_by_idleness(tmp_path: Path) -> None:
    command = scripted_agent()
    with runtime_dir() as runtime:
        host = HostProcess(runtime, "--idle-exit", "0.5").start()
        try:
            view = await host.client()
            opened = await view.call(
                "session/open", folder=str(tmp_path), source="scripted 1",
                agent={"name": command.name, "argv": list(command.argv)},
            )  # fmt: skip
            await view.call("session/detach", session=opened["id"])
            await view.aclose()  # kept running: no view
            await asyncio.sleep(2)
            assert host.process is not None and host.process.poll() is None
            view = await host.client("closes it")
            await view.call("session/close", session=opened["id"])
            await view.aclose()
            assert await asyncio.to_thread(host.wait, 60) == 0  # idle now: it ends
        finally:
            host.stop()
