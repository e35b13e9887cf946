"""CheckpointActions: the window's undo, redo, rewind, diff and "compare with now".

The window makes one and hands it each main conversation it shows (`follow`): it adds
"changed N files" and its links to every finished call card and to the inspector, and
"Rewind to here" among every user message's actions; worker panes' cards get theirs
through `attach_workers`. Every restore goes through the desk's Checkpointer, so it is
a checkpoint itself and can be undone ("redo"). A remote folder's checkpoints are its
host's: the cards' links read and act there (`CheckpointsThere`).

An applied edit's or write's card offers, per file, Accept (reviewed: off the "Review
changes" bar) and Reject: that file back as it was before the call, as "Undo this call"
restores it (conflicts asked about), and the model told with its next message.

A main conversation that runs in the melgui host has its checkpoints there: its cards,
review bar, Undo and a file's Accept and Reject ask the host as a remote folder's do
(`HostedCheckpoints`), and its Rewind is the host's, files and list in one step.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any, Protocol

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from melgui.core.agent.session import AgentSession
from melgui.core.protocol.call_life import CallPhase
from melgui.core.protocol.calls import shorten
from melgui.core.protocol.tooling import RestoresThere
from melgui.core.store.checkpoints.checkpointer import Checkpointer
from melgui.core.store.checkpoints.log import CheckpointRecord
from melgui.core.store.checkpoints.restore import Choice, PathPlan
from melgui.core.store.checkpoints.sent import undone_by
from melgui.core.store.checkpoints.versions import version_text
from melgui.desk.rewind import RewindPlan, calls_from, plan_rewind, rewind, rewound_note
from melgui.host.remote_session import RemoteSession
from melgui.remote.link import LinkError
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.checkpoints.dialogs import ConflictDialog, DiffDialog, RewindDialog
from melgui.ui.checkpoints.hosted import HostedCheckpoints
from melgui.ui.checkpoints.notes import checkpoint_note, file_review, rejected_note
from melgui.ui.checkpoints.review_bar import ReviewBar, summed, turn_changes, undo_file
from melgui.ui.checkpoints.there import CheckpointsThere, plan_there
from melgui.ui.inspector.call_book import CallRecord
from melgui.ui.inspector.inspector import Inspector
from melgui.ui.runtime.aio import TaskKeeper
from melgui.ui.runtime.theme import Colors

FINISHED: frozenset[CallPhase] = frozenset({"ok", "error", "interrupted", "cancelled"})
# A rewind done by a host: (plan_only, choices, continue_from_there) -> its answer.
RestoreThere = Callable[[bool, dict[str, str] | None, bool], Awaitable[dict[str, Any]]]


class Panes(Protocol):
    """The window's panes (ui/panes/manager.py's PaneManager), as the actions read them."""

    def panes(self) -> Sequence[tuple[object, object]]: ...


class CheckpointActions(QObject):
    """`checkpoints()`: the desk's Checkpointer for the folder now; `say`: a line for the
    status bar; `parent`: the window, whose chat views (workers' too) it looks after."""

    changed = Signal()  # files were restored: cards and the inspector were redrawn
    dialogOpened = Signal(object)  # a dialog is open (tests drive it)

    def __init__(
        self, checkpoints: Callable[[], Checkpointer], tasks: TaskKeeper, colors: Colors,
        say: Callable[[str], None], parent: QWidget,
    ) -> None:  # fmt: skip
        super().__init__(parent)
        self._checkpoints = checkpoints
        self.tasks = tasks
        self.colors = colors
        self._say = say
        self.parent_widget = parent
        self.last_restore: CheckpointRecord | None = None
        self.last_there: dict[str, Any] | None = None
        self.session: AgentSession | RemoteSession | None = None
        self.chat: ChatView | None = None
        self.inspector: Inspector | None = None
        self.there: CheckpointsThere | None = None  # a remote folder's: its host's records
        self.hosted = False  # `there` is the melgui host's, which runs the conversation
        self.accepted: set[tuple[int, str]] = set()  # (checkpoint, path) accepted on a card
        tasks.spawn(self._tidy(), what="tidying checkpoints")

    def set_colors(self, colors: Colors) -> None:
        self.colors = colors

    @property
    def checkpoints(self) -> Checkpointer:
        return self._checkpoints()

    def follow(
        self, session: AgentSession | RemoteSession, chat: ChatView, inspector: Inspector
    ) -> None:
        """Hook the chat view and inspector of the main conversation shown now (once: the
        window keeps them when the host continues the conversation shown); the window
        draws the chat after this. One in the melgui host has its checkpoints there."""
        hooked = chat is self.chat and inspector is self.inspector
        self.session, self.chat, self.inspector = session, chat, inspector
        there: RestoresThere | None
        if isinstance(session, RemoteSession):
            there = HostedCheckpoints(session)
        else:
            tools = session.loop.tools
            there = tools if isinstance(tools, RestoresThere) else None
        self.there = CheckpointsThere(there, self.tasks, self._redraw) if there else None
        self.hosted = isinstance(there, HostedCheckpoints)
        if hooked:
            return
        chat.card_extra = self.card_extra
        chat.transcript.hover.rewind = True  # "Rewind to here" on the person's messages
        chat.actionRequested.connect(self.on_action)
        chat.actionRequested.connect(partial(self.on_file_action, chat))
        inspector.detail.extra_html = self.detail_extra
        inspector.detail.actionRequested.connect(self.on_action)
        self.review = ReviewBar(self.colors)
        chat.add_above_composer(self.review)
        self.review.undoRequested.connect(
            lambda path: self.tasks.spawn(self.undo_one_file(path), what="undo a file")
        )
        self.review.reviewRequested.connect(
            lambda: self.tasks.spawn(self.show_turn_diff(), what="diff")
        )
        self.review.fileAccepted.connect(self._accepted_in_bar)
        chat.bridge.busyChanged.connect(self._turn_ended)

    def _turn_ended(self, busy: bool) -> None:
        if not busy:
            self.tasks.spawn(self.refresh_review(), what="listing the turn's changes")

    def turn_calls(self) -> list[str]:
        """The ids of the calls since the person's last message."""
        if self.session is None:
            return []
        messages = self.session.conversation.messages
        start = max((i for i, m in enumerate(messages) if m.role == "user"), default=0)
        return [call.id for m in messages[start:] for call in m.tool_calls]

    def turn_records(self) -> list[CheckpointRecord]:
        """The checkpoints of the calls since the person's last message."""
        ids = self.turn_calls()
        records = self.checkpoints.for_calls(ids) if ids else []
        return [r for r in records if not r.is_restore and r.files]

    async def refresh_review(self) -> None:
        if self.there is not None:  # a remote folder: its host counts the lines there
            try:
                turn = await self.there.turn(self.turn_calls())
            except LinkError:
                return  # the bar stays as it was; the cards say what changed
            self.review.show_files(summed([{f.path: (f.added, f.removed) for f in lines}
                                           for _, lines in turn]))  # fmt: skip
            return
        records = self.turn_records()
        files = await turn_changes(self.checkpoints, records)
        undone = {p for r in records if self.undone_by(r) is not None for p in self._paths(r)}
        self.review.show_files([f for f in files if f.path not in undone])

    @staticmethod
    def _paths(record: CheckpointRecord) -> set[str]:
        return {change.path for change in record.files}

    async def undo_one_file(self, path: str) -> CheckpointRecord | None:
        if self.there is not None:
            try:
                done = self.last_there = await self.there.undo_file(self.turn_calls(), path)
            except LinkError as exc:
                self._say(f"Cannot undo {path} there: {exc}")
                return None
            self.review.accept(path)
            self._say(f"Undid {path} there" if done else f"Nothing to undo for {path}")
            return None
        records = self.turn_records()
        if not records:
            return None
        restore = await undo_file(self.checkpoints, records, path)
        self.review.accept(path)  # back as before the turn: nothing left to review
        self._restored(restore, f"Undid {path}")
        return restore

    async def show_turn_diff(self) -> None:
        if self.there is not None:
            there = self.there
            try:
                turn = await there.turn(self.turn_calls())
                texts = [await there.diff(record.id, False) for record, _ in turn]
            except LinkError as exc:
                self._say(f"Cannot read the turn's changes there: {exc}")
                return
        else:
            texts = [await self.checkpoints.diff(record) for record in self.turn_records()]
        dialog = DiffDialog("The turn's changes", "\n".join(texts), self.parent_widget)
        self.dialogOpened.emit(dialog)
        await dialog.answer()

    async def _tidy(self) -> None:
        """At start: complete what a killed melgui left running, drop what is too old."""
        checkpoints = self.checkpoints
        if checkpoints.log.running(checkpoints.folder):
            await checkpoints.recover()
            if self.chat is not None:
                self.chat.refresh_cards()
        await checkpoints.prune()

    def attach_workers(self, manager: Panes) -> None:
        """Worker panes' call cards show their checkpoints too (undo, diff; no rewind:
        that belongs to the main conversation): each of `manager`'s panes that shows a
        chat has it hooked, once (called as the panes change)."""
        for _info, pane in manager.panes():
            chat = getattr(pane, "chat", None)  # a terminal pane has none
            if isinstance(chat, ChatView) and chat is not self.chat and chat.card_extra is None:
                chat.card_extra = self.card_extra
                chat.actionRequested.connect(self.on_action)
                chat.actionRequested.connect(partial(self.on_file_action, chat))

    # -- what cards show -----------------------------------------------------------------

    def record_for_call(self, call_id: str) -> CheckpointRecord | None:
        found = [r for r in self.checkpoints.for_calls([call_id]) if not r.is_restore]
        return found[-1] if found else None

    def undone_by(self, record: CheckpointRecord) -> CheckpointRecord | None:
        """The restore that undid `record`, unless a later one undid that (redo)."""
        return undone_by(self.checkpoints, record)

    def card_extra(self, call_id: str, tool: str, status: CallPhase) -> str:
        if status not in FINISHED:
            return ""
        if self.there is not None:  # a remote folder, or the melgui host: as it last said
            known = self.there.note(call_id)
            if known is None:
                return ""
            note = checkpoint_note(*known, self.colors)
            if not self.hosted:
                return note
            made, undone = known
            accepted = {path for number, path in self.accepted if number == made.id}
            return note + file_review(made, undone, accepted, self.colors)
        if not self._may_have_checkpoint(tool):
            return ""
        record = self.record_for_call(call_id)
        if record is None:
            return ""
        undone = self.undone_by(record)
        accepted = {path for number, path in self.accepted if number == record.id}
        note = checkpoint_note(record, undone, self.colors)
        return note + file_review(record, undone, accepted, self.colors)

    def _may_have_checkpoint(self, tool: str) -> bool:
        """Only a tool that takes checkpoints has any (one not known now may have had)."""
        session = self.session
        found = session.loop.catalog.get(tool) if isinstance(session, AgentSession) else None
        return found is None or found.takes_checkpoint

    def detail_extra(self, call: CallRecord) -> str:
        return self.card_extra(call.call.id, call.call.name, call.status)

    # -- actions ---------------------------------------------------------------------------

    def on_action(self, verb: str, argument: str) -> None:
        try:
            number = int(argument)
        except ValueError:
            return
        match verb:
            case "undo" if self.there is not None:
                self.tasks.spawn(self.undo_there(self.there, number), what="undo there")
            case "undo":
                self.tasks.spawn(self.undo(number), what="undo")
            case "diff" | "compare" if self.there is not None:
                diff = self.show_diff_there(self.there, number, verb == "compare")
                self.tasks.spawn(diff, what="diff there")
            case "diff" | "compare":
                self.tasks.spawn(self.show_diff(number, verb == "compare"), what="diff")
            case "rewind":
                self.tasks.spawn(self.rewind(number), what="rewind")
            case _:
                pass

    def on_file_action(self, chat: ChatView, verb: str, argument: str) -> None:
        """A file's Accept or Reject on an edit's card: act:<verb>/<checkpoint>/<path>."""
        if verb not in ("accept", "reject"):
            return
        number, _, path = argument.partition("/")
        there = self.there
        record: CheckpointRecord | None = None
        if number.isdigit() and there is not None:  # as the host there last said it
            record = there.by_id.get(int(number))
        elif number.isdigit():
            record = self.checkpoints.log.get(int(number))
        if record is None or path not in {c.path for c in record.files}:
            return
        if verb == "accept":
            self.accept_file(record, path)
        elif there is not None:
            work = self.reject_there(chat, there, record, path)
            self.tasks.spawn(work, what="reject a file there")
        else:
            self.tasks.spawn(self.reject_file(chat, record, path), what="reject a file")

    def accept_file(self, record: CheckpointRecord, path: str) -> None:
        """The change to `path` is reviewed: kept, and off the Review changes bar."""
        self.accepted.add((record.id, path))
        self.review.accept(path)
        self._refresh_cards()

    def _accepted_in_bar(self, path: str) -> None:
        """Accepted on the bar: the cards of the turn's calls on that file say so too."""
        records = self.turn_records() if self.there is None else self._turn_records_there()
        for record in records:
            if path in self._paths(record):
                self.accepted.add((record.id, path))
        self._refresh_cards()

    def _turn_records_there(self) -> list[CheckpointRecord]:
        """The turn's calls' records as the host there last said them."""
        assert self.there is not None
        known = [self.there.known.get(call) for call in self.turn_calls()]
        return [found[0] for found in known if found is not None]

    async def reject_file(
        self, chat: ChatView, record: CheckpointRecord, path: str
    ) -> CheckpointRecord | None:
        """`path` back as it was before `record`'s call (every other file as it is now);
        a change made to it since is asked about; the model hears of it next."""
        plan = await self.checkpoints.plan([record.id])
        choices = await self.ask_conflicts(tuple(p for p in plan.conflicts if p.path == path))
        if choices is None:
            return None
        others = {c.path for c in record.files if c.path != path}
        choices.update(dict.fromkeys(others, "now"))
        restore = await self.checkpoints.restore([record.id], choices)
        self.accepted.discard((record.id, path))
        chat.bridge.session.preface(rejected_note(record, path))
        self._restored(restore, f"Rejected the change to {path}")
        if chat is self.chat:
            await self.refresh_review()
        return restore

    async def reject_there(
        self, chat: ChatView, there: CheckpointsThere, record: CheckpointRecord, path: str
    ) -> None:
        """`reject_file` by the host that keeps the checkpoints (the melgui host, which
        runs the conversation: the model there is told)."""
        try:
            planned = await there.restore(record.id, True)
            mine = {**planned, "conflicts": [p for p in planned["conflicts"] if p == path]}
            choices = await self.ask_conflicts_there(mine)
            if choices is None:
                return
            choices.update(dict.fromkeys((c.path for c in record.files if c.path != path), "now"))
            self.last_there = await there.restore(record.id, False, dict(choices))
        except LinkError as exc:  # its plain words; nothing was touched
            self._say(f"Cannot reject the change to {path}: {exc}")
            return
        self.accepted.discard((record.id, path))
        chat.bridge.session.preface(rejected_note(record, path))
        there.forget()  # the card's "undone" and "redo"
        self._say(
            f"Rejected the change to {path}: 1 file restored there "
            "(the restore can itself be undone)"
        )
        self._review_again()
        self.changed.emit()

    def _refresh_cards(self) -> None:
        for chat in self.parent_widget.findChildren(ChatView):
            if chat.card_extra is not None:
                chat.refresh_cards()

    async def undo(self, record_id: int) -> CheckpointRecord | None:
        """Undo one checkpoint (a call, or a restore: redo); conflicts are asked about."""
        plan = await self.checkpoints.plan([record_id])
        choices = await self.ask_conflicts(plan.conflicts)
        if choices is None:
            return None
        restore = await self.checkpoints.restore([record_id], choices)
        self._restored(restore, f"Undid checkpoint #{record_id}")
        return restore

    async def undo_there(self, there: CheckpointsThere, record_id: int) -> None:
        """Undo a remote folder's checkpoint (a call's, or a restore's: redo) by its host;
        a file changed there since is asked about as here."""
        try:
            planned = await there.restore(record_id, True)
            choices = await self.ask_conflicts_there(planned)
            if choices is None:
                return
            done = self.last_there = await there.restore(record_id, False, dict(choices))
        except LinkError as exc:  # its plain words; nothing was touched
            self._say(f"Cannot undo there: {exc}")
            return
        there.forget()  # the cards' "undone" and "redo" change
        count = len(done["files"])
        self._say(
            f"Undid checkpoint #{record_id}: {count} file{'s' if count != 1 else ''} restored "
            "there (the restore can itself be undone)"
        )
        self._review_again()
        self.changed.emit()

    def _review_again(self) -> None:
        """The review bar lists again what the turn's calls changed that is not undone."""
        if self.chat is not None:
            self.tasks.spawn(self.refresh_review(), what="listing the turn's changes")

    async def show_diff_there(self, there: CheckpointsThere, record_id: int, compare: bool) -> None:
        record = there.by_id.get(record_id)
        try:
            text = await there.diff(record_id, compare)
        except LinkError as exc:
            self._say(f"Cannot read the diff there: {exc}")
            return
        tool, summary = (record.tool, record.summary) if record else ("", "")
        title = f"#{record_id} {tool}: the call's version → now" if compare else (
            f"#{record_id} {tool} {summary}"
        )  # fmt: skip
        dialog = DiffDialog(title, text, self.parent_widget)
        self.dialogOpened.emit(dialog)
        await dialog.answer()

    async def rewind(self, index: int) -> CheckpointRecord | None:
        session, chat = self.session, self.chat
        if session is None or chat is None:
            return None
        if isinstance(session, RemoteSession):  # in the melgui host: files and list there
            await self._rewind_hosted(HostedCheckpoints(session), index)
            return None
        if isinstance(session.loop.tools, RestoresThere):  # a remote folder's: its host's
            await self._rewind_there(session.loop.tools, index)
            return None
        plan = await plan_rewind(self.checkpoints, session.conversation.messages, index)
        files = len(plan.restore.paths)
        dialog = RewindDialog(shorten(plan.text, 120), files, session.busy, self.parent_widget)
        self.dialogOpened.emit(dialog)
        if not await dialog.answer():
            return None
        choices = await self.ask_conflicts(plan.restore.conflicts)
        if choices is None:
            return None
        text = plan.text
        restored = await self._rewind(session, plan, choices, dialog.continue_from_there)
        if dialog.continue_from_there and not chat.input.toPlainText():
            chat.input.setPlainText(text)
        self._restored(restored, "Rewound")
        return restored

    async def _rewind(
        self,
        session: AgentSession,
        plan: RewindPlan,
        choices: dict[str, Choice],
        continue_from_there: bool,
    ) -> CheckpointRecord | None:
        return await rewind(
            self.checkpoints,
            session,
            plan,
            choices,
            continue_from_there=continue_from_there,
        )

    async def _rewind_there(self, there: RestoresThere, index: int) -> None:
        """A remote folder's rewind: the host there plans and restores from its own
        checkpoints; a file changed there since is asked about as here; the list is
        cut here."""
        session = self.session
        assert session is not None
        calls = calls_from(session.conversation.messages, index)

        async def restore(
            plan_only: bool, choices: dict[str, str] | None, _: bool
        ) -> dict[str, Any]:
            return await there.restore_checkpoints(calls, plan_only, choices)

        await self._rewind_by(restore, index, cut_here=True)

    async def _rewind_hosted(self, hosted: HostedCheckpoints, index: int) -> None:
        """The melgui host's rewind of the conversation it runs: it plans and restores
        from its checkpoints and cuts its list, in one step; every view takes the list."""

        async def restore(
            plan_only: bool, choices: dict[str, str] | None, cont: bool
        ) -> dict[str, Any]:
            return await hosted.rewind(
                index, plan_only=plan_only, choices=choices, continue_from_there=cont
            )

        await self._rewind_by(restore, index, cut_here=False)

    async def _rewind_by(self, restore: RestoreThere, index: int, *, cut_here: bool) -> None:
        """Rewind by a host: `restore` plans, then puts back (and, `cut_here` False, cuts
        the list there too); a file changed since is asked about as here."""
        session, chat = self.session, self.chat
        assert session is not None and chat is not None
        messages = session.conversation.messages
        if not 0 <= index < len(messages) or messages[index].role != "user":
            return
        text = messages[index].content
        try:
            planned = await restore(True, None, False)
        except LinkError as exc:  # its plain words; nothing was touched
            self._say(f"Cannot rewind there: {exc}")
            return
        files = len(planned["files"])
        dialog = RewindDialog(shorten(text, 120), files, session.busy, self.parent_widget)
        self.dialogOpened.emit(dialog)
        if not await dialog.answer():
            return
        if dialog.continue_from_there and session.busy:
            self._say("Cannot rewind the conversation while a turn runs")
            return
        choices = await self.ask_conflicts_there(planned)
        if choices is None:
            return
        cont = dialog.continue_from_there
        try:
            done = self.last_there = await restore(False, dict(choices), cont)
        except LinkError as exc:
            self._say(f"Cannot rewind there: {exc}")
            return
        if cont and cut_here:
            note = rewound_note(text, list(done["files"]))
            session.branch(session.conversation.messages[:index], "rewind", note)
            session.preface(note)
        if cont and not chat.input.toPlainText():
            chat.input.setPlainText(text)
        count, kept = len(done["files"]), sum(c == "now" for c in choices.values())
        changed = f"; {kept} changed there since kept as they are" if kept else ""
        self._say(f"Rewound: {count} file{'s' if count != 1 else ''} restored there{changed}")
        if self.there is not None:
            self.there.forget()
        self._review_again()
        self.changed.emit()

    async def ask_conflicts(self, conflicts: tuple[PathPlan, ...]) -> dict[str, Choice] | None:
        if not conflicts:
            return {}
        dialog = ConflictDialog(conflicts, self.parent_widget)
        await dialog.load_versions(self._read_version)
        self.dialogOpened.emit(dialog)
        if not await dialog.answer():
            return None
        return dialog.choices()

    async def _read_version(self, path: str, choice: Choice, blob: str | None) -> str:
        return await version_text(self.checkpoints, path, choice, blob)

    async def ask_conflicts_there(self, planned: dict[str, Any]) -> dict[str, Choice] | None:
        """The same dialog for a remote folder, its versions as the host's plan sent them."""
        versions: dict[str, dict[str, str | None]] = planned.get("versions") or {}
        plans = tuple(plan_there(path, versions.get(path, {})) for path in planned["conflicts"])
        if not plans:
            return {}
        dialog = ConflictDialog(plans, self.parent_widget)

        async def read(path: str, choice: Choice, blob: str | None) -> str:
            return versions.get(path, {}).get(choice) or "(no file)"

        await dialog.load_versions(read)
        self.dialogOpened.emit(dialog)
        if not await dialog.answer():
            return None
        return dialog.choices()

    async def show_diff(self, record_id: int, compare: bool) -> None:
        record = self.checkpoints.log.get(record_id)
        if record is None:
            return
        if compare:
            text = await self.checkpoints.compare_with_now(record)
            title = f"#{record.id} {record.tool}: the call's version → now"
        else:
            text = await self.checkpoints.diff(record)
            title = f"#{record.id} {record.tool} {record.summary}"
        dialog = DiffDialog(title, text, self.parent_widget)
        self.dialogOpened.emit(dialog)
        await dialog.answer()

    def _redraw(self) -> None:
        """Draw the cards' and the inspector's checkpoint lines again."""
        self._refresh_cards()
        if self.inspector is not None:
            self.inspector.detail.show_record(self.inspector.detail.record)

    def _restored(self, restore: CheckpointRecord | None, what: str) -> None:
        self.last_restore = restore
        self._redraw()
        count = len(restore.files) if restore else 0
        self._say(
            f"{what}: {count} file{'s' if count != 1 else ''} restored "
            "(the restore can itself be undone)"
        )
        self.changed.emit()
