"""The confinement rule: a table of hostile paths, each refused with one line, nothing touched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from melgui.core.protocol.tooling import ToolError
from melgui.tools.workspace import Workspace


@pytest.fixture
def hostile(project: Path, outside: Path) -> Path:
    (project / "inside.txt").write_text("inside\n")
    (project / "sub").mkdir()
    os.symlink(outside / "secret.txt", project / "link_out.txt")
    os.symlink(outside, project / "dir_out")
    os.symlink(project / "inside.txt", project / "link_in.txt")
    os.symlink("loop_b", project / "loop_a")
    os.symlink("loop_a", project / "loop_b")
    os.mkfifo(project / "fifo")
    os.symlink("/dev/null", project / "devnull")
    (project / ".git").mkdir()
    (project / ".git" / "config").write_text("[core]\n")
    return project


READ_REFUSALS = [
    ("../outside/secret.txt", "outside the project"),
    ("sub/../../outside/secret.txt", "outside the project"),
    ("{outside}/secret.txt", "outside the project"),
    ("/etc/passwd", "outside the project"),
    ("link_out.txt", "outside the project"),
    ("dir_out/secret.txt", "outside the project"),
    ("inside.txt\x00.png", "NUL byte"),
    ("fifo", "FIFO"),
    ("devnull", "outside the project"),
    ("loop_a", "symlink loop"),
    ("", "empty"),
    ("sub", "folder"),
    ("missing.txt", "No such file"),
]


@pytest.mark.parametrize(("raw", "message"), READ_REFUSALS)
def test_reads_refused(
    workspace: Workspace, hostile: Path, outside: Path, raw: str, message: str
) -> None:
    with pytest.raises(ToolError, match=message) as caught:
        workspace.existing_file(raw.format(outside=outside))
    assert "\n" not in str(caught.value)


WRITE_REFUSALS = [
    ("../escape.txt", "outside the project"),
    ("{outside}/new.txt", "outside the project"),
    ("link_out.txt", "outside the project"),
    ("dir_out/new.txt", "outside the project"),
    ("dir_out/deeper/new.txt", "outside the project"),
    (".git/config", ".git"),
    (".git/hooks/pre-commit", ".git"),
    ("sub/../.git/HEAD", ".git"),
    (".config/melgui/settings.toml", "configuration folder"),
    ("fifo", "FIFO"),
    ("sub", "folder"),
    (".", "project folder itself"),
    ("a\x00b", "NUL byte"),
    ("inside.txt/child.txt", "not a folder"),
]


@pytest.mark.parametrize(("raw", "message"), WRITE_REFUSALS)
def test_writes_refused(
    workspace: Workspace, hostile: Path, outside: Path, raw: str, message: str
) -> None:
    with pytest.raises(ToolError, match=message) as caught:
        workspace.writable_file(raw.format(outside=outside))
    assert "\n" not in str(caught.value)
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def test_paths_inside_are_accepted(workspace: Workspace, hostile: Path) -> None:
    assert workspace.existing_file("inside.txt") == hostile / "inside.txt"
    assert workspace.existing_file(str(hostile / "inside.txt")) == hostile / "inside.txt"
    assert workspace.existing_file("sub/../inside.txt") == hostile / "inside.txt"
    assert workspace.existing_file("link_in.txt") == hostile / "inside.txt"
    assert workspace.writable_file("new/deep/file.txt") == hostile / "new/deep/file.txt"
    assert workspace.existing_dir(".") == hostile


def test_prefix_sibling_is_not_inside(tmp_path: Path) -> None:
    """`/x/project2` starts with the string `/x/project` but is another folder."""
    (tmp_path / "project").mkdir()
    (tmp_path / "project2").mkdir()
    (tmp_path / "project2" / "f.txt").write_text("x")
    workspace = Workspace(tmp_path / "project")
    with pytest.raises(ToolError, match="outside the project"):
        workspace.existing_file("../project2/f.txt")


def test_root_given_through_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "a.txt").write_text("a")
    os.symlink(real, tmp_path / "alias")
    workspace = Workspace(tmp_path / "alias")
    assert workspace.root == real
    assert workspace.existing_file("a.txt") == real / "a.txt"


def test_root_must_be_a_folder(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a folder"):
        Workspace(tmp_path / "missing")
