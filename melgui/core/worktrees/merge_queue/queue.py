"""Finished workers' branches, landed on the person's branch one at a time. Qt-free.

Nothing lands until the person starts the queue. Then each waiting branch in turn has
its loose edits committed, is rebased on what the person's branch holds now (so on every
branch that landed before it), passes the project's test command when there is one, and
is merged by the same code as the Changes view's Merge (`merge.merge_branch`: after the
rebase, a fast-forward).

- Tests fail: the worker is sent its test output as a new task and the queue goes on
  with the next branch ("send_back"; the branch waits again once the worker finishes),
  or the queue stops for the person ("stop").
- A conflict (the rebase stops: it is aborted, and the merge then leaves the conflict in
  the main folder, as a merge always has) stops the queue for the person, as does any
  refusal (the main folder mid-merge, uncommitted edits a merge would overwrite).
- A worker busy again when its turn comes is passed over and waits.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from melgui.core.worktrees.changes.git import ChangesError
from melgui.core.worktrees.merge import merge_branch, merge_state
from melgui.core.worktrees.merge_queue.steps import (
    commit_loose_edits,
    failed_tests_task,
    person_head,
    rebase_on,
    run_tests,
)
from melgui.core.worktrees.model import Worktree

log = logging.getLogger(__name__)

OnFailure = Literal["send_back", "stop"]
ItemState = Literal[
    "waiting", "rebasing", "testing", "merging", "merged", "sent back", "tests failed",
    "conflict", "refused",
]  # fmt: skip
ACTIVE: tuple[ItemState, ...] = ("rebasing", "testing", "merging")
MID_MERGE = (
    "the main folder is in the middle of a merge; resolve it and commit, or abort it, then "
    "start the queue again."
)
UNTRUSTED = (
    "the test command was not run: this folder is not trusted (Settings → Workers), and "
    "nothing was merged."
)


@dataclass(slots=True)
class QueueItem:
    """One worker's branch in the queue; `detail` says what happened, in plain words."""

    key: str  # the agent's key on the board ("pane-3")
    name: str
    worktree: Worktree
    state: ItemState = "waiting"
    detail: str = ""
    output: str = ""  # the failed tests' output
    task: str = ""  # the task made of it, sent to the worker or ready to send


@dataclass(frozen=True, slots=True)
class QueueSettings:
    test_command: str  # "" when the project has none
    timeout: float
    on_failure: OnFailure


class QueueHooks:
    """What the queue asks of the window. The defaults suit a queue without one."""

    def settings(self) -> QueueSettings:
        return QueueSettings("", 600.0, "stop")

    def folder(self, worktree: Worktree) -> Path:
        """Where the tests run: the project's place in the worktree."""
        return worktree.path

    def busy(self, key: str) -> bool:
        return False

    def send_back(self, item: QueueItem) -> None:
        """Give the worker `item.task` as a new task."""

    def rebased(self, key: str, worktree: Worktree) -> None:
        """The worker's branch now stands on `worktree.base`."""


