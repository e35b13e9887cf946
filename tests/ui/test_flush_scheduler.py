"""The shared flush scheduler: one budget per tick for every transcript, no one starves."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from melgui.ui.chat.transcript.document import ChatTranscript
from melgui.ui.runtime.flush_scheduler import FlushScheduler, shared_scheduler
from melgui.ui.runtime.theme import LIGHT


class FakeClient:
    """Draws one unit per call; `work` units to draw in all."""

    def __init__(self, name: str, log: list[str], work: int = 1) -> None:
        self.name = name
        self.log = log
        self.work = work

    def scheduled_flush(self, deadline: float) -> bool:
        self.log.append(self.name)
        self.work -= 1
        return self.work > 0


def test_a_spent_budget_still_draws_one_client_per_tick_in_turn(qtbot: QtBot) -> None:
    scheduler = FlushScheduler(budget_s=0.0)  # every client overruns the budget
    log: list[str] = []
    clients = [FakeClient(name, log, work=2) for name in "abc"]
    for client in clients:
        scheduler.request(client)
    for _ in range(6):
        scheduler.tick()
    assert log == ["a", "b", "c", "a", "b", "c"]
    assert not any(scheduler.is_pending(client) for client in clients)


def test_a_generous_budget_draws_every_dirty_client_in_one_tick(qtbot: QtBot) -> None:
    scheduler = FlushScheduler(budget_s=60.0)
    log: list[str] = []
    for name in "abcd":
        scheduler.request(FakeClient(name, log))
    scheduler.tick()
    assert log == ["a", "b", "c", "d"]


def test_a_busy_client_goes_to_the_back_and_cancelled_ones_are_skipped(qtbot: QtBot) -> None:
    scheduler = FlushScheduler(budget_s=60.0)
    log: list[str] = []
    busy = FakeClient("busy", log, work=3)
    quiet = FakeClient("quiet", log)
    gone = FakeClient("gone", log)
    for client in (busy, quiet, gone):
        scheduler.request(client)
    scheduler.cancel(gone)
    scheduler.tick()
    scheduler.tick()
    scheduler.tick()
    assert log == ["busy", "quiet", "busy", "busy"]


def test_the_timer_draws_what_was_requested(qtbot: QtBot) -> None:
    scheduler = FlushScheduler(interval_ms=1)
    log: list[str] = []
    client = FakeClient("a", log, work=3)
    scheduler.request(client)
    qtbot.waitUntil(lambda: len(log) == 3, timeout=30_000)
    assert not scheduler.is_pending(client)


def test_transcripts_share_one_scheduler_and_all_get_drawn(qtbot: QtBot) -> None:
    transcripts = [ChatTranscript(LIGHT) for _ in range(8)]
    for n, transcript in enumerate(transcripts):
        qtbot.addWidget(transcript)
        transcript.stream_text(f"Pane {n} says **hello**.\n\nAnd more ")
    assert all(shared_scheduler().is_pending(transcript) for transcript in transcripts)
    qtbot.waitUntil(
        lambda: all(
            f"Pane {n} says hello." in t.toPlainText() and "And more" in t.toPlainText()
            for n, t in enumerate(transcripts)
        ),
        timeout=30_000,  # the render thread shares 2 cores with the rest under load
    )


def test_a_transcript_deleted_while_waiting_is_skipped(qtbot: QtBot) -> None:
    from shiboken6 import delete

    scheduler = shared_scheduler()
    doomed = ChatTranscript(LIGHT)
    kept = ChatTranscript(LIGHT)
    qtbot.addWidget(kept)
    doomed.stream_text("never drawn")
    kept.stream_text("drawn")
    delete(doomed)
    scheduler.tick()
    assert not scheduler.is_pending(doomed)
    qtbot.waitUntil(lambda: "drawn" in kept.toPlainText())  # rendered on the render thread


class Hearing:
    """A bridge-like client: serving it makes another client (its transcript) dirty."""

    def __init__(self, scheduler: FlushScheduler, log: list[str], then: FakeClient) -> None:
        self.scheduler = scheduler
        self.log = log
        self.then = then

    def scheduled_flush(self, deadline: float) -> bool:
        self.log.append("heard")
        self.scheduler.request(self.then)
        return False


def test_what_a_client_makes_dirty_is_served_in_the_same_tick_and_no_client_twice(
    qtbot: QtBot,
) -> None:
    scheduler = FlushScheduler(budget_s=60.0)
    log: list[str] = []
    drawn = FakeClient("drawn", log, work=2)  # still has work after one turn
    scheduler.request(Hearing(scheduler, log, then=drawn))
    scheduler.tick()
    assert log == ["heard", "drawn"]  # one tick: what was heard is drawn with it, once
    assert scheduler.is_pending(drawn)
    scheduler.tick()
    assert log == ["heard", "drawn", "drawn"] and not scheduler.is_pending(drawn)


def test_a_spent_budget_leaves_what_a_client_made_dirty_for_the_next_tick(qtbot: QtBot) -> None:
    scheduler = FlushScheduler(budget_s=0.0)
    log: list[str] = []
    drawn = FakeClient("drawn", log)
    scheduler.request(Hearing(scheduler, log, then=drawn))
    scheduler.tick()
    assert log == ["heard"] and scheduler.is_pending(drawn)
    scheduler.tick()
    assert log == ["heard", "drawn"]
