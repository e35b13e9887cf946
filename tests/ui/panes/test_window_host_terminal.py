"""The real window as a view of a real `melgui host` process (--with-host): its terminal
panes' programs run in the host. Closing the window with "Keep running in the background"
leaves a shell and what it runs to the host; the next window shows the pane again with its
screen, and keys typed there reach it. A host killed with -9 ends its programs, and the
pane says so in plain words."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QMessageBox, QPushButton

from melgui.core.terminal.pty_session import process_alive
from melgui.host.client import HostClient
from melgui.host.main import describe_status
from melgui.remote.remote_pty import RemotePty
from melgui.ui.panes.terminal.pane import TerminalPane
from tests.fakes.host_process import HostProcess
from tests.fakes.host_windows import HostWindows
from tests.fakes.window import keep_running_asked, wait_until


@pytest.fixture
def host_environ() -> dict[str, str]:
    return {"SHELL": "/bin/sh"}  # the login shell there: quick to start, plain prompt


def terminal_pane(window: Any) -> TerminalPane:
    panes = [p for _, p in window.pane_manager.panes() if isinstance(p, TerminalPane)]
    assert len(panes) == 1
    return panes[0]


def screen(pane: TerminalPane) -> str:
    return pane.emulator.text(1000)


def ancestors(pid: int) -> list[int]:
    """`pid`'s parents, up to init, from /proc."""
    found = []
    while pid > 1:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
        pid = int(stat[stat.rfind(b")") + 2 :].split()[1])
        found.append(pid)
    return found


def shots(name: str) -> Path | None:
    folder = os.environ.get("MELGUI_SHOTS_DIR")
    return Path(folder) / name if folder else None


