"""Checkpoints and restore against links and special files, with real FIFOs, symlinks
and devices: nothing outside the project changes, nothing hangs, each skip is named.

Every test here ends at once when it works; a hang would stop it at the asyncio
`wait_for` bound (60 s), never at git's own 600 s timeout.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from melgui.core.store.checkpoints.checkpointer import Checkpointer
from tests.core.store.checkpoints.test_checkpoints import run_call
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.exec import melgui_exec
from tests.fakes.projects import make_project

BOUND_S = 60.0


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path, with_git=True)


@pytest.fixture
def checkpoints(project: Path, tmp_path: Path) -> Checkpointer:
    checkpointer = Checkpointer(str(project), data_folder=tmp_path / "data")
    yield checkpointer  # type: ignore[misc]
    checkpointer.close()


async def test_restore_never_deletes_through_a_symlinked_folder(
    project: Path, checkpoints: Checkpointer, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    record = await asyncio.wait_for(
        run_call(checkpoints, "mkdir d2 && printf x > d2/new.txt"), BOUND_S
    )
    (outside / "new.txt").write_text("x")  # the same bytes the agent wrote
    (project / "d2" / "new.txt").unlink()
    (project / "d2").rmdir()
    (project / "d2").symlink_to(outside)
    await asyncio.wait_for(checkpoints.restore([record.id]), BOUND_S)
    assert (outside / "new.txt").read_text() == "x"
    assert (project / "d2").is_symlink()
    [skipped] = checkpoints.skipped
    assert "d2/new.txt" in skipped and "symbolic link" in skipped


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "link-to-fifo"])
async def test_a_special_info_exclude_is_skipped_with_a_note(
    project: Path, checkpoints: Checkpointer, tmp_path: Path, kind: str
) -> None:
    exclude = project / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    exclude.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(exclude)
    elif kind == "dev-zero":
        exclude.symlink_to("/dev/zero")
    else:
        os.mkfifo(tmp_path / "pipe")
        exclude.symlink_to(tmp_path / "pipe")
    record = await asyncio.wait_for(run_call(checkpoints, "printf y > made.txt"), BOUND_S)
    assert [change.path for change in record.files] == ["made.txt"]
    assert any("exclude" in note and "skipped" in note for note in checkpoints.notes)


@pytest.mark.parametrize("name", [".gitignore", ".gitattributes"])
async def test_a_fifo_rules_file_in_a_subfolder_leaves_that_folder_out(
    project: Path, checkpoints: Checkpointer, name: str
) -> None:
    (project / "trap").mkdir()
    (project / "trap" / "kept.txt").write_text("t")
    os.mkfifo(project / "trap" / name)
    record = await asyncio.wait_for(run_call(checkpoints, "printf y > made.txt"), BOUND_S)
    assert [change.path for change in record.files] == ["made.txt"]
    assert any(f"trap/{name}" in note and "FIFO" in note for note in checkpoints.notes)


async def test_a_fifo_gitignore_at_the_top_means_no_checkpoint_and_says_why(
    project: Path, checkpoints: Checkpointer
) -> None:
    (project / ".gitignore").unlink(missing_ok=True)
    os.mkfifo(project / ".gitignore")
    async with asyncio.timeout(BOUND_S):
        async with checkpoints.guard("c1", "run_command", "x", source="main") as record_id:
            pass
    assert record_id is None
    assert checkpoints.problem is not None and ".gitignore is a FIFO" in checkpoints.problem


async def test_restore_never_writes_through_a_symlinked_folder(
    project: Path, checkpoints: Checkpointer, tmp_path: Path
) -> None:
    (project / "d3").mkdir()
    (project / "d3" / "kept.txt").write_text("before\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "kept.txt").write_text("outside's own\n")
    record = await asyncio.wait_for(run_call(checkpoints, "printf after > d3/kept.txt"), BOUND_S)
    (project / "d3" / "kept.txt").unlink()
    (project / "d3").rmdir()
    (project / "d3").symlink_to(outside)
    await asyncio.wait_for(checkpoints.restore([record.id]), BOUND_S)
    assert (outside / "kept.txt").read_text() == "outside's own\n"
    [skipped] = checkpoints.skipped
    assert "d3/kept.txt" in skipped and "symbolic link" in skipped


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_exec_with_a_special_info_exclude_ends_and_edits(
    scripted_relay: ScriptedRelay, tmp_path: Path, kind: str
) -> None:
    """The measured hang and memory blow-up, through `melgui exec`: it ends at once."""
    project = make_project(tmp_path, with_git=True)
    exclude = project / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    exclude.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(exclude)
    else:
        exclude.symlink_to("/dev/zero")
    (project / "trap").mkdir()
    os.mkfifo(project / "trap" / ".gitignore")
    edit = {"path": "README.md", "old_string": "demo", "new_string": "edited"}
    scripted_relay.script(
        [tool_calls(tool_call("edit_file", edit, id="c1"))], [text("done"), done()]
    )
    env = {"MELIAI_API_KEY": "k", "MELGUI_DATA_DIR": str(tmp_path / "d")}
    result = melgui_exec(
        "--url", scripted_relay.base_url, "--folder", str(project), "--model", "m",
        "--approve", "all", "edit", env=env, timeout=BOUND_S,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "edited" in (project / "README.md").read_text()
