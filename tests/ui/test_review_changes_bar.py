"""The "Review changes" bar over the composer, in the real window: the files the last
turn changed with their lines added and removed; Accept takes one off the list, Undo puts
just that file back (through its checkpoints), and the next turn lists its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QPushButton
from pytestqt.qtbot import QtBot

from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.window import idle, relay_settings, type_prompt, wait_until
from tests.ui.test_checkpoints_window import AUTO


def _button(window: Any, name: str) -> QPushButton:
    found = [b for b in window.checkpoint_actions.review.findChildren(QPushButton)]
    return next(b for b in found if b.accessibleName() == name)


def test_the_turns_files_are_listed_and_each_can_be_accepted_or_undone(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    (project / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    scripted_relay.script(
        [
            tool_calls(
                tool_call(
                    "edit_file",
                    {
                        "path": "calc.py",
                        "old_string": "    return a + b\n",
                        "new_string": "    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
                    },
                    id="e1",
                ),
                tool_call("write_file", {"path": "notes.md", "content": "one\ntwo\n"}, id="w1"),
            )
        ],
        [text("Added sub() and notes."), done()],
        [text("Nothing else."), done()],
    )
    window = make_window(relay_settings(scripted_relay, approval_modes=AUTO))
    bar = window.checkpoint_actions.review
    assert not bar.isVisible()  # nothing changed yet

    async def scenario() -> None:
        type_prompt(qtbot, window, "Add sub")
        await wait_until(lambda: idle(window, 2))
        await wait_until(lambda: bar.isVisible())
        assert {(f.path, f.added, f.removed) for f in bar.shown()} == {
            ("calc.py", 4, 0),
            ("notes.md", 2, 0),
        }
        assert bar.toggle.text() == "Review changes (+6 −0) · 2 files"
        _button(window, "Accept notes.md").click()
        assert [f.path for f in bar.shown()] == ["calc.py"]
        _button(window, "Undo calc.py").click()
        await wait_until(lambda: "sub" not in (project / "calc.py").read_text())
        assert (project / "notes.md").read_text() == "one\ntwo\n"  # only that file went back
        await wait_until(lambda: not bar.isVisible())
        type_prompt(qtbot, window, "Anything else?")
        await wait_until(lambda: idle(window, 3))
        assert not bar.isVisible()  # this turn changed nothing

    run(scenario())
