"""RemoteSession: a session the host runs, seen from a view with the surface the window's
panes use of an in-process AgentSession (subscribe, submit, stop, busy, conversation).

    session = RemoteSession.start(client, folder="/p", model="m", source="pane 2")
    session.thread.subscribe(view)   # a copy of the host's thread, fed its changes
    session.subscribe(observer)      # the LoopEvents a view still reads (approvals, turn ends)
    session.submit("go")             # sent once the host has opened it

An approval the host asks arrives as an ApprovalRequest like any other, a compaction's
preview as a CompactionQuestion (`compaction`); answering either sends the answer to the
host, and an answer given in another view resolves it here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from typing import Any

from melgui.core.protocol.approval import ApprovalRequest, Approve, Decision, Deny
from melgui.core.protocol.content import Part
from melgui.core.protocol.loop_events import (
    ApprovalNeeded,
    AssistantReasoning,
    AssistantText,
    BranchReason,
    LoopEvent,
    MessageAdded,
    TurnFailed,
    TurnFinished,
)
from melgui.core.protocol.messages import Conversation, Message
from melgui.core.runtime.deadline import within
from melgui.core.thread.codec import snapshot_from_json
from melgui.core.thread.entries import NoteEntry, Pin
from melgui.core.thread.thread import SeqGap
from melgui.core.worktrees.model import Worktree
from melgui.core.worktrees.workers import folder_in
from melgui.host.changes import Record
from melgui.host.client import HostGone, SessionClient
from melgui.host.records import worktree_to_json
from melgui.host.view_events import (
    EventReader,
    LoopFacts,
    PreviewCopy,
    ThreadCopy,
    person_said,
    replaced,
    request_of,
)
from melgui.host.wire import RpcError, collector_paused

log = logging.getLogger(__name__)

Observer = Callable[[LoopEvent], None]
STREAMED = ("assistant", "reasoning")
OPEN_WAIT = 10.0  # how long a session closed as it opens waits for its id, to close it


class RemoteSession:
    def __init__(self, client: SessionClient, *, folder: str, model: str, source: str) -> None:
        self.client = client
        self.source = source
        self.loop = LoopFacts(model, folder)
        self.conversation = Conversation()
        self.thread = ThreadCopy(on_answer=self._thread_answered)
        self._resyncing = False
        self._earlier = 0  # thread entries left out of a paged snapshot
        self._earlier_messages = 0  # and messages: the host's index of this list's first
        self.on_whole: Callable[[], None] | None = None  # a paged session became whole
        self.on_snapshot: Callable[[], None] | None = None  # a snapshot was taken (drawn)
        self.session_id = ""
        self.conversation_id = ""  # the host's recording of it in the history
        self.problem = ""
        self._observers: list[Observer] = []
        self._reader = EventReader()
        self._taken_first: set[Any] = set()  # `message` records whose message is in already
        self._waiting = self.loop.waiting
        # The preview before a compaction the host waits on, shown by the window's context
        # wiring (`compaction.on_question`).
        self.compaction = PreviewCopy(self._answer_compaction, lambda: self.keep_running)
        self._outbox: list[tuple[str, dict[str, Any]]] = []
        self._idle = asyncio.Event()
        self._idle.set()
        self._opened = asyncio.Event()
        self._lost = asyncio.Event()  # `lose` said why the host cannot be reached for it
        self._tasks: set[asyncio.Task[Any]] = set()
        self._opening: asyncio.Task[Any] | None = None  # `session/open`, until answered
        # Keep running in the background: the view goes, the host's session goes on
        # (closing the pane then neither stops it nor answers its questions).
        self.keep_running = False
        # The key the host's loop uses, when this view sent it (`start`): sent again if
        # the host there restarted and reopened the session without it.
        self._api_key = ""
        self.loop.send = lambda settings: self._command("settings/update", settings)

    @classmethod
    def start(
        cls,
        client: SessionClient,
        *,
        folder: str,
        model: str = "",
        role: str = "worker",
        source: str = "worker",
        settings: dict[str, Any] | None = None,
        worktree: Worktree | None = None,
        api_key: str | None = None,
        conversation: str | None = None,
    ) -> RemoteSession:
        """Open a session in the host (in the background) and attach to it: `worktree`,
        a worker in its own git worktree of `folder`; `api_key`, the key the host's loop
        reaches the model with (sent once, kept in its memory only; "": none), never that
        machine's own; `conversation`, the history's conversation of that id, continued."""
        session = cls(client, folder=folder, model=model, source=source)
        session.loop.heard({"role": role})
        params: dict[str, Any] = {"folder": folder, "model": model, "role": role,
                                  "settings": settings or {}, "source": source}  # fmt: skip
        if conversation is not None:
            params["conversation"] = conversation
        if api_key is not None:
            params["api_key"] = api_key
            session._api_key = api_key
        if worktree is not None:
            params["worktree"] = worktree_to_json(worktree)
            session.loop.cwd = str(folder_in(worktree, folder))
        session._opening = session._spawn(session._open(params))
        return session

    @classmethod
    async def reattach(
        cls,
        client: SessionClient,
        described: list[dict[str, Any]],
        page: int | None = None,
        view_of: Callable[[SessionClient, dict[str, Any]], RemoteSession] | None = None,
    ) -> list[RemoteSession]:
        """Sessions the host already runs (from `session/list`), attached in one request:
        each one's conversation so far is in `conversation` when this returns (a view
        draws it at once, as a reopened conversation), and what follows arrives as events.
        With `page`, only the last `page` messages of each: `whole()` takes the rest.
        `view_of` makes each one's view (an ACP agent's is the window's own kind)."""
        sessions = [(view_of or cls.of)(client, d) for d in described]
        for session, d in zip(sessions, described, strict=True):
            session.session_id = d["id"]
            session._described(d)
            session._listen()
        answer = await client.attach({s.session_id: None for s in sessions}, page)
        for session in sessions:
            session._took(answer[session.session_id]["snapshot"])
        return sessions

    @classmethod
    def of(cls, client: SessionClient, described: dict[str, Any]) -> RemoteSession:
        """A view of a session `session/list` described."""
        source = described.get("source") or "worker"
        return cls(client, folder=described["folder"], model=described["model"], source=source)

    @property
    def paged(self) -> bool:
        """Holds only the end of its conversation and thread (a paged snapshot)."""
        return bool(self._earlier)

    async def whole(self) -> None:
        """A paged session takes the whole snapshot; `on_whole` hears when it has. The
        host's records since the paged one were heard as they came: not again."""
        if self.paged and not self._resyncing:
            self._resyncing = True
            await self._snapshot_again(replay=False)

    async def _open(self, params: dict[str, Any]) -> None:
        try:
            opened = await self.client.call("session/open", **params)
            self.session_id = opened["id"]
            self._described(opened)
            self._listen()
            answer = await self.client.attach({self.session_id: None})
        except (HostGone, OSError, Exception) as exc:  # said in the pane, never raised at Qt
            self.lose(f"the host could not open this session: {exc}")
            return
        self._took(answer[self.session_id]["snapshot"])
        for method, extra in self._outbox:
            await self._send(method, extra)
        self._outbox.clear()

    def _described(self, described: dict[str, Any]) -> None:
        """What the host says of the session (`session/open`, `session/list`)."""
        self.loop.heard(described)
        self.conversation_id = described.get("conversation") or self.conversation_id

    def _listen(self) -> None:
        self.client.sessions[self.session_id] = self.heard
        self.client.resets[self.session_id] = self._took
        self.client.lost[self.session_id] = self.lose

    def _took(self, snapshot: dict[str, Any], replay: bool = True) -> None:
        """Start from the host's snapshot; numbered changes follow it. `replay`: hear its
        records of this turn (a turn's end, a notice) and its questions."""
        was_paged = self.paged
        self._earlier = int(snapshot.get("earlier", {}).get("entries", 0))
        self._earlier_messages = int(snapshot.get("earlier", {}).get("messages", 0))
        with collector_paused():
            messages = [Message.from_json(m) for m in snapshot["messages"]]
            thread = snapshot_from_json(snapshot["thread"])
        self.conversation = Conversation(messages)
        self.thread.restart(thread)
        self.loop.read_there(snapshot.get("worktree_files"))  # the host's last reading
        self._resyncing = False
        if was_paged and not self.paged and self.on_whole is not None:
            self.on_whole()
        if snapshot["busy"]:
            self._idle.clear()
        if replay:
            asked = snapshot.get("compaction", [])
            self.compaction.still(asked)  # one answered or cut while this view was away goes
            self.heard(snapshot["tail"] + snapshot["approvals"] + asked)
        self._opened.set()
        if self.on_snapshot is not None:
            self.on_snapshot()

    # -- AgentSession's surface ----------------------------------------------------------

    @property
    def busy(self) -> bool:
        return not self._idle.is_set()

    @property
    def queued(self) -> list[str]:
        return []

    @property
    def queued_messages(self) -> list[Message]:
        return []

    def subscribe(self, observer: Observer) -> Callable[[], None]:
        self._observers.append(observer)
        return lambda: self._observers.remove(observer) if observer in self._observers else None

    def submit(self, text: str, parts: tuple[Part, ...] = ()) -> None:
        self._idle.clear()
        extra: dict[str, Any] = {"text": text}
        if parts:  # images and attached files go with it, as a message stores them
            extra["parts"] = [part.to_json() for part in parts]
        self._command("turn/prompt", extra)

    def request_compaction(self) -> None:
        """Compact in the host (after the turns queued there); its new list of messages
        comes back as a `branched` record."""
        self._idle.clear()
        self._command("turn/compact", {})

    def branch(self, messages: Sequence[Message], reason: BranchReason, note: str = "") -> None:
        """Replace the conversation's list (Retry and Edit of the last message: a beginning
        of it, sent as a count; a summary edited, images taken out: the list itself): here
        at once, in the host by `session/branch`. Raises RuntimeError while a turn runs."""
        if self.busy:
            raise RuntimeError("cannot change the history while a turn runs")
        mine = self.conversation.messages
        keep = len(messages)
        extra: dict[str, Any] = {"reason": reason, "note": note}
        if keep <= len(mine) and all(a is b for a, b in zip(messages, mine, strict=False)):
            extra["keep"] = keep
        else:
            extra["messages"] = [message.to_json() for message in messages]
        mine[:] = messages
        self._command("session/branch", extra)

    def preface(self, note: str) -> None:
        """Start the next message the host's model reads with `note` (`session/preface`)."""
        self._command("session/preface", {"note": note})

    # -- what the host keeps of it: pins, the context's measure, a rewind ------------------

    @property
    def pins(self) -> tuple[Pin, ...]:
        """The facts every compaction keeps word for word, as the host's thread says."""
        return self.thread.state.pins

    def pin(self, text: str) -> bool:
        """Pin a fact in the host (the model reads it with the next message there); the
        thread's state shows it when the host has. False when blank or pinned already."""
        text = text.strip()
        if not text or any(pin.text == text for pin in self.pins):
            return False
        self._command("context/pin", {"text": text})
        return True

    def unpin(self, text: str) -> bool:
        if not any(pin.text == text for pin in self.pins):
            return False
        self._command("context/unpin", {"text": text})
        return True

    async def ask(self, method: str, **params: Any) -> Any:
        """A method of the host about this session (`context/measure`, `session/rewind`),
        once the host has opened it; raises HostGone, OSError or RpcError."""
        if not self._opened.is_set():
            waits = {asyncio.ensure_future(self._opened.wait()),
                     asyncio.ensure_future(self._lost.wait())}  # fmt: skip
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for wait in waits:
                    wait.cancel()
        if not self._opened.is_set():
            raise HostGone(self.problem)
        return await self.client.call(method, session=self.session_id, **params)

    async def ask_folder(self, method: str, **params: Any) -> Any:
        """A method of the host about this session's folder there (`checkpoint/calls`,
        `checkpoint/diff`, `checkpoint/restore`: its call cards' checkpoints)."""
        return await self.client.call(method, folder=self.loop.cwd, **params)

    def host_index(self, index: int) -> int:
        """The host's number of message `index` of this list (a paged one starts later)."""
        return index + self._earlier_messages

    def stop(self) -> list[str]:
        if self.busy and not self.keep_running:
            self._command("turn/stop", {})
        return []

    async def wait_idle(self) -> None:
        await self._idle.wait()

    async def aclose(self) -> None:
        if not self.session_id and self._opening is not None and not self._opening.done():
            # Closed before the host answered `session/open`: its id is waited for, so
            # that it is not left open there with no view (New conversation at once).
            with contextlib.suppress(TimeoutError):
                await within(asyncio.shield(self._opening), OPEN_WAIT)
        if self.session_id:
            verb = "session/detach" if self.keep_running else "session/close"
            with contextlib.suppress(HostGone, OSError, Exception):
                await self.client.call(verb, session=self.session_id)
            self.client.sessions.pop(self.session_id, None)
            self.client.resets.pop(self.session_id, None)
            self.client.lost.pop(self.session_id, None)
        for task in list(self._tasks):
            task.cancel()

    def ask_again(self) -> None:
        """Say again the questions waiting (to views subscribed after a reattach)."""
        for request in self.loop.pending_approvals():
            self._dispatch(ApprovalNeeded(request))

    # -- the host's changes --------------------------------------------------------------

    def heard(self, records: list[Record]) -> None:
        # Questions held before the changes that show them (the board reads them there).
        held = {
            str(r["id"]): q
            for r in records
            if r.get("type") == "approval" and (q := self._question(r))
        }
        for at, record in enumerate(records):
            kind = record.get("type")
            if kind == "change":
                if replaced(record):  # the views redraw from the new list: take it first
                    self._branched(next((r for r in records[at:] if r["type"] == "branched"), None))
                elif person_said(record):  # drawn with its place in the list: take it first
                    self._message_first(records[at:])
                self._apply(record)
                continue
            if kind == "branched":
                self._branched(record)
            if kind == "thread" and record["thread"] != self.thread.thread_id:
                self._resync(f"the host started thread {record['thread']}")
            if kind == "prompt":
                self._idle.clear()
            elif kind == "idle":
                self._idle.set()
            elif kind == "approval":
                if asked := held.pop(str(record["id"]), None):  # said once, in its place
                    self._dispatch(ApprovalNeeded(asked))
            elif kind == "approval_resolved":
                self._resolved(record)
            elif kind == "compaction":
                self.compaction.asked(record)
            elif kind == "compaction_resolved":
                self.compaction.resolved(record)
            elif kind == "worktree_files":  # the host read its worktree (the board's count)
                self.loop.read_there(record.get("touched"))
            elif kind == "key_needed" and self._api_key:
                self._command("session/key", {"api_key": self._api_key})
            event = self._reader.event_of(record)
            if event is None:
                continue
            if isinstance(event, MessageAdded) and record.get("seq") not in self._taken_first:
                self.conversation.messages.append(event.message)
            elif isinstance(event, TurnFinished):  # the loop's count so far, as the host's
                self.loop.usage = event.usage
            self._taken_first.discard(record.get("seq"))
            self._dispatch(event)

    def _message_first(self, records: list[Record]) -> None:
        """The person's message the thread is about to draw joins the list first (its
        `message` record follows the thread's change in the batch), so the chat knows its
        place in the list (Edit, Rewind to here)."""
        found = next((r for r in records if r["type"] == "message"
                      and r["message"].get("role") == "user"), None)  # fmt: skip
        if found is None or found.get("seq") in self._taken_first:
            return
        with collector_paused():
            self.conversation.messages.append(Message.from_json(found["message"]))
        self._taken_first.add(found.get("seq"))

    def _branched(self, record: Record | None) -> None:
        """The conversation's list was replaced in the host (Retry, Edit, compaction, in
        this view or another): the mirror takes the new list."""
        if record is None:
            return
        with collector_paused():
            messages = [Message.from_json(m) for m in record["messages"]]
        if [m.to_json() for m in self.conversation.messages] != record["messages"]:
            self.conversation.messages[:] = messages

    def _apply(self, record: Record) -> None:
        if self._resyncing:
            return  # the snapshot asked for has them
        if self._earlier and "index" in record["change"]:  # the copy starts past them
            index = int(record["change"]["index"]) - self._earlier
            if index < 0:
                self._resync("a change to an entry before the page")
                return
            record = {**record, "change": {**record["change"], "index": index}}
        try:
            taken = self.thread.take(record)
        except SeqGap as gap:
            self._resync(str(gap))
            return
        if taken:
            self._stream(record["change"])

    def _stream(self, change: Record) -> None:
        """Streamed text as the loop's events too, for the pane's own reading of them."""
        if change["kind"] == "text_appended":
            text, reasoning = str(change["text"]), bool(change["reasoning"])
        elif change["kind"] == "entry_added" and change["entry"]["kind"] in STREAMED:
            text, reasoning = str(change["entry"]["text"]), change["entry"]["kind"] == "reasoning"
        else:
            return
        if text:
            self._dispatch(AssistantReasoning(text) if reasoning else AssistantText(text))

    def _resync(self, why: str) -> None:
        """The copy cannot go on from here: take a fresh snapshot of the host's thread."""
        if self._resyncing or not self.session_id:
            return
        log.info("session %s: taking a snapshot again (%s)", self.session_id, why)
        self._resyncing = True
        self._spawn(self._snapshot_again())

    async def _snapshot_again(self, replay: bool = True) -> None:
        try:
            answer = await self.client.attach({self.session_id: None})
        except (HostGone, OSError) as exc:
            self.problem = str(exc)
            return
        self._took(answer[self.session_id]["snapshot"], replay)

    def _thread_answered(self, call_id: str, decision: Decision) -> None:
        """An answer given on the copy (a card's buttons): the local question takes it,
        which sends it to the host once."""
        request = self._waiting.get(call_id)
        if request is not None and request.pending:
            request.future.set_result(decision)

    def _question(self, record: Record) -> ApprovalRequest | None:
        """An `approval` record's request, held by the copy of the thread; None when known
        already (in a snapshot's tail and its approvals both)."""
        call = self._reader.call(record)
        if call.id in self._waiting:
            return None
        request = self._waiting[call.id] = request_of(record, call, self.source)
        self.thread.hold(request)  # a card's option is chosen on it; the board reads it
        request.future.add_done_callback(lambda future: self._answered(call.id, future))
        return request

    def _answer_compaction(self, question_id: str, keep: frozenset[int] | None) -> None:
        """The preview answered here: Compact keeping `keep` word for word, or not (None)."""
        kept = None if keep is None else sorted(keep)
        self._command("compaction/answer", {"id": question_id, "keep": kept})

    def _answered(self, call_id: str, future: asyncio.Future[Decision]) -> None:
        """A person answered here (or the host resolved it): tell the host, once."""
        request = self._waiting.pop(call_id, None)
        self.thread.release(call_id)
        if request is None or future.cancelled() or self.keep_running:
            return
        decision = future.result()
        params: dict[str, Any] = {"call": call_id}
        if request.chosen:  # one of an ACP agent's own answers
            params["option"] = request.chosen
        if isinstance(decision, Approve):
            params.update(decision="approve", remember=decision.remember)
        else:
            params.update(decision="deny", reason=decision.reason)
        self._command("approval/answer", params)

    def _resolved(self, record: Record) -> None:
        """Answered in another view, or the turn ended: the local question goes away."""
        request = self._waiting.pop(str(record["id"]), None)
        if request is None or not request.pending:
            return
        if record.get("decision") == "approve":
            request.future.set_result(Approve())
        else:
            request.future.set_result(Deny("answered in another window"))

    def lose(self, why: str) -> None:
        """The host cannot be told or heard for this session (it could not open it, the
        link is lost for good, the host forgot it): said as the turn's failure, in plain
        words, in the pane, instead of a turn that seems to run on."""
        self.problem = why
        log.warning("session %s: %s", self.session_id or "(not open)", why)
        self.compaction.over()
        self._idle.set()
        self._lost.set()
        self._dispatch(TurnFailed(why))

    def host_ended(self, why: str, failure: str) -> None:
        """The host that ran this session ended (killed, crashed): `why` is said in the
        chat, and the turn it ran ends with `failure` (a pane's header says it); the
        questions it asked go (a new host gives their calls a result); what is sent now
        waits for `rejoin`."""
        ran = self.busy or bool(self.loop.pending_approvals())
        self._opened.clear()
        for call_id in list(self._waiting):
            request = self._waiting.pop(call_id)  # popped first: no answer goes to a host
            if request.pending:
                request.future.set_result(Deny(why))
        self.compaction.over()
        self.problem = why
        self._idle.set()
        # Drawn now (a chat draws the thread's changes); the new host's snapshot replaces it.
        self.thread.add(NoteEntry(self.thread.new_id(), "context", why, "warning"))
        if ran:
            self._dispatch(TurnFailed(failure))

    def end(self, why: str) -> None:
        """Over for good in this view (its host ended and no new host took it): `why` is
        said in the chat and as the turn's failure; what is sent after fails, in words."""
        self._outbox.clear()
        self._opened.set()  # sent from now on, to the host that is gone: said as lost
        self.thread.add(NoteEntry(self.thread.new_id(), "context", why, "warning"))
        self.lose(why)

    async def rejoin(self, client: SessionClient) -> str:
        """Go on in a new host that reopened this session from the journal (the same id):
        its snapshot replaces the copy, and what was sent meanwhile goes there. Returns
        what that host said of the turn it found cut ("" when none ran). Raises HostGone,
        OSError or RpcError when that host cannot be asked."""
        self.client = client
        self._listen()
        answer = await client.attach({self.session_id: None})
        self.problem = ""
        self._lost.clear()  # reachable again: `ask` waits for it, as for a first open
        snapshot = answer[self.session_id]["snapshot"]
        self._took(snapshot)
        outbox, self._outbox = self._outbox, []
        for method, extra in outbox:
            await self._send(method, extra)
        cut = [r for r in snapshot["tail"] if r.get("type") == "interrupted"]
        return str(cut[-1].get("text", "")) if cut else ""

    def _dispatch(self, event: LoopEvent) -> None:
        for observer in list(self._observers):
            try:
                observer(event)
            except Exception:
                log.exception("observer %r failed on %s", observer, event.kind)

    # -- commands ------------------------------------------------------------------------

    def _command(self, method: str, extra: dict[str, Any]) -> None:
        if not self._opened.is_set():
            self._outbox.append((method, extra))
            return
        self._spawn(self._send(method, extra))

    async def _send(self, method: str, extra: dict[str, Any]) -> None:
        try:
            await self.client.call(method, session=self.session_id, **extra)
        except (HostGone, OSError, RpcError) as exc:
            self.lose(f"{method} did not reach the host: {exc}")

    def _spawn(self, work: Any) -> asyncio.Task[Any]:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # called from Qt with no loop running: sent when it runs again
            loop = asyncio.get_event_loop_policy().get_event_loop()
        task = loop.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task
