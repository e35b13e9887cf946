"""`/review` in the real window: the uncommitted changes are reviewed read-only and each
finding lands on its hunk in the project folder's Changes view, from where the findings
go to a new worker as its task; the last N commits' findings are listed in the chat."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from melgui.core.config.trust import FolderTrust
from melgui.ui.changes.view import ChangesView
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay, done, text
from tests.fakes.window import relay_settings, type_prompt, wait_until

NUMBERS = "".join(f"line {n}\n" for n in range(1, 21))
ANSWER = """numbers.txt:2: warning: say why the second line changed
numbers.txt:18: error: line 18 must stay a number, the parser reads it
README.md:2: note: a second line with no purpose
The rest reads well."""


def git(project: Path, *args: str) -> None:
    who = ["-c", "user.email=t@e", "-c", "user.name=T"]
    subprocess.run(["git", *who, *args], cwd=project, check=True, capture_output=True)


def committed(project: Path) -> None:
    (project / "numbers.txt").write_text(NUMBERS)
    git(project, "init", "-q", "-b", "main")
    git(project, "add", ".")
    git(project, "commit", "-q", "-m", "start")
    FolderTrust().trust(project)


def changes_view(window: MainWindow) -> ChangesView | None:
    views = [v for v in window.findChildren(ChangesView) if v.isVisible()]
    return views[0] if views else None


def test_slash_review_puts_findings_on_the_hunks_of_the_uncommitted_changes(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    committed(project)
    edited = NUMBERS.replace("line 2\n", "line two\n").replace("line 18\n", "line eighteen\n")
    (project / "numbers.txt").write_text(edited)
    (project / "README.md").write_text("hello\nworld\n")
    scripted_relay.script([text(ANSWER), done()])
    scripted_relay.on(lambda r: r.tool_role == "worker", [text("Fixing them."), done()])
    window = make_window(relay_settings(scripted_relay))

    async def reviewing() -> None:
        type_prompt(qtbot, window, "/review")
        await wait_until(lambda: "Review: 3 findings" in window.chat.transcript.toPlainText(), 30)

    run(reviewing())
    shown = window.chat.transcript.toPlainText()
    assert "3 findings on 3 hunks of the uncommitted changes, shown in the Changes view" in shown
    view = changes_view(window)
    assert view is not None and view.in_place and view.idle
    assert "Review: 3 findings on 3 hunks." in view.status.text()
    assert [c.path for c in view.changes.files] == ["README.md", "numbers.txt"]  # type: ignore[union-attr]
    view.files.setCurrentItem(view.files.topLevelItem(1))
    first, second = view.diff.hunks
    assert "warning" in first.comments.text() and "second line changed" in first.comments.text()
    assert "error" in second.comments.text() and "line 18" in second.comments.text()
    assert not first.button.isVisibleTo(view) and not view.merge_button.isVisibleTo(view)
    (leg,) = scripted_relay.legs_received
    assert "+line two" in leg.last_user_text and "write_file" not in leg.tool_names
    assert not window.session.loop.plan.on  # the review's read-only turn is over
    view.resize(1100, 640)
    view.grab().save(str(_shots(project.parent) / "review-uncommitted.png"))

    async def sending() -> None:
        qtbot.mouseClick(view.send_button, Qt.MouseButton.LeftButton)
        await wait_until(lambda: any(r.tool_role == "worker" for r in scripted_relay.legs_received))

    run(sending())
    (worker,) = [p for _, p in window.pane_manager.panes() if isinstance(p, AgentPane)]
    task = worker.session.conversation.messages[0].content
    assert task.startswith(f"A review of the uncommitted changes in {project} found these")
    assert "- numbers.txt @@ -15,6 +15,6 @@ line 14 line 18: error:" in task
    assert "Sent 3 findings to a new worker." in view.status.text()


def test_slash_review_of_the_last_commit_lists_findings_in_the_chat(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    committed(project)
    (project / "README.md").write_text("hello\nworld\n")
    git(project, "commit", "-q", "-am", "a second line")
    scripted_relay.script([text("README.md:2: warning: a second line with no purpose"), done()])
    window = make_window(relay_settings(scripted_relay))

    async def scenario() -> None:
        type_prompt(qtbot, window, "/review last 1")
        await wait_until(lambda: "Review: 1 findings" in window.chat.transcript.toPlainText())

    run(scenario())
    shown = window.chat.transcript.toPlainText()
    assert "README.md @@ -1 +1,2 @@ — line 2: warning: a second line with no purpose" in shown
    (leg,) = scripted_relay.legs_received
    assert "+world" in leg.last_user_text and "write_file" not in leg.tool_names
    assert not window.session.loop.plan.on and changes_view(window) is None


def _shots(tmp_path: Path) -> Path:
    """MELGUI_SHOTS_DIR=docs renders the screenshot kept in docs/."""
    return Path(os.environ.get("MELGUI_SHOTS_DIR") or tmp_path)
