"""The snapshot a session opening starts in the background, with real git: the first
call's checkpoint waits for it and hashes nothing itself, an edit made by that call is
undone to the file as it was just before the call, and a background snapshot cut short
(melgui closing, a killed git) leaves the shadow repository usable."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from melgui.core.store.checkpoints.checkpointer import Checkpointer
from melgui.core.store.checkpoints.lock import _process_lock
from melgui.core.store.checkpoints.snapshot import MANY_PATHS
from tests.fakes.projects import make_project

FILES = MANY_PATHS + 100  # a first snapshot as big ones go: its blobs into one pack


def big_project(tmp_path: Path) -> Path:
    project = make_project(tmp_path, with_git=True)
    for index in range(FILES):
        folder = project / "pkg" / f"p{index // 50:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"m{index:04d}.py").write_text(f"value = {index}\n")
    return project


def spy_on_git(checkpoints: Checkpointer) -> list[tuple[str, str]]:
    """(task name, git subcommand) of every git the checkpoints run, as they start."""
    runs: list[tuple[str, str]] = []
    real: Callable[..., Awaitable[bytes]] = checkpoints.repo.run

    async def run(*args: str, **options: object) -> bytes:
        task = asyncio.current_task()
        command = next(a for a in args if not a.startswith("-") and "=" not in a)
        runs.append((task.get_name() if task else "", command))
        return await real(*args, **options)

    checkpoints.repo.run = run  # type: ignore[method-assign]
    return runs


async def in_flight(checkpoints: Checkpointer) -> asyncio.Task[None]:
    """Start the background snapshot and return once it holds the folder's lock."""
    checkpoints.warm()
    warming = checkpoints.warming
    assert warming is not None
    lock = _process_lock(str(checkpoints.repo.root / "lock"))
    while not lock.locked() and not warming.done():
        await asyncio.sleep(0)
    assert lock.locked() and not warming.done()
    return warming


async def test_the_first_call_waits_for_the_background_snapshot_and_undoes_exactly(
    tmp_path: Path,
) -> None:
    project = big_project(tmp_path)
    target = project / "pkg" / "p00" / "m0001.py"
    checkpoints = Checkpointer(str(project), data_folder=tmp_path / "data")
    runs = spy_on_git(checkpoints)
    try:
        warming = await in_flight(checkpoints)
        # The call's guard opens while the background snapshot runs: it must wait.
        async with checkpoints.guard("c1", "edit_file", "m0001.py", source="main") as rid:
            assert warming.done() and not warming.cancelled()
            before_call = [command for task, command in runs if task != warming.get_name()]
            target.write_text("value = 'edited'\n")
        assert rid is not None
        background = [command for task, command in runs if task == warming.get_name()]
        assert "add" in background  # every file hashed there, once
        assert before_call == ["status"]  # the call's checkpoint found that done
        record = checkpoints.log.get(rid)
        assert record is not None
        assert [(c.path, c.status) for c in record.files] == [("pkg/p00/m0001.py", "M")]
        assert list((checkpoints.repo.git_dir / "objects" / "pack").glob("pack-*.pack"))
        await checkpoints.restore([rid])
        assert target.read_text() == "value = 1\n"
    finally:
        await checkpoints.aclose()


async def test_a_file_changed_while_the_background_snapshot_runs_is_undone_to_that(
    tmp_path: Path,
) -> None:
    """The checkpoint before a call is its own, taken after the background one: a change
    made (by the person) while the background snapshot ran is what undo brings back."""
    project = big_project(tmp_path)
    target = project / "src" / "app.py"
    checkpoints = Checkpointer(str(project), data_folder=tmp_path / "data")
    try:
        await in_flight(checkpoints)
        target.write_text("print('the person')\n")
        async with checkpoints.guard("c1", "edit_file", "app.py", source="main") as rid:
            target.write_text("print('the agent')\n")
        assert rid is not None
        await checkpoints.restore([rid])
        assert target.read_text() == "print('the person')\n"
    finally:
        await checkpoints.aclose()


async def test_a_background_snapshot_cut_short_leaves_the_repository_usable(
    tmp_path: Path,
) -> None:
    project = big_project(tmp_path)
    data = tmp_path / "data"
    first = Checkpointer(str(project), data_folder=data)
    warming = await in_flight(first)
    await first.aclose()  # melgui closing while it runs: its git is ended
    assert warming.cancelled()
    # A git killed while it held the index's lock leaves the lock file behind, and the
    # pack it was writing.
    half = first.repo.git_dir / "objects" / "pack" / "tmp_pack_Ab12Cd"
    half.parent.mkdir(parents=True, exist_ok=True)
    half.write_bytes(b"PACK")
    (first.repo.git_dir / "index.lock").write_bytes(b"")
    again = Checkpointer(str(project), data_folder=data)
    try:
        async with again.guard("c1", "run_command", "edit", source="main") as rid:
            (project / "README.md").write_text("# changed\n")
        assert rid is not None and again.problem is None and not half.exists()
        record = again.log.get(rid)
        assert record is not None
        assert [c.path for c in record.files] == ["README.md"]
        await again.restore([rid])
        assert (project / "README.md").read_text() == "# demo\n"
    finally:
        await again.aclose()


async def test_warm_does_nothing_once_the_folder_has_a_snapshot(tmp_path: Path) -> None:
    """A later session's first checkpoint hashes only what changed: no snapshot (no `git
    status` either) is taken up front, in this melgui or the next."""
    project = make_project(tmp_path, with_git=False)
    checkpoints = Checkpointer(str(project), data_folder=tmp_path / "data")
    try:
        await checkpoints.snapshots.take()
        checkpoints.warm()
        assert checkpoints.warming is None
    finally:
        await checkpoints.aclose()
    later = Checkpointer(str(project), data_folder=tmp_path / "data")
    try:
        runs = spy_on_git(later)
        later.warm()
        assert later.warming is None and runs == []
    finally:
        await later.aclose()
