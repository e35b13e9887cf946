"""Configuration files, references, import from other clients, project trust, names, and
which tools are offered."""

from __future__ import annotations

import json
from pathlib import Path

import mcp_types as types
import pytest

from melgui.core.protocol.catalog import ToolCatalog
from melgui.core.protocol.tooling import ToolRegistry
from melgui.core.protocol.tools.mcp.naming import VALID, tool_name
from melgui.tools.mcp.bridge import Bridge
from melgui.tools.mcp.config import ConfigError, load_file, resolve
from melgui.tools.mcp.importing import import_servers
from melgui.tools.mcp.manager import McpManager
from melgui.tools.mcp.trust import TrustStore
from tests.fakes.mcp import fake_entry


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_the_shapes_people_have(tmp_path: Path) -> None:
    claude = write(
        tmp_path / "claude.json",
        {
            "mcpServers": {
                "files": {"command": "npx", "args": ["-y", "fs"], "env": {"K": "${K}"}},
                "docs": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer x"}},
                "odd": {"command": "a", "url": "http://b"},
                "old": {"type": "sse", "url": "http://c/sse"},
            }
        },
    )
    files, docs, odd, old = load_file(claude, "user")
    assert (files.kind, files.command, files.args, files.env) == (
        "stdio",
        "npx",
        ("-y", "fs"),
        {"K": "${K}"},
    )
    assert (docs.kind, docs.url, docs.headers) == (
        "http",
        "https://h/mcp",
        {"Authorization": "Bearer x"},
    )
    assert "either command (stdio) or url (HTTP), not both" in odd.problem
    assert (old.kind, old.url, old.sse, old.problem) == ("http", "http://c/sse", True, "")
    vscode = write(tmp_path / "vscode.json", {"servers": {"v": {"type": "stdio", "command": "x"}}})
    assert [c.name for c in load_file(vscode, "user")] == ["v"]
    (tmp_path / "bad.json").write_text("{nope")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_file(tmp_path / "bad.json", "user")


