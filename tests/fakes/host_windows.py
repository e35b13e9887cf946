"""Real windows as views of a real `melgui host` process (the `host_windows` fixture of
tests/ui/conftest.py), the hosts a window starts after its first one ends (`hosts`), and
what the host-window tests open in such a window: an ACP agent pane, a worker in a
worktree of its own, the folder's MCP server.

    window, view = host_windows.open()  # shown, attached: the main conversation runs there
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from pathlib import Path
from typing import Any, NamedTuple

from melgui.core.config.settings import Settings
from melgui.core.terminal.panes import PaneInfo
from melgui.host.client import HostClient
from melgui.host.remote_session import RemoteSession
from melgui.ui.panes.acp_pane import AcpPane
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.runtime.agent_in_host import RemoteAgentSession
from melgui.ui.window.host_view.host_end import HostStarter
from melgui.ui.window.host_view.view import HostView, attach_host
from melgui.ui.window.main_window import MainWindow
from tests.fakes.acp_host import scripted_agent
from tests.fakes.host_process import HostProcess
from tests.fakes.mcp import fake_entry, use_servers
from tests.fakes.scripted_server import ScriptedRelay
from tests.fakes.window import Runner, Windows, relay_settings, wait_until


class HostWindows(Windows):
    """Real windows on the test's project, on its scripted relay, each a view of `host`.
    The fixture closes them (their panes, then each window, as quitting does) before the
    host stops: a window whose host ends while it is open starts a new one."""

    def __init__(
        self,
        host: HostProcess,
        relay: ScriptedRelay,
        project: Path,
        run: Runner[Any],
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        super().__init__(project, run, loop)
        self.host, self.relay = host, relay

    def make(self, settings: Settings | None = None, api_key: str | None = "test-key") -> Any:
        """A window, shown and not yet a view of the host (the relay's settings unless
        `settings`). Typed Any, as the window and view these tests had from `make_window`
        and `run`: they reach into their parts, narrowed by what they assert."""
        return super().make(settings or relay_settings(self.relay), api_key)

    def attach(
        self, window: MainWindow, name: str = "window", start: HostStarter | None = None
    ) -> Any:
        """`window` attached to the host through a client called `name` (its main
        conversation runs there, and what the host kept running comes back), attached
        when this returns; `start`: how a new host starts when this one ends."""
        return self.run(attach_host(window, self.run(self.host.client(name)), start))

    def open(self, name: str = "window") -> tuple[Any, Any]:
        """A new window, attached (`attach`)."""
        window = self.make()
        return window, self.attach(window, name)

    def view_only(self, window: MainWindow) -> HostView:
        """A view of the host for `window`'s worker panes, not attached: the main
        conversation stays in the window and nothing comes back."""
        view = HostView(window, self.run(self.host.client("window")))
        window.host_view = view
        return view


def open_acp_pane(
    windows: HostWindows, size: tuple[int, int] | None = None
) -> tuple[Any, Any, AcpPane]:
    """A window (resized to `size`) attached to the host, with an ACP agent pane open on
    the right: the scripted agent (tests/fakes/acp_scripted_agent.py), run in the host,
    ready (its commands heard)."""
    window = windows.make()
    if size is not None:
        window.resize(*size)
    view = windows.attach(window)
    info = window.pane_manager.open_agent(scripted_agent(), "right")
    pane = window.pane_manager.pane(info.id)
    assert isinstance(pane, AcpPane) and isinstance(pane.acp, RemoteAgentSession)
    windows.run(wait_until(lambda: bool(pane.agent.state.commands), 30))
    return window, view, pane


def open_with_fake_server(windows: HostWindows, **fields: Any) -> tuple[Any, Any]:
    """A window whose user MCP file lists the fake server (tests/fakes/mcp.py) as "fake",
    `fields` in its entry, attached, once the server is ready in the host (the window's
    MCP panel says so). It waits for the host's servers before it attaches, as
    `melgui FOLDER` does before the loop runs, so it starts none of its own."""
    window = windows.make()
    window.mcp.wait_for_host()
    use_servers({"fake": fake_entry(**fields)})
    view = windows.attach(window)

    def ready() -> bool:
        states = [item.text(1) for item in window.mcp_panel.server_items()]
        return bool(states) and states[0].startswith("ready, ")

    windows.run(wait_until(ready, 30))
    return window, view


class Worker(NamedTuple):
    info: PaneInfo
    worktree: Path
    pane: AgentPane
    session: RemoteSession


async def worker_noted(window: MainWindow) -> Worker:
    """A worker in a worktree of its own, run in the host: its one write approved in the
    window, its answer "Noted." and its turn done."""
    info, prepared = await window.pane_manager.start_worker("Note", None, own_worktree=True)
    assert prepared is not None
    pane = window.pane_manager.pane(info.id)
    assert isinstance(pane, AgentPane) and isinstance(pane.session, RemoteSession)
    await wait_until(lambda: window.approvals.first() is not None, timeout=30)
    request = window.approvals.first()
    assert request is not None
    request.approve()
    await wait_until(lambda: pane.latest_reply() == "Noted." and not pane.bridge.busy, 30)
    return Worker(info, prepared.folder, pane, pane.session)


class Hosts:
    """The first host (a HostProcess), and the pids of the hosts the window started after
    it (ended when the test ends)."""

    def __init__(self, first: HostProcess) -> None:
        assert first.process is not None
        self.first = first
        self.first_pid = first.process.pid
        self.started: list[int] = []

    def note(self, client: HostClient) -> int:
        pid = int(client.info["pid"])
        if pid != self.first_pid and pid not in self.started:
            self.started.append(pid)
        return pid

    def end(self) -> None:
        for pid in self.started:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + 30
            while alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
            reap(pid)


def alive(pid: int) -> bool:
    """Runs (a zombie, killed and not yet reaped, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    while alive(pid):
        time.sleep(0.02)
    reap(pid)
