"""What `melgui exec --folder ssh://…` (or `--via COMMAND --folder /abs/path`) needs: the
target, the argv that starts melgui's host there, and an open link whose state is said in
plain words.

    target = target_for("ssh://build/srv/p", via=None)
    link = await open_link(target, say=print)        # raises LinkError, saying why
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable

from melgui.remote.link import Link
from melgui.remote.target import Target, command_target, host_argv, is_remote_folder, parse_folder

# The argv (one shell-quoted line) that starts melgui's host bridge on the target, when
# melgui there is not `python3 -m melgui` (the offline install names its own).
HOST_COMMAND_ENV = "MELGUI_REMOTE_HOST_COMMAND"


def target_for(folder: str, via: str | None) -> Target | None:
    """The remote target of a folder argument; None for a folder on this machine."""
    if via:
        return command_target(via, folder)
    if is_remote_folder(folder):
        return parse_folder(folder)
    return None


def remote_host_argv(environ: dict[str, str] | None = None) -> list[str]:
    given = (environ if environ is not None else os.environ).get(HOST_COMMAND_ENV, "").strip()
    if given:
        return [*shlex.split(given), "--bridge"]
    return host_argv()


def folder_key(target: Target) -> str:
    """How the history names a remote folder: its URL (or the command and the path)."""
    url = getattr(target, "url", None)
    return str(url) if url else f"{target.label}:{target.path}"


async def open_link(
    target: Target, say: Callable[[str], None], host: list[str] | None = None
) -> Link:
    """The link, open; its later states (reconnecting, lost) go to `say`."""
    link = Link(target, host or remote_host_argv())
    await link.open()
    link.on_state = lambda state: say(_words(target, state))
    return link


def _words(target: Target, state: str) -> str:
    if state == "connected":
        return f"reconnected to {target.label}"
    if state == "lost":
        return f"the connection to {target.label} is lost"
    return state
