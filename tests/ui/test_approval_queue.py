"""The window's approval queue: oldest first, whoever asks; a decision anywhere removes it."""

from __future__ import annotations

import asyncio
from typing import Any

from melgui.core.protocol.approval import ApprovalRequest, Approve, Deny
from melgui.core.protocol.events import ToolCall
from melgui.ui.approvals.approval_queue import ApprovalQueue


def request(call_id: str, source: str) -> ApprovalRequest:
    return ApprovalRequest(ToolCall(call_id, "write_file", "{}"), {}, source=source)


def test_requests_come_out_oldest_first_and_leave_when_decided(qloop: Any, run: Any) -> None:
    async def scenario() -> None:
        queue = ApprovalQueue()
        changes: list[int] = []
        queue.changed.connect(lambda: changes.append(len(queue)))
        first, second, third = (request("a", "main"), request("b", "pane 2"), request("c", "main"))
        for item in (first, second, third, first):  # the same request twice counts once
            queue.add(item)
        assert queue.first() is first
        assert [r.call.id for r in queue.pending()] == ["a", "b", "c"]
        first.approve("session")  # decided elsewhere (the inspector)
        await asyncio.sleep(0)  # the future's callbacks run on the loop
        assert queue.first() is second and len(queue) == 2
        second.deny("no")
        await asyncio.sleep(0)
        assert queue.first() is third
        assert changes == [1, 2, 3, 2, 1]
        assert first.future.result() == Approve("session")
        assert second.future.result() == Deny("no")
        decided = request("d", "main")
        decided.deny()
        queue.add(decided)  # already decided: never shown
        assert [r.call.id for r in queue.pending()] == ["c"]

    run(scenario())
