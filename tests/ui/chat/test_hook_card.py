"""A call's card and the inspector show the hooks that ran around it: which hook, its
time, what it did, and what it printed."""

from __future__ import annotations

import html
import json
import os
from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from melgui.core.config.trust import FolderTrust
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.window import idle, relay_settings, type_prompt, wait_until

CHECK = "jq -r '.tool_input.command' | grep -q '^make' && echo 'make is allowed here' || true"
CONTEXT = (
    'echo \'{"hookSpecificOutput": {"hookEventName": "PostToolUse", '
    '"additionalContext": "2 tests were slow: see .pytest_cache"}}\''
)


def test_the_card_and_the_inspector_show_each_hook_run(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    (project / ".claude").mkdir()
    hooks = {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": CHECK}]}],
        "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": CONTEXT}]}],
    }
    (project / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    (project / "Makefile").write_text("test:\n\t@echo '12 passed, 2 slow'\n")
    FolderTrust().trust(project)
    call = tool_call("run_command", {"command": "make -s test"}, id="r1")
    scripted_relay.script([tool_calls(call)], [text("The tests pass; two are slow."), done()])
    settings = relay_settings(scripted_relay)
    settings.approval_modes = {**settings.approval_modes, "run_command": "auto"}
    window = make_window(settings)

    async def scenario() -> None:
        type_prompt(qtbot, window, "Run the tests")
        await wait_until(lambda: idle(window, 2))

    run(scenario())
    shown = window.chat.transcript.toPlainText()
    assert "PreToolUse hook `jq -r '.tool_input.command' | grep -q '^make' &…`" in shown
    assert "PostToolUse hook `echo" in shown
    assert "added context: 2 tests were slow" in shown
    assert "2 tests were slow" in scripted_relay.legs_received[1].messages[-1]["content"]
    window.show_call("r1")
    extra = window.inspector.detail.extra
    assert extra.isVisible() and "Hooks</b> (2)" in extra.text()
    assert "make is allowed here" in extra.text() and CHECK in html.unescape(extra.text())
    assert ".claude/settings.json" in extra.text()
    window.resize(1100, 700)
    window.grab().save(str(_shots(project.parent) / "hook-card.png"))


def _shots(tmp_path: Path) -> Path:
    """MELGUI_SHOTS_DIR=docs renders the screenshot kept in docs/."""
    return Path(os.environ.get("MELGUI_SHOTS_DIR") or tmp_path)
