"""MCP servers that run on the remote machine, in melgui's host there, through a local
command that behaves like a container's exec (tests/remote/local_target.py): the server
process is the host's child, in the folder there, with that machine's environment; its
tools come back as definitions the model is offered; a call's one result arrives across
a killed link; a dead server answers that it is not running; one that cannot start is
said in words."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import pwd
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from melgui.core.config.settings import config_dir
from melgui.core.protocol.catalog import CatalogThere, ToolCatalog, ToolDef
from melgui.remote.connect import HOST_COMMAND_ENV, folder_key
from melgui.remote.remote_mcp import (
    RemoteServer,
    configured_entries,
    failures,
    project_key,
    start_there,
)
from melgui.tools.mcp.config import user_path
from melgui.tools.mcp.manager import STATE_FILE
from melgui.tools.mcp.trust import TrustStore
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.exec import json_lines, melgui_exec
from tests.fakes.mcp import fake_entry
from tests.remote.fixtures import box_link, exec_in_box, make_link, signal_mid_call
from tests.remote.local_target import box_host, box_target, host_pid


@pytest.fixture
def box(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def options(**entries: object) -> dict[str, object]:
    return {"env": {"MCP_FAKE_MARK": "from the host's settings"}, "mcp_servers": entries}


def ready(servers: list[RemoteServer], name: str) -> RemoteServer:
    server = next(s for s in servers if s.name == name)
    assert server.status == "ready", server.line
    return server


async def test_a_server_runs_in_the_host_there_and_a_call_returns_its_result(
    tmp_path: Path, box: Path
) -> None:
    # ${XDG_RUNTIME_DIR} is resolved there: the box's command set it, this process did not.
    there = options(
        box=fake_entry(env={"MCP_FAKE_MARK": "${XDG_RUNTIME_DIR}"}, trusted=True),
        plain=fake_entry(),
    )
    runtime = tmp_path / "run"
    with box_host(runtime):
        link = make_link(tmp_path, box)
        await link.open()
        try:
            servers = await start_there(link, str(box), there)
            where = await link.run_call("v/1", str(box), "mcp__box__whereami", {}, there)
            plain = await link.run_call("v/2", str(box), "mcp__plain__whereami", {}, there)
            echo = await link.run_call("v/3", str(box), "mcp__box__echo", {"text": "hi"}, there)
            pid = host_pid(runtime)
        finally:
            await link.aclose()
    assert os.environ.get("XDG_RUNTIME_DIR") != str(runtime)
    tools = {tool.name: tool for tool in ready(servers, "box").tools}
    assert tools["mcp__box__echo"].origin == "mcp:box"
    assert tools["mcp__box__echo"].parameters["required"] == ["text"]
    assert tools["mcp__box__echo"].read_only  # a trusted server's readOnlyHint
    assert not tools["mcp__box__fail"].read_only
    plain_tools = {tool.name: tool for tool in ready(servers, "plain").tools}
    assert not plain_tools["mcp__plain__echo"].read_only  # an untrusted server's claim
    user = pwd.getpwuid(os.getuid()).pw_name
    # The server is the host's child there, in the folder there, with its environment.
    assert where["status"] == "ok"
    assert where["content"] == f"ppid={pid} user={user} cwd={box} mark={runtime}"
    assert plain["content"] == f"ppid={pid} user={user} cwd={box} mark=from the host's settings"
    assert (echo["status"], echo["content"]) == ("ok", "hi")


async def test_a_call_ends_once_across_a_killed_link(tmp_path: Path, box: Path) -> None:
    there = options(box=fake_entry())
    async with box_link(tmp_path, box) as link:
        ready(await start_there(link, str(box), there), "box")
        call = link.run_call("v/1", str(box), "mcp__box__tally", {"seconds": 1.5}, there)
        outcome, _pid = await signal_mid_call(link, box / "started", call)
    assert outcome["status"] == "ok" and outcome["content"] == "counted", outcome
    assert link.reconnects >= 1  # the call's one result and one run, whatever the reconnects
    assert (box / "started").read_text() == "s\n"
    assert (box / "counter").read_text() == "x\n"  # it ran once


async def test_a_dead_server_answers_that_it_is_not_running(tmp_path: Path, box: Path) -> None:
    there = options(box=fake_entry())
    async with box_link(tmp_path, box) as link:
        ready(await start_there(link, str(box), there), "box")
        crashed = await link.run_call("v/1", str(box), "mcp__box__crash", {}, there)
        after = await link.run_call("v/2", str(box), "mcp__box__echo", {"text": "x"}, there)
    assert crashed["status"] == "error"
    assert crashed["content"].startswith("The MCP server 'box' closed the connection during crash")
    assert after["status"] == "error"
    assert after["content"].startswith(
        "The MCP server 'box' is not running (failed: the server exited (code 3)"
    ), after["content"]


async def test_a_server_that_cannot_start_there_is_said_in_words(tmp_path: Path, box: Path) -> None:
    there = options(
        broken=fake_entry("--fail-start"),
        missing={"command": "no-such-mcp-server-here"},
        bad={"command": "x", "url": "http://y"},
    )
    async with box_link(tmp_path, box) as link:
        servers = await start_there(link, str(box), there)
    said = failures(servers, link.target.label)
    assert len(said) == 3 and not [s for s in servers if s.tools]
    by_name = {server.name: server.line for server in servers}
    assert by_name["missing"] == "failed: command not found: no-such-mcp-server-here"
    assert by_name["bad"] == (
        "failed: server 'bad': give either command (stdio) or url (HTTP), not both"
    )
    assert by_name["broken"].startswith("failed: ") and "nonexistent.db" in by_name["broken"]
    assert said[0].startswith(f"MCP server {servers[0].name} on {link.target.label}: failed: ")


def test_exec_offers_a_remote_folders_servers_and_keeps_the_approval_rules(
    scripted_relay: ScriptedRelay, tmp_path: Path, box: Path
) -> None:
    runtime = tmp_path / "run"
    config = tmp_path / "servers.json"
    entries = {"box": fake_entry(trusted=True), "broken": fake_entry("--fail-start")}
    config.write_text(json.dumps({"mcpServers": entries}), encoding="utf-8")
    scripted_relay.script(
        [tool_calls(tool_call("mcp__box__whereami", {}, id="m1"),
                    tool_call("mcp__box__fail", {}, id="m2"))],
        [text("Looked."), done()],
    )  # fmt: skip
    via = box_target(runtime, tmp_path / "data", box).label
    with box_host(runtime):
        result = exec_in_box(
            scripted_relay.base_url, tmp_path, box,
            "--mcp-config", str(config), "--approve", "reads", "--json", "look",
        )  # fmt: skip
        pid = host_pid(runtime)
    assert result.returncode == 0, result.stderr
    assert f"melgui: MCP server broken on {via}: failed: " in result.stderr
    first, second = scripted_relay.legs_received
    offered = first.tool_names
    assert "mcp__box__whereami" in offered and "mcp__box__echo" in offered
    assert not [name for name in offered if name.startswith("mcp__broken")]
    results = {e["id"]: e for e in json_lines(result.stdout) if e["kind"] == "tool_result"}
    # A trusted server's readOnlyHint tool runs under --approve reads; the others do not.
    assert (results["m1"]["status"], results["m1"]["server"]) == ("ok", "box")
    assert results["m1"]["content"].startswith(f"ppid={pid} ")
    assert f"cwd={box} " in results["m1"]["content"]
    assert results["m2"]["status"] == "denied"
    assert [m["tool_call_id"] for m in second.messages if m.get("role") == "tool"] == ["m1", "m2"]


def test_a_hosts_servers_are_the_persons_configured_ones_with_their_toggles() -> None:
    user_path().parent.mkdir(parents=True, exist_ok=True)
    entries = {"db": fake_entry(), "off": fake_entry(), "docs": {"url": "http://d/mcp"}}
    user_path().write_text(json.dumps({"mcpServers": entries}), encoding="utf-8")
    toggles = {"off": {"disabled": True}, "db": {"disabled_tools": ["fail"]}}
    (config_dir() / STATE_FILE).write_text(json.dumps(toggles), encoding="utf-8")
    said: list[str] = []
    chosen = configured_entries(["db", "off", "ghost"], say=said.append)
    assert list(chosen) == ["db"] and chosen["db"]["disabledTools"] == ["fail"]
    assert said == [f"MCP: no server named 'ghost' in {user_path()}"]
    assert list(configured_entries(None, say=said.append)) == ["db", "docs"]
    assert configured_entries(None, user=False, say=said.append) == {}


def test_a_session_there_sees_that_machines_servers_and_not_this_ones() -> None:
    here, there = ToolCatalog(), ToolCatalog()
    here.add(ToolDef("mcp__local__x", "local", {"type": "object"}, origin="mcp:local"))
    here.add(ToolDef("agent_tool", "an ACP agent's", {"type": "object"}, origin="acp:a"))
    there.add(ToolDef("mcp__box__y", "there", {"type": "object"}, origin="mcp:box"))
    seen = CatalogThere(there, here)
    assert [tool.name for tool in seen.added()] == ["mcp__box__y", "agent_tool"]
    assert seen.get("mcp__local__x") is None and seen.get("read_file") is not None
    there.remove_origin("mcp:box", "The MCP server 'box' is not running (stopped).")
    assert seen.gone("mcp__box__y").startswith("The MCP server 'box' is not running")
    assert "mcp__box__y" not in [tool.name for tool in seen.for_role("worker")]


async def test_the_folders_own_mcp_file_there_starts_only_as_it_was_trusted(
    tmp_path: Path, box: Path
) -> None:
    project = box / ".melgui" / "mcp.json"
    project.parent.mkdir()
    project.write_text(json.dumps({"mcpServers": {"own": fake_entry()}}), encoding="utf-8")
    async with box_link(tmp_path, box) as link:
        found = await link.about_folder("mcp/project", str(box))
        untrusted = await start_there(link, str(box), options(mine=fake_entry()))
        before = _servers_of(host_pid(tmp_path / "run"))
        trusted = {**options(mine=fake_entry()), "project_mcp": found["digest"]}
        started = await start_there(link, str(box), trusted)
        await _until(lambda: len(_servers_of(host_pid(tmp_path / "run"))) == 2)
        after = _servers_of(host_pid(tmp_path / "run"))
        where = await link.run_call("v/1", str(box), "mcp__own__whereami", {}, trusted)
        project.write_text(project.read_text() + "\n", encoding="utf-8")  # changed since
        changed = await start_there(link, str(box), {**trusted, "env": {"STAGE": "2"}})
        none = await link.about_folder("mcp/project", str(tmp_path))
    assert found["path"] == str(project) and found["names"] == ["own"]
    assert len(found["digest"]) == 64
    assert [s.name for s in untrusted] == ["mine"]  # not trusted: the view sent no digest
    assert ready(started, "own").tools and ready(started, "mine").tools
    assert where["status"] == "ok"
    # The set started before the trust was stopped: the person's server runs once.
    assert len(before) == 1 and len(after) == 2 and not before & after
    assert f"cwd={box} " in where["content"]
    again = next(s for s in changed if s.name == "own")
    assert again.status == "failed" and "changed since it was trusted" in again.line
    assert none == {"path": None}


def test_exec_starts_the_folders_own_file_there_only_once_trusted(
    scripted_relay: ScriptedRelay, tmp_path: Path, box: Path
) -> None:
    runtime = tmp_path / "run"
    project = box / ".melgui" / "mcp.json"
    project.parent.mkdir()
    project.write_text(json.dumps({"mcpServers": {"own": fake_entry()}}), encoding="utf-8")
    target = box_target(runtime, tmp_path / "data", box)
    host = shlex.join([sys.executable, "-m", "melgui", "host"])
    key = project_key(folder_key(target))

    def run() -> tuple[str, list[str]]:
        scripted_relay.script([text("Seen."), done()])
        count = len(scripted_relay.legs_received)
        result = melgui_exec(
            "--url", scripted_relay.base_url, "--via", target.label, "--folder", str(box),
            "--no-mcp", "look", env={"MELIAI_API_KEY": "k", HOST_COMMAND_ENV: host},
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        return result.stderr, scripted_relay.legs_received[count].tool_names

    with box_host(runtime):
        untrusted, offered_before = run()
        TrustStore().trust_as(key, hashlib.sha256(project.read_bytes()).hexdigest())
        trusted, offered_after = run()
    assert f"MCP: {key} lists servers that did not start (own): it is not trusted" in untrusted
    assert not [name for name in offered_before if name.startswith("mcp__own__")]
    assert "mcp__own__whereami" in offered_after and "not trusted" not in trusted


def _servers_of(pid: int | None) -> set[int]:
    """The fake MCP servers the process `pid` started (its children running one)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if int(stat[1]) == pid and b"mcp_server" in command:
            found.add(int(entry.name))
    return found


async def _until(check: Any, timeout: float = 20.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.05)
