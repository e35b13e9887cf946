"""The wire log pane: one leg at a time, following the newest while it is shown."""

from __future__ import annotations

import time

from pytestqt.qtbot import QtBot

from melgui.core.protocol.events import WireEntry
from melgui.ui.inspector.wire_view import MAX_SHOWN_CHARS, WireLogView, format_entry
from melgui.ui.runtime.wire_recorder import WireRecorder
from tests.fakes.sessions import offline_bridge


def test_an_entry_shows_its_direction_time_and_text() -> None:
    at = time.mktime((2026, 1, 2, 13, 4, 5, 0, 0, -1))
    assert format_entry(WireEntry("request", "POST /x", at)) == "→ request 13:04:05\nPOST /x"
    assert format_entry(WireEntry("event", "delta")) == "← event \ndelta"
    assert format_entry(WireEntry("note", "retry")) == "· note \nretry"


def test_a_huge_entry_is_cut_in_the_view_only() -> None:
    entry = WireEntry("response", "x" * (MAX_SHOWN_CHARS + 7))
    shown = format_entry(entry)
    assert shown == "← response \n" + "x" * MAX_SHOWN_CHARS + " … (7 more)"
    assert len(entry.text) == MAX_SHOWN_CHARS + 7


def test_legs_are_listed_and_the_newest_is_followed(qtbot: QtBot) -> None:
    recorder = WireRecorder(secrets=("the-key",))
    recorder(WireEntry("request", "POST 1 the-key"))
    recorder(WireEntry("event", "one"))
    bridge = offline_bridge(recorder=recorder)
    view = WireLogView(bridge)
    qtbot.addWidget(view)
    assert [view.legs.itemText(i) for i in range(view.legs.count())] == ["Leg 1"]
    assert view.view.toPlainText() == "→ request \nPOST 1 «redacted»\n\n← event \none"

    recorder(WireEntry("event", "two"))
    qtbot.waitUntil(lambda: view.view.toPlainText().endswith("← event \ntwo"))
    recorder(WireEntry("request", "POST 2"))
    qtbot.waitUntil(lambda: view.legs.count() == 2)
    assert view.legs.currentText() == "Leg 2"
    assert view.view.toPlainText() == "→ request \nPOST 2"


def test_an_older_leg_being_read_is_not_disturbed(qtbot: QtBot) -> None:
    recorder = WireRecorder()
    recorder(WireEntry("request", "POST 1"))
    recorder(WireEntry("request", "POST 2"))
    bridge = offline_bridge(recorder=recorder)
    view = WireLogView(bridge)
    qtbot.addWidget(view)
    view.legs.setCurrentIndex(0)
    assert view.view.toPlainText() == "→ request \nPOST 1"
    recorder(WireEntry("event", "late"))
    recorder(WireEntry("request", "POST 3"))
    qtbot.waitUntil(lambda: view.legs.count() == 3)
    assert view.legs.currentText() == "Leg 1"
    assert view.view.toPlainText() == "→ request \nPOST 1"
