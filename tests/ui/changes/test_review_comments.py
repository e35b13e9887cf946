"""The Changes view's Review: a read-only session reviews the worker's changes and its
findings show on the right hunks, each with its severity."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from melgui.core.agent.session import AgentSession
from melgui.core.protocol.tooling import ToolRegistry
from melgui.core.rules.policy import RulePolicy
from melgui.core.transports.relay import RelayTransport
from melgui.ui.changes.view import open_changes
from melgui.ui.runtime.theme import LIGHT
from tests.fakes import ScriptedRelay, done, http_error, text
from tests.fakes.window import Runner, wait_until
from tests.fakes.worktree_repos import make_repo_with_worktree, use_test_identity, worker_edits
from tests.ui.changes.test_changes_view import _show

ANSWER = """numbers.txt:12: error: line 12 now says "worker" but the tests expect a number
numbers.txt:1: warning: say why the first line changed
added.py:1: note: a print left in a new module
That is the review."""


@pytest.fixture(autouse=True)
def _identity(monkeypatch: pytest.MonkeyPatch) -> None:
    use_test_identity(monkeypatch)


def test_review_findings_land_on_the_right_hunks(
    qtbot: QtBot, run: Runner[Any], tmp_path: Path, scripted_relay: ScriptedRelay
) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    worker_edits(worktree)
    scripted_relay.script([text(ANSWER), done()])
    transport = RelayTransport(scripted_relay.base_url, "k")
    sessions: list[AgentSession] = []

    def reviewer() -> AgentSession:
        session = AgentSession(
            transport, ToolRegistry(), RulePolicy(), model="m", role="worker",
            cwd=str(worktree.path), source="review",
        )  # fmt: skip
        sessions.append(session)
        return session

    tasks: list[str] = []
    view = open_changes(None, worktree, LIGHT, reviewer=reviewer, send_to_worker=tasks.append)
    qtbot.addWidget(view)
    view.resize(1100, 640)
    run(wait_until(lambda: view.changes is not None and view.idle))
    _show(run, view, "numbers.txt")
    qtbot.mouseClick(view.review_button, Qt.MouseButton.LeftButton)
    run(wait_until(lambda: "Review:" in view.status.text() and view.idle, timeout=30))
    assert "3 findings on 3 hunks" in view.status.text()
    first, second = view.diff.hunks
    assert "warning" in first.comments.text() and "first line" in first.comments.text()
    assert "error" in second.comments.text() and "line 12" in second.comments.text()
    assert first.comments.isVisible() and second.comments.isVisible()
    (leg,) = scripted_relay.legs_received
    assert "+line 12 (worker)" in leg.last_user_text and "write_file" not in leg.tool_names
    assert sessions and not sessions[0].loop.plan.on
    view.grab().save(str(_shots(tmp_path) / "review-comments.png"))
    assert view.send_button.isEnabled()
    qtbot.mouseClick(view.send_button, Qt.MouseButton.LeftButton)
    (task,) = tasks
    assert task.startswith("A review of your changes found these; fix them:")
    assert "- numbers.txt @@ -9,4 +9,4 @@ line 8 line 12: error:" in task
    assert "Sent 3 findings to the worker." in view.status.text()
    _show(run, view, "added.py")
    assert "a print left" in view.diff.hunks[0].comments.text()
    run(transport.aclose())


def test_a_review_that_cannot_reach_the_model_says_why(
    qtbot: QtBot, run: Runner[Any], tmp_path: Path, scripted_relay: ScriptedRelay
) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    worker_edits(worktree)
    scripted_relay.script([http_error(401, {"error": "bad key"})])
    transport = RelayTransport(scripted_relay.base_url, "k")

    def reviewer() -> AgentSession:
        return AgentSession(transport, ToolRegistry(), RulePolicy(), model="m", role="worker",
                            cwd=str(worktree.path), source="review")  # fmt: skip

    view = open_changes(None, worktree, LIGHT, reviewer=reviewer)
    qtbot.addWidget(view)
    run(wait_until(lambda: view.changes is not None and view.idle))
    qtbot.mouseClick(view.review_button, Qt.MouseButton.LeftButton)
    run(wait_until(lambda: view.idle and "review" in view.status.text().lower(), timeout=30))
    assert "The review did not finish:" in view.status.text()  # not "0 findings"
    assert "findings on" not in view.status.text() and not view.send_button.isEnabled()
    run(transport.aclose())


def _shots(tmp_path: Path) -> Path:
    """MELGUI_SHOTS_DIR=docs renders the screenshot kept in docs/."""
    return Path(os.environ.get("MELGUI_SHOTS_DIR") or tmp_path)
