"""Two views of one host see the same sessions; an approval answered in one disappears
from the other, and the other's late answer is refused."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.fakes import ScriptedRelay, done, text, tool_calls
from tests.fakes.host_process import HostProcess
from tests.host.conftest import open_session, wait_for, write_b


async def test_two_views_share_sessions_and_one_answer(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    scripted_relay.script(
        [text("Writing."), tool_calls(write_b())],
        [text("Written."), done()],
    )  # fmt: skip
    first, second = await host.client("first"), await host.client("second")
    try:
        session = await open_session(first, str(tmp_path), scripted_relay.base_url)
        assert [s["id"] for s in await second.call("session/list")] == [session]
        heard: dict[str, list[dict[str, Any]]] = {"first": [], "second": []}
        first.on_changes = lambda sid, changes: heard["first"].extend(changes)
        second.on_changes = lambda sid, changes: heard["second"].extend(changes)
        await first.attach({session: None})
        await first.call("turn/prompt", session=session, text="write b")
        await wait_for(first, session, lambda s: s["approvals"])

        snapshot = (await second.attach({session: None}))[session]["snapshot"]
        assert [a["id"] for a in snapshot["approvals"]] == ["w1"]
        answer = await first.call("approval/answer", session=session, call="w1", decision="approve")
        assert answer == {"answered": True}
        await wait_for(first, session, lambda s: not s["busy"])
        while not any(r["type"] == "turn_end" for r in heard["second"]):
            await asyncio.sleep(0.02)
        resolved = [r for r in heard["second"] if r["type"] == "approval_resolved"]
        assert [(r["id"], r["decision"]) for r in resolved] == [("w1", "approve")]
        late = await second.call("approval/answer", session=session, call="w1", decision="deny")
        assert late == {"answered": False}
        assert (tmp_path / "b.txt").read_text() == "x"
        # Both heard the same numbered changes after the second attached.
        tail = [r for r in heard["first"] if r["seq"] > snapshot["seq"]]
        assert tail == heard["second"]
        assert first.gaps == [] and second.gaps == []
    finally:
        await first.aclose()
        await second.aclose()
