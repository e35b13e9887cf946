"""One session the host runs: its agent session, its recording in the history, its
numbered changes and the approvals waiting for a person (in any view)."""

from __future__ import annotations

import asyncio
from typing import Any, cast, get_args

from melgui.core.agent.session import AgentSession
from melgui.core.protocol.approval import ApprovalRequest, Decision, Remember
from melgui.core.protocol.loop_events import ApprovalNeeded, LoopEvent
from melgui.desk.recording import Recording
from melgui.host.change_journal import SessionRow
from melgui.host.changes import ChangeLog, Record
from melgui.host.records import approval_record, record_of

INTERRUPTED = (
    "The melgui host stopped during this turn. The conversation reopened from the "
    "journal; what streamed after its last saved message is lost."
)


class HostedSession:
    def __init__(
        self, row: SessionRow, agent: AgentSession, recording: Recording | None, log: ChangeLog
    ) -> None:
        self.row = row
        self.agent = agent
        self.recording = recording
        self.log = log
        self.approvals: dict[str, ApprovalRequest] = {}
        self._idle_watch: asyncio.Task[None] | None = None
        # The number of the last `message` record: what streamed after it is in flight.
        self._message_seq = log.last_seq
        if recording is not None:
            recording.attach(agent)
        agent.subscribe(self._observe)

    @property
    def id(self) -> str:
        return self.row.id

    @property
    def busy(self) -> bool:
        return self.agent.busy

    def _observe(self, event: LoopEvent) -> None:
        if isinstance(event, ApprovalNeeded):
            self._waiting(event.request)
        record = record_of(event)
        if record is not None:
            self.log.add(record)

    def _waiting(self, request: ApprovalRequest) -> None:
        call_id = request.call.id
        self.approvals[call_id] = request

        def answered(future: asyncio.Future[Decision]) -> None:
            self.approvals.pop(call_id, None)
            decision = "cancelled" if future.cancelled() else future.result().kind
            self.log.add({"type": "approval_resolved", "id": call_id, "decision": decision})

        request.future.add_done_callback(answered)

    # -- commands ------------------------------------------------------------------------

    def prompt(self, text: str) -> None:
        self.log.add({"type": "prompt", "text": text})
        self.agent.submit(text)
        if self._idle_watch is None or self._idle_watch.done():
            self._idle_watch = asyncio.get_running_loop().create_task(self._watch_idle())

    async def _watch_idle(self) -> None:
        """Say when the queue has run dry: views know the session is idle from this."""
        await self.agent.wait_idle()
        self.log.add({"type": "idle"})

    def answer(self, call_id: str, decision: str, remember: str = "once", reason: str = "") -> bool:
        """Approve or deny a waiting call; False when it is no longer waiting (another
        view answered it, or the turn ended)."""
        request = self.approvals.get(call_id)
        if request is None or not request.pending:
            return False
        if decision == "approve":
            scope = remember if remember in get_args(Remember) else "once"
            request.approve(cast(Remember, scope))
        else:
            request.deny(reason)
        return True

    def stop(self) -> list[str]:
        return self.agent.stop()

    def mark_interrupted(self) -> None:
        self.log.add({"type": "interrupted", "text": INTERRUPTED})

    # -- what a view reads ---------------------------------------------------------------

    def flush(self) -> list[Record]:
        batch = self.log.flush()
        for record in batch:
            if record["type"] == "message":
                self._message_seq = record["seq"]
        return batch

    def snapshot(self) -> dict[str, Any]:
        """The session as it is at `seq` (flushed first by the caller): the conversation,
        what streamed since its last message, the approvals waiting."""
        return {
            "seq": self.log.last_seq,
            "messages": [message.to_json() for message in self.agent.conversation.messages],
            "tail": self.log.since(self._message_seq),
            "approvals": [
                approval_record(r.call, r.judgement.reason, r.source)
                for r in self.approvals.values()
                if r.pending
            ],
            "busy": self.busy,
        }

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "folder": self.row.folder,
            "conversation": self.row.conversation,
            "model": self.row.model,
            "role": self.row.role,
            "busy": self.busy,
            "approvals": [
                {"id": r.call.id, "name": r.call.name} for r in self.approvals.values() if r.pending
            ],
            "seq": self.log.last_seq,
        }

    async def aclose(self) -> None:
        await self.agent.aclose()
        if self.recording is not None:
            self.recording.close()
