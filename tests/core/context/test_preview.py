"""Before a compaction runs the person sees what it would cut and keep, and may keep an
item word for word, or not compact at all."""

from __future__ import annotations

import asyncio
from pathlib import Path

from melgui.core.agent.session import AgentSession
from melgui.core.config.settings import Settings
from melgui.core.context.preview import CompactionQuestion, question_for
from melgui.core.protocol.loop_events import (
    ContextNotice,
    HistoryBranched,
    LoopEvent,
    ToolCallFinished,
)
from melgui.core.protocol.views.compacted import KEPT_HEAD, SUMMARY_HEAD, Proposed
from melgui.core.rules.policy import FixedPolicy
from melgui.desk.desk import Desk
from tests.fakes import ScriptedOpenAI, ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.long_session import LongModel, openai_settings, serve_long_model, write_notes

CONFIG = "".join(f"option_{n} = {n * 7}\n" for n in range(200))  # long: elided when old
SUMMARY = (
    "## Goal\nTune the config.\n## Decisions\n-\n## Files touched\nconfig.ini\n## Open tasks\n-"
)


async def turn(session: AgentSession, prompt: str) -> None:
    session.submit(prompt)
    await asyncio.wait_for(session.wait_idle(), 20)


async def test_a_kept_item_goes_word_for_word_and_a_cancel_changes_nothing(
    tmp_path: Path,
) -> None:
    (tmp_path / "config.ini").write_text(CONFIG)
    asked: list[CompactionQuestion] = []
    answers: list[str] = ["keep the read", "cancel"]

    async def review(proposed: Proposed) -> frozenset[int] | None:
        question = question_for(proposed)
        asked.append(question)
        if answers.pop(0) == "cancel":
            question.cancel()
        else:
            read = next(i for i in question.items if i.label.startswith("Result: read_file"))
            question.keep([read.index])
        return await question.future

    with ScriptedRelay() as relay:
        relay.script(
            [tool_calls(tool_call("read_file", {"path": "config.ini"}, id="r1"))],
            [text("It has 200 options."), done()],
            [text("Option 3 is 21."), done()],
            [text("Noted."), done()],
            [text(SUMMARY), done()],
        )
        settings = Settings(connection="relay", relay_url=relay.base_url)
        desk = Desk(str(tmp_path), settings, api_key="k", plans=lambda t, m: None)
        session = desk.session(model="relay-model", role="assistant", policy=FixedPolicy("all"))
        session.compactor.review = review
        events: list[LoopEvent] = []
        session.subscribe(events.append)
        for prompt in ("Read config.ini", "What is option 3?", "Thanks."):
            await turn(session, prompt)
        session.request_compaction()
        await asyncio.wait_for(session.wait_idle(), 20)
        before = list(session.conversation.messages)
        session.request_compaction()
        await asyncio.wait_for(session.wait_idle(), 20)
        await session.aclose()
        await desk.aclose()
        summary_request = relay.legs_received[4]
    first = asked[0]
    assert first.proposed.mode == "manual" and first.proposed.summarise
    labels = [(i.label, i.fate) for i in first.items]
    assert labels == [
        ("You: Read config.ini", "summarised"),
        ("Model calls read_file config.ini", "summarised"),
        ("Result: read_file config.ini", "summarised"),
        ("Model: It has 200 options.", "summarised"),
    ]
    assert first.cut_tokens > 1000 and first.kept_tokens == first.proposed.before - first.cut_tokens
    # The kept result is not summarised: it goes whole into the next request.
    assert "option_199" not in summary_request.messages[-1]["content"]
    (summary,) = [m for m in before if m.content.startswith(SUMMARY_HEAD)]
    (read,) = [e.content for e in events if isinstance(e, ToolCallFinished)]
    assert "option_199 = 1393" in read and len(read) > len(CONFIG)
    assert KEPT_HEAD in summary.content and read in summary.content  # word for word
    assert [e.reason for e in events if isinstance(e, HistoryBranched)] == ["compaction"]
    # The second was cancelled: nothing changed, and the chat says so.
    assert session.conversation.messages == before
    assert any(isinstance(e, ContextNotice) and e.text.startswith("Not compacted") for e in events)


async def test_a_declined_automatic_compaction_is_asked_again_only_at_the_next_request(
    tmp_path: Path,
) -> None:
    write_notes(tmp_path, 12, 1500)
    asked: list[Proposed] = []

    async def decline(proposed: Proposed) -> frozenset[int] | None:
        asked.append(proposed)
        return None

    with ScriptedOpenAI(models=[{"id": "m", "context_length": 6000}]) as server:
        serve_long_model(server, LongModel(files_per_turn=2))
        desk = Desk(str(tmp_path), openai_settings(server), api_key=None, plans=lambda t, m: None)
        session = desk.session(model="m", role="assistant", policy=FixedPolicy("all"))
        session.compactor.review = decline
        events: list[LoopEvent] = []
        session.subscribe(events.append)
        turns = 0
        while not asked and turns < 6:
            await turn(session, f"Please read notes{2 * turns}.txt and notes{2 * turns + 1}.txt")
            turns += 1
        assert len(asked) == 1 and asked[0].mode == "auto"  # once, for the turn's legs
        await turn(session, "Please read notes10.txt and notes11.txt")
        await session.aclose()
        await desk.aclose()
    assert len(asked) == 2  # the next request asked again
    assert not any(isinstance(e, HistoryBranched) for e in events)  # nothing was cut
    assert any(isinstance(e, ContextNotice) and e.level == "warning" for e in events)
