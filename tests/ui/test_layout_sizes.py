"""The window at common screen sizes with 0, 2 and 4 panes: it keeps its size, and the
chat keeps a readable width while docks fold and panes give way; with room to spare the
chat is one centred column at most 760 px wide, the composer under its text."""

from __future__ import annotations

import os
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from melgui.core.config.settings import Settings
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.panes.splitter import Splitter, SplitterHandle
from melgui.ui.runtime.look.tokens import CHAT_COLUMN_MAX
from melgui.ui.runtime.theme import apply_theme
from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay, done, text
from tests.fakes.window import relay_settings, settled, wait_until

SIZES = [(1024, 700), (1366, 768), (1920, 1080), (2560, 1440)]
LAYOUTS = ["right", "right", "down", "right"]  # how each new pane is placed
CHAT_AT_LEAST = 480
LONG_MODEL = "hf.co/bartowski/Qwen2.5-Coder-7B-Instruct-GGUF:Q4_K_M"  # the chip cuts it short


def open_panes(window: MainWindow, count: int, run: Any) -> None:
    """`count` panes, terminals and workers in turn, through the window's own paths."""
    manager = window.pane_manager

    async def opened() -> None:
        for index in range(count):
            if index % 2 == 0:
                manager.open_terminal("sleep 30", LAYOUTS[index])
            else:
                info = manager.spawn_agent("say ok", None, LAYOUTS[index])
                await wait_until(
                    lambda i=info.id: (
                        isinstance(p := manager.pane(i), AgentPane) and p.state.name == "idle"
                    )
                )
            await settled(window)

    run(opened())


@pytest.mark.parametrize("panes", [0, 2, 4])
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_window_keeps_its_size_and_the_chat_its_width(
    scripted_relay: ScriptedRelay, make_window: Any, run: Any, size: tuple[int, int], panes: int
) -> None:
    scripted_relay.on(lambda r: r.tool_role == "worker", [text("ok"), done()])
    window: MainWindow = make_window(relay_settings(scripted_relay, model=LONG_MODEL))
    window.resize(*size)
    run(wait_until(lambda: (window.width(), window.height()) == size))
    history = window.history_dock.width()
    open_panes(window, panes, run)
    history_dock = window.history_dock  # its width, or folded: never squeezed unreadable
    assert not history_dock.isVisible() or history_dock.width() >= history - 16
    assert (window.width(), window.height()) == size  # it never resizes itself
    assert window.chat.width() >= CHAT_AT_LEAST
    assert window.minimumSizeHint().width() <= size[0]  # nothing asks for more room
    assert_the_composer_fits(window)


def assert_the_composer_fits(window: MainWindow, role_words: bool = True) -> None:
    """The chips, buttons and ring sit whole in the composer card, side by side;
    `role_words`: the role chip shows its words (False: its icon alone, as at the window's
    least width with both docks)."""
    card = window.chat.composer
    row = [
        card.model_chip,
        card.role_chip,
        card.attach_button,
        card.mention_button,
        card.command_button,
        card.ring,
        card.send_button,
    ]
    right = 0
    for widget in row:
        box = widget.geometry()
        assert widget.isVisible() and card.rect().contains(box), widget.accessibleName()
        assert widget.width() >= min(widget.minimumSizeHint().width(), widget.maximumWidth())
        assert box.left() >= right  # no overlap
        right = box.right()
    chip = card.model_chip  # a long model id is cut short to the room there is, in the middle
    words = chip.shown_text()
    head, _, tail = words.partition("…")
    assert chip.text() == LONG_MODEL and tail and LONG_MODEL.startswith(head)
    assert LONG_MODEL.endswith(tail) and len(head) + len(tail) >= 4
    assert chip.fontMetrics().horizontalAdvance(words) <= chip.width() - chip.iconSize().width()
    role = card.role_chip
    if role_words:
        assert role.shown_text() == window.settings.role  # short words are never cut
    else:  # they give way whole, and stay the chip's description
        assert role.shown_text() == "" and role.accessibleDescription() == window.settings.role


