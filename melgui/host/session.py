"""One session the host runs: its agent session, its recording in the history, its
numbered changes and the approvals waiting for a person (in any view); what a view does
to it (prompt, answer, branch, rewind) and reads of it (snapshot, the context's measure).
HostedAgent: one that runs an ACP agent (a view's agent pane), the host's child."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal, cast, get_args

from melgui.core.agent.session import AgentSession
from melgui.core.context.breakdown import next_request
from melgui.core.context.measure import breakdown_to_json, measure, measure_to_json
from melgui.core.context.preview import CompactionQuestion, question_for
from melgui.core.protocol.approval import ApprovalRequest, Decision, Remember
from melgui.core.protocol.calls import summarize
from melgui.core.protocol.content import Part
from melgui.core.protocol.loop_events import (
    ApprovalNeeded,
    BranchReason,
    LoopEvent,
    TurnCancelled,
    TurnFailed,
    TurnFinished,
)
from melgui.core.protocol.messages import Message
from melgui.core.protocol.views.compacted import Proposed
from melgui.core.protocol.views.relayed_copies import RECORDS as RELAYED
from melgui.core.rules.policy import RulePolicy, apply_approval
from melgui.core.store.checkpoints.restore import Choice
from melgui.core.store.checkpoints.versions import conflict_versions
from melgui.core.thread.changes import Change
from melgui.core.thread.codec import snapshot_to_json
from melgui.core.thread.entries import NoteEntry
from melgui.core.worktrees.model import Worktree
from melgui.core.worktrees.overlap.touched import Touched, touched_to_json
from melgui.desk.board.worktree_reading import WorktreeReading
from melgui.desk.desk import Desk
from melgui.desk.hosted_agents.relayed import AgentRelay
from melgui.desk.recording import Recording
from melgui.desk.rewind import plan_rewind, rewind
from melgui.host import wire
from melgui.host.change_journal import SessionRow
from melgui.host.changes import ChangeLog, Record
from melgui.host.records import change_record, compaction_record, question_record, record_of
from melgui.host.wire import RpcError

if TYPE_CHECKING:  # the ACP SDK (about 27 MiB) loads with the first agent, not the host
    from melgui.desk.hosted_agents.session import HostedAgentSession
logger = logging.getLogger(__name__)

APPROVAL = "approval"  # a session row's setting: its view's approval settings
# Records whose content a snapshot already holds (its thread, its conversation, the
# compaction waiting for a person).
IN_SNAPSHOT = ("change", "message", "branched", "compaction", "compaction_resolved",
               "worktree_files", *RELAYED)  # fmt: skip
WORKTREE_FILES = "worktree_files"  # a record and a snapshot's part: the worktree's reading
INTERRUPTED = (
    "The melgui host stopped during this turn, and the programs the turn ran ended with it. "
    "The conversation reopened from the journal; what streamed after its last saved "
    "message is lost."
)


class HostedSession:
    def __init__(
        self,
        row: SessionRow,
        agent: AgentSession,
        recording: Recording | None,
        log: ChangeLog,
        desk: Desk | None = None,
    ) -> None:
        self.row = row
        self.agent = agent
        self.desk = desk  # its checkpoints (a rewind of it), its folder's settings
        self.recording = recording
        self.log = log
        self.approvals: dict[str, ApprovalRequest] = {}
        self._asked: dict[str, float] = {}  # call id -> when it began to wait (epoch s)
        self._idle_watch: asyncio.Task[None] | None = None
        # The host's records since this turn began (a crash's note included) go with a
        # snapshot as its `tail`; the thread's changes are in the snapshot itself.
        self._tail_from = log.last_seq
        # A warning the thread says when the first turn begins (a view draws the thread's
        # changes from its first prompt: a note in the snapshot it started from is not
        # drawn).
        self.first_note = ""
        # The preview before a compaction, waiting for a person in any view (its id).
        self.compaction: tuple[str, CompactionQuestion] | None = None
        self._compactions = 0
        # A worker's own git worktree, read here after its calls and turns (the views'
        # boards count its files from these readings).
        self.worktree_files: WorktreeReading | None = None
        if recording is not None:
            recording.attach(agent)
        agent.thread.subscribe(self._changed)
        agent.subscribe(self._observe)

    @property
    def id(self) -> str:
        return self.row.id

    @property
    def busy(self) -> bool:
        return self.agent.busy

    def _changed(self, change: Change) -> None:
        self.log.add(change_record(change))

    def _observe(self, event: LoopEvent) -> None:
        if isinstance(event, ApprovalNeeded):
            self._waiting(event.request)
            self.log.add(question_record(event.request))
        record = record_of(event)
        if record is not None:
            self.log.add(record)

    def _waiting(self, request: ApprovalRequest) -> None:
        call_id = request.call.id
        self.approvals[call_id] = request
        self._asked[call_id] = time.time()

        def answered(future: asyncio.Future[Decision]) -> None:
            self.approvals.pop(call_id, None)
            self._asked.pop(call_id, None)
            decision = "cancelled" if future.cancelled() else future.result().kind
            self.log.add({"type": "approval_resolved", "id": call_id, "decision": decision})

        request.future.add_done_callback(answered)

    def read_worktree(self, worktree: Worktree) -> None:
        """Read the worker's own worktree now, and again after each of its calls that may
        change files and each turn's end; each new reading goes to the views as a
        `worktree_files` record (and with a snapshot)."""
        self.worktree_files = WorktreeReading(self.agent, worktree, self._worktree_read)

    def _worktree_read(self, touched: Touched | None) -> None:
        said = touched_to_json(touched) if touched is not None else None
        self.log.add({"type": WORKTREE_FILES, "touched": said})

    # -- commands ------------------------------------------------------------------------

    def prompt(self, text: str, parts: tuple[Part, ...] = ()) -> None:
        self._tail_from = self.log.next_seq - 1
        self.log.add({"type": "prompt", "text": text})
        if self.first_note:
            self.note(self.first_note)
            self.first_note = ""
        self.agent.submit(text, parts)
        if self._idle_watch is None or self._idle_watch.done():
            self._idle_watch = asyncio.get_running_loop().create_task(self._watch_idle())

    async def _watch_idle(self) -> None:
        """Say when the queue has run dry: views know the session is idle from this."""
        await self.agent.wait_idle()
        self.log.add({"type": "idle"})

    def answer(
        self,
        call_id: str,
        decision: str,
        remember: str = "once",
        reason: str = "",
        option: str = "",
    ) -> bool:
        """Approve or deny a waiting call (`option`: one of an ACP agent's own answers);
        False when it is no longer waiting (another view answered it, or the turn ended)."""
        request = self.approvals.get(call_id)
        if request is None or not request.pending:
            return False
        if option and any(o.option_id == option for o in request.options):
            request.choose(option)
        elif decision == "approve":
            scope = remember if remember in get_args(Remember) else "once"
            request.approve(cast(Remember, scope))
        else:
            request.deny(reason)
        return True

    def stop(self) -> list[str]:
        return self.agent.stop()

    def set_approval(self, approval: dict[str, Any]) -> list[str]:
        """The view's approval settings (per-tool modes, lasting rules) in place of this
        host's settings file's: the loop asks exactly when the view's would. Kept in its
        row (the host journals it: a new host that reopens it asks the same). Returns the
        rules that could not be read; raises ValueError for what is not an approval."""
        policy = self.agent.loop.policy
        if not isinstance(policy, RulePolicy):
            raise ValueError("this session's approvals are not ruled here")
        problems = apply_approval(policy, approval)
        self.row = replace(self.row, settings={**self.row.settings, APPROVAL: approval})
        return problems

    def preview_compactions(self, on: bool) -> None:
        """Ask a person before each compaction (the window's preview), as a question that
        waits here until a view answers it (`answer_compaction`); off: compact at once."""
        self.agent.compactor.review = self._review if on else None

    @property
    def previews_compactions(self) -> bool:
        return self.agent.compactor.review is not None

    async def _review(self, proposed: Proposed) -> frozenset[int] | None:
        loop = self.agent.loop
        question = question_for(proposed, {t.name: t for t in loop.catalog.for_role(loop.role)})
        self._compactions += 1
        question_id = f"{self.log.next_seq}.{self._compactions}"  # unique in this session
        self.compaction = (question_id, question)
        self.log.add(compaction_record(question_id, question))
        try:
            return await question.future
        finally:
            self.compaction = None
            future = question.future
            kept = None if future.cancelled() or not future.done() else future.result()
            self.log.add({"type": "compaction_resolved", "id": question_id,
                          "keep": None if kept is None else sorted(kept)})  # fmt: skip

    def answer_compaction(self, question_id: str, keep: frozenset[int] | None) -> bool:
        """Compact keeping the items `keep` word for word, or not now (None); False when
        that question no longer waits (another view answered it, the turn stopped)."""
        if self.compaction is None or self.compaction[0] != question_id:
            return False
        question = self.compaction[1]
        if not question.pending:
            return False
        if keep is None:
            question.cancel()
        else:
            question.keep(keep)
        return True

    def compact(self) -> None:
        """Compact the conversation now (after the turns queued before it); the views
        hear its new list of messages as a `branched` record and go idle with it."""
        self._tail_from = self.log.next_seq - 1
        self.agent.request_compaction()
        if self._idle_watch is None or self._idle_watch.done():
            self._idle_watch = asyncio.get_running_loop().create_task(self._watch_idle())

    def branch(
        self,
        keep: int | None,
        reason: BranchReason,
        note: str = "",
        given: list[Message] | None = None,
    ) -> None:
        """Cut the conversation back to its first `keep` messages (a view's Retry or
        Edit of the last message), or replace it with `given` (a summary edited, images
        taken out); the old list stays in the history as a branch."""
        messages = self.agent.conversation.messages
        if given is not None:
            self.agent.branch(given, reason, note)
            return
        if keep is None or not 0 <= keep <= len(messages):
            raise ValueError(f"the conversation has {len(messages)} messages, not {keep}")
        self.agent.branch(messages[:keep], reason, note)

    async def rewind(
        self,
        index: int,
        text: str | None,
        *,
        plan_only: bool,
        choices: dict[str, Choice],
        continue_from_there: bool,
    ) -> dict[str, Any]:
        """Rewind to before user message `index` (`text`: its words, as the view shows
        them, so a list another view changed meanwhile is not cut in the wrong place):
        the files its calls and the later ones changed put back from the checkpoints (a
        file changed since by someone else keeps its current version unless `choices`
        says otherwise), and with `continue_from_there`, the conversation cut back to
        before it in the same step, the model told with the next message (desk.rewind,
        as a window does its own). `plan_only`: which files it would put back and which
        conflict (with their versions as text), touching nothing. Raises ValueError for
        a message that is not the person's (or moved), RuntimeError while a turn runs."""
        messages = self.agent.conversation.messages
        if text is not None and (index >= len(messages) or messages[index].content != text):
            raise ValueError("the conversation changed: that message moved")
        if self.desk is None:
            raise ValueError("this session keeps no checkpoints here")
        checkpoints = self.desk.checkpoints
        plan = await plan_rewind(checkpoints, messages, index)
        if plan_only:
            return {
                "text": plan.text,
                "files": [p.path for p in plan.restore.paths if not p.settled],
                "conflicts": [p.path for p in plan.restore.conflicts],
                "versions": await conflict_versions(checkpoints, plan.restore.conflicts),
                "busy": self.busy,
            }
        done = await rewind(checkpoints, self.agent, plan, choices,
                            continue_from_there=continue_from_there)  # fmt: skip
        return {
            "restored": done.id if done is not None else None,
            "files": sorted({change.path for change in done.files}) if done else [],
            "conflicts": [p.path for p in plan.restore.conflicts],
            "skipped": list(checkpoints.skipped),
        }

    def measure(self, *, as_sent: bool = False, breakdown: bool = False) -> dict[str, Any]:
        """The context meter's numbers, measured here as a window measures its own
        (`as_sent`: as the loop measured the leg that just went); with `breakdown`, what
        the next request's tokens are spent on too (the meter's popup)."""
        answer = measure_to_json(measure(self.agent, as_sent=as_sent))
        if breakdown:
            answer["breakdown"] = breakdown_to_json(next_request(self.agent))
        return answer

    def reopened(self) -> None:
        """Opened again by a new host: a view whose copy is of the thread the host before
        ran takes a snapshot of this one."""
        self.log.add({"type": "thread", "thread": self.agent.thread.thread_id})

    def note(self, text: str) -> None:
        """A warning in the thread the views draw (a line in the chat)."""
        thread = self.agent.thread
        thread.add(NoteEntry(thread.new_id(), "context", text, "warning"))

    def mark_interrupted(self) -> None:
        """Say the turn was cut: a host record, and a note in the thread the views draw."""
        self.log.add({"type": "interrupted", "text": INTERRUPTED})
        thread = self.agent.thread
        thread.add(NoteEntry(thread.new_id(), "stopped", INTERRUPTED, "warning"))

    # -- what a view reads ---------------------------------------------------------------

    def flush(self) -> list[Record]:
        return self.log.flush()

    def snapshot(self, page: int | None = None) -> dict[str, Any]:
        """The session as it is at `seq` (flushed first by the caller): its thread, the
        conversation, the host's records of this turn, the approvals waiting. With `page`,
        only the last `page` messages and thread entries, and `earlier` says how many of
        each were left out (a view paints the end first and takes the whole later)."""
        tail = [r for r in self.log.since(self._tail_from) if r["type"] not in IN_SNAPSHOT]
        thread = self.agent.thread.snapshot()
        messages = self.agent.conversation.messages
        paged: dict[str, Any] = {}
        if page is not None and (len(messages) > page or len(thread.entries) > page):
            first = max(0, len(messages) - page)
            while 0 < first < len(messages) and messages[first].role == "tool":
                first -= 1  # never between a call and its results
            entries = max(0, len(thread.entries) - page)
            thread = replace(thread, entries=thread.entries[entries:])
            messages = messages[first:]
            paged = {"earlier": {"messages": first, "entries": entries}}
        return {
            "seq": self.log.last_seq,
            "thread": snapshot_to_json(thread),
            "messages": [message.to_json() for message in messages],
            **paged,
            "tail": tail,
            "approvals": [question_record(r) for r in self.approvals.values() if r.pending],
            "compaction": [compaction_record(*self.compaction)] if self.compaction else [],
            "busy": self.busy,
            WORKTREE_FILES: self._worktree_json(),
        }

    def _worktree_json(self) -> dict[str, Any] | None:
        reading = self.worktree_files
        touched = reading.touched if reading is not None else None
        return touched_to_json(touched) if touched is not None else None

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "folder": self.row.folder,
            "conversation": self.row.conversation,
            "model": self.row.model,
            "role": self.agent.loop.role,
            "source": str(self.row.settings.get("source") or ""),  # as its view said
            "plan": self.plan_on(),
            "busy": self.busy,
            "approvals": [self.question(r) for r in self.approvals.values() if r.pending],
            "compaction": self.compaction is not None,  # a preview waits for a person
            "preview": self.previews_compactions,
            "seq": self.log.last_seq,
        }

    def plan_on(self) -> bool:
        return self.agent.loop.plan.on

    def question(self, request: ApprovalRequest) -> dict[str, Any]:
        """A waiting call as `--list-running` and a view's list say it, window or none."""
        call = request.call
        return {
            "id": call.id,
            "name": call.name,
            "summary": summarize(call.name, request.arguments),
            "reason": request.judgement.reason,
            "source": request.source,
            "since": self._asked.get(call.id, 0.0),
        }

    async def aclose(self) -> None:
        if self.worktree_files is not None:
            self.worktree_files.close()
        await self.agent.aclose()
        if self.recording is not None:
            self.recording.close()


AGENT = "agent"  # a session row's setting, a record, a snapshot's part: an ACP agent's
AgentPhase = Literal["starting", "ready", "sign_in", "failed"]


class HostedAgent(HostedSession):
    """One ACP agent session in the host; it starts at once (`phase` says how far)."""

    def __init__(
        self, row: SessionRow, acp: HostedAgentSession, log: ChangeLog, desk: Desk
    ) -> None:
        # HostedAgentSession has the surface of an AgentSession a HostedSession uses
        super().__init__(row, cast(AgentSession, acp), None, log, desk)
        self.acp = acp
        self.phase: AgentPhase = "starting"
        self._told: dict[str, Any] = {}
        acp.host.state.listen(self.tell)
        # Its plan and its terminals' tabs, for the views (records, a snapshot's part).
        self.relay = AgentRelay(acp.host.state, self.log.add)
        acp.host.terminals.on_open = self.relay.opened
        self._starting = asyncio.get_running_loop().create_task(self._start())

    async def _start(self) -> None:
        from melgui.core.protocol.views.agent_state import AgentFailed, AuthRequired

        try:
            await self.acp.start()
        except AuthRequired:
            self.phase = "sign_in"
        except AgentFailed:
            self.phase = "failed"
        except Exception:  # said as the failure, never left to the loop
            logger.exception("the agent of session %s did not start", self.id)
            self.phase = "failed"
        else:
            self.phase = "ready"
        self.tell()

    def tell(self) -> None:
        """The agent's state as it is now, to the views (an `agent` record), when it
        changed since it was last told."""
        said = self.agent_json()
        if said != self._told:
            self._told = said
            self.log.add({"type": AGENT, **said})

    def agent_json(self) -> dict[str, Any]:
        """{phase, failure, state}: where the agent is (`phase`: starting, ready,
        sign_in, failed), why it failed, and what it offers (AgentState.to_json)."""
        failure = self.acp.host.failure
        phase = "failed" if failure else self.phase
        state = self.acp.host.state.to_json()
        del state["plan"]  # a `plan` record of its own: each step's change is not the rest
        return {"phase": phase, "failure": failure, "state": state}

    def _observe(self, event: LoopEvent) -> None:
        super()._observe(event)
        if isinstance(event, TurnFinished | TurnFailed | TurnCancelled):
            self.tell()  # a failure the turn met (the agent died) is the agent's too

    def plan_on(self) -> bool:
        return False  # an ACP agent plans in its own way: its plan is in its state

    async def sign_in(self, method: str) -> None:
        """Sign in with one of the methods the agent offered, then open its session;
        raises AgentFailed, AuthRequired."""
        host = self.acp.host
        await host.authenticate(method)
        await host.open_session()
        self.acp.mark_started()
        self.phase = "ready"
        self.tell()

    def terminal_input(self, terminal_id: str, data: str) -> bool:
        """Keys a view typed in its tab of one of the agent's terminals, to its program;
        False for one that ended or that no snapshot carries any more."""
        relayed = self.relay.terminals.get(terminal_id)
        return relayed is not None and relayed.write(data.encode())

    async def set_mode(self, mode: str) -> None:
        await self.acp.host.set_mode(mode)

    async def set_model(self, model: str) -> None:
        await self.acp.host.set_model(model)

    def preview_compactions(self, on: bool) -> None:
        """An ACP agent compacts its own context, as it sees fit: melgui has nothing to
        preview (its desk's setting, or a view's, is not for it)."""

    @property
    def previews_compactions(self) -> bool:
        return False

    def snapshot(self, page: int | None = None) -> dict[str, Any]:
        return {**super().snapshot(page), AGENT: {**self.agent_json(), **self.relay.to_json()}}

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), AGENT: self.row.settings.get(AGENT)}

    async def aclose(self) -> None:
        self._starting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._starting
        await super().aclose()
        self.relay.close()


