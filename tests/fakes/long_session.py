"""A model for long-session tests, played by a scripted OpenAI-compatible server.

`LongModel.leg(request)` answers like a working agent: a new request gets read_file
calls for the files named in it, the results get a short answer. A summary request
(compaction's leg with no tools) gets a structured summary. Every answer reports usage
counted as the server would (characters / CHARS_PER_TOKEN of the whole request body),
or a fixed `cut_to` count, to play a server that silently cut the prompt.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from melgui.core.agent.compaction import SUMMARY_PROMPT
from melgui.core.config.settings import Settings
from tests.fakes.scenario import Step, done, text, tool_call, tool_calls
from tests.fakes.scripted_server import RecordedRequest, ScriptedOpenAI

CHARS_PER_TOKEN = 3.0
SUMMARY = (
    "## Goal\nRead the notes.\n## Decisions\nNone.\n## Files touched\nnotes\n## Open tasks\nMore."
)


def is_summary_request(request: RecordedRequest) -> bool:
    messages = request.messages
    return bool(messages) and messages[0].get("content") == SUMMARY_PROMPT


def request_tokens(request: RecordedRequest) -> int:
    return int(len(request.body) / CHARS_PER_TOKEN)


class LongModel:
    def __init__(self, files_per_turn: int = 2) -> None:
        self.files_per_turn = files_per_turn
        self.cut_to: int | None = None
        self.calls = 0
        self.report_usage = True

    def usage(self, request: RecordedRequest) -> dict[str, int] | None:
        if not self.report_usage:
            return None
        prompt = self.cut_to if self.cut_to is not None else request_tokens(request)
        return {"prompt_tokens": prompt, "completion_tokens": 20}

    def leg(self, request: RecordedRequest) -> list[Step]:
        if is_summary_request(request):
            return [text(SUMMARY), done(usage=self.usage(request))]
        last = request.messages[-1]
        if last.get("role") == "user":
            words = str(last.get("content", "")).split()
            names = [w for w in words if w.startswith("notes")][: self.files_per_turn]
            calls = []
            for name in names:
                self.calls += 1
                calls.append(tool_call("read_file", {"path": name}, id=f"c{self.calls}"))
            if calls:
                return [tool_calls(*calls, usage=self.usage(request))]
        return [text("Read them."), done(usage=self.usage(request))]


def serve_long_model(server: ScriptedOpenAI, model: LongModel) -> None:
    server.on(lambda request: True, model.leg)


def write_notes(folder: Path, count: int, size: int) -> None:
    for number in range(count):
        line = f"note {number}: " + "lorem ipsum dolor sit amet " * 4 + "\n"
        (folder / f"notes{number}.txt").write_text((line * (size // len(line) + 1))[:size])


def openai_settings(server: ScriptedOpenAI, **changes: Any) -> Settings:
    values: dict[str, Any] = {
        "connection": "openai",
        "openai_base_url": server.base_url,
        "model": "m",
    }
    return Settings(**{**values, **changes})
