"""The context meter's popup: the next request's tokens slice by slice (a click shows the
message in the chat), the pinned facts; and the preview before a compaction, where an
item is kept word for word or the compaction is called off.

MELGUI_SHOTS_DIR=docs python -m pytest tests/ui/test_context_popup.py re-renders
docs/context-breakdown.png and docs/compaction-preview.png.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from melgui.core.protocol.views.compacted import KEPT_HEAD, PINNED_HEAD, SUMMARY_HEAD
from melgui.ui.context.preview_dialog import CompactionPreview
from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.window import idle, relay_settings, type_prompt, wait_until

NOTES = "".join(f"{n:03d} the release checklist item number {n} is done\n" for n in range(120))
FACT = "The API is v2: every endpoint lives under /api/v2."
SUMMARY = (
    "## Goal\nShip the release.\n## Decisions\n-\n## Files touched\nnotes.md\n## Open tasks\n-"
)


def test_the_popup_shows_the_tokens_pins_facts_and_previews_a_compaction(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path,
    tmp_path: Path,
) -> None:  # fmt: skip
    (project / "notes.md").write_text(NOTES)
    (project / "AGENTS.md").write_text("Run the tests before tagging.\n")
    scripted_relay.script(
        [text("Reading the notes."), tool_calls(tool_call("read_file", {"path": "notes.md"}))],
        [text("All **120 items** of the checklist are done."), done()],
        [text("Then the release can go."), done()],
        [text("Tagged."), done()],
        [text(SUMMARY), done()],
        [text("Still here."), done()],
    )
    window: MainWindow = make_window(relay_settings(scripted_relay))
    window.resize(1100, 760)
    shots = Path(os.environ.get("MELGUI_SHOTS_DIR") or tmp_path)
    meter = window.status.context_meter
    wiring = window.context
    popup = wiring.popup

    async def turns() -> None:
        for number, prompt in enumerate(("What is left in notes.md?", "Can we ship?", "Tag it.")):
            type_prompt(qtbot, window, prompt)
            await wait_until(lambda n=number: idle(window, n + 1))

    run(turns())
    qtbot.mouseClick(meter.bar, Qt.MouseButton.LeftButton)
    assert popup.isVisible()
    shown = popup.view.breakdown
    assert "estimate" in popup.title.text() and shown.total > 0
    first = shown.slices[0]
    assert first.label == "Result: read_file notes.md" and first.kind == "result"
    labels = [s.label for s in shown.slices]
    assert "You: Can we ship?" in labels and "System message and instructions" in labels
    assert "Tool: read_file" in labels  # each tool's definition is its own slice
    transcript = window.chat.transcript
    qtbot.mouseClick(popup.view, Qt.MouseButton.LeftButton, pos=popup.view.row_rect(0).center())
    assert transcript.textCursor().hasSelection()  # the call's card, shown and selected
    assert "Read\xa0notes.md" in transcript.textCursor().selectedText()  # its card
    answer = labels.index("Model: All **120 items** of the checklist are done.")
    qtbot.mouseClick(
        popup.view, Qt.MouseButton.LeftButton, pos=popup.view.row_rect(answer).center()
    )
    assert transcript.textCursor().selectedText() == "All 120 items of the checklist"
    popup.pins.entry.setText(FACT)
    qtbot.mouseClick(popup.pins.pin_button, Qt.MouseButton.LeftButton)
    assert [p.text for p in window.session.pins] == [FACT]
    assert popup.pins.list.item(0).text().startswith(FACT)  # type: ignore[union-attr]
    popup.grab().save(str(shots / "context-breakdown.png"))
    popup.hide()
    type_prompt(qtbot, window, "/pin Never edit generated/ by hand.")
    assert [p.text for p in window.session.pins] == [FACT, "Never edit generated/ by hand."]

    previews: list[CompactionPreview] = []
    wiring.previewOpened.connect(previews.append)

    async def compact_keeping_the_read() -> None:
        qtbot.mouseClick(meter.compact_button, Qt.MouseButton.LeftButton)
        await wait_until(lambda: previews)
        dialog = previews[0]
        rows = [dialog.tree.topLevelItem(i) for i in range(dialog.tree.topLevelItemCount())]
        labels = [row.text(0) for row in rows if row is not None]
        assert labels[:3] == [
            "You: What is left in notes.md?",
            "Model: Reading the notes.",
            "Result: read_file notes.md",
        ]
        assert "2 pinned facts" in dialog.findChildren(type(popup.title))[0].text()
        read = rows[2]
        assert read is not None
        read.setCheckState(0, Qt.CheckState.Checked)
        dialog.grab().save(str(shots / "compaction-preview.png"))
        qtbot.mouseClick(dialog.compact_button, Qt.MouseButton.LeftButton)
        await wait_until(lambda: not window.bridge.busy)

    run(compact_keeping_the_read())
    messages = window.session.conversation.messages
    (summary,) = [m.content for m in messages if m.content.startswith(SUMMARY_HEAD)]
    assert KEPT_HEAD in summary and "119 the release checklist item number 119" in summary
    assert summary.endswith(f"{PINNED_HEAD}- {FACT}\n- Never edit generated/ by hand.")

    async def call_it_off() -> None:
        qtbot.mouseClick(meter.compact_button, Qt.MouseButton.LeftButton)
        await wait_until(lambda: len(previews) == 2)
        qtbot.mouseClick(previews[1].cancel_button, Qt.MouseButton.LeftButton)
        await wait_until(lambda: not window.bridge.busy)

    run(call_it_off())
    assert window.session.conversation.messages == messages
    assert "Not compacted" in transcript.toPlainText()