def test_on_a_small_screen_docks_fold_and_panes_become_tabs_then_come_back(
    scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    scripted_relay.on(lambda r: r.tool_role == "worker", [text("ok"), done()])
    window: MainWindow = make_window(relay_settings(scripted_relay))
    window.resize(1024, 700)
    run(wait_until(lambda: window.width() == 1024))
    assert window.history_dock.isVisible()
    open_panes(window, 4, run)
    area = window.pane_manager.area
    assert not window.history_dock.isVisible()  # folded to its View menu toggle
    assert area.tabs.count() >= 2  # four side by side do not fit: some became tabs
    assert window.chat.width() >= CHAT_AT_LEAST
    for info in list(window.pane_manager.registry.all()):
        window.pane_manager.close_pane(info.id)
    run(wait_until(lambda: window.history_dock.isVisible() and window.side_panel.dock.isVisible()))
    run(settled(window))
    assert (window.width(), window.height()) == (1024, 700)


def test_the_handles_are_wide_light_up_and_a_double_click_resets_the_split(
    scripted_relay: ScriptedRelay, make_window: Any, run: Any, qtbot: QtBot
) -> None:
    window: MainWindow = make_window(relay_settings(scripted_relay))
    window.resize(1366, 768)
    run(wait_until(lambda: window.width() == 1366))
    manager = window.pane_manager
    manager.open_terminal("sleep 30")
    manager.open_terminal("sleep 30", "right")
    run(settled(window))
    host = window.pane_host
    first = host.sizes()
    handle = host.handle(1)
    assert isinstance(handle, SplitterHandle) and handle.width() >= 8
    middle = handle.rect().center()
    qtbot.mousePress(handle, Qt.MouseButton.LeftButton, pos=middle)
    qtbot.mouseMove(handle, middle + QPoint(120, 0))
    qtbot.mouseRelease(handle, Qt.MouseButton.LeftButton, pos=middle + QPoint(120, 0))
    assert host.sizes()[0] > first[0] + 60 and window.layout_keeper.chat_share is not None
    QApplication.sendEvent(handle, QEvent(QEvent.Type.HoverEnter))
    assert handle.hovered  # drawn in the accent while the pointer is over it
    QApplication.sendEvent(handle, QEvent(QEvent.Type.HoverLeave))
    assert not handle.hovered
    qtbot.mouseDClick(handle, Qt.MouseButton.LeftButton, pos=handle.rect().center())
    assert abs(host.sizes()[0] - first[0]) <= 2 and window.layout_keeper.chat_share is None

    panes = host.widget(1).findChild(Splitter)
    assert panes is not None and panes.count() == 2 and panes.handleWidth() >= 8
    panes.setSizes([600, 200])
    inner = panes.handle(1)
    qtbot.mouseDClick(inner, Qt.MouseButton.LeftButton, pos=inner.rect().center())
    left, right = panes.sizes()
    assert abs(left - right) <= 2  # shared equally again


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080), (2560, 1440)], ids=str)
def test_the_chat_is_one_centred_column_at_most_760_wide(
    scripted_relay: ScriptedRelay, make_window: Any, run: Any, size: tuple[int, int]
) -> None:
    window: MainWindow = make_window(relay_settings(scripted_relay))
    window.resize(*size)
    run(wait_until(lambda: (window.width(), window.height()) == size))
    chat = window.chat
    transcript = chat.transcript
    run(wait_until(lambda: transcript.viewport().width() <= CHAT_COLUMN_MAX))
    text = transcript.viewport().geometry()
    assert chat.composer.width() <= CHAT_COLUMN_MAX
    left, right = text.left(), chat.width() - text.right()
    if chat.width() > CHAT_COLUMN_MAX + 2 * 48:  # room to spare: generous, even margins
        assert left >= 48 and abs(left - right) <= transcript.verticalScrollBar().width() + 2
    # The composer lines up under the text, within the document's margin.
    composer_left = chat.composer.mapTo(chat, chat.composer.rect().topLeft()).x()
    assert abs(composer_left - left) <= 2 * transcript.document().documentMargin()


