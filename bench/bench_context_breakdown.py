"""What showing a 200-message conversation's token breakdown costs, against one frame.

    python bench/bench_context_breakdown.py

A conversation of 200 messages (50 turns: a request, an answer calling read_file and
run_command, their results of 300 to 12,000 characters, a closing answer; every tenth
request with an attached file and an image) with the assistant role's tools and the
project instructions. Each round does what a click on the context meter does: the
breakdown of the next request is computed (next_request), handed to the popup's view, and
the popup is painted (grab: every row in view and the pinned facts). The row is the
median of 50 rounds in frames (16.7 ms); the first (cold) round, the worst and the CPU
time of the median round (what a quiet machine's wall time comes near) are printed beside
it.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # as the other window benchmarks

import budget  # bench/budget.py: the frame-budget table
from PySide6.QtWidgets import QApplication

from melgui.core.protocol.content import FilePart, ImagePart
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.messages import Conversation, Message
from melgui.ui.context.context_popup import ContextPopup
from tests.core.context.images import png_of
from tests.fakes.sessions import offline_session

MESSAGES = 200
ROUNDS = 50


def conversation() -> Conversation:
    messages: list[Message] = []
    turn = 0
    while len(messages) < MESSAGES:
        parts: tuple[FilePart | ImagePart, ...] = ()
        if turn % 10 == 0:
            parts = (FilePart(f"docs/spec{turn}.md", "spec line\n" * 80),)
            parts += (ImagePart("image/png", png_of(1280, 800), f"shot{turn}.png"),)
        messages.append(
            Message.user(f"Step {turn}: look at module{turn}.py and run the tests", parts)
        )
        read = ToolCall(f"r{turn}", "read_file", json.dumps({"path": f"src/module{turn}.py"}))
        run = ToolCall(
            f"c{turn}", "run_command", json.dumps({"command": f"pytest -q tests/t{turn}"})
        )
        messages.append(Message.assistant(f"Reading module{turn}.py first.", (read, run)))
        messages.append(Message.tool_result(read.id, "x = 1\n" * (50 + 333 * (turn % 7))))
        messages.append(Message.tool_result(run.id, "exit_code=0\n" + "." * (300 + 97 * turn)))
        messages.append(Message.assistant(f"Module {turn} is fine; the tests pass."))
        turn += 1
    return Conversation(messages[:MESSAGES])


def main() -> int:
    app = QApplication.instance() or QApplication(sys.argv)
    session = offline_session(conversation())
    session.pin("The API is v2: every endpoint lives under /api/v2.")
    popup = ContextPopup()
    popup.resize(popup.sizeHint())
    times: list[float] = []
    cpu: list[float] = []
    slices = 0
    for _ in range(ROUNDS):
        started, used = time.perf_counter(), time.process_time()
        shown = popup.show_session(session)
        popup.grab()
        times.append(time.perf_counter() - started)
        cpu.append(time.process_time() - used)
        slices = len(shown.slices)
        app.processEvents()
    median = statistics.median(times) * 1000
    print(
        f"breakdown of {len(session.conversation.messages)} messages ({slices} slices), computed"
        f" and drawn: median {median:.2f} ms (CPU {statistics.median(cpu) * 1000:.2f} ms),"
        f" first {times[0] * 1000:.2f} ms, worst {max(times) * 1000:.2f} ms of {ROUNDS} rounds"
    )
    row = budget.stall_row("context: breakdown of 200 messages, computed and drawn", median)
    print(budget.table([row]))
    return budget.verdict()


if __name__ == "__main__":
    raise SystemExit(main())