class MergeQueue:
    def __init__(self, hooks: QueueHooks | None = None) -> None:
        self.hooks = hooks or QueueHooks()
        self.items: list[QueueItem] = []
        self.running = False
        self.note = ""  # why the queue stopped, or what it does, in plain words
        self._task: asyncio.Task[None] | None = None
        self._listeners: list[Callable[[], None]] = []

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _changed(self) -> None:
        for listener in list(self._listeners):
            listener()

    def item(self, key: str) -> QueueItem | None:
        return next((item for item in self.items if item.key == key), None)

    def add(self, key: str, name: str, worktree: Worktree, why: str = "") -> QueueItem:
        """Queue a worker's branch (again, when it was sent back or failed); `why` is
        shown until it lands."""
        item = self.item(key)
        if item is not None and item.state in ACTIVE:
            return item
        if item is None:
            item = QueueItem(key, name, worktree)
            self.items.append(item)
        else:
            item.name, item.worktree = name, worktree
            self.items.remove(item)
            self.items.append(item)  # behind the ones that waited meanwhile
        item.state, item.detail, item.output, item.task = "waiting", why, "", ""
        self._changed()
        return item

    def remove(self, key: str) -> bool:
        item = self.item(key)
        if item is None or item.state in ACTIVE:
            return False
        self.items.remove(item)
        self._changed()
        return True

    def waiting(self) -> list[QueueItem]:
        return [item for item in self.items if item.state == "waiting"]

    def start(self) -> None:
        """The person starts the queue: waiting branches land one at a time."""
        if self.running:
            return
        self.running = True
        self.note = "Landing the waiting branches one at a time."
        # The app's loop: a button's click may come while Qt, not asyncio, is running it.
        self._task = asyncio.get_event_loop().create_task(self._run(), name="merge queue")
        self._changed()

    def stop(self, why: str = "Stopped by you; the branch being landed finishes first.") -> None:
        """No branch starts landing after the current one."""
        if self.running:
            self.running = False
            self.note = why
            self._changed()

    async def wait(self) -> None:
        """Until the queue has stopped (tests use it)."""
        if self._task is not None:
            await asyncio.shield(self._task)

    def send_back(self, key: str) -> bool:
        """Send a failed branch's test output to its worker (after a "stop")."""
        item = self.item(key)
        if item is None or not item.task or item.state != "tests failed":
            return False
        item.state = "sent back"
        self.hooks.send_back(item)
        self._changed()
        return True

    async def _run(self) -> None:
        try:
            while self.running:
                item = next((i for i in self.waiting() if not self.hooks.busy(i.key)), None)
                if item is None:
                    busy = len(self.waiting())
                    self.running = False
                    self.note = (
                        f"Waiting for {busy} busy worker{'s' if busy != 1 else ''} to finish; "
                        "start the queue again then."
                        if busy
                        else "Done: every branch in the queue has been taken."
                    )
                    break
                await self._land(item)
        finally:
            self.running = False
            self._task = None
            self._changed()

    def _set(self, item: QueueItem, state: ItemState, detail: str = "") -> None:
        item.state, item.detail = state, detail
        self._changed()

    def _halt(self, item: QueueItem, state: ItemState, detail: str) -> None:
        self._set(item, state, detail)
        self.running = False
        self.note = f"Stopped at {item.name}: {detail}"

    async def _land(self, item: QueueItem) -> None:
        settings = self.hooks.settings()
        worktree = item.worktree
        try:
            state = await merge_state(worktree.main)
            if state.merging:
                self._halt(item, "waiting", MID_MERGE)
                return
            into = state.branch or "the detached HEAD"
            self._set(item, "rebasing", f"Rebasing on {into}…")
            committed = await commit_loose_edits(worktree)
            onto = await person_head(worktree.main)
            rebased = await rebase_on(worktree, onto)
            if rebased.conflicts:
                await self._merge(item, into, rebase_conflict=True)
                return
            item.worktree = worktree = rebased.worktree
            self.hooks.rebased(item.key, worktree)
            if settings.test_command and not await self._tested(item, settings, into, onto):
                return
            files = f"{committed} file{'s' if committed != 1 else ''}"
            note = f" (its loose edits to {files} committed first)" if committed else ""
            await self._merge(item, into, note=note)
        except ChangesError as exc:
            self._halt(item, "refused", str(exc))
        except Exception as exc:  # a bug must stop the queue where the person sees it
            log.exception("Landing %s failed", worktree.branch)
            self._halt(item, "refused", f"melgui failed: {type(exc).__name__}: {exc}")

    async def _tested(self, item: QueueItem, settings: QueueSettings, into: str, onto: str) -> bool:
        self._set(item, "testing", f"Running `{settings.test_command}`…")
        folder = self.hooks.folder(item.worktree)
        result = await run_tests(
            settings.test_command, folder, item.worktree.main, settings.timeout
        )
        if result.restricted:
            self._halt(item, "refused", UNTRUSTED)
            return False
        if result.ok:
            return True
        item.output = result.output
        item.task = failed_tests_task(item.worktree.branch, into, onto, result)
        if result.timed_out:
            head = "The test command did not finish before its timeout."
        elif result.exit_code is None:
            head = f"The test command could not start: {result.output.strip()}."
        else:
            head = f"The test command failed (exit status {result.exit_code})."
        if settings.on_failure == "send_back":
            self._set(item, "sent back", f"{head} Its output went to the worker as a new task.")
            self.hooks.send_back(item)
        else:
            self._halt(item, "tests failed", f"{head} Nothing was merged.")
        return False

    async def _merge(
        self, item: QueueItem, into: str, *, rebase_conflict: bool = False, note: str = ""
    ) -> None:
        self._set(item, "merging", f"Merging into {into}…")
        outcome = await merge_branch(item.worktree)
        if outcome.merged and not outcome.conflicts:
            self._set(item, "merged", outcome.message.rstrip(".") + note + ".")
            return
        if outcome.merged:  # the person's own edits met it on the way back (autostash)
            self._halt(item, "conflict", outcome.message)
            return
        why = "It did not rebase cleanly on what landed before it. " if rebase_conflict else ""
        self._halt(item, "conflict", why + outcome.message)
