"""kill -9 between the snapshot and the call's result: the checkpoint survives, reads as
interrupted with what the call had changed, and undoes it; the folder lock is free."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from melgui.core.store.checkpoints.checkpointer import Checkpointer
from tests.fakes.projects import fingerprint, make_project

ROOT = Path(__file__).resolve().parents[4]


async def test_kill_9_between_snapshot_and_result(tmp_path: Path) -> None:
    project = make_project(tmp_path, with_git=True)
    git_before = fingerprint(project / ".git")
    data = tmp_path / "data"
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.core.store.checkpoints.killed_call", str(project), str(data)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        if child.stdout is not None:
            child.stdout.close()
    assert child.returncode == -signal.SIGKILL

    checkpoints = Checkpointer(str(project), data_folder=data)
    try:
        [running] = checkpoints.records()
        assert running.state == "running" and running.after is None
        await checkpoints.recover()  # takes the lock the dead process held
        [record] = checkpoints.records()
        assert record.state == "interrupted"
        assert {c.path: c.status for c in record.files} == {"half.txt": "A", "src/app.py": "M"}
        await checkpoints.restore([record.id])
    finally:
        checkpoints.close()
    assert not (project / "half.txt").exists()
    assert (project / "src" / "app.py").read_text() == "print('hello')\n"
    assert fingerprint(project / ".git") == git_before
