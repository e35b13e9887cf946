"""The assistant message being streamed: what is drawn, what is rendered, what waits.

Its segments are rendered to HTML on the render thread (`render_batch`, pure Python),
at most one batch in flight; the transcript inserts rendered segments in order and
draws the open tail again once a rendering of the tail as it is now has come back.
A segment still without HTML when the message must be drawn at once (an explicit
flush, a whole message) is rendered where it is needed: `html_for`.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from melgui.ui.chat.blocks.markdown_blocks import MarkdownSplitter, Segment
from melgui.ui.chat.blocks.segment_html import SegmentRenderer, render_thread_renderer
from melgui.ui.runtime.render_thread import render_piece
from melgui.ui.runtime.theme import Colors


@dataclass(slots=True)
class Entry:
    """A final segment not inserted yet, and its HTML once rendered."""

    segment: Segment
    html: str | None = None
    sent: bool = False  # in a batch on the render thread


Batch = tuple[list[Entry], Segment | None]  # segments to render, and the tail (or None)


def render_batch(
    colors: Colors, segments: list[Segment], tail: Segment | None
) -> tuple[list[str], str]:
    """On the render thread: the segments' HTML and the tail's ("" for no tail), a
    segment at a time between the GUI thread's drawing turns (render_piece)."""
    renderer = render_thread_renderer(colors)
    htmls: list[str] = []
    for segment in [*segments, tail]:
        if segment is not None:
            with render_piece():
                htmls.append(renderer.render(segment))
    return (htmls[:-1], htmls[-1]) if tail is not None else (htmls, "")


class OpenMessage:
    def __init__(self, first_code_id: int) -> None:
        self.splitter = MarkdownSplitter(first_code_id)
        self.pending: list[str] = []
        self.ready: deque[Entry] = deque()  # final, not drawn yet
        self.tail_dirty = False
        self.tail_len = 0
        self.tail_html = ""  # what the tail shows now
        self.streamed = False
        self.in_flight = 0  # the ticket of the batch on the render thread (0: none)
        self.tail_rendered: tuple[Segment | None, str] | None = None  # the last tail back
        self.finished = False  # complete: drawn in the background, later calls wait
        self.mark = 0  # the transcript's key for it (its hover actions)

    def take_pending(self) -> None:
        """Feed the buffered deltas to the splitter: new final segments join `ready`."""
        if self.pending:
            text = "".join(self.pending)
            self.pending.clear()
            self.ready.extend(Entry(segment) for segment in self.splitter.feed(text))
            self.tail_dirty = True

    def finish(self) -> None:
        """The message is complete: what the tail held becomes final segments."""
        self.take_pending()
        self.ready.extend(Entry(segment) for segment in self.splitter.finish())
        self.tail_dirty = False
        self.finished = True
        known = self.tail_rendered
        for entry in self.ready:  # the last tail rendered is often the last segment
            if known is not None and entry.html is None and entry.segment == known[0]:
                entry.html = known[1]

    def next_batch(self) -> Batch | None:
        """What to send to the render thread now (None: nothing, or a batch in flight)."""
        if self.in_flight:
            return None
        entries = [entry for entry in self.ready if entry.html is None and not entry.sent]
        tail = self.splitter.tail() if self.tail_dirty and not self.finished else None
        if not entries and (tail is None or self._tail_known(tail)):
            return None
        for entry in entries:
            entry.sent = True
        return entries, tail

    def rendered(self, batch: Batch, htmls: list[str], tail_html: str) -> None:
        entries, tail = batch
        for entry, html in zip(entries, htmls, strict=True):
            entry.html = html
        if tail is not None:
            self.tail_rendered = (tail, tail_html)
        self.in_flight = 0

    def failed(self, batch: Batch) -> None:
        """The render thread raised: these are rendered where needed instead."""
        for entry in batch[0]:
            entry.sent = False
        self.in_flight = 0

    def tail_now(self, renderer: SegmentRenderer | None = None) -> str | None:
        """The open tail's HTML: rendered by `renderer` here, else if the render thread
        has rendered it as it is now (None: not yet)."""
        tail = self.splitter.tail()
        if tail is None:
            return ""
        if renderer is not None:
            return renderer.render(tail)
        known = self.tail_rendered
        return known[1] if known is not None and known[0] == tail else None

    def _tail_known(self, tail: Segment) -> bool:
        return self.tail_rendered is not None and self.tail_rendered[0] == tail

    def undrawn_chars(self) -> int:
        """Characters final and not drawn yet, rendered or not: inserting rendered HTML
        and laying it out costs about what rendering it does, per character."""
        return sum(len(entry.segment.text) for entry in self.ready)


def html_for(entry: Entry, renderer: SegmentRenderer) -> str:
    """The entry's HTML, rendered here (on the GUI thread) if the render thread has not."""
    if entry.html is None:
        entry.html = renderer.render(entry.segment)
    return entry.html