def test_a_shell_pane_runs_in_the_host_keeps_running_and_comes_back(
    host: HostProcess, host_windows: HostWindows, run: Any, qtbot: Any
) -> None:
    window, view = host_windows.open()
    assert window.pane_manager.host is view.terminals

    async def a_shell_with_a_job() -> TerminalPane:
        await window.pane_manager.start_terminal(None)
        pane = terminal_pane(window)
        assert isinstance(pane.pty, RemotePty)
        await wait_until(lambda: "$" in screen(pane) or "#" in screen(pane), timeout=30)
        pane.write(b"echo first-$((6*7))\r")
        await wait_until(lambda: "first-42" in screen(pane), timeout=30)
        pane.write(b"sleep 600\r")  # a job: closing the window now would end it
        await wait_until(lambda: window.pane_manager.losses(), timeout=30)
        return pane

    pane = run(a_shell_with_a_job())
    assert isinstance(pane.pty, RemotePty)
    shell, term_id = pane.pty.host_pid, pane.pty.term_id
    assert host.process is not None and host.process.pid in ancestors(shell)
    assert shell not in window.pane_manager.all_pids()  # nothing of it runs in the window
    box, keep = keep_running_asked(window)  # asks: the shell runs a job
    assert "sleep" not in box.informativeText()  # the shell's job, not its command line
    assert "still running in the melgui host" in box.informativeText()
    assert "terminals in the melgui host can keep running" in box.text()
    if (shot := shots("keep-running-terminal.png")) is not None:
        box.grab().save(str(shot))
    keep.click()
    run(wait_until(lambda: not window.isVisible(), timeout=10))
    run(window.pane_manager.aclose())
    run(view.client.aclose())

    async def listed() -> tuple[list[dict[str, Any]], str]:
        client = await host.client("a look")
        try:
            answer = await client.call("term/list", folder=str(window.project_folder()))
            return list(answer["terminals"]), describe_status(await client.call("host/status"))
        finally:
            await client.aclose()

    kept, status = run(listed())
    assert [(t["term"], t["exit_code"], t["views"]) for t in kept] == [(term_id, None, 0)]
    assert f"terminal {term_id}  {os.path.realpath(window.project_folder())}  sh  [running]" in (
        status
    )  # melgui --list-running says it
    assert process_alive(shell)

    async def a_remote_views_terminal() -> None:  # the bridge's views share the host
        client = await host.client("a remote folder's view")
        try:
            await client.call("term/open", folder=window.project_folder(), command="sleep 60")
        finally:
            await client.aclose()

    run(a_remote_views_terminal())

    # The next window shows the pane again, its screen from what the host kept (and not
    # the remote view's terminal, though it is of the same folder and no view hears it).
    again = host_windows.make()
    started: list[HostProcess] = []

    async def a_new_host() -> HostClient:  # when this one ends: in the same runtime folder
        started.append(HostProcess(host.runtime).start())
        return await started[-1].client("window again")

    view = host_windows.attach(again, "window again", a_new_host)
    back = terminal_pane(again)
    assert isinstance(back.pty, RemotePty) and back.pty.term_id == term_id
    run(wait_until(lambda: "first-42" in screen(back), timeout=30))
    assert "1 terminal(s) that kept running are back" in again.status.currentMessage()
    back.write(b"\x03")  # the sleep, stopped from the new window
    back.write(b"echo second-$((7*7))\r")
    run(wait_until(lambda: "second-49" in screen(back), timeout=30))
    assert screen(back).count("first-42") == 1  # nothing shown twice
    if (shot := shots("terminal-back.png")) is not None:
        run(asyncio.sleep(0.3))
        again.grab().save(str(shot))

    # The host killed: its programs end with it, and the pane says so.
    host.kill()
    run(wait_until(lambda: back.state.ended, timeout=30))
    run(wait_until(lambda: "program ended with it" in screen(back), timeout=10))
    assert "melgui host stopped" in screen(back)
    run(wait_until(lambda: not process_alive(shell), timeout=10))
    if (shot := shots("terminal-host-killed.png")) is not None:
        run(asyncio.sleep(0.3))
        again.grab().save(str(shot))

    # The window goes on with a new host, and its next terminal runs there.
    try:
        run(wait_until(lambda: view.restarts == 1, timeout=60))
        info = run(again.pane_manager.start_terminal("echo in-the-new-host-$((2+3)); exec cat"))
        fresh = again.pane_manager.pane(info.id)
        assert isinstance(fresh, TerminalPane) and isinstance(fresh.pty, RemotePty)
        run(wait_until(lambda: "in-the-new-host-5" in screen(fresh), timeout=30))
        assert started[0].process is not None
        assert started[0].process.pid in ancestors(fresh.pty.host_pid)
    finally:
        run(again.pane_manager.aclose())  # closing: the host's end below starts no new one
        for process in started:
            process.stop()


def test_quit_anyway_ends_the_windows_terminals_in_the_host(
    host_windows: HostWindows, run: Any
) -> None:
    """Quit anyway: the program ends with the window, as a local one does, and the host
    keeps nothing of it."""
    window, view = host_windows.open()
    run(window.pane_manager.start_terminal("echo up; exec cat"))
    pane = terminal_pane(window)
    assert isinstance(pane.pty, RemotePty)
    run(wait_until(lambda: "up" in screen(pane), timeout=30))
    program = pane.pty.host_pid
    window.close()
    box = window.guard.dialog  # a command still running: asked
    assert isinstance(box, QMessageBox)
    quit_anyway = next(b for b in box.findChildren(QPushButton) if b.text() == "Quit anyway")
    quit_anyway.click()
    run(wait_until(lambda: not window.isVisible(), timeout=10))
    run(window.pane_manager.aclose())

    async def listed() -> list[dict[str, Any]]:
        while True:
            answer = await view.client.call("term/list")
            if not answer["terminals"]:
                return list(answer["terminals"])
            await asyncio.sleep(0.05)

    assert run(listed()) == []
    run(wait_until(lambda: not process_alive(program), timeout=10))
