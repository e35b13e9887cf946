"""A window 1300 px wide, attached to a real `melgui host`, with two panes open side by
side and the plans panel shown: every pane shown stays in sight at its least width at
least (one moves to a tab of its own if both do not fit), the panel docked beside them
(the history folds to make room), not over them. The theme is applied before the window
is made, as the app does: its font and padding make every minimum wider."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QApplication

from melgui.ui.runtime.theme import apply_theme
from melgui.ui.window.layout_state import MIN_CHAT_WIDTH, MIN_PANES_WIDTH
from tests.fakes.host_windows import HostWindows, open_acp_pane

SHOTS = Path(os.environ.get("MELGUI_SHOTS_DIR") or "/tmp")


def in_sight(window: Any) -> list[tuple[int, int]]:
    """Each pane's width in sight (not under the side panel shown over the panes), and
    its least width."""
    fold = window.side_panel.fold
    over = fold.frame.geometry() if fold.over() else QRect()
    seen = []
    for info, _ in window.pane_manager.panes():
        frame = window.pane_manager.area.frame(info.id)
        if not frame.isVisible():  # on a tab behind
            continue
        rect = QRect(frame.mapTo(window, QPoint(0, 0)), frame.size())
        hidden = rect.intersected(over).width() if over.intersects(rect) else 0
        seen.append((rect.width() - hidden, frame.minimumSizeHint().width()))
    return seen


def test_two_panes_and_the_plans_panel_at_1300_px_keep_the_panes_in_sight(
    host_windows: HostWindows, qtbot: Any, qapp: QApplication
) -> None:
    apply_theme(qapp, "light")
    window, _, _ = open_acp_pane(host_windows, size=(1300, 800))
    window.pane_manager.open_terminal(None, "right")
    window.side_panel.reveal("plans")
    qtbot.wait(300)  # the panel slides in
    QApplication.processEvents()
    window.grab().save(str(SHOTS / "narrow-plans-two-panes.png"))
    seen = in_sight(window)
    assert seen and all(width >= least for width, least in seen), seen
    area = window.pane_manager.area
    tabs = {area.tab_of(info.id) for info, _ in window.pane_manager.panes()}
    assert -1 not in tabs and len(tabs) == (1 if len(seen) == 2 else 2)  # split, or a tab each
    assert window.pane_manager.area.width() >= MIN_PANES_WIDTH
    assert window.pane_host.sizes()[0] >= MIN_CHAT_WIDTH
    assert window.side_panel.dock.isVisible() and not window.side_panel.fold.over()
    assert window.side_panel.current() == "plans"

    # Folded again and the panes closed: the history comes back.
    window.side_panel.fold_away()
    for info, _ in window.pane_manager.panes():
        window.pane_manager.close_pane(info.id, discard=window.pane_manager.pane_losses(info.id))
    QApplication.processEvents()
    assert window.history_dock.isVisible()
