"""MCP servers that run on a remote machine, seen from here: which of the person's
configured servers go there, starting them through the link, and their tools as the
definitions a session whose tools run there offers its model.

    entries = configured_entries(["db"], say=print)           # from the person's mcp.json
    options = {**place.options, "mcp_servers": entries}
    servers = await start_there(link, "/srv/p", options)      # ready or failed, each
    offer(catalog, servers)                                   # mcp__db__query, … join it

The servers start in melgui's host there (melgui/desk/mcp/for_loops_elsewhere.py) with their cwd in
the folder there; their calls are tool calls like the others (`tools/run` with the
model-facing name and the same options), so each has its one result across drops.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from melgui.core.config.settings import config_dir
from melgui.core.protocol.catalog import ToolCatalog, ToolDef
from melgui.desk.mcp.for_loops_elsewhere import MCP_SERVERS, tool_from_json
from melgui.remote.link import Link, LinkError
from melgui.tools.mcp.config import PROJECT_FILE, ConfigError, read_entries, user_path
from melgui.tools.mcp.manager import STATE_FILE


@dataclass(frozen=True, slots=True)
class RemoteServer:
    name: str
    status: str  # "ready", "failed", … (melgui/tools/mcp/server.py's)
    line: str  # its state in a few words: "ready, 3 tools", "failed: command not found: x"
    tools: tuple[ToolDef, ...] = ()
    describe: str = ""  # its command or URL there


def configured_entries(
    names: list[str] | None,
    *,
    extra: Path | None = None,
    user: bool = True,
    say: Callable[[str], None],
) -> dict[str, Any]:
    """The `mcpServers` entries of the person's configuration that start there (`names`;
    None: every enabled one; `extra`: a file of more), with the person's toggles
    applied; what cannot be used is said in one line each ("MCP: …")."""
    entries: dict[str, Any] = {}
    sources = ([user_path()] if user else []) + ([extra] if extra is not None else [])
    for path in sources:
        try:
            entries.update(read_entries(path))
        except ConfigError as exc:
            say(f"MCP: {exc}")
    toggles = _toggles()
    wanted = list(entries) if names is None else names
    chosen: dict[str, Any] = {}
    for name in wanted:
        entry = entries.get(name)
        if not isinstance(entry, dict):
            say(f"MCP: no server named {name!r} in {user_path()}")
            continue
        found = toggles.get(name)
        toggle: dict[str, Any] = found if isinstance(found, dict) else {}
        if bool(toggle.get("disabled", entry.get("disabled", False))):
            continue
        off = set(entry.get("disabledTools") or []) | set(toggle.get("disabled_tools") or [])
        chosen[name] = {**entry, "disabledTools": sorted(off)} if off else entry
    return chosen


def _toggles() -> dict[str, Any]:
    try:
        data = json.loads((config_dir() / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


async def start_there(link: Link, folder: str, options: dict[str, Any]) -> list[RemoteServer]:
    """Start the servers `options` names in the host there and wait until each is ready
    or failed; a link that fails meanwhile makes every server failed, saying why."""
    if not options.get("mcp_servers") and not options.get("project_mcp"):
        return []
    call_id = f"mcp-{uuid.uuid4().hex[:12]}"
    outcome = await link.run_call(call_id, folder, MCP_SERVERS, {}, options)
    if outcome.get("status") == "error":
        why = str(outcome.get("content") or "the host did not answer")
        names = [*options["mcp_servers"]] if options.get("mcp_servers") else []
        return [RemoteServer(name, "failed", f"failed: {why}") for name in names]
    try:
        described = json.loads(str(outcome.get("content") or "[]"))
    except ValueError:
        described = []
    return servers_from_json(described)


def servers_from_json(described: list[dict[str, Any]]) -> list[RemoteServer]:
    """The servers as the host describes them (`mcp/servers`' result, `mcp/changed`)."""
    return [
        RemoteServer(
            str(server["name"]),
            str(server["status"]),
            str(server["line"]),
            tuple(tool_from_json(tool) for tool in server.get("tools") or ()),
            str(server.get("describe") or ""),
        )
        for server in described
    ]


def project_key(folder_key: str) -> str:
    """What the trust of a remote folder's own `.melgui/mcp.json` is kept under here: its
    URL (`ssh://host/p/.melgui/mcp.json`; a container's: the command and the path)."""
    return folder_key.rstrip("/") + "/" + PROJECT_FILE


async def project_file_there(
    link: Link, folder: str, say: Callable[[str], None]
) -> dict[str, Any] | None:
    """The folder's own `.melgui/mcp.json` there (`{path, digest, names}`), or None: it
    has none, or it cannot be read (said), or the host could not be asked."""
    try:
        found = await link.about_folder("mcp/project", folder)
    except LinkError:
        return None  # the link dropped: the person's servers still start
    if not found.get("path"):
        return None
    if found.get("problem"):
        say(f"MCP: {found['problem']}")
        return None
    return found


def offer(catalog: ToolCatalog, servers: list[RemoteServer]) -> list[str]:
    """Put the ready servers' tools into `catalog` (replacing what they offered before);
    returns their names."""
    names = []
    for server in servers:
        catalog.remove_origin(f"mcp:{server.name}")
        for tool in server.tools:
            if catalog.get(tool.name) is None:
                catalog.add(tool)
                names.append(tool.name)
    return names


def failures(servers: list[RemoteServer], label: str) -> list[str]:
    """One line per server that did not start there, in plain words."""
    return [
        f"MCP server {server.name} on {label}: {server.line}"
        for server in servers
        if server.status != "ready"
    ]
