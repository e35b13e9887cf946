"""What a host does when a Changes view on another machine applies or discards part of a
worker's change (melgui/core/worktrees/changes/parts_there.py), on a real repository:
it acts on its own reading, only while that is what the view showed (the digest), never
under the person's uncommitted edits, and a refusal writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from melgui.core.worktrees.changes.git import ChangesError
from melgui.core.worktrees.changes.parts_there import apply_shown, discard_shown, landed_shown
from melgui.core.worktrees.changes.reading import read_changes
from melgui.core.worktrees.changes.sent import changes_from_json, changes_to_json, shown_digest
from tests.fakes.worktree_repos import (
    NUMBERED,
    make_repo_with_worktree,
    run_git,
    use_test_identity,
    worker_edits,
)


@pytest.fixture(autouse=True)
def _identity(monkeypatch: pytest.MonkeyPatch) -> None:
    use_test_identity(monkeypatch)


async def test_a_hunk_as_shown_is_applied_and_marked(tmp_path: Path) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    worker_edits(worktree)
    # What the view holds is what crossed the wire: its digest is the host's own.
    shown = changes_from_json(changes_to_json(await read_changes(worktree)))
    numbers = shown.file("numbers.txt")
    digest = shown_digest([numbers])
    assert digest == shown_digest([(await read_changes(worktree)).file("numbers.txt")])

    applied = await apply_shown(worktree, ["numbers.txt"], [1], digest)

    assert applied.describe("/there") == "Applied to /there: 1 hunk of numbers.txt."
    assert (worktree.main / "numbers.txt").read_text() == NUMBERED.replace(
        "line 12\n", "line 12 (worker)\n"
    )
    assert await landed_shown(worktree, "numbers.txt") == {1}
    assert await landed_shown(worktree, "gone.txt") == set()
    with pytest.raises(ChangesError, match="no such hunk"):
        await apply_shown(worktree, ["numbers.txt"], [2], digest)


async def test_a_change_since_it_was_shown_or_a_clash_writes_nothing(tmp_path: Path) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    worker_edits(worktree)
    shown = await read_changes(worktree)
    paths = [change.path for change in shown.files]
    digest = shown_digest(shown.files)
    (worktree.path / "added.py").write_text("print('changed since')\n")
    with pytest.raises(ChangesError, match="since you were shown it"):
        await apply_shown(worktree, paths, None, digest)
    with pytest.raises(ChangesError, match="since you were shown it"):
        await discard_shown(worktree, "added.py", None, shown_digest([shown.file("added.py")]))
    assert (worktree.path / "added.py").read_text() == "print('changed since')\n"

    now = await read_changes(worktree)
    (worktree.main / "numbers.txt").write_text(NUMBERED.replace("line 1\n", "line 1 (mine)\n"))
    before = run_git(worktree.main, "status", "--porcelain")
    with pytest.raises(ChangesError) as refused:
        await apply_shown(worktree, paths, None, shown_digest(now.files))
    assert str(refused.value).startswith(
        "Not applied: the worker's change overlaps your uncommitted edits to numbers.txt in "
        f"{worktree.main}, and does not fit next to them. Nothing changed there."
    )
    assert run_git(worktree.main, "status", "--porcelain") == before
    assert run_git(worktree.main, "stash", "list") == ""
    assert not (worktree.main / "added.py").exists()
