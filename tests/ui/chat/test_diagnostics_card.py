"""An edit's card shows the language server's new errors, with their lines, and the
inspector shows them with the result."""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from melgui.core.config.trust import FolderTrust
from tests.core.lsp.test_diagnostics import PATH, PYTHON_BIN
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.window import idle, relay_settings, type_prompt, wait_until


@pytest.mark.skipif(not (PYTHON_BIN / "pylsp").exists(), reason="pylsp is not installed")
def test_an_edits_card_shows_the_new_errors(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    (project / "greet.py").write_text(
        "import sys\n\n\ndef greet(name):\n    return f'Hello, {name}!'\n\n\n"
        "print(greet(sys.argv[1]))\n"
    )
    FolderTrust().trust(project)
    edit = {"path": "greet.py", "old_string": "{name}!", "new_string": "{nmae}!"}
    scripted_relay.script(
        [tool_calls(tool_call("edit_file", edit, id="e1"))],
        [text("I misspelt the name; fixing it next."), done()],
    )
    settings = relay_settings(scripted_relay)
    settings.approval_modes = {**settings.approval_modes, "edit_file": "auto"}
    window = make_window(settings)
    window.desk.diagnostics_for(window.desk.folder).env["PATH"] = PATH
    window.resize(1100, 700)

    async def scenario() -> None:
        type_prompt(qtbot, window, "Make greet friendlier")
        await wait_until(lambda: idle(window, 2), timeout=60)

    run(scenario())
    shown = window.chat.transcript.toPlainText()
    line = "greet.py:5:22: error: undefined name 'nmae' (pyflakes)"
    assert "[Diagnostics from pylsp: 1 new in greet.py]" in shown and line in shown
    assert line in scripted_relay.legs_received[1].messages[-1]["content"]
    window.show_call("e1")
    assert line in html.unescape(window.inspector.detail.extra.text())
    window.grab().save(str(_shots(project.parent) / "diagnostics-card.png"))


def _shots(tmp_path: Path) -> Path:
    """MELGUI_SHOTS_DIR=docs renders the screenshot kept in docs/."""
    return Path(os.environ.get("MELGUI_SHOTS_DIR") or tmp_path)