def agent_methods(
    session_of: Callable[[str], HostedSession],
) -> dict[str, Callable[[Any, dict[str, Any]], Awaitable[Any]]]:
    """The requests a view sends about an ACP agent the host runs (`agent/sign_in`,
    `agent/mode`, `agent/model`, `agent/terminal_input`), for the host's dispatch table;
    each takes (view, params) and raises RpcError for a session that runs no agent or
    the agent's refusal."""

    def agent(params: dict[str, Any]) -> HostedAgent:
        session = session_of(params["session"])
        if not isinstance(session, HostedAgent):
            raise RpcError(wire.INVALID_PARAMS, "this session runs no ACP agent")
        return session

    async def sign_in(view: Any, params: dict[str, Any]) -> Any:
        """Sign in with a method the agent offered, and open its session; the views hear
        the `agent` record that follows. The agent's refusal is the error's message."""
        from melgui.core.protocol.views.agent_state import AgentFailed, AuthRequired

        try:
            await agent(params).sign_in(str(params["method_id"]))
        except (AgentFailed, AuthRequired) as exc:
            raise RpcError(wire.INVALID_PARAMS, str(exc)) from None
        return {}

    async def mode(view: Any, params: dict[str, Any]) -> Any:
        await said(agent(params).set_mode(str(params["mode"])))
        return {}

    async def model(view: Any, params: dict[str, Any]) -> Any:
        await said(agent(params).set_model(str(params["model"])))
        return {}

    async def said(change: Awaitable[None]) -> None:
        """A mode or model the agent refused (or failed on): the error says its words."""
        try:
            await change
        except RpcError:
            raise
        except Exception as exc:
            raise RpcError(wire.INVALID_PARAMS, f"the agent refused: {exc}") from None

    async def terminal_input(view: Any, params: dict[str, Any]) -> Any:
        sent = agent(params).terminal_input(str(params["terminal"]), str(params["data"]))
        return {"sent": sent}

    return {"agent/sign_in": sign_in, "agent/mode": mode, "agent/model": model,
            "agent/terminal_input": terminal_input}  # fmt: skip
