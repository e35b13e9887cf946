"""What the Changes view's buttons do: apply a hunk, a file or everything (asking before
stashing the person's edits), merge the branch (asking before committing the worker's
loose edits), abort a stopped merge, discard a hunk, a file or the whole worktree (each
asking first, saying what goes). A worker's worktree on another machine is acted on
there, by its host (`view.there`): applied onto the folder there, merged, discarded, all
or nothing, never leaving conflicts there. Each runs one at a time, says what happened in
plain words, and ends by reading the worktree again."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from PySide6.QtWidgets import QLabel, QMessageBox, QWidget

from melgui.core.worktrees.changes.apply import (
    Applied,
    DirtyMainFolder,
    Part,
    apply_parts,
    still_to_apply,
)
from melgui.core.worktrees.changes.diff import FileChange
from melgui.core.worktrees.changes.discard import describe_part, discard_part
from melgui.core.worktrees.changes.git import ChangesError
from melgui.core.worktrees.changes.reading import WorktreeChanges
from melgui.core.worktrees.merge import (
    MergeOutcome,
    MergeState,
    UncommittedWork,
    abort_merge,
    commit_worktree,
    discard,
    merge_branch,
)
from melgui.core.worktrees.model import Worktree
from melgui.ui.changes.diff_view import FileDiffView
from melgui.ui.changes.questions import Question
from melgui.ui.changes.there import BranchThere
from melgui.ui.runtime.aio import TaskKeeper

Role = QMessageBox.ButtonRole
STASH = "Apply and merge my edits back in"
COMMIT = "Commit them and merge"
MERGE = "Merge"
DISCARD = "Discard"
ABORT = "Abort the merge"
WORKER_COMMIT = "The worker's uncommitted edits to {files}"


class ChangesView(Protocol):
    """What the actions use of the view (view.py's ChangesView)."""

    worktree: Worktree
    there: BranchThere | None  # the worktree is on another machine: merged there
    changes: WorktreeChanges | None
    merge: MergeState | None
    question: Question | None
    busy: str
    tasks: TaskKeeper
    diff: FileDiffView
    status: QLabel

    def say(self, text: str, *, error: bool = False, warn: bool = False) -> None: ...

    def set_busy(self, what: str) -> None: ...

    async def reload(self) -> None: ...

    def as_parent(self) -> QWidget: ...


class ChangesActions:
    def __init__(self, view: ChangesView) -> None:
        self.view = view

    # -- the buttons -------------------------------------------------------------------

    def apply_hunk(self, index: int) -> None:
        change = self.view.diff.change
        if change is not None:
            there = self.view.there
            if there is not None:
                self._start("Applying the hunk", lambda: self._apply_there([change], [index]))
                return
            self._start("Applying the hunk", lambda: self._apply([(change, [index])]))

    def apply_file(self) -> None:
        change, worktree = self.view.diff.change, self.view.worktree
        if change is not None:

            async def work() -> None:
                if self.view.there is not None:
                    await self._apply_there([change], None)
                    return
                await self._apply(await still_to_apply(worktree, [change]))

            self._start(f"Applying {change.path}", work)

    def apply_all(self) -> None:
        changes, worktree = self.view.changes, self.view.worktree
        if changes is not None and changes.files:
            files = changes.files

            async def work() -> None:
                if self.view.there is not None:
                    await self._apply_there(files, None)
                    return
                await self._apply(await still_to_apply(worktree, files))

            self._start("Applying every file", work)

    def merge(self) -> None:
        self._start("Merging the branch", self._merge)

    def discard(self) -> None:
        self._start("Discarding the worker's changes", self._discard)

    def abort(self) -> None:
        self._start("Aborting the merge", self._abort)

    def discard_hunk(self, index: int) -> None:
        change = self.view.diff.change
        if change is not None:
            self._start("Discarding the hunk", lambda: self._discard_part(change, [index]))

    def discard_file(self) -> None:
        change = self.view.diff.change
        if change is not None:
            self._start(f"Discarding {change.path}", lambda: self._discard_part(change, None))

    # -- the work ----------------------------------------------------------------------

    def _start(self, what: str, work: Callable[[], Awaitable[None]]) -> None:
        if self.view.busy:
            self.view.say(f"Wait until this finishes: {self.view.busy}.", warn=True)
            return
        self.view.set_busy(what)
        self.view.tasks.spawn(self._run(work), what=what)

    async def _run(self, work: Callable[[], Awaitable[None]]) -> None:
        try:
            await work()
        except ChangesError as exc:
            self.view.say(str(exc), error=True)
        finally:
            self.view.question = None
        try:
            await self.view.reload()
        finally:
            self.view.set_busy("")

    async def _ask(self, title: str, text: str, choices: list[tuple[str, Role]]) -> str:
        question = Question(self.view.as_parent(), title, text, choices)
        self.view.question = question
        try:
            return await question.choice()
        finally:
            self.view.question = None

    async def _apply(self, parts: Sequence[Part]) -> None:
        worktree = self.view.worktree
        try:
            applied: Applied = await apply_parts(worktree, parts)
        except DirtyMainFolder as refused:
            choice = await self._ask(
                "Uncommitted changes in the main folder",
                f"{refused}\n\nSet your edits aside (git stash), apply the change, and merge "
                "your edits back in over it? If they conflict, both stay in the file between "
                "conflict marks for you to resolve, and the stash is kept until you drop it.",
                [(STASH, Role.AcceptRole)],
            )
            if choice != STASH:
                self.view.say(str(refused), error=True)
                return
            applied = await apply_parts(worktree, parts, stash=True)
        self.view.say(applied.describe())

    async def _apply_there(self, files: Sequence[FileChange], hunks: Sequence[int] | None) -> None:
        """Done there by its host, all or nothing: a change that conflicts with the folder
        there or with the person's edits there is refused and changes nothing (said)."""
        there = self.view.there
        assert there is not None
        self.view.say(await there.apply(files, hunks))

    async def _merge(self) -> None:
        view, worktree = self.view, self.view.worktree
        changes = view.changes
        commits = len(changes.commits) if changes is not None else 0
        loose = changes.uncommitted if changes is not None else ()
        into = (view.merge.branch if view.merge is not None else "") or "the current HEAD"
        what = [f"its {commits} commit{'s' if commits != 1 else ''}"] if commits else []
        message = WORKER_COMMIT.format(
            files=", ".join(loose[:8]) + (" …" if len(loose) > 8 else "")
        )
        if loose:
            what.append(
                f"its uncommitted edits to {len(loose)} file{'s' if len(loose) != 1 else ''}, "
                f"committed first on {worktree.branch} as “{message}”"
            )
        there = view.there
        if there is not None:
            text = (
                f"Merge {worktree.branch} ({' and '.join(what) or 'nothing yet'}) into "
                f"{worktree.main} on {there.host}, on its current branch? Your uncommitted "
                "edits there are set aside and put back over the merge. A merge that would "
                "conflict changes nothing there: it says which files conflict."
            )
        else:
            text = (
                f"Merge {worktree.branch} ({' and '.join(what) or 'nothing yet'}) into the "
                f"main folder's {into}? Your uncommitted edits there are set aside and put "
                "back over the merge; conflicts, if any, are left for you to resolve."
            )
        choice = await self._ask(
            "Merge the worker's branch", text, [(COMMIT if loose else MERGE, Role.AcceptRole)]
        )
        if choice not in (MERGE, COMMIT):
            view.say("Not merged.")
            return
        if there is not None:  # done there, whole or not at all
            whole = await there.merge(message if loose else None)
            view.say(whole.message, warn=not whole.merged)
            return
        if loose:
            await commit_worktree(worktree, message)
        try:
            outcome: MergeOutcome = await merge_branch(worktree)
        except UncommittedWork as still:
            view.say(str(still), error=True)
            return
        view.say(outcome.message, warn=not outcome.merged or bool(outcome.conflicts))

    async def _discard(self) -> None:
        view, worktree = self.view, self.view.worktree
        changes = view.changes
        commits = len(changes.commits) if changes is not None else 0
        loose = len(changes.uncommitted) if changes is not None else 0
        on = f" on {view.there.host}" if view.there is not None else ""
        choice = await self._ask(
            "Discard the worker's changes",
            f"Put {worktree.branch} back at its base {worktree.base[:10]}? This drops its "
            f"{commits} commit{'s' if commits != 1 else ''} and the uncommitted edits to "
            f"{loose} file{'s' if loose != 1 else ''} in {worktree.path}{on}. Anything not applied "
            "or merged is lost.",
            [(DISCARD, Role.DestructiveRole)],
        )
        if choice != DISCARD:
            view.say("Nothing discarded.")
            return
        if view.there is not None:
            await view.there.discard()
        else:
            await discard(worktree)
        view.say(f"Discarded: {worktree.branch} is back at its base.")

    async def _discard_part(self, change: FileChange, hunks: list[int] | None) -> None:
        worktree = self.view.worktree
        kept = (
            ""
            if change.uncommitted or change.status == "added"
            else f" The worker's commits on {worktree.branch} keep it; the worktree's file "
            "undoes it, as an uncommitted edit."
        )
        there = self.view.there
        on = f" on {there.host}" if there is not None else ""
        choice = await self._ask(
            "Discard part of the worker's change",
            f"Discard {describe_part(change, hunks)}? This writes only the worker's "
            f"worktree {worktree.path}{on}; what is not applied or merged is lost.{kept}",
            [(DISCARD, Role.DestructiveRole)],
        )
        if choice != DISCARD:
            self.view.say("Nothing discarded.")
            return
        if there is not None:
            self.view.say(await there.discard_part(change, hunks))
            return
        done = await discard_part(worktree, change, hunks)
        self.view.say(done.describe())

    async def _abort(self) -> None:
        choice = await self._ask(
            "Abort the merge",
            "Abort the merge in the main folder? It goes back to how it was before the merge; "
            "conflict resolutions you made there are lost.",
            [(ABORT, Role.DestructiveRole)],
        )
        if choice != ABORT:
            return
        await abort_merge(self.view.worktree.main)
        self.view.say("The merge was aborted; the main folder is as it was before it.")