def test_at_the_windows_minimum_width_nothing_is_cut_at_the_right(
    scripted_relay: ScriptedRelay, make_window: Any, run: Any, tmp_path: Any, qapp: QApplication
) -> None:
    """720 px, the history and the side panel shown, no panes: the window asks for no more
    than it has (the chat's minimum of 480 beside the docks' made it lay the chat and the
    status bar out wider than shown: the welcome, the composer and Compact cut off)."""
    apply_theme(qapp, "light")  # as the app does before its window: wider minimums
    window: MainWindow = make_window(relay_settings(scripted_relay, model=LONG_MODEL))
    window.resize(720, 600)
    run(wait_until(lambda: window.width() == 720))
    run(settled(window))
    assert window.history_dock.isVisible()
    assert window.minimumSizeHint().width() <= 720
    central = window.centralWidget()
    assert central.minimumSizeHint().width() <= central.width()
    welcome, viewport = window.chat.welcome, window.chat.transcript.viewport()
    assert welcome.isVisible() and welcome.geometry().right() <= viewport.width()
    assert window.chat.geometry().right() <= central.width()
    assert_the_composer_fits(window, role_words=False)
    status = window.status
    assert status.width() <= window.width() and status.activity.isVisible()
    meter = status.context_meter
    assert meter.compact_button.isVisible() and meter.geometry().right() <= status.width()
    shots = os.environ.get("MELGUI_SHOTS_DIR") or str(tmp_path)
    assert window.grab().save(os.path.join(shots, "window-720.png"))


def test_a_chip_with_the_room_it_asks_for_draws_its_words_whole(
    make_window: Any, run: Any, qapp: QApplication
) -> None:
    """A model chip saying "Model" was drawn "M…l" in a wide window: its size hint counted
    the word as 38 px where the text is 38.4 px wide, and the words were elided."""
    window: MainWindow = make_window(
        Settings(connection="openai", openai_base_url="http://127.0.0.1:9/v1")
    )
    window.resize(1100, 700)
    run(wait_until(lambda: window.width() == 1100))
    card = window.chat.composer
    card.show_model("Model")
    run(settled(window))
    for chip, words in ((card.model_chip, "Model"), (card.role_chip, window.settings.role)):
        assert chip.width() >= chip.sizeHint().width()
        assert chip.text() == words and chip.shown_text() == words


def test_with_no_model_chosen_the_model_chip_names_the_one_that_answers(
    make_window: Any, run: Any
) -> None:
    """It said "Model" while the prompt box and the line over it named the model."""
    # A server that lists no models: none is chosen, and its first one answers.
    window: MainWindow = make_window(
        Settings(connection="openai", openai_base_url="http://127.0.0.1:9/v1")
    )
    run(settled(window))
    chip, answerer = window.chat.composer.model_chip, window.chat.model_line.answerer
    assert answerer is not None and chip.text() == answerer.name
    assert f"none chosen, {answerer.name} answers" in chip.toolTip()


def test_panes_whose_minimum_grows_after_they_are_placed_move_to_tabs_then(
    scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    """A pane's minimum can grow after the layout pass that placed it (a pane settling, a
    header's words). The panes that no longer fit move to tabs of their own then, not at
    the next change of some pane's state: that came as a worker ended its turn, and every
    chat of the tab, full of streamed text, was laid out again at once."""
    window: MainWindow = make_window(relay_settings(scripted_relay))
    window.resize(1920, 1080)
    run(wait_until(lambda: window.width() == 1920))
    manager = window.pane_manager
    manager.open_terminal("sleep 30")
    manager.open_terminal("sleep 30", "right")
    run(settled(window))
    area = manager.area
    assert area.tabs.count() == 1  # side by side: they fit
    heard: list[None] = []
    manager.panesChanged.connect(lambda: heard.append(None))

    frame = area.frames()[-1]
    # Alone it fits beside the chat, even with the docks there; beside the other, not
    # even with them folded.
    frame.content.setMinimumWidth(1200)
    run(settled(window))
    assert not heard  # no pane came, went or changed its state
    assert area.tabs.count() == 2
