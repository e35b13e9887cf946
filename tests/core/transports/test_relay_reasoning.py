"""Reasoning over the relay, and the per-connection setting that sends it back."""

from __future__ import annotations

from functools import partial

from melgui.core.config.settings import Settings
from melgui.core.protocol.events import ReasoningDelta, TextDelta
from melgui.core.protocol.messages import Message
from melgui.core.protocol.transport import LegRequest
from melgui.core.transports.connection import make_transport, sends_reasoning
from melgui.core.transports.openai_compat import OpenAITransport
from melgui.core.transports.relay import RelayTransport
from tests.fakes import ScriptedRelay, done, sse, text
from tests.fakes.legs import play_leg

HISTORY = [
    Message.user("hi").to_wire(),
    Message.assistant("hello", reasoning="they greet").to_wire(),
    Message.user("again").to_wire(),
]


def request() -> LegRequest:
    return LegRequest("m", list(HISTORY), (), "assistant", "/p")


async def test_relay_delta_reasoning_is_kept_apart(scripted_relay: ScriptedRelay) -> None:
    events, _ = await play_leg(
        scripted_relay,
        partial(RelayTransport, api_key="k"),
        request(),
        (sse({"reasoning": "hmm "}, event="delta"), text("Hi."), done()),
    )
    assert [type(e) for e in events[:2]] == [ReasoningDelta, TextDelta]
    assert events[0] == ReasoningDelta("hmm ")
    sent = scripted_relay.legs_received[0].messages
    assert all("reasoning_content" not in m for m in sent)


def test_the_setting_is_per_connection_and_off_by_default() -> None:
    relay = Settings(connection="relay", relay_url="http://127.0.0.1:9")
    assert not sends_reasoning(relay)
    transport = make_transport(relay, "k")
    assert isinstance(transport, RelayTransport) and not transport.send_reasoning
    on = relay.model_copy(update={"send_reasoning": ["relay"]})
    relay_on = make_transport(on, "k")
    assert isinstance(relay_on, RelayTransport)
    assert relay_on.request_body(request())["messages"][1]["reasoning_content"] == "they greet"
    ollama = Settings(
        connection="openai", openai_base_url="http://127.0.0.1:11434/v1", send_reasoning=["relay"]
    )
    assert not sends_reasoning(ollama)  # on for the relay only
    openai = make_transport(ollama.model_copy(update={"send_reasoning": ["ollama"]}), None)
    assert isinstance(openai, OpenAITransport) and openai.send_reasoning
