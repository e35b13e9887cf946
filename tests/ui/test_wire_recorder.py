"""The wire log keeps legs apart and never shows a key."""

from __future__ import annotations

from melgui.core.protocol.events import WireEntry
from melgui.ui.runtime.wire_recorder import WireRecorder


def test_each_request_starts_a_leg_and_listeners_hear_clean_entries() -> None:
    recorder = WireRecorder(secrets=("the-key",))
    heard: list[WireEntry] = []
    stop = recorder.listen(heard.append)
    recorder(WireEntry("request", "POST /v1/agent/stream key=the-key"))
    recorder(WireEntry("event", "delta"))
    recorder(WireEntry("request", "POST again"))
    stop()
    recorder(WireEntry("event", "not heard"))
    assert [leg.number for leg in recorder.legs] == [1, 2]
    assert [len(leg.entries) for leg in recorder.legs] == [2, 2]
    assert "the-key" not in heard[0].text and len(heard) == 3
