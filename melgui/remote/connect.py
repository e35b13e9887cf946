"""What `melgui exec --folder ssh://…` (or `--via COMMAND --folder /abs/path`) needs: the
target, melgui's host there (installed from wheels uploaded over the same connection when
it is missing or another version), and an open link whose state is said in plain words.

    target = target_for("ssh://build/srv/p", via=None)
    link = await open_link(target, say=print, ask=dialog)   # raises LinkError, saying why

`ask` answers ssh's questions (an unknown host key, a passphrase): the window's dialog,
or `decline` where nobody can answer. None: no askpass, so ssh asks on the terminal
itself when there is one (exec run from a terminal).

    catalog, options = await mcp_there(link, "/srv/p", entries, say=print)

starts the person's MCP servers there (exec's: the user's file and `--mcp-config`),
saying each one that did not start.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from typing import Any

from melgui.core.config.trust import FolderTrust
from melgui.core.protocol.catalog import ToolCatalog
from melgui.remote.askpass import Ask, Askpass, Question, ssh_refusal
from melgui.remote.install import InstallError, ensure_installed_on
from melgui.remote.link import Link, LinkError
from melgui.remote.remote_mcp import (
    failures,
    offer,
    project_file_there,
    project_key,
    start_there,
)
from melgui.remote.target import Target
from melgui.remote.target import target_for as target_for  # its home before; exec reads it there
from melgui.tools.mcp.trust import TrustStore

# The argv (one shell-quoted line) that starts melgui's host bridge on the target, when
# melgui there is not `python3 -m melgui` (the offline install names its own).
HOST_COMMAND_ENV = "MELGUI_REMOTE_HOST_COMMAND"


def given_host_argv(environ: dict[str, str] | None = None) -> list[str] | None:
    """The host argv the environment names (MELGUI_REMOTE_HOST_COMMAND), or None."""
    given = (environ if environ is not None else os.environ).get(HOST_COMMAND_ENV, "").strip()
    return [*shlex.split(given), "--bridge"] if given else None


async def installed_host_argv(
    target: Target, say: Callable[[str], None], askpass: Askpass | None
) -> list[str]:
    """melgui's host bridge on the target, installed there first when missing."""
    env = askpass.env() if askpass is not None else None
    installed = await ensure_installed_on(target, say=say, env=env)
    return [*installed.melgui_argv, "host", "--bridge"]


def folder_key(target: Target) -> str:
    """How the history names a remote folder: its URL (or the command and the path)."""
    url = getattr(target, "url", None)
    return str(url) if url else f"{target.label}:{target.path}"


async def open_link(
    target: Target,
    say: Callable[[str], None],
    host: list[str] | None = None,
    *,
    ask: Ask | None = None,
) -> Link:
    """The link, open; its later states (reconnecting, lost) go to `say`. Raises
    LinkError saying why it could not be made (an install that failed included)."""
    askpass = await Askpass(ask).start() if ask is not None else None
    try:
        argv = host or given_host_argv()
        if argv is None:
            try:
                argv = await installed_host_argv(target, say, askpass)
            except InstallError as exc:
                asked = askpass.asked if askpass is not None else []
                raise LinkError(refusal_or(str(exc), target, asked)) from None
        link = Link(target, argv, askpass=askpass)
        await link.open()
    except BaseException:
        if askpass is not None:
            await askpass.aclose()
        raise
    link.on_state = lambda state: say(_words(target, state))
    return link


def refusal_or(text: str, target: Target, asked: list[Question]) -> str:
    """ssh's refusal in plain words when a question or a host key was why, else `text`."""
    host = str(getattr(target, "host", target.label))
    return ssh_refusal(target.label, host, text.splitlines(), asked) or text


def _words(target: Target, state: str) -> str:
    if state == "connected":
        return f"reconnected to {target.label}"
    if state == "lost":
        return f"the connection to {target.label} is lost"
    return state


async def mcp_there(
    link: Link,
    folder: str,
    entries: dict[str, Any],
    say: Callable[[str], None],
    project: str | None = None,
) -> tuple[ToolCatalog, dict[str, Any]]:
    """Start the servers of `entries` in the host there; returns the catalog of their
    tools and the options the calls carry to reach them. One that did not start is said.
    `project`: the folder's key (its URL): its own `.melgui/mcp.json` there starts too
    when the person trusted it in the window, as it is; else that is said."""
    options: dict[str, Any] = {"mcp_servers": entries} if entries else {}
    if project is not None and FolderTrust().is_trusted(project):
        options["diagnostics"] = True  # its language servers there, as the window's
    found = await project_file_there(link, folder, say) if project is not None else None
    if found is not None and project is not None:
        key = project_key(project)
        if TrustStore().is_trusted_as(key, str(found["digest"])):
            options["project_mcp"] = str(found["digest"])
        else:
            names = ", ".join(found.get("names") or []) or "its servers"
            say(f"MCP: {key} lists servers that did not start ({names}): it is not trusted; "
                f"open the folder in the window (melgui {project}) to trust it")  # fmt: skip
    catalog = ToolCatalog()
    servers = await start_there(link, folder, options)
    offer(catalog, servers)
    for line in failures(servers, link.target.label):
        say(line)
    return catalog, options
