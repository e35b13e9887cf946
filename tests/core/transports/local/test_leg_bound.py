"""The embedded engine's leg is bounded by its token limit, not by the HTTP legs' caps.

Each completion asks the engine for at most ANSWER_TOKENS (an answer) or CALL_TOKENS (a
call's arguments), as `n_predict`, which llama.cpp obeys: a model that would never stop
ends there with finish_reason "length". A token is at most a few dozen characters, so a
leg stays far below the 16 M characters an HTTP leg may stream. The engine here stands
in for llama.cpp's (it obeys `n_predict` as llama.cpp does) and would otherwise stream
for ever; the model file and its weights are not needed to show melgui's side.
"""

from __future__ import annotations

import threading
from typing import Any

from melgui.core.protocol.events import Done, StreamEvent, TextDelta
from melgui.core.protocol.transport import LegRequest
from melgui.core.transports.http.leg_bounds import MAX_LEG_TEXT
from melgui.core.transports.local.generation import ANSWER_TOKENS, run_leg
from melgui.core.transports.local.model import LoadedModel

TOKEN = "flood " * 10  # a long token


class EndlessEngine:
    """llama.cpp's completion call for a model that never ends its answer."""

    def __init__(self) -> None:
        self.asked: list[int] = []

    def handle_completions(self, body: dict[str, Any], chunk: Any) -> None:
        self.asked.append(int(body["n_predict"]))
        if chunk({"prompt_progress": {"total": 40, "cache": 0, "processed": 40}}):
            return
        for _ in range(int(body["n_predict"])):
            if chunk({"choices": [{"text": TOKEN}]}):
                return
        chunk({"choices": [{"text": "", "finish_reason": "length"}], "usage": {}})


def test_a_model_that_never_stops_ends_at_the_token_limit(tmp_path: Any) -> None:
    engine = EndlessEngine()
    model = LoadedModel(engine, "/models/endless.gguf", n_ctx=1_000_000, size=10**10)
    request = LegRequest(
        "endless", [{"role": "user", "content": "go"}], (), "assistant", str(tmp_path)
    )
    events: list[StreamEvent] = []
    run_leg(model, request, threading.Event(), events.append, max_tool_rounds=8)
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert isinstance(events[-1], Done) and events[-1].finish_reason == "length"
    assert max(engine.asked) == ANSWER_TOKENS
    assert len(text) <= ANSWER_TOKENS * len(TOKEN) < MAX_LEG_TEXT // 100