def test_references_come_from_the_environment_or_the_keyring(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MCP_T", "abc")
    secrets = {"svc/key": "from-keyring"}
    assert resolve("Bearer ${MCP_T}") == "Bearer abc"
    assert resolve("${env:MCP_T}") == "abc"
    assert resolve("${keyring:svc/key}", secrets.get) == "from-keyring"
    with pytest.raises(ConfigError, match="no secret 'nope' in the system keyring"):
        resolve("${keyring:nope}", secrets.get)


def test_import_keeps_no_secret_in_clear(tmp_path: Path) -> None:
    source = write(
        tmp_path / "claude_desktop_config.json",
        {
            "mcpServers": {
                "gh": {
                    "command": "gh-mcp",
                    "env": {"GITHUB_TOKEN": "ghp_secret", "REF": "${HOME}"},
                },
                "api": {"url": "https://x/mcp", "headers": {"Authorization": "Bearer t0k"}},
            }
        },
    )
    target = write(tmp_path / "user" / "mcp.json", {"mcpServers": {"api": {"url": "http://mine"}}})
    kept: dict[str, str] = {}

    def store(name: str, value: str) -> bool:
        kept[name] = value
        return True

    report = import_servers(source, target, store)
    assert report.added == ["gh"] and report.skipped == ["api"]
    saved = target.read_text()
    assert "ghp_secret" not in saved and "t0k" not in saved
    entry = json.loads(saved)["mcpServers"]["gh"]
    assert entry["env"] == {"GITHUB_TOKEN": "${keyring:gh/GITHUB_TOKEN}", "REF": "${HOME}"}
    assert kept == {"gh/GITHUB_TOKEN": "ghp_secret"}
    # No keyring: an environment reference the person sets instead.
    other = tmp_path / "other.json"
    report = import_servers(source, other, lambda name, value: False)
    env = json.loads(other.read_text())["mcpServers"]["gh"]["env"]
    assert env["GITHUB_TOKEN"] == "${MCP_GH_GITHUB_TOKEN}" and "ghp_secret" not in other.read_text()
    assert report.to_set == ["MCP_GH_GITHUB_TOKEN", "MCP_API_AUTHORIZATION"]


async def test_an_untrusted_or_changed_project_file_starts_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    project = write(folder / ".melgui" / "mcp.json", {"mcpServers": {"p": fake_entry()}})
    trust = TrustStore(tmp_path / "trust.json")
    manager = McpManager(
        str(folder), ToolCatalog(), ToolRegistry(), trust=trust, state_path=tmp_path / "s.json"
    )
    manager.load(user=False)
    assert manager.untrusted == project
    assert manager.servers["p"].state.status == "untrusted"
    await manager.start_all()
    assert manager.servers["p"].process is None and not manager.bridge.catalog.added()
    manager.trust_project()
    assert trust.is_trusted(project)
    manager.load(user=False)
    assert manager.untrusted is None and manager.servers["p"].state.status == "stopped"
    # Any change asks again.
    write(project, {"mcpServers": {"p": fake_entry(), "q": fake_entry()}})
    assert not trust.is_trusted(project)
    manager.load(user=False)
    assert {s.state.status for s in manager.servers.values()} == {"untrusted"}
    await manager.aclose()


def test_names_are_sanitised_and_shortened_deterministically() -> None:
    assert tool_name("files", "read") == "mcp__files__read"
    assert tool_name("my server", "get.thing/now") == "mcp__my_server__get_thing_now"
    long = tool_name("s" * 40, "t" * 40)
    assert len(long) == 64 and VALID.match(long) and long == tool_name("s" * 40, "t" * 40)
    taken = {"mcp__a_b__echo"}
    other = tool_name("a.b", "echo", taken)
    assert (
        other != "mcp__a_b__echo"
        and VALID.match(other)
        and other == tool_name("a.b", "echo", taken)
    )


def test_colliding_tools_of_two_servers_both_get_offered() -> None:
    catalog, registry = ToolCatalog(), ToolRegistry()
    bridge = Bridge(catalog, registry, lambda server, tool, arguments: None)
    tool = types.Tool(name="echo", input_schema={"type": "object"})
    first = bridge.offer("a_b", [tool], roles=("assistant",), trusted=False, disabled=frozenset())
    second = bridge.offer("a.b", [tool], roles=("assistant",), trusted=False, disabled=frozenset())
    assert first == ["mcp__a_b__echo"] and second[0].startswith("mcp__a_b__echo_")
    assert {t.name for t in catalog.for_role("assistant")} >= {first[0], second[0]}
    assert not [t for t in catalog.for_role("worker") if t.origin.startswith("mcp:")]


def test_annotations_preset_the_default_only_for_a_trusted_server() -> None:
    catalog = ToolCatalog()
    bridge = Bridge(catalog, ToolRegistry(), lambda server, tool, arguments: None)
    notes = types.ToolAnnotations(read_only_hint=True)
    tool = types.Tool(name="look", input_schema={"type": "object"}, annotations=notes)
    bridge.offer("wild", [tool], roles=("assistant",), trusted=False, disabled=frozenset())
    bridge.offer("mine", [tool], roles=("assistant",), trusted=True, disabled=frozenset())
    assert catalog.get("mcp__wild__look").approval == "ask"  # type: ignore[union-attr]
    assert catalog.get("mcp__mine__look").approval == "auto"  # type: ignore[union-attr]


def test_a_task_only_tool_is_not_offered() -> None:
    def tool(name: str, support: str | None) -> types.Tool:
        execution = types.ToolExecution(task_support=support) if support else None
        return types.Tool(name=name, input_schema={"type": "object"}, execution=execution)

    bridge = Bridge(ToolCatalog(), ToolRegistry(), lambda *_: None)
    tools = [tool("plain", None), tool("either", "optional"), tool("tasks", "required")]
    names = bridge.offer("srv", tools, roles=("assistant",), trusted=False, disabled=frozenset())
    assert names == ["mcp__srv__either", "mcp__srv__plain"]
