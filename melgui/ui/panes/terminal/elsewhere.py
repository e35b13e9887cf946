"""Terminal panes whose program runs in a melgui host: a remote folder's (over its link),
or the user's own, which a window is a view of (over its socket). The program
and its pty are the host's; the pane reads them through a RemotePty as it reads a local
pty, with the same reader, emulator and keys.

    pane = await in_host(view.terminals, folder, None, env)   # raises TerminalUnavailable
    pane = await on_place(place, "make test")                   # raises LinkError
"""

from __future__ import annotations

import os

from melgui.remote.hosts import Place
from melgui.remote.remote_pty import HostTerminals, RemotePty
from melgui.ui.panes.terminal.pane import TerminalPane

FIRST_SIZE = (100, 30)  # columns, rows: until the pane is shown and sends its own


async def in_host(
    host: HostTerminals,
    folder: str | os.PathLike[str],
    command: str | None,
    env: dict[str, str] | None,
) -> TerminalPane:
    """`command` (the login shell there when None) in `folder`, run by the host."""
    return pane_of(await host.open(os.fspath(folder), command, *FIRST_SIZE, env), command)


async def on_place(place: Place, command: str | None) -> TerminalPane:
    """`command` in a remote folder, on its host there."""
    pty = await place.link.open_terminal(place.folder, command, *FIRST_SIZE, place.env)
    return pane_of(pty, command, place.folder)


def pane_of(pty: RemotePty, command: str | None, folder: str | None = None) -> TerminalPane:
    """The pane of a program the host runs (opened now, or kept while no view showed it)."""
    return TerminalPane(command, folder or ".", columns=pty.columns, rows=pty.rows, pty=pty)


def program(pane: TerminalPane) -> str:
    """What the pane runs, as the host names it (the shell's name, the command)."""
    return pane.pty.title if isinstance(pane.pty, RemotePty) else pane.command or "terminal"
