"""The confinement rule: a table of hostile paths, each refused with one line, nothing touched."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from melgui.core.protocol.tooling import ToolError
from melgui.tools.workspace import Workspace, _kind, open_for_write, write_bytes_confined


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


OUTSIDE = "Refused: {raw!r} resolves outside the project folder ({project}); use a path inside it."

READ_REFUSALS = [
    ("../outside/secret.txt", OUTSIDE),
    ("sub/../../outside/secret.txt", OUTSIDE),
    ("{outside}/secret.txt", OUTSIDE),
    ("/etc/passwd", OUTSIDE),
    ("link_out.txt", OUTSIDE),
    ("dir_out/secret.txt", OUTSIDE),
    ("inside.txt\x00.png", "Refused: 'path' contains a NUL byte."),
    ("fifo", "Refused: 'fifo' is not a regular file (a FIFO)."),
    ("devnull", OUTSIDE),
    ("loop_a", "Refused: 'loop_a' is a symlink loop."),
    ("", "Argument 'path' is empty."),
    ("   ", "Argument 'path' is empty."),
    ("sub", "'sub' is a folder, not a file; use list_dir."),
    ("missing.txt", "No such file: 'missing.txt'."),
]


def _expected(message: str, raw: str, project: Path, outside: Path) -> str:
    return message.format(raw=raw.format(outside=outside), project=project)


@pytest.mark.parametrize(("raw", "message"), READ_REFUSALS)
def test_reads_refused(
    workspace: Workspace, hostile: Path, outside: Path, raw: str, message: str
) -> None:
    with pytest.raises(ToolError) as caught:
        workspace.existing_file(raw.format(outside=outside))
    assert str(caught.value) == _expected(message, raw, hostile, outside)


WRITE_REFUSALS = [
    ("../escape.txt", OUTSIDE),
    ("{outside}/new.txt", OUTSIDE),
    ("link_out.txt", OUTSIDE),
    ("dir_out/new.txt", OUTSIDE),
    ("dir_out/deeper/new.txt", OUTSIDE),
    (".git/config", "Refused: '.git/config' is inside .git/; melgui never writes there."),
    (
        ".git/hooks/pre-commit",
        "Refused: '.git/hooks/pre-commit' is inside .git/; melgui never writes there.",
    ),
    ("sub/../.git/HEAD", "Refused: 'sub/../.git/HEAD' is inside .git/; melgui never writes there."),
    (".config/melgui", "Refused: '.config/melgui' is inside melgui's own configuration folder."),
    (
        ".config/melgui/settings.toml",
        "Refused: '.config/melgui/settings.toml' is inside melgui's own configuration folder.",
    ),
    ("fifo", "Refused: 'fifo' is not a regular file (a FIFO)."),
    ("sub", "Refused: 'sub' is a folder, not a file."),
    (".", "Refused: '.' is the project folder itself, not a file."),
    ("a\x00b", "Refused: 'path' contains a NUL byte."),
    ("inside.txt/child.txt", "Cannot write 'inside.txt/child.txt': 'inside.txt' is not a folder."),
    (
        "sub/inside/x/child.txt",
        "Cannot write 'sub/inside/x/child.txt': 'sub/inside' is not a folder.",
    ),
]


@pytest.mark.parametrize(("raw", "message"), WRITE_REFUSALS)
def test_writes_refused(
    workspace: Workspace, hostile: Path, outside: Path, raw: str, message: str
) -> None:
    (hostile / "sub" / "inside").write_text("a file\n")
    with pytest.raises(ToolError) as caught:
        workspace.writable_file(raw.format(outside=outside))
    assert str(caught.value) == _expected(message, raw, hostile, outside)
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


def test_arguments_that_are_not_strings_are_named(workspace: Workspace) -> None:
    with pytest.raises(ToolError) as caught:
        workspace.existing_dir(5, "folder")  # type: ignore[arg-type]
    assert str(caught.value) == "Argument 'folder' must be a string."
    with pytest.raises(ToolError) as caught:
        workspace.existing_dir("inside.txt")
    assert str(caught.value) == "No such folder: 'inside.txt'."


def test_a_file_is_not_a_folder_and_paths_display_relative(
    workspace: Workspace, hostile: Path
) -> None:
    with pytest.raises(ToolError) as caught:
        workspace.existing_dir("inside.txt")
    assert str(caught.value) == "'inside.txt' is not a folder."
    assert workspace.existing_dir("sub") == hostile / "sub"
    assert workspace.display(hostile) == "."
    assert workspace.display(hostile / "sub" / "a b.txt") == "sub/a b.txt"
    assert workspace.display(Path("/etc/passwd")) == "/etc/passwd"


def test_special_files_are_named_by_kind(workspace: Workspace, hostile: Path) -> None:
    kinds = {
        stat.S_IFIFO: "a FIFO",
        stat.S_IFSOCK: "a socket",
        stat.S_IFCHR: "a character device",
        stat.S_IFBLK: "a block device",
        stat.S_IFLNK: "a special file",
    }
    assert {mode: _kind(mode | 0o644) for mode in kinds} == kinds


def test_writing_makes_the_missing_folders_and_says_whether_the_file_is_new(
    workspace: Workspace, hostile: Path
) -> None:
    target = workspace.writable_file("new/deep/file.txt")
    assert write_bytes_confined(workspace, target, b"one") is True
    assert target.read_bytes() == b"one"
    assert write_bytes_confined(workspace, target, b"2") is False  # truncated, not appended
    assert target.read_bytes() == b"2"
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~_umask()


def test_a_symlink_planted_after_the_check_cannot_carry_a_write_out(
    workspace: Workspace, hostile: Path, outside: Path
) -> None:
    target = workspace.writable_file("planted/new.txt")
    os.symlink(outside, hostile / "planted")  # swapped in between the check and the write
    with pytest.raises(ToolError) as caught:
        write_bytes_confined(workspace, target, b"x")
    assert str(caught.value) == "Refused: 'planted/new.txt' resolves outside the project folder."
    file_target = workspace.writable_file("swapped.txt")
    os.symlink(outside / "secret.txt", hostile / "swapped.txt")
    with pytest.raises(OSError):  # O_NOFOLLOW: the link itself is refused
        write_bytes_confined(workspace, file_target, b"x")
    fifo_target = workspace.writable_file("pipe")
    os.mkfifo(hostile / "pipe")
    with pytest.raises(OSError):  # O_NONBLOCK: a FIFO without a reader fails at once
        write_bytes_confined(workspace, fifo_target, b"x")
    assert (outside / "secret.txt").read_text() == "top secret\n"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def test_a_fifo_with_a_reader_is_opened_but_not_written(
    workspace: Workspace, hostile: Path
) -> None:
    fifo_target = workspace.writable_file("pipe")
    os.mkfifo(hostile / "pipe")
    reader = os.open(hostile / "pipe", os.O_RDONLY | os.O_NONBLOCK)
    try:
        with pytest.raises(ToolError) as caught:
            write_bytes_confined(workspace, fifo_target, b"x")
        assert str(caught.value) == "Refused: 'pipe' is not a regular file."
        assert os.read(reader, 10) == b""
    finally:
        os.close(reader)


def test_a_project_folder_removed_meanwhile_is_said_plainly(tmp_path: Path) -> None:
    root = tmp_path / "gone"
    root.mkdir()
    workspace = Workspace(root)
    target = workspace.writable_file("a/b.txt")
    root.rmdir()
    with pytest.raises(ToolError) as caught:
        write_bytes_confined(workspace, target, b"x")
    assert str(caught.value) == f"The project folder {root} no longer exists."
    assert not root.exists()


def test_open_for_write_does_not_leak_into_children(workspace: Workspace, hostile: Path) -> None:
    fd = open_for_write(hostile / "new.txt")
    try:
        assert os.get_inheritable(fd) is False
        assert os.get_blocking(fd) is False
    finally:
        os.close(fd)


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
