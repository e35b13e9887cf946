"""The wire log keeps legs apart and never shows a key."""

from __future__ import annotations

from typing import Any

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


def test_an_sse_event_is_redacted_once_on_its_way_to_the_log(monkeypatch: Any) -> None:
    from melgui.core.transports.http import replies
    from melgui.ui.runtime import wire_recorder

    calls: list[str] = []

    def counted(real: Any) -> Any:
        def wrapper(text: str, secrets: tuple[str, ...] = ()) -> str:
            calls.append(text)
            return str(real(text, secrets))

        return wrapper

    monkeypatch.setattr(replies, "redact", counted(replies.redact))
    monkeypatch.setattr(wire_recorder, "redact", counted(wire_recorder.redact))
    recorder = WireRecorder(secrets=("the-key",))
    log = replies.WireLog(recorder, "the-key")
    log("event", 'data: {"delta": "the-key"}')
    recorder(WireEntry("note", "a local engine's note, the-key"))  # not redacted yet
    assert len(calls) == 2  # once each
    assert all("the-key" not in e.text for leg in recorder.legs for e in leg.entries)
