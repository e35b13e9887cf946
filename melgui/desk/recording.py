"""The recording of a session in the history: one for the window, `melgui exec`,
`melgui acp` and the host alike.

    recording = start_recording(store, folder, model=model, role=role,
                                resume_id=options.resume, continue_latest=options.continue_)
    session = desk.session(recording.conversation, ..., wire=recording.record_wire)
    recording.attach(session)
    ...
    recording.close()        # flushes the journal; the caller closes the store

The window records lazily: `Recording(store, folder)` then `attach(session)` stores a new
conversation only once its first message is sent, so opening and closing the window
leaves no empty entries behind. A recording retired mid-turn (the window moved on)
goes on until that turn has ended (cancelled). The Journal does the writing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from melgui.core.agent.session import AgentSession
from melgui.core.protocol.events import WireEntry
from melgui.core.protocol.messages import Conversation, Message
from melgui.core.protocol.transport import WireListen
from melgui.core.store.export import MODEL_NOTE, models_used
from melgui.core.store.journal import Journal
from melgui.core.store.records import ToolCallRecord
from melgui.core.store.resume import Resumed, latest_conversation, resume
from melgui.core.store.store import Store
from melgui.core.thread.changes import Change, EntryAdded, EntryChanged, StateChanged
from melgui.core.thread.entries import (
    AssistantEntry,
    CallEntry,
    Pin,
    ThreadState,
    UserEntry,
    leg_started,
    turn_ended,
)


class UnknownConversationError(LookupError):
    """--resume names no stored conversation (or several); the message says which."""


class Recording:
    """One session's conversation kept in the store (created lazily on its first message
    when no conversation was started for it).

    `on_problem`: a storage failure, in plain words (once per journal); `on_stored`: a
    conversation was created for a first message; `on_turn_end`: a turn ended (the
    history's list may have changed); `name_models`: every model that answers a leg is
    named in the store (a session whose model can change mid-conversation).
    """

    def __init__(
        self,
        store: Store,
        folder: str,
        *,
        on_problem: Callable[[str], None] | None = None,
        on_stored: Callable[[str], None] | None = None,
        on_turn_end: Callable[[], None] | None = None,
        name_models: bool = False,
    ) -> None:
        self.store = store
        self.folder = folder
        self.journal: Journal | None = None
        self.conversation = Conversation()  # what a session made for this goes on with
        self.resumed: Resumed | None = None
        self.retired = False
        self._on_problem = on_problem
        self._on_stored = on_stored
        self._on_turn_end = on_turn_end
        self._name_models = name_models
        self._models: list[str] | None = None  # the models named in the store, once read
        self._session: AgentSession | None = None
        self._state = ThreadState()  # the session's thread's, as last heard
        self._detach: list[Callable[[], None]] = []
        self._reopened: tuple[str, Sequence[ToolCallRecord] | None] | None = None

    @property
    def conversation_id(self) -> str | None:
        return self.journal.conversation_id if self.journal else None

    @property
    def notices(self) -> list[str]:
        """One-line messages for the person: a store problem, a repaired history."""
        lines = [self.store.notice] if self.store.notice else []
        if self.resumed is not None and (text := self.resumed.describe()):
            lines.append(text)
        return lines

    def start(
        self,
        cid: str,
        conversation: Conversation | None,
        stored: Sequence[Message] | None = None,
        calls: Sequence[ToolCallRecord] | None = None,
    ) -> None:
        """Record into `cid`; `stored`: its messages as the store holds them, if known
        (a reopened conversation: its session gets back its plan mode and the hooks and
        notes of its calls, from `calls` or else read from the store)."""
        self.journal = Journal(
            self.store, cid, conversation, stored=stored, on_problem=self._on_problem
        )
        if stored is not None:
            self._reopened = (cid, calls)
        if self._session is not None:
            self.journal.track(self._session.thread)
            self._load_pins()
            self._bring_back()

    def create(self, conversation: Conversation | None, *, model: str, role: str) -> bool:
        """Store a new conversation and record into it; False (said) when the store fails."""
        try:
            cid = self.store.create_conversation(self.folder, model=model, role=role)
        except sqlite3.Error as exc:
            self._problem(f"History not saved: {exc}.")
            return False
        self.start(cid, conversation)
        if self._session is not None and self._session.loop.plan.on:
            self._plan_changed(True)
        return True

    def attach(self, session: AgentSession, listen_wire: WireListen | None = None) -> None:
        """Record `session` from its thread (its messages whole, calls, notes, plans, legs
        and turn ends), its plan mode, and the wire lines `listen_wire` hands over (a
        session made with `wire=record_wire` needs none)."""
        self._session = session
        self._state = session.thread.state
        # Not each streamed piece: the journal reads the streamed text from the thread.
        self._detach.append(session.thread.subscribe(self._heard, text=False))
        self._detach.append(session.loop.plan.subscribe(self._plan_changed))
        if self.journal is not None:
            self.journal.track(session.thread)
            self._load_pins()
            self._bring_back()
        if listen_wire is not None:
            self._detach.append(listen_wire(self.record_wire))

    def _load_pins(self) -> None:
        """A stored conversation's pinned facts go on with it."""
        cid, session = self.conversation_id, self._session
        if cid is None or session is None:
            return
        try:
            stored = self.store.pins(cid)
        except sqlite3.Error as exc:
            self._problem(f"History: cannot read the pinned facts: {exc}.")
            return
        if stored:
            pins = [Pin(p.text, "model" if p.pinned_by == "model" else "person") for p in stored]
            session.reducer.set_pins(pins)

    def record_wire(self, entry: WireEntry) -> None:
        """A WireSink: one (redacted) wire log line; none is kept before the first message."""
        if self.journal is not None:
            self.journal.record_wire(entry)

    def retire(self) -> None:
        """Its session is no longer shown: close now, or when the running turn has ended."""
        self.retired = True
        if self._session is None or not self._session.busy:
            self.close()

    def close(self) -> None:
        """Stop recording and write what is buffered; the caller closes the store."""
        for detach in self._detach:
            detach()
        self._detach.clear()
        if self.journal is not None:
            self.journal.close()

    def _heard(self, change: Change) -> None:
        """One change of the session's thread: the journal writes it first (storing the
        conversation on its first message), then legs and turn ends are seen to."""
        if self.journal is None and _brings_a_message(change):
            self._store_now()
        if self.journal is not None:
            self.journal.hear(change)
        if not isinstance(change, StateChanged):
            return
        before, self._state = self._state, change.state
        stored = self.journal is not None
        if stored and self._name_models and leg_started(before, change.state):
            self._note_model()
        if turn_ended(before, change.state):
            if stored and self._on_turn_end is not None:
                self._on_turn_end()
            if self.retired:
                self.close()

    def _store_now(self) -> None:
        """The session's first message: its conversation is stored from here on."""
        session = self._session
        if session is None:
            return
        if self.create(None, model=session.loop.model, role=session.loop.role):
            cid = self.conversation_id
            if not self.retired and self._on_stored is not None and cid is not None:
                self._on_stored(cid)

    def _bring_back(self) -> None:
        """A reopened conversation's session gets back what its messages do not carry."""
        reopened, self._reopened = self._reopened, None
        session = self._session
        if reopened is None or session is None:
            return
        cid, calls = reopened
        try:
            records = self.store.calls.of(cid) if calls is None else calls
            planning = self.store.plan_mode(cid)
        except sqlite3.Error as exc:
            self._problem(f"History: cannot read the conversation's calls: {exc}.")
            return
        steps = {r.call_id: (r.hooks, r.notes) for r in records if r.hooks or r.notes}
        if steps:
            session.reducer.restore(steps)
        if planning:
            session.loop.plan.on = True

    def _plan_changed(self, on: bool) -> None:
        cid = self.conversation_id
        if cid is None:
            return  # written when the conversation is stored
        try:
            self.store.set_plan_mode(cid, on)
        except sqlite3.Error as exc:
            self._problem(f"History not saved: {exc}.")

    def _note_model(self) -> None:
        """A leg on a model the conversation has not used yet: name it in the store, so
        the export's header lists every model that answered, not only the first."""
        cid, store = self.conversation_id, self.store
        model = self._session.loop.model if self._session is not None else ""
        if cid is None or not model:
            return
        try:
            if self._models is None:
                summary = store.summary(cid)
                self._models = models_used(summary.model if summary else "", store.notes(cid))
            if model not in self._models:
                store.add_note(cid, MODEL_NOTE, model)
                self._models.append(model)
        except sqlite3.Error as exc:
            self._problem(f"History not saved: {exc}.")

    def _problem(self, text: str) -> None:
        if self._on_problem is not None:
            self._on_problem(text)


def start_recording(
    store: Store,
    folder: str,
    *,
    model: str = "",
    role: str = "",
    resume_id: str | None = None,
    continue_latest: bool = False,
    on_problem: Callable[[str], None] | None = None,
) -> Recording:
    """Open the conversation to record into: `resume_id` (an id or a unique prefix), else
    the latest of `folder` when `continue_latest`, else a new one.

    Raises UnknownConversationError for a `resume_id` that matches no single conversation.
    """
    cid: str | None = None
    if resume_id:
        cid = resolve_id(store, resume_id)
    elif continue_latest:
        cid = latest_conversation(store, folder)
    recording = Recording(store, folder, on_problem=on_problem)
    if cid is None:
        cid = store.create_conversation(folder, model=model, role=role)
        recording.start(cid, recording.conversation)
        return recording
    resumed = resume(store, cid)
    store.set_model(cid, model=model or None, role=role or None)
    recording.conversation, recording.resumed = resumed.conversation, resumed
    # resume left the store holding just these messages
    recording.start(cid, resumed.conversation, resumed.conversation.messages, resumed.tool_calls)
    return recording


def resolve_id(store: Store, text: str) -> str:
    """The conversation whose id is `text` or starts with it (deleted ones included)."""
    matches = store.ids_starting_with(text.strip())
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UnknownConversationError(f"no stored conversation has the id {text!r}")
    raise UnknownConversationError(
        f"{len(matches)} conversations have ids starting with {text!r}; give more characters"
    )


def _brings_a_message(change: Change) -> bool:
    """The change adds a message to the conversation (the first one stores it)."""
    match change:
        case EntryAdded(entry=UserEntry()):
            return True
        case (
            EntryAdded(entry=AssistantEntry() as entry)
            | EntryChanged(entry=AssistantEntry() as entry)
        ):
            return entry.message is not None and not entry.streaming
        case EntryChanged(entry=CallEntry(reply=reply)):
            return reply is not None
        case _:
            return False
