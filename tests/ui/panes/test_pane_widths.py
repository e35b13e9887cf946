"""Panes side by side keep their widths whatever their state says, back and forth: a
minimum width that followed the state's words (or the thinking row's) moved the splits on
every turn's start and end, and every chat in them laid its whole text out again. Panes
one above the other keep their heights as the thinking row comes and goes."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QLabel, QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from melgui.core.terminal.panes import IDLE, RUNNING, WAITING, PaneRegistry, failed
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.chat.thinking_row import ThinkingRow
from melgui.ui.panes.pane_area import PaneArea
from melgui.ui.panes.pane_frame import PaneFrame
from melgui.ui.runtime.theme import LIGHT
from tests.fakes.sessions import offline_bridge


def _content() -> tuple[QWidget, ThinkingRow]:
    """A worker pane's content as far as widths go: a text and, under it, the thinking row."""
    content = QWidget()
    layout = QVBoxLayout(content)
    layout.addWidget(QLabel("chat"))
    row = ThinkingRow(LIGHT, content)
    layout.addWidget(row)
    return content, row


def _three_frames() -> tuple[list[tuple[QWidget, ThinkingRow]], list[PaneFrame]]:
    """Three worker panes' frames, each through every state once: a pane's minimum may
    grow, once, to the widest state's words."""
    registry = PaneRegistry()
    panes = [_content() for _ in range(3)]
    frames = [PaneFrame(registry.add("agent", f"worker {n}"), c) for n, (c, _) in enumerate(panes)]
    for frame in frames:
        for state in (WAITING, IDLE, RUNNING):
            frame.show_state(state)
    return panes, frames


def _side_by_side(qtbot: QtBot, frames: list[PaneFrame], width: int) -> PaneArea:
    """`frames` split side by side in one area `width` px wide each, laid out."""
    area = PaneArea()
    qtbot.addWidget(area)
    area.resize(3 * width, 500)
    area.show()
    for frame in frames:
        area.add(frame, "right")
    QApplication.processEvents()
    return area


def test_panes_keep_their_widths_through_states_and_the_thinking_row(qtbot: QtBot) -> None:
    panes, frames = _three_frames()
    narrow = max(frame.minimumSizeHint().width() for frame in frames) + 12
    area = _side_by_side(qtbot, frames, narrow)
    assert area.isVisible()
    widths = [frame.width() for frame in frames]
    assert all(width <= narrow + 12 for width in widths)  # as narrow as the test wants

    frames[0].show_state(WAITING)  # "● waiting for approval"
    frames[1].show_state(WAITING)
    row = panes[2][1]
    row.set_stage("Local model: reading the conversation… 33%")
    row.on_busy(True)
    QApplication.processEvents()
    assert row.isVisible()
    assert [frame.width() for frame in frames] == widths

    row.on_busy(False)
    for frame in frames:
        frame.show_state(IDLE)
    QApplication.processEvents()
    assert [frame.width() for frame in frames] == widths

    # A failure's words are longer than any state's: cut at the pane's edge, not widening
    # it (a pixel may move, once, as the split rounds its sizes again).
    reason = "the relay said 503 Service Unavailable, three times over"
    frames[1].show_state(failed(reason))
    QApplication.processEvents()
    assert all(abs(a - b) <= 1 for a, b in zip([f.width() for f in frames], widths, strict=True))
    assert frames[1].state_label.toolTip() == f"failed: {reason}"  # said whole there


def test_panes_at_their_least_width_keep_it_as_a_badge_comes_and_goes(qtbot: QtBot) -> None:
    """A turn that ends in a pane not looked at shows a badge in its header: a minimum that
    grew with it moved the splits of panes as narrow as they can be (or sent one to a tab
    of its own), and every chat there laid its whole text out again."""
    _, frames = _three_frames()
    least = [frame.minimumSizeHint().width() for frame in frames]
    area = _side_by_side(qtbot, frames, max(least) + 4)  # less room than a badge takes
    assert area.isVisible()
    widths = [frame.width() for frame in frames]

    frames[0].set_badge(1, "the turn ended")
    frames[2].set_badge(3, "the turn ended")
    QApplication.processEvents()
    assert frames[0].badge_label.isVisible() and frames[2].badge_label.isVisible()
    assert [frame.minimumSizeHint().width() for frame in frames] == least
    assert [frame.width() for frame in frames] == widths

    frames[0].set_badge(0)  # seen: gone, its room kept
    QApplication.processEvents()
    assert frames[0].badge_label.isHidden()
    assert [frame.width() for frame in frames] == widths


def test_panes_at_their_least_height_keep_it_as_the_thinking_row_comes_and_goes(
    qtbot: QtBot,
) -> None:
    """The row shows at a turn's start and hides at the first words: a chat's least height
    that followed it moved the splits of panes as low as they can be (eight workers in a
    window), and every pane of the tab was resized and drawn again, twice a turn."""
    registry = PaneRegistry()
    chats = [ChatView(offline_bridge(source=f"worker {n}")) for n in range(3)]
    frames = [PaneFrame(registry.add("agent", f"worker {n}"), c) for n, c in enumerate(chats)]
    area = PaneArea()
    qtbot.addWidget(area)
    area.show()
    for frame in frames:
        area.add(frame, "down")
    low = sum(frame.minimumSizeHint().height() for frame in frames)
    area.resize(600, low + 60)  # every pane at its least height, or near it
    QApplication.processEvents()
    heights = [frame.height() for frame in frames]

    for chat in chats[1:]:
        chat.thinking.on_busy(True)
    QApplication.processEvents()
    assert chats[1].thinking.isVisible()
    assert [frame.height() for frame in frames] == heights

    for chat in chats[1:]:
        chat.thinking.on_busy(False)
    QApplication.processEvents()
    assert [frame.height() for frame in frames] == heights
