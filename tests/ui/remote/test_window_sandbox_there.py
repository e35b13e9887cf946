"""A remote folder whose configured host says `loop_there` and `sandbox`, with an `env`:
the conversations melgui's host there runs (the window's main conversation, a worker)
run their commands in the sandbox there, with that env, as the folder's single tool
calls do when the loop stays here (over the real sshd, a second local user)."""

from __future__ import annotations

import asyncio
import os
import shlex
from pathlib import Path
from typing import Any

import pytest

from melgui.host.remote_session import RemoteSession
from melgui.remote.connect import HOST_COMMAND_ENV
from melgui.ui.panes.agent_pane import AgentPane
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.window import relay_settings, type_prompt, wait_until
from tests.remote.fixtures import Remote, url
from tests.ui.remote.conftest import loop_there

LIMIT = 120
AUTO = {"run_command": "auto"}  # asked or not, the command runs: the sandbox decides what it may do


def command(outside: str) -> str:
    return f"echo env=$MELGUI_HOST_ENV; touch made-inside; touch {outside}"


def result_of(request: Any) -> str:
    return "".join(str(m.get("content")) for m in request.messages if m.get("role") == "tool")


def test_a_loop_there_main_conversation_runs_its_commands_in_the_hosts_sandbox(
    scripted_relay: ScriptedRelay,
    remote: Remote,
    remote_window: Any,
    qloop: asyncio.AbstractEventLoop,
    qtbot: Any,
) -> None:
    folder = remote.folder("sandbox-there")
    outside = remote.server.home / "outside-the-sandbox"
    outside.unlink(missing_ok=True)
    run = tool_call("run_command", {"command": command(str(outside))}, id="c1")
    scripted_relay.script([tool_calls(run)], [text("Ran it."), done()])
    hosts = loop_there(remote, folder, sandbox=True, env={"MELGUI_HOST_ENV": "set-for-build"})
    window = remote_window(
        url(remote, folder), relay_settings(scripted_relay, hosts=hosts, approval_modes=AUTO)
    )

    async def scenario() -> None:
        await wait_until(
            lambda: isinstance(window.session, RemoteSession) and window.session.session_id, LIMIT
        )
        type_prompt(qtbot, window, "run it")
        await wait_until(lambda: len(scripted_relay.legs_received) == 2, LIMIT)

    qloop.run_until_complete(asyncio.wait_for(scenario(), 180))
    said = result_of(scripted_relay.legs_received[1])
    assert "env=set-for-build" in said  # the host's env
    assert "sandboxed (bubblewrap)" in said, said
    assert (folder / "made-inside").exists()  # the folder there is writable
    assert not outside.exists()  # the rest of that machine is not


def test_a_loop_there_worker_whose_machine_has_no_sandbox_is_told_and_runs_no_command(
    scripted_relay: ScriptedRelay,
    remote: Remote,
    remote_window: Any,
    qloop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The host there cannot make the sandbox (no bubblewrap on its PATH): the worker's
    chat says so, and its command is refused, not run unsandboxed, as a local one is."""
    folder = remote.folder("sandbox-missing-there")
    outside = remote.server.home / "outside-no-sandbox"
    outside.unlink(missing_ok=True)
    tools = remote.folder("no-bwrap-bin")  # that machine's programs, bubblewrap left out
    for program in Path("/usr/bin").iterdir():
        if program.name != "bwrap":
            (tools / program.name).symlink_to(program)
    runtime = remote.folder("no-bwrap-runtime")  # a host of this test's own
    os.chmod(runtime, 0o700)
    environment, *host = remote.host_argv
    assert environment == "env"
    argv = ["env", "-u", "XDG_RUNTIME_DIR", f"TMPDIR={runtime}", f"PATH={tools}", *host]
    monkeypatch.setenv(HOST_COMMAND_ENV, shlex.join(argv))
    run = tool_call("run_command", {"command": command(str(outside))}, id="c1")
    scripted_relay.script([tool_calls(run)], [text("Tried."), done()])
    hosts = loop_there(remote, folder, sandbox=True)
    window = remote_window(
        url(remote, folder), relay_settings(scripted_relay, hosts=hosts, approval_modes=AUTO)
    )

    async def scenario() -> AgentPane:
        await wait_until(
            lambda: isinstance(window.session, RemoteSession) and window.session.session_id, LIMIT
        )
        window.pane_manager.spawn_agent("run it", None, "right")
        pane = next(p for _, p in window.pane_manager.panes() if isinstance(p, AgentPane))
        await wait_until(lambda: "Tried." in pane.chat.transcript.toPlainText(), LIMIT)
        return pane

    pane = qloop.run_until_complete(asyncio.wait_for(scenario(), 180))
    assert isinstance(pane.session, RemoteSession)  # its loop runs there
    said = result_of(scripted_relay.legs_received[1])
    assert "The sandbox is on but cannot be used: bubblewrap (bwrap) is not installed" in said
    assert "a remote host's `sandbox` option" in said  # where it is set, for a host's
    assert not (folder / "made-inside").exists() and not outside.exists()  # nothing ran
    shown = pane.chat.transcript.toPlainText()
    assert "Commands were to run in the sandbox on" in shown
    assert "bubblewrap (bwrap) is not installed" in shown
