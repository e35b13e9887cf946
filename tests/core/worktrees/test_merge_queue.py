"""The merge queue's choices on real git: stopping for the person when tests fail (and
sending the output on their word), an untrusted folder's test command not run, a busy
worker passed over, a main folder mid-merge, and nothing landing before the start."""

from __future__ import annotations

from pathlib import Path

import pytest

from melgui.core.config.trust import FolderTrust
from melgui.core.worktrees.merge_queue.queue import MergeQueue, QueueHooks, QueueItem, QueueSettings
from melgui.core.worktrees.model import Worktree
from tests.fakes.worktree_repos import (
    add_worker,
    change_lines,
    make_repo_with_worktree,
    run_git,
    use_test_identity,
)

CHECK = "if grep -q broken numbers.txt; then echo 'numbers: broken on line 7'; exit 3; fi"


@pytest.fixture(autouse=True)
def _identity(monkeypatch: pytest.MonkeyPatch) -> None:
    use_test_identity(monkeypatch)


class Hooks(QueueHooks):
    def __init__(self, command: str = CHECK, on_failure: str = "stop") -> None:
        self.command = command
        self.on_failure = on_failure
        self.busy_keys: set[str] = set()
        self.sent: list[QueueItem] = []
        self.moved: dict[str, str] = {}

    def settings(self) -> QueueSettings:
        return QueueSettings(self.command, 30.0, self.on_failure)  # type: ignore[arg-type]

    def busy(self, key: str) -> bool:
        return key in self.busy_keys

    def send_back(self, item: QueueItem) -> None:
        self.sent.append(item)

    def rebased(self, key: str, worktree: Worktree) -> None:
        self.moved[key] = worktree.base


def _two_workers(tmp_path: Path) -> tuple[Worktree, Worktree]:
    one = make_repo_with_worktree(tmp_path, "one")
    two = add_worker(one.main, "two")
    change_lines(one.path / "numbers.txt", {2: "line 2 (one)"})
    run_git(one.path, "commit", "-q", "-am", "one")
    change_lines(two.path / "numbers.txt", {7: "line 7 broken (two)"})
    run_git(two.path, "commit", "-q", "-am", "two")
    return one, two


async def test_failed_tests_stop_the_queue_until_the_person_sends_them(tmp_path: Path) -> None:
    one, two = _two_workers(tmp_path)
    FolderTrust().trust(one.main)
    hooks = Hooks()
    queue = MergeQueue(hooks)
    queue.add("one", "worker one", one)
    queue.add("two", "worker two", two)
    queue.add("three", "worker three", add_worker(one.main, "three"))
    first = run_git(one.main, "rev-parse", "HEAD")
    assert run_git(one.main, "rev-parse", "HEAD") == first  # added, not started

    queue.start()
    await queue.wait()

    a, b, c = queue.items
    assert a.state == "merged" and b.state == "tests failed" and c.state == "waiting"
    assert b.detail == "The test command failed (exit status 3). Nothing was merged."
    assert b.output.strip() == "numbers: broken on line 7"
    assert hooks.moved["two"] == run_git(one.main, "rev-parse", "HEAD").strip()  # on one's
    assert hooks.sent == [] and queue.note.startswith("Stopped at worker two:")
    assert "line 7 broken" not in (one.main / "numbers.txt").read_text()

    assert queue.send_back("two")
    assert hooks.sent == [b] and b.state == "sent back"
    assert "exit status 3" in b.task and "numbers: broken on line 7" in b.task
    assert not queue.send_back("two")  # once


async def test_an_untrusted_folder_runs_no_test_command_and_merges_nothing(tmp_path: Path) -> None:
    one, _two = _two_workers(tmp_path)
    queue = MergeQueue(Hooks())
    queue.add("one", "worker one", one)
    head = run_git(one.main, "rev-parse", "HEAD")

    queue.start()
    await queue.wait()

    (item,) = queue.items
    assert item.state == "refused" and "not trusted" in item.detail
    assert run_git(one.main, "rev-parse", "HEAD") == head


async def test_a_busy_worker_is_passed_over_and_waits(tmp_path: Path) -> None:
    one, two = _two_workers(tmp_path)
    hooks = Hooks(command="")
    hooks.busy_keys.add("one")
    queue = MergeQueue(hooks)
    queue.add("one", "worker one", one)
    queue.add("two", "worker two", two)

    queue.start()
    await queue.wait()

    assert [item.state for item in queue.items] == ["waiting", "merged"]
    assert queue.note == "Waiting for 1 busy worker to finish; start the queue again then."


async def test_a_main_folder_mid_merge_stops_the_queue_before_anything(tmp_path: Path) -> None:
    one, _two = _two_workers(tmp_path)
    change_lines(one.main / "numbers.txt", {2: "line 2 (person)"})
    run_git(one.main, "commit", "-q", "-am", "person")
    with pytest.raises(Exception, match="non-zero"):
        run_git(one.main, "merge", "-q", one.branch)  # the person's own merge, stopped
    queue = MergeQueue(Hooks(command=""))
    queue.add("one", "worker one", one)

    queue.start()
    await queue.wait()

    (item,) = queue.items
    assert item.state == "waiting" and "middle of a merge" in item.detail
    assert not queue.running
