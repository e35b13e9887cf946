"""One trust decision per folder, in melgui's config: default untrusted, subfolders and
melgui's worker worktrees inherit, a closer decision wins, undoing is one call; `melgui
exec --trust` records it and an untrusted exec says in one line what is off; a project
MCP file starts nothing in a restricted folder, and a trusted folder's changed file still
asks again."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from melgui.core.config.trust import FolderTrust, location, remote_location
from melgui.core.protocol.catalog import ToolCatalog
from melgui.core.protocol.tooling import ToolRegistry
from melgui.core.worktrees.naming import project_folder_name
from melgui.tools.mcp.manager import McpManager
from melgui.tools.mcp.trust import TrustStore
from tests.fakes.exec import melgui_exec


def test_default_inherit_closest_wins_and_undo(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "sub" / "deep").mkdir(parents=True)
    store = FolderTrust(tmp_path / "config" / "trust.json", worktrees=tmp_path / "wt")
    assert not store.is_trusted(project) and not store.asked(project)
    store.trust(project)
    assert store.is_trusted(project) and store.is_trusted(project / "sub" / "deep")
    store.restrict(project / "sub")
    assert not store.is_trusted(project / "sub" / "deep") and store.asked(project / "sub")
    assert store.is_trusted(project)
    store.restrict(project)
    assert not store.is_trusted(project)
    # Kept outside the folder, keyed by a location a remote folder can share.
    assert not any(p.name == "trust.json" for p in project.rglob("*"))
    folders = json.loads(store.path.read_text())["folders"]
    assert set(folders) == {location(project), location(project / "sub")}
    assert location(project).startswith("file://")


def test_worktrees_of_a_trusted_project_inherit_and_links_resolve(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    link = tmp_path / "link"
    link.symlink_to(project)
    store = FolderTrust(tmp_path / "trust.json", worktrees=tmp_path / "wt")
    worktree = tmp_path / "wt" / project_folder_name(project) / "1-task"
    worktree.mkdir(parents=True)
    other = tmp_path / "wt" / "other-0123456789ab" / "1-task"
    other.mkdir(parents=True)
    assert not store.is_trusted(worktree)
    store.trust(link)  # the real path is what is kept
    assert store.is_trusted(project) and store.is_trusted(worktree)
    assert not store.is_trusted(other)


def test_exec_is_restricted_by_default_and_trust_is_one_flag(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    plain = tmp_path / "plain"
    plain.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)  # hooks trust would run
    config = tmp_path / "config"
    env = {"MELGUI_CONFIG_DIR": str(config), "MELIAI_API_KEY": "k"}
    # A plain folder supplies nothing that trust would let run: nothing is said of it.
    quiet = melgui_exec("--url", "http://127.0.0.1:9", "--model", "m", "--no-history",
                        "--folder", str(plain), "hi", env=env)  # fmt: skip
    assert "Restricted folder" not in quiet.stderr
    # An unreachable relay: the turn fails, but trust is decided before it.
    url = "http://127.0.0.1:9"
    common = ("--url", url, "--model", "m", "--no-history", "--folder", str(project))
    first = melgui_exec(*common, "hi", env=env)
    [line] = [ln for ln in first.stderr.splitlines() if "Restricted folder" in ln]
    assert "project MCP servers" in line and "--trust" in line
    (project / ".melgui").mkdir()
    (project / ".melgui" / "mcp.json").write_text(json.dumps({"mcpServers": {}}))
    trusted = melgui_exec(*common, "--trust", "hi", env=env)
    assert "Restricted folder" not in trusted.stderr
    assert FolderTrust(config / "trust.json").is_trusted(project)
    assert TrustStore(config / "mcp-trust.json").is_trusted(project / ".melgui" / "mcp.json")
    again = melgui_exec(*common, "hi", env=env)
    assert "Restricted folder" not in again.stderr
    melgui_exec(*common, "--restrict", "hi", env=env)
    assert not FolderTrust(config / "trust.json").is_trusted(project)


def test_project_mcp_servers_need_the_folder_and_the_file_trusted(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    (folder / ".melgui").mkdir(parents=True)
    entry = {"command": "true"}
    project_file = folder / ".melgui" / "mcp.json"
    project_file.write_text(json.dumps({"mcpServers": {"p": entry}}))
    files = TrustStore(tmp_path / "mcp-trust.json")
    folders = FolderTrust(tmp_path / "trust.json")
    files.trust(project_file)  # the file alone is not enough
    manager = McpManager(
        str(folder), ToolCatalog(), ToolRegistry(), trust=files, folder_trust=folders,
        state_path=tmp_path / "s.json",
    )  # fmt: skip
    manager.load(user=False)
    assert manager.servers["p"].state.status == "untrusted"
    assert "restricted" in (manager.servers["p"].state.message or "")
    manager.trust_project()  # one click: the folder and the file as it is
    assert folders.is_trusted(folder)
    manager.load(user=False)
    assert manager.servers["p"].state.status == "stopped"
    project_file.write_text(json.dumps({"mcpServers": {"p": entry, "q": entry}}))
    manager.load(user=False)  # changed after a pull: asks again
    assert manager.servers["p"].state.status == "untrusted"


def test_a_remote_folder_has_an_entry_of_its_own(tmp_path: Path) -> None:
    store = FolderTrust(tmp_path / "trust.json", worktrees=tmp_path / "wt")
    local = tmp_path / "work"
    local.mkdir()
    remote = remote_location("build-box", str(local))
    assert remote == f"ssh://build-box{local}"
    store.trust(local)
    assert not store.is_trusted(remote) and not store.asked(remote)
    store.trust(remote_location("build-box", "/srv"))
    assert store.is_trusted(remote_location("build-box", "/srv/app/sub"))
    assert not store.is_trusted(remote_location("other-box", "/srv/app"))
    assert not store.is_trusted("/srv/app")  # the local /srv is another folder
    store.restrict(remote_location("build-box", "/srv/app"))
    assert not store.is_trusted(remote_location("build-box", "/srv/app/sub"))
    assert store.is_trusted(local)
