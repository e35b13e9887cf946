"""Pinned facts: the model pins one with pin_fact (run without asking: it writes only the
conversation), the person pins another, and both come through two compactions word for
word, in the messages the model is sent; they are saved with the conversation."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from melgui.core.agent.session import AgentSession
from melgui.core.config.settings import Settings
from melgui.core.protocol.loop_events import HistoryBranched, LoopEvent
from melgui.core.protocol.views.compacted import PINNED_HEAD, SUMMARY_HEAD, is_summary, summary_text
from melgui.core.store import Store
from melgui.core.thread.entries import Pin
from melgui.desk.desk import Desk
from melgui.desk.recording import Recording, start_recording
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls

BY_MODEL = "The API is v2: every endpoint lives under /api/v2, never /api/v1."
BY_PERSON = "Never edit generated/ — it is rebuilt from schema.yaml by `make gen`."
LOSSY = "## Goal\nWork on the API.\n## Decisions\nSome.\n## Files touched\n-\n## Open tasks\n-"


async def turn(session: AgentSession, prompt: str) -> None:
    session.submit(prompt)
    await asyncio.wait_for(session.wait_idle(), 20)
    assert session.last_result is not None and session.last_result.outcome == "done"


async def compact(session: AgentSession) -> None:
    session.request_compaction()
    await asyncio.wait_for(session.wait_idle(), 20)


def user_texts(request: Any) -> list[str]:
    return [str(m.get("content")) for m in request.messages if m.get("role") == "user"]


async def test_a_pinned_fact_survives_two_compactions_word_for_word(
    store: Store, tmp_path: Path
) -> None:
    with ScriptedRelay() as relay:
        relay.script(
            [tool_calls(tool_call("pin_fact", {"fact": BY_MODEL}, id="pin1"))],
            [text("Pinned."), done()],
            [text("Noted."), done()],
            [text("Done."), done()],
            [text(LOSSY), done()],  # the first summary: it forgets both facts
            [text("Going on."), done()],
            [text("Still going."), done()],
            [text(LOSSY), done()],  # the second, from the first: forgets them again
            [text("Last."), done()],
        )
        settings = Settings(connection="relay", relay_url=relay.base_url)
        desk = Desk(str(tmp_path), settings, api_key="k", plans=lambda t, m: None)
        session = desk.session(model="relay-model", role="assistant")  # its rules ask
        recording = Recording(store, str(tmp_path))
        recording.attach(session)
        events: list[LoopEvent] = []
        session.subscribe(events.append)
        await turn(session, "Remember the API version.")
        (pin_call,) = session.thread.calls()
        assert session.pin(BY_PERSON) and not session.pin(BY_PERSON)  # once
        await turn(session, "Add the users endpoint.")
        await turn(session, "And the orders endpoint.")
        await compact(session)
        await turn(session, "Now the tests.")
        await turn(session, "And the docs.")
        await compact(session)
        await turn(session, "Ship it.")
        await session.aclose()
        await desk.aclose()
        recording.close()
        legs = relay.legs_received
    assert (
        pin_call.name == "pin_fact"
        and pin_call.decision.startswith("auto")
        and pin_call.result is not None
    )
    assert pin_call.judgement is not None and pin_call.judgement.source == "conversation state"
    assert session.pins == (Pin(BY_MODEL, "model"), Pin(BY_PERSON, "person"))
    # The person's pin went to the model with their next message.
    assert any(BY_PERSON in t and t.startswith("[melgui] ") for t in user_texts(legs[2]))
    branched = [e for e in events if isinstance(e, HistoryBranched)]
    assert [e.reason for e in branched] == ["compaction", "compaction"]
    pinned = f"{PINNED_HEAD}- {BY_MODEL}\n- {BY_PERSON}"
    for after in (legs[5], legs[8]):  # the first leg after each compaction
        (summary,) = [t for t in user_texts(after) if t.startswith(SUMMARY_HEAD)]
        assert summary.endswith(pinned) and LOSSY in summary
    # The second summary request read the first summary without its pinned block.
    assert PINNED_HEAD not in user_texts(legs[7])[-1]
    assert summary_text(session.conversation.messages) == LOSSY  # what the person edits
    assert sum(is_summary(m) for m in session.conversation.messages) == 1
    # Saved with the conversation: a reopened one has them.
    assert recording.conversation_id is not None
    reopened = start_recording(store, str(tmp_path), resume_id=recording.conversation_id)
    again = desk.session(reopened.conversation, model="relay-model", role="assistant")
    reopened.attach(again)
    assert again.pins == session.pins
    assert again.unpin(BY_MODEL) and [p.text for p in store.pins(reopened.conversation_id)] == [
        BY_PERSON
    ]
    reopened.close()
    await again.aclose()
