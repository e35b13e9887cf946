"""A conversation reopened in a new window, from the history file on disk, shows on its
edit's card and in the inspector the hooks that ran with their output and the language
server's diagnostics, and comes back in plan mode if it was left in it."""

from __future__ import annotations

import html
import json
import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from melgui.core.config.settings import config_dir
from melgui.core.config.trust import FolderTrust
from melgui.ui.window.main_window import MainWindow
from tests.core.lsp.test_diagnostics import PATH, needs_pylsp
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.window import idle, relay_settings, type_prompt, wait_until

CONTEXT = (
    'echo \'{"hookSpecificOutput": {"hookEventName": "PostToolUse", '
    '"additionalContext": "greet() is called from main()"}}\''
)
LINE = "greet.py:5:22: error: undefined name 'nmae' (pyflakes)"


@needs_pylsp
def test_a_reopened_edit_shows_its_hooks_and_diagnostics_and_plan_mode_is_back(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    (project / "greet.py").write_text(
        "import sys\n\n\ndef greet(name):\n    return f'Hello, {name}!'\n\n\n"
        "print(greet(sys.argv[1]))\n"
    )
    FolderTrust().trust(project)
    hooks = {
        "PreToolUse": [{"matcher": "Edit", "hooks": [{"command": "echo 'style: ok' >&2"}]}],
        "PostToolUse": [{"matcher": "Edit", "hooks": [{"command": CONTEXT}]}],
    }
    (config_dir() / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    edit = {"path": "greet.py", "old_string": "{name}!", "new_string": "{nmae}!"}
    scripted_relay.script(
        [tool_calls(tool_call("edit_file", edit, id="e1"))],
        [text("I misspelt the name; I will fix it once you approve a plan."), done()],
    )
    settings = relay_settings(scripted_relay)
    settings.approval_modes = {**settings.approval_modes, "edit_file": "auto"}
    first: MainWindow = make_window(settings)
    first.desk.diagnostics_for(first.desk.folder).env["PATH"] = PATH

    async def working() -> None:
        type_prompt(qtbot, first, "Make greet friendlier")
        await wait_until(lambda: idle(first, 2), timeout=60)
        qtbot.mouseClick(first.toolbar.plan_button, Qt.MouseButton.LeftButton)
        assert first.session.loop.plan.on

    run(working())
    cid = first.history.current_id
    assert cid is not None and first.history.store.plan_mode(cid)

    second: MainWindow = make_window(settings)  # another window, reading the same file
    second.resize(1100, 700)
    assert not second.session.loop.plan.on

    async def reopening() -> None:
        await wait_until(lambda: cid in second.history.ids())
        second.history.open(cid)
        await wait_until(lambda: len(second.session.conversation.messages) == 4)

    run(reopening())
    shown = second.chat.transcript.toPlainText()
    assert "PreToolUse hook `echo 'style: ok' >&2`" in shown
    assert "added context: greet() is called from main()" in shown
    assert LINE in shown
    assert second.session.loop.plan.on and second.toolbar.plan_button.isChecked()
    second.show_call("e1")
    extra = html.unescape(second.inspector.detail.extra.text())
    assert "Hooks (2)" in extra.replace("<b>", "").replace("</b>", "")
    assert "style: ok" in extra and LINE in extra
    second.grab().save(str(_shots(project.parent) / "reopened-hooks.png"))


def _shots(tmp_path: Path) -> Path:
    """MELGUI_SHOTS_DIR=some/folder keeps the screenshot there."""
    return Path(os.environ.get("MELGUI_SHOTS_DIR") or tmp_path)
