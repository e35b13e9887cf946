"""`/review` in the real window: the uncommitted changes reviewed read-only, the findings
listed by hunk with their severity."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from melgui.core.config.trust import FolderTrust
from tests.fakes import ScriptedRelay, done, text
from tests.fakes.window import relay_settings, type_prompt, wait_until


def test_slash_review_lists_findings_by_hunk(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    for args in (
        ["init", "-q", "-b", "main"],
        ["-c", "user.email=t@e", "-c", "user.name=T", "add", "."],
        ["-c", "user.email=t@e", "-c", "user.name=T", "commit", "-q", "-m", "start"],
    ):
        subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)
    (project / "README.md").write_text("hello\nworld\n")
    FolderTrust().trust(project)
    scripted_relay.script([text("README.md:2: warning: a second line with no purpose"), done()])
    window = make_window(relay_settings(scripted_relay))

    async def scenario() -> None:
        type_prompt(qtbot, window, "/review")
        await wait_until(lambda: "Review: 1 findings" in window.chat.transcript.toPlainText())

    run(scenario())
    shown = window.chat.transcript.toPlainText()
    assert "README.md @@ -1 +1,2 @@ — line 2: warning: a second line with no purpose" in shown
    (leg,) = scripted_relay.legs_received
    assert "+world" in leg.last_user_text and "write_file" not in leg.tool_names
    assert not window.session.loop.plan.on
