"""The open tail is rendered on the render thread; the GUI thread only inserts the HTML,
in order, and the document ends as if it had been drawn at once."""

from __future__ import annotations

import sys
import threading
from concurrent.futures import Future, wait
from typing import Any

import pytest
from PySide6.QtCore import QCoreApplication, QEvent
from pytestqt.qtbot import QtBot

from melgui.ui.chat.blocks.markdown_blocks import Segment
from melgui.ui.chat.blocks.segment_html import SegmentRenderer, warm_up
from melgui.ui.chat.blocks.tool_cards import card_html
from melgui.ui.chat.transcript.document import SYNC_FINISH_CHARS, ChatTranscript
from melgui.ui.chat.transcript.open_message import render_batch
from melgui.ui.runtime import render_thread
from melgui.ui.runtime.flush_scheduler import FlushScheduler
from melgui.ui.runtime.render_thread import THREAD_NAME, gui_turn, render_piece, render_pool
from melgui.ui.runtime.theme import LIGHT

HUGE_CODE = "Here it is:\n\n```python\n" + "".join(
    f"value_{n} = compute({n}, name='x{n}')  # step {n}\n" for n in range(3_000)
)


@pytest.fixture
def render_threads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of the thread each segment was rendered on, in order. The warm-up a
    transcript starts on the GUI thread (the first of the process) is done before."""
    warm_up()
    names: list[str] = []
    real = SegmentRenderer.render

    def spied(self: SegmentRenderer, segment: Segment) -> str:
        names.append(threading.current_thread().name)
        return real(self, segment)

    monkeypatch.setattr(SegmentRenderer, "render", spied)
    return names


def drawn_at_once(qtbot: QtBot, text: str) -> ChatTranscript:
    whole = ChatTranscript(LIGHT)
    qtbot.addWidget(whole)
    whole.add_assistant(text)
    return whole


def test_a_huge_code_block_finishing_renders_off_the_gui_thread(
    qtbot: QtBot, render_threads: list[str]
) -> None:
    streamed = ChatTranscript(LIGHT)
    qtbot.addWidget(streamed)
    text = HUGE_CODE + "```\n\nDone."
    assert len(text) > SYNC_FINISH_CHARS
    streamed.stream_text(text)  # arrives in one burst, and the message ends at once
    streamed.finish_assistant(text, background=True)
    assert streamed.holding()  # drawn in the background: finish_assistant returned
    streamed.add_card("c1", card_html("c1", "run_command", "make", "requested", LIGHT))
    streamed.add_notice("after the card", LIGHT.muted)
    assert streamed.has_card("c1")  # waiting its turn
    qtbot.waitUntil(lambda: not streamed.holding(), timeout=10_000)
    assert render_threads and all(name.startswith(THREAD_NAME) for name in render_threads)
    shown = streamed.toPlainText()
    assert shown.index("Done.") < shown.index("Run make") < shown.index("after the card")
    whole = drawn_at_once(qtbot, text)
    whole.add_card("c1", card_html("c1", "run_command", "make", "requested", LIGHT))
    whole.add_notice("after the card", LIGHT.muted)
    assert streamed.toHtml() == whole.toHtml()


def test_streaming_ticks_insert_what_the_render_thread_made(
    qtbot: QtBot, render_threads: list[str]
) -> None:
    streamed = ChatTranscript(LIGHT)
    qtbot.addWidget(streamed)
    text = "".join(f"Paragraph {n} with `code` and **bold**.\n\n" for n in range(40))
    for n in range(0, len(text), 25):
        streamed.stream_text(text[n : n + 25])
    qtbot.waitUntil(lambda: "Paragraph 39" in streamed.toPlainText(), timeout=10_000)
    assert render_threads and all(name.startswith(THREAD_NAME) for name in render_threads)
    streamed.finish_assistant(None, background=True)
    assert not streamed.holding()  # little was left: drawn at once
    assert streamed.toHtml() == drawn_at_once(qtbot, text).toHtml()


def test_a_stream_finishing_while_a_render_is_in_flight_ends_like_one_drawing(
    qtbot: QtBot,
) -> None:
    streamed = ChatTranscript(LIGHT)
    qtbot.addWidget(streamed)
    text = "Intro.\n\n" + HUGE_CODE[:4_000] + "\n```\n\nEnd **here**."
    streamed.stream_text(text[:3_000])
    assert not streamed.scheduled_flush(0.0)  # sent to the render thread, nothing to draw
    streamed.stream_text(text[3_000:])
    streamed.finish_assistant(None)  # not in the background: drawn now, here
    render_pool().submit(lambda: None).result()  # the batch in flight came back late
    QCoreApplication.processEvents()  # its queued delivery runs, and is dropped
    assert streamed.toHtml() == drawn_at_once(qtbot, text).toHtml()


def test_a_stream_ending_with_much_rendered_and_not_drawn_draws_it_in_the_background(
    qtbot: QtBot,
) -> None:
    """A flood outruns the ticks' budget: what the render thread made waits to be inserted.
    The message ending then is drawn in slices after finish_assistant returns, as one
    with that much still to render is, not in one go in the call (a stall of tens of ms
    as eight workers' floods ended)."""
    streamed = ChatTranscript(LIGHT)
    qtbot.addWidget(streamed)
    text = "".join(f"Paragraph {n} with `code` and **bold**.\n\n" for n in range(120))
    assert len(text) > SYNC_FINISH_CHARS
    streamed.stream_text(text)
    assert not streamed.scheduled_flush(0.0)  # all sent to the render thread, none drawn
    render_pool().submit(lambda: None).result()  # rendered there
    QCoreApplication.sendPostedEvents(None, QEvent.Type.MetaCall)  # handed back, no tick
    assert "Paragraph 0" not in streamed.toPlainText()
    streamed.finish_assistant(None, background=True)
    assert streamed.holding()  # not drawn in the call
    qtbot.waitUntil(lambda: not streamed.holding(), timeout=10_000)
    assert streamed.toHtml() == drawn_at_once(qtbot, text).toHtml()


def test_the_render_thread_renders_nothing_while_a_flush_tick_draws(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tick of the flush scheduler is the GUI thread's own turn: the render thread,
    given segments to render meanwhile, starts on them only once the tick is over (it
    took half of the GIL from the tick's Python before, and eight streaming panes'
    ticks overran their frame). The tick waits for the rendering, as long as it lets
    it; it is not done by then."""
    warm_up()
    ticking = threading.Event()
    during: list[bool] = []  # for each segment rendered there: was a tick running?
    real = SegmentRenderer.render

    def spied(self: SegmentRenderer, segment: Segment) -> str:
        if threading.current_thread().name.startswith(THREAD_NAME):
            during.append(ticking.is_set())
        return real(self, segment)

    monkeypatch.setattr(SegmentRenderer, "render", spied)
    segments = [Segment("markdown", f"Paragraph {n} with `code`.") for n in range(3)]
    sent: list[Future[Any]] = []

    class Drawing:
        def scheduled_flush(self, deadline: float) -> bool:
            ticking.set()
            sent.append(render_pool().submit(render_batch, LIGHT, segments, segments[0]))
            wait(sent, timeout=0.5)  # every chance to render while the tick runs
            finished_in_tick.append(sent[0].done())
            ticking.clear()
            return False

    finished_in_tick: list[bool] = []
    scheduler = FlushScheduler()
    scheduler.request(Drawing())
    scheduler.tick()
    htmls, tail_html = sent[0].result()
    assert finished_in_tick == [False]
    assert during == [False] * 4
    assert len(htmls) == 3 and "Paragraph 0" in tail_html


def test_the_render_thread_gives_the_gil_back_within_a_fifth_of_a_millisecond() -> None:
    """Each call of Qt into the GUI thread's Python (a paint, an event filter, a slot)
    waits up to the switch interval for the GIL while the render thread renders."""
    render_pool()
    assert sys.getswitchinterval() <= 0.0002


def test_a_flush_tick_waits_for_a_long_rendering_only_a_moment() -> None:
    """A piece the render thread takes long over (a huge segment) does not hold a tick
    up: the tick goes on beside it after TURN_WAIT_S, as every tick did before turns."""
    rendering = threading.Event()
    release = threading.Event()
    rendered = threading.Event()

    def long_piece() -> None:
        with render_piece():
            rendering.set()
            release.wait(5)
            rendered.set()

    piece = render_pool().submit(long_piece)
    assert rendering.wait(10)
    ticked: list[bool] = []

    class Drawing:
        def scheduled_flush(self, deadline: float) -> bool:
            ticked.append(not rendered.is_set())  # drawn while the piece still renders
            return False

    scheduler = FlushScheduler()
    scheduler.request(Drawing())
    scheduler.tick()
    release.set()
    piece.result()
    assert ticked == [True]


def test_a_turn_asked_for_is_had_before_the_render_thread_s_next_piece(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The render thread lets a turn asked for during a piece have the lock before its
    next piece: the lock alone is not fair (the thread letting it go took it again at
    once, and the turn waited its whole TURN_WAIT_S without it)."""
    monkeypatch.setattr(render_thread, "TURN_WAIT_S", 0.05)

    inside = threading.Event()

    def two_pieces() -> None:
        with render_piece():  # until a turn is asked for
            inside.set()
            for _ in range(5_000):
                if not render_thread._no_turn_asked.is_set():
                    break
                threading.Event().wait(0.001)
        with render_piece():  # longer than the turn waits
            threading.Event().wait(0.5)

    running = render_pool().submit(two_pieces)
    assert inside.wait(10)
    with gui_turn() as held:
        pass
    running.result()
    assert held
