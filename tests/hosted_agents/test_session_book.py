"""Earlier ACP sessions: noted per project in melgui's session book by HostedAgentSession, and
reopened with session/resume by a new host (the scripted agent records what it got)."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

from melgui.desk.hosted_agents.host import AcpHost
from melgui.desk.hosted_agents.session import HostedAgentSession
from melgui.desk.hosted_agents.session_book import KEEP, SessionBook, SessionEntry
from tests.fakes.acp_host import Events, scripted_agent

LIMIT = 30


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        self.now += 1
        return self.now


def test_the_book_keeps_each_session_once_latest_first_and_its_title(tmp_path: Path) -> None:
    book = SessionBook(tmp_path / "book.json", Clock())
    book.record(SessionEntry("bot", "bot acp", "/p", "a", "Fix the build"))
    book.record(SessionEntry("bot", "bot acp", "/p", "b", "Write docs"))
    book.record(SessionEntry("other", "other acp", "/q", "c"))
    book.record(SessionEntry("bot", "bot acp", "/p", "a"))  # used again, no new title
    shown = [(e.session_id, e.title) for e in book.for_folder("/p")]
    assert shown == [("a", "Fix the build"), ("b", "Write docs")]
    assert [e.session_id for e in book.for_folder("/q")] == ["c"]
    assert book.for_folder("/p")[0].label().startswith("bot · Fix the build · ")
    for n in range(KEEP + 5):
        book.record(SessionEntry("bot", "bot acp", "/p", f"x{n}"))
    assert len(book.entries()) == KEEP and book.entries()[0].session_id == "x5"
    (tmp_path / "book.json").write_text("{not json")
    assert book.for_folder("/p") == []


def test_records_made_at_once_in_threads_all_stay(tmp_path: Path) -> None:
    # HostedAgentSession records from threads: a start's note and a turn's may overlap.
    books = [SessionBook(tmp_path / "book.json") for _ in range(2)]

    def note(book: SessionBook, name: str) -> None:
        for n in range(40):
            book.record(SessionEntry(name, f"{name} acp", "/p", f"{name}{n}", "t"))

    threads = [threading.Thread(target=note, args=(b, f"a{i}")) for i, b in enumerate(books)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(books[0].entries()) == 80


async def test_a_session_is_noted_and_resumed_by_a_new_process(tmp_path: Path) -> None:
    book = SessionBook(tmp_path / "book.json")
    record = tmp_path / "wire.jsonl"
    command = scripted_agent("--resume", "--record", str(record))
    first = HostedAgentSession(AcpHost(command, str(tmp_path)), book=book)
    try:
        first.submit(json.dumps([{"say": "one"}]))
        await asyncio.wait_for(first.start(), LIMIT)
        await asyncio.wait_for(first.wait_idle(), LIMIT)
        session_id = first.host.state.session_id
    finally:
        await first.aclose()
    (noted,) = book.for_folder(first.host.cwd)
    assert (noted.agent, noted.session_id, noted.command) == (
        "scripted",
        session_id,
        command.text(),
    )
    assert noted.title == '[{"say": "one"}]'  # the first prompt, as no title came
    again = HostedAgentSession(AcpHost(command, str(tmp_path)), resume=noted.session_id, book=book)
    events = Events()
    again.subscribe(events)
    try:
        await asyncio.wait_for(again.start(), LIMIT)
        again.submit(json.dumps([{"say": "two"}]))
        await asyncio.wait_for(again.wait_idle(), LIMIT)
    finally:
        await again.aclose()
    assert again.host.state.session_id == session_id and events.text() == "two"
    sent = [json.loads(line) for line in record.read_text().splitlines()]
    assert [m["method"] for m in sent] == [
        "initialize", "session/new", "initialize", "session/resume",
    ]  # fmt: skip
    assert sent[-1]["params"]["sessionId"] == session_id
    assert len(book.for_folder(first.host.cwd)) == 1  # the same session, used again


async def test_sessions_of_agents_that_cannot_reopen_them_are_not_noted(tmp_path: Path) -> None:
    book = SessionBook(tmp_path / "book.json")
    session = HostedAgentSession(AcpHost(scripted_agent(), str(tmp_path)), book=book)
    try:
        session.submit(json.dumps([{"say": "one"}]))
        await asyncio.wait_for(session.wait_idle(), LIMIT)
        assert session.host.state.session_id == "s1"
    finally:
        await session.aclose()
    assert book.entries() == []
