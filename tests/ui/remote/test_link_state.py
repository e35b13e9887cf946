"""The status bar's link state: each machine in use, in words, and trouble in colour."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from melgui.ui.panes.remote.link_state import LinkState


def test_the_state_of_each_link_is_said(qtbot: QtBot) -> None:
    indicator = LinkState()
    qtbot.addWidget(indicator)
    assert indicator.isHidden()  # no machine in use: nothing to say
    indicator.show_state("build", "connecting")
    assert indicator.text() == "build … connecting" and not indicator.isHidden()
    indicator.show_state("build", "connected")
    indicator.show_state("devbox", "reconnecting to devbox (attempt 3)")
    assert indicator.text() == "build ✓ connected  ·  devbox ⟳ reconnecting (attempt 3)"
    assert indicator.property("trouble") == "reconnecting"
    assert "reconnecting with backoff" in indicator.toolTip()
    indicator.show_state("build", "lost")
    assert indicator.text().startswith("build ✕ connection lost")
    assert indicator.property("trouble") == "lost"
    indicator.show_state("build", "connected")
    indicator.show_state("devbox", "connected")
    assert indicator.property("trouble") == ""
