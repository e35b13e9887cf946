"""Checkpoints on real temporary projects, with and without git: what a call changed,
undo, conflicts, undo of an undo, and the project's `.git` never written."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from melgui.core.store.checkpoints.checkpointer import Checkpointer
from melgui.core.store.checkpoints.log import CheckpointRecord
from tests.fakes.projects import fingerprint, make_project, tree


@pytest.fixture(params=[True, False], ids=["git", "no-git"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return make_project(tmp_path, with_git=request.param)


@pytest.fixture
def checkpoints(project: Path, tmp_path: Path) -> Checkpointer:
    checkpointer = Checkpointer(str(project), data_folder=tmp_path / "data")
    yield checkpointer  # type: ignore[misc]
    checkpointer.close()


async def run_call(
    checkpoints: Checkpointer, command: str, *, source: str = "main", call_id: str = "c1"
) -> CheckpointRecord:
    """A real shell command inside a checkpoint guard, as the loop runs run_command."""
    async with checkpoints.guard(call_id, "run_command", command, source=source) as record_id:
        process = await asyncio.create_subprocess_shell(command, cwd=checkpoints.folder)
        assert await process.wait() == 0
    assert record_id is not None
    record = checkpoints.log.get(record_id)
    assert record is not None
    return record


def paths(record: CheckpointRecord) -> dict[str, str]:
    return {change.path: change.status for change in record.files}


COMMAND = (
    "printf 'print(1)\\n' > src/app.py && rm src/util.py && mv README.md NOTES.md"
    " && mkdir -p new/deep && printf 'x' > new/deep/file.txt && chmod +x run.sh"
    " && printf '\\000\\001\\002' > logo.bin && ln -sfn NOTES.md readme-link"
    " && printf 'new log\\n' > build.log"
)


async def test_a_command_is_recorded_and_undone_exactly(
    project: Path, checkpoints: Checkpointer
) -> None:
    git_before = fingerprint(project / ".git")
    start = tree(project)
    record = await run_call(checkpoints, COMMAND)
    assert fingerprint(project / ".git") == git_before
    assert paths(record) == {
        "src/app.py": "M",
        "src/util.py": "D",
        "README.md": "D",
        "NOTES.md": "A",
        "new/deep/file.txt": "A",
        "run.sh": "M",  # mode only
        "logo.bin": "M",  # binary
        "readme-link": "M",  # symlink target
    }
    assert "build.log" not in paths(record)  # ignored: not the checkpoint's business
    diff = await checkpoints.diff(record)
    assert "+print(1)" in diff and "old mode 100644" in diff and "Binary files" in diff

    restore = await checkpoints.restore([record.id])
    after_undo = tree(project)
    assert after_undo.pop("build.log")[1] != start["build.log"][1]  # ignored file left alone
    start.pop("build.log")
    assert after_undo == start
    assert not (project / "new").exists()  # folders the call created are gone
    assert os.readlink(project / "readme-link") == "README.md"
    assert not os.access(project / "run.sh", os.X_OK)
    assert fingerprint(project / ".git") == git_before
    assert restore.is_restore and restore.restores == (record.id,)
    assert paths(restore)["NOTES.md"] == "D"


async def test_undo_of_an_undo_brings_the_change_back(
    project: Path, checkpoints: Checkpointer
) -> None:
    git_before = fingerprint(project / ".git")
    record = await run_call(checkpoints, COMMAND)
    changed = tree(project)
    undo = await checkpoints.restore([record.id])
    redo = await checkpoints.restore([undo.id])
    assert tree(project) == changed
    assert redo.restores == (undo.id,)
    assert fingerprint(project / ".git") == git_before


async def test_a_later_edit_is_a_conflict_shown_in_three_versions(
    project: Path, checkpoints: Checkpointer
) -> None:
    record = await run_call(checkpoints, "printf 'agent\\n' > src/app.py && printf 'b' > b.txt")
    (project / "src" / "app.py").write_text("mine\n")  # the person's editor, afterwards
    plan = await checkpoints.plan([record.id])
    [conflict] = plan.conflicts
    assert conflict.path == "src/app.py"
    assert conflict.before and conflict.agent and conflict.now
    assert len({conflict.before.blob, conflict.agent.blob, conflict.now.blob}) == 3

    # Without a choice the conflict keeps the person's version; the clean file goes back.
    await checkpoints.restore([record.id])
    assert (project / "src" / "app.py").read_text() == "mine\n"
    assert not (project / "b.txt").exists()

    # Choosing "before" for it puts the pre-call version back, and nothing is lost:
    # undoing that restore brings "mine" back.
    chosen = await checkpoints.restore([record.id], {"src/app.py": "before"})
    assert (project / "src" / "app.py").read_text() == "print('hello')\n"
    await checkpoints.restore([chosen.id])
    assert (project / "src" / "app.py").read_text() == "mine\n"


async def test_the_agents_version_can_be_chosen(project: Path, checkpoints: Checkpointer) -> None:
    record = await run_call(checkpoints, "printf 'agent\\n' > src/app.py")
    (project / "src" / "app.py").write_text("mine\n")
    await checkpoints.restore([record.id], {"src/app.py": "agent"})
    assert (project / "src" / "app.py").read_text() == "agent\n"


async def test_two_agents_in_one_folder_never_blame_each_other(
    project: Path, tmp_path: Path
) -> None:
    # Two checkpointers, as two melgui processes on one folder would have.
    first = Checkpointer(str(project), data_folder=tmp_path / "data")
    second = Checkpointer(str(project), data_folder=tmp_path / "data")
    slow = "printf 1 > a.txt && sleep 0.3 && printf 2 >> a.txt"
    try:
        one, two = await asyncio.gather(
            run_call(first, slow, source="main", call_id="m1"),
            run_call(second, "printf b > b.txt", source="pane 2", call_id="w1"),
        )
    finally:
        first.close()
        second.close()
    assert paths(one) == {"a.txt": "A"} and one.source == "main"
    assert paths(two) == {"b.txt": "A"} and two.source == "pane 2"


async def test_files_over_the_cap_are_left_out_and_named(project: Path, tmp_path: Path) -> None:
    checkpoints = Checkpointer(str(project), data_folder=tmp_path / "data", max_file_bytes=2000)
    try:
        record = await run_call(checkpoints, "head -c 5000 /dev/zero > big.dat && printf s > s.txt")
    finally:
        checkpoints.close()
    assert paths(record) == {"s.txt": "A"}
    assert record.skipped == ("big.dat",)


async def test_checkpoints_survive_a_restart(project: Path, tmp_path: Path) -> None:
    first = Checkpointer(str(project), data_folder=tmp_path / "data")
    record = await run_call(first, "printf z > z.txt")
    first.close()
    again = Checkpointer(str(project), data_folder=tmp_path / "data")
    try:
        assert [r.id for r in again.records()] == [record.id]
        await again.restore([record.id])
    finally:
        again.close()
    assert not (project / "z.txt").exists()


async def test_pruning_by_age_drops_old_checkpoints_and_their_snapshots(
    project: Path, checkpoints: Checkpointer
) -> None:
    old = await run_call(checkpoints, "printf 1 > one.txt", call_id="old")
    await run_call(checkpoints, "printf 2 > two.txt", call_id="new")
    dropped = await checkpoints.prune(now=old.started_at + 0.5 + checkpoints.keep_days * 86400)
    assert dropped >= 1
    assert old.id not in [r.id for r in checkpoints.records()]
    objects = subprocess.run(
        ["git", "--git-dir", str(checkpoints.repo.git_dir), "cat-file", "-e", old.before],
        capture_output=True,
    )
    assert objects.returncode != 0  # the old snapshot is gone from the shadow repository


async def test_without_git_installed_the_call_still_runs(
    project: Path, checkpoints: Checkpointer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(project / "no-such-bin"))
    ran = False
    async with checkpoints.guard("c", "write_file", "x", source="main") as record_id:
        ran = True
    assert ran and record_id is None
    assert checkpoints.problem is not None and "git" in checkpoints.problem
    assert shutil.which("git") is None


async def test_snapshot_commits_are_the_ones_git_would_write(
    project: Path, checkpoints: Checkpointer
) -> None:
    """The snapshot's commit and HEAD are written without `commit-tree`/`update-ref`:
    git reads them back, they are the very ids git makes of the same tree and parent,
    and the repository stays sound, through a prune that packs the refs."""
    repo = checkpoints.repo
    git = ["git", "--git-dir", str(repo.git_dir)]
    env = {**os.environ, **{k: v for k, v in repo.env().items() if k != "GIT_WORK_TREE"}}

    def show(*args: str) -> str:
        done = subprocess.run([*git, *args], env=env, capture_output=True, text=True, check=True)
        return done.stdout.strip()

    first = await run_call(checkpoints, "printf 1 > one.txt", call_id="a")
    second = await run_call(checkpoints, "printf 2 > two.txt", call_id="b")
    assert second.after is not None and first.after is not None
    assert show("rev-parse", "HEAD") == second.after
    for record in (first, second):
        assert record.after is not None
        tree, parent = show("rev-parse", f"{record.after}^{{tree}}"), record.before
        assert show("commit-tree", tree, "-p", parent, "-m", "checkpoint") == record.after
    assert "two.txt" in show("ls-tree", "--name-only", "HEAD")
    subprocess.run([*git, "fsck", "--strict"], env=env, check=True, capture_output=True)
    await checkpoints.prune(now=first.started_at + 0.5 + checkpoints.keep_days * 86400)
    third = await run_call(checkpoints, "printf 3 > three.txt", call_id="c")
    assert show("rev-parse", "HEAD") == third.after
    assert show("rev-parse", "HEAD^{tree}") == show("rev-parse", f"{third.after}^{{tree}}")
    subprocess.run([*git, "fsck", "--strict"], env=env, check=True, capture_output=True)
    restore = await checkpoints.restore([third.id])
    assert restore.after is not None and not (project / "three.txt").exists()


async def test_a_later_snapshot_rewrites_only_the_changed_part_of_the_index(
    tmp_path: Path,
) -> None:
    """The shadow index is split: a later snapshot's update-index and write-tree write
    the entries changed since the last full write, not every entry again; a shadow
    repository made before (its configuration of an older mark) is split from its next
    snapshot on, and the snapshots are the same either way."""
    project = tmp_path / "project"
    for number in range(400):
        folder = project / f"pkg{number // 40}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"file{number:03d}.txt"
        path.write_text(f"line {number}\n" * 20)
        # Written an hour ago, as a project's files were: an entry as new as the index
        # (racily clean) stays in the changed part until a later write.
        os.utime(path, (time.time() - 3600,) * 2)
    checkpoints = Checkpointer(str(project), data_folder=tmp_path / "data")
    git_dir = checkpoints.repo.git_dir
    try:
        await checkpoints.snapshots.take()
        config = git_dir / "config"  # as an older melgui left it: one index file
        old = config.read_text().replace("# melgui checkpoints v3", "# melgui checkpoints v2")
        config.write_text("".join(line for line in old.splitlines(True) if "ndex" not in line))
        env = {**os.environ, **{k: v for k, v in checkpoints.repo.env().items()}}
        subprocess.run(["git", "update-index", "--no-split-index"], env=env, check=True)
        for shared in git_dir.glob("sharedindex.*"):
            shared.unlink()
        whole = (git_dir / "index").stat().st_size
    finally:
        checkpoints.close()
    again = Checkpointer(str(project), data_folder=tmp_path / "data")
    try:
        (project / "pkg3" / "file120.txt").write_text("changed\n")
        snapshot = await again.snapshots.take()
    finally:
        again.close()
    shared = list(git_dir.glob("sharedindex.*"))
    assert len(shared) == 1 and shared[0].stat().st_size >= whole * 0.8
    assert (git_dir / "index").stat().st_size < whole / 4
    listed = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", snapshot.commit],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert len(listed.stdout.splitlines()) == 400
    shown = subprocess.run(
        ["git", "show", f"{snapshot.commit}:pkg3/file120.txt"],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert shown.stdout == "changed\n"
