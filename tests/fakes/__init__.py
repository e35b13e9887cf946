"""Hand-written fakes for tests: scripted relay / OpenAI-compatible servers over loopback.

See tests/fakes/scripted_server.py for a usage example.
"""

from tests.fakes.scenario import (
    AUTO,
    Call,
    Leg,
    Step,
    comment,
    delta,
    done,
    drop,
    error_event,
    framing,
    hold,
    http_error,
    pause,
    pieces,
    raw,
    sse,
    text,
    tool_call,
    tool_calls,
)
from tests.fakes.scripted_server import (
    RecordedRequest,
    ScriptedOpenAI,
    ScriptedRelay,
    ScriptedServer,
)

__all__ = [
    "AUTO",
    "Call",
    "Leg",
    "RecordedRequest",
    "ScriptedOpenAI",
    "ScriptedRelay",
    "ScriptedServer",
    "Step",
    "comment",
    "delta",
    "done",
    "drop",
    "error_event",
    "framing",
    "hold",
    "http_error",
    "pause",
    "pieces",
    "raw",
    "sse",
    "text",
    "tool_call",
    "tool_calls",
]
