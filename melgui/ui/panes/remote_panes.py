"""Panes whose work runs on another machine: a worker on a configured host (spawn_agent or
New worker… with a task that begins `@NAME `), and terminals there (a remote folder's, or
a host's). The loop of a remote worker runs here; its tools run there over the host's link.

    manager.remote = places                   # RemotePlaces: the window's hosts
    info = await start_remote_worker(manager, "build", "run the tests", None, "tab")
    info = await open_remote_terminal(manager, "build", None, "right")
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from melgui.core.terminal.panes import PaneInfo
from melgui.remote.hosts import Place
from melgui.remote.link import LinkError
from melgui.ui.panes.pane_losses import short
from melgui.ui.panes.terminal.pane import TerminalPane

if TYPE_CHECKING:
    from PySide6.QtWidgets import QStatusBar

    from melgui.ui.panes.manager import PaneManager, WorkerFactory
    from melgui.ui.runtime.aio import TaskKeeper

COLUMNS, ROWS = 100, 30  # the first size; the pane's view sends its own once shown


class RemotePlaces(Protocol):
    """The machines panes can run on (melgui/ui/remote's hosts)."""

    def names(self) -> list[str]: ...

    def describe(self) -> str:
        """For list_panes: the hosts and how to start a worker on one."""
        ...

    async def place(self, name: str) -> Place:
        """The host's link, folder and settings (raises LinkError, saying why)."""
        ...

    def worker_factory(self, place: Place) -> WorkerFactory: ...


def host_word(task: str, names: list[str]) -> tuple[str | None, str]:
    """A task that begins `@NAME ` (a configured host) runs there: (NAME, the rest)."""
    word, _, rest = task.strip().partition(" ")
    if word.startswith("@") and word[1:] in names and rest.strip():
        return word[1:], rest.strip()
    return None, task


async def start_remote_worker(
    manager: PaneManager, host: str, task: str, model: str | None, layout: object
) -> PaneInfo:
    from melgui.ui.panes.manager import PaneError

    places = manager.remote
    if places is None:
        raise PaneError("No other machines are configured (Settings → hosts).")
    info = manager.reserve_worker(f"worker {{}} @{host}: {short(task, 28)}", where=host)
    try:
        place = await places.place(host)
    except LinkError as exc:
        manager.registry.remove(info.id)
        raise PaneError(f"Could not reach {host}: {exc}") from exc
    if manager.closed:
        manager.registry.remove(info.id)
        raise PaneError("The window is closing; no new panes.")
    return manager.open_worker(info, task, model, layout, None, places.worker_factory(place))


async def open_remote_terminal(
    manager: PaneManager, host: str, command: str | None, layout: object
) -> PaneInfo:
    """A terminal whose program runs on `host`, in its folder (the login shell there when
    `command` is None); it runs on there across a drop of the link."""
    from melgui.ui.panes.manager import PaneError

    places = manager.remote
    if places is None:
        raise PaneError("No other machines are configured (Settings → hosts).")
    try:
        place = await places.place(host)
        pty = await place.link.open_terminal(place.folder, command, COLUMNS, ROWS, place.env)
    except LinkError as exc:
        raise PaneError(f"Could not open a terminal on {host}: {exc}") from exc
    title = f"{short(command) if command else pty.title} @{host}"
    pane = TerminalPane(command, place.folder, columns=COLUMNS, rows=ROWS, pty=pty)
    return manager.install_terminal(pane, title, layout, where=host)


class _Window(Protocol):
    """What opening a terminal from the menu uses of the window (MainWindow is one)."""

    pane_manager: PaneManager

    @property
    def status(self) -> QStatusBar: ...

    @property
    def tasks(self) -> TaskKeeper: ...


def open_remote_terminal_soon(window: _Window, command: str | None) -> None:
    """Panes → New terminal in a remote folder: opened there in the background (the link
    may be reconnecting); a failure goes to the status bar."""
    manager = window.pane_manager

    async def opening() -> None:
        from melgui.ui.panes.manager import PaneError

        assert manager.home is not None
        try:
            info = await open_remote_terminal(manager, manager.home, command, "tab")
        except PaneError as exc:
            window.status.showMessage(f"Cannot open a terminal: {exc}", 15000)
            return
        manager.area.focus_pane(info.id)

    window.tasks.spawn(opening(), what="opening a terminal there")
