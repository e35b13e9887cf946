"""An applied edit's card offers Accept and Reject for its file: Reject puts that file back
as it was before the call through its checkpoint (an undo that can be redone) and the
model hears of it with the next message; Accept marks it reviewed, off the "Review
changes" bar. Accepting on the bar says so on the card too.

MELGUI_SHOTS_DIR=DIR also saves the window with an unfolded edit card, light and dark."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from melgui.core.config.settings import DEFAULT_MODES
from melgui.ui.checkpoints.notes import file_href
from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.window import click_href, idle, relay_settings, type_prompt, wait_until

AUTO = {**DEFAULT_MODES, "write_file": "auto", "edit_file": "auto"}
SHOTS = os.environ.get("MELGUI_SHOTS_DIR", "")
OPS = "def add(a, b):\n    return a + b\n"


def test_reject_restores_the_file_and_tells_the_model_accept_marks_it_reviewed(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    (project / "calc").mkdir()
    (project / "calc" / "ops.py").write_text(OPS)
    edit = tool_call(
        "edit_file",
        {
            "path": "calc/ops.py",
            "old_string": "    return a + b\n",
            "new_string": "    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
        },
        id="e1",
    )
    write = tool_call("write_file", {"path": "NOTES.md", "content": "sub added\n"}, id="w1")
    scripted_relay.script(
        [text("Adding sub."), tool_calls(edit, write)],
        [text("Added `sub` and a note."), done()],
        [text("Understood."), done()],
    )
    window: MainWindow = make_window(relay_settings(scripted_relay, approval_modes=AUTO))
    window.resize(1280, 820)
    transcript = window.chat.transcript
    actions = window.checkpoint_actions

    async def scenario() -> None:
        type_prompt(qtbot, window, "Add a sub function")
        await wait_until(lambda: idle(window, 2))
        await wait_until(lambda: actions.review.isVisible())
        assert {f.path for f in actions.review.shown()} == {"calc/ops.py", "NOTES.md"}
        [e1] = actions.checkpoints.for_calls(["e1"])
        [w1] = actions.checkpoints.for_calls(["w1"])
        card = transcript.card_html("e1")
        assert "Edited" in card and "+4 −0" in card
        assert file_href("accept", e1, "calc/ops.py") in card
        assert file_href("reject", e1, "calc/ops.py") in card
        if SHOTS:
            transcript.toggle_card("e1")  # unfolded in place: the diff
            await wait_until(lambda: "def sub" in transcript.card_html("e1"))
            for theme in ("light", "dark"):
                window.settings.theme = theme
                window.set_theme(window.settings)
                await wait_until(lambda: "Reject" in transcript.card_html("e1"))
                transcript.reveal_card("e1")
                cursor = transcript.textCursor()
                cursor.clearSelection()  # in view, not selected
                transcript.setTextCursor(cursor)
                window.grab().save(os.path.join(SHOTS, f"edit-card-{theme}.png"))
            window.settings.theme = "light"
            window.set_theme(window.settings)
            await wait_until(lambda: "Reject" in transcript.card_html("e1"))

        click_href(transcript, "e1", file_href("reject", e1, "calc/ops.py"))
        await wait_until(lambda: (project / "calc" / "ops.py").read_text() == OPS)
        assert (project / "NOTES.md").read_text() == "sub added\n"  # the other call's stays
        await wait_until(lambda: actions.last_restore is not None)
        await wait_until(lambda: ">undone</span>" in transcript.card_html("e1"))
        assert file_href("reject", e1, "calc/ops.py") not in transcript.card_html("e1")
        await wait_until(lambda: [f.path for f in actions.review.shown()] == ["NOTES.md"])

        click_href(transcript, "w1", file_href("accept", w1, "NOTES.md"))
        await wait_until(lambda: "✓ accepted" in transcript.card_html("w1"))
        assert not actions.review.isVisible()  # nothing left to review
        assert file_href("reject", w1, "NOTES.md") in transcript.card_html("w1")

        type_prompt(qtbot, window, "Fine, go on")
        await wait_until(lambda: idle(window, 3))

    run(scenario())
    told = scripted_relay.legs_received[2].messages[-1]
    assert told["role"] == "user"
    assert told["content"].startswith(
        "[melgui] The person rejected your change to calc/ops.py (edit_file"
    )
    assert told["content"].endswith("Fine, go on")
    # The reject is a restore like any undo: redo puts the change back.
    restore = actions.last_restore
    assert restore is not None and restore.restores == (e1_id := restore.restores[0],)
    assert actions.checkpoints.log.get(e1_id).call_id == "e1"


def test_accepting_a_file_on_the_review_bar_marks_its_cards(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    write = tool_call("write_file", {"path": "a.txt", "content": "a\n"}, id="w1")
    scripted_relay.script([tool_calls(write)], [text("Written."), done()])
    window: MainWindow = make_window(relay_settings(scripted_relay, approval_modes=AUTO))
    actions = window.checkpoint_actions

    async def scenario() -> None:
        type_prompt(qtbot, window, "Write a")
        await wait_until(lambda: idle(window, 2) and actions.review.isVisible())
        actions.review.toggle.click()  # the files' rows
        [row_accept] = [
            b for b in actions.review.findChildren(type(actions.review.toggle))
            if b.accessibleName() == "Accept a.txt"
        ]  # fmt: skip
        row_accept.click()
        await wait_until(lambda: "✓ accepted" in window.chat.transcript.card_html("w1"))
        assert not actions.review.isVisible()

    run(scenario())
