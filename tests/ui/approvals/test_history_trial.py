"""Settings → Approval → Try on history: the rules as edited, replayed on the recorded
calls beside what happened, and a proposed rule adopted with a click.

MELGUI_SHOTS_DIR=docs python -m pytest tests/ui/approvals/test_history_trial.py
re-renders docs/rules-on-history.png.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from melgui.core.protocol.events import ToolCall
from melgui.ui.settings.dialog import SettingsDialog
from melgui.ui.window.main_window import MainWindow
from tests.core.rules.test_rule_history import HISTORY, record
from tests.fakes import ScriptedRelay
from tests.fakes.window import relay_settings, wait_until


def test_a_draft_is_tried_on_the_history_and_a_proposal_adopted_with_a_click(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, tmp_path: Path
) -> None:
    rules = ["allow run_command: ls", "deny run_command: rm"]
    window: MainWindow = make_window(relay_settings(scripted_relay, rules=rules))
    store = window.history.store
    record(store, window.project_folder())
    # A call a hook rewrote back then: the draft would let the model's own version run.
    cid = store.create_conversation(window.project_folder())
    store.calls.requested(cid, ToolCall("e1", "run_command", json.dumps({"command": "ls src"})))
    store.calls.phase(cid, "e1", "waiting")
    store.calls.decided(cid, "e1", "approved")
    store.calls.ran_with(cid, "e1", json.dumps({"command": "ls --color=never src"}))
    store.calls.finished(cid, "e1", "ok", "a.txt", 0.1)
    window.open_settings()
    dialog = window.findChild(SettingsDialog)
    assert dialog is not None
    editor = dialog.policy_editor
    trial = editor.history_trial
    assert trial is not None
    dialog.tabs.setCurrentWidget(editor)
    editor.tabs.setCurrentWidget(trial)
    trial.span.setCurrentIndex(trial.span.count() - 1)  # every conversation
    shown: list[bool] = []
    trial.finished.connect(lambda: shown.append(True))
    qtbot.mouseClick(trial.try_button, Qt.MouseButton.LeftButton)
    assert not trial.try_button.isEnabled()  # one trial at a time
    run(wait_until(lambda: shown))
    calls = sum(len(c) for c in HISTORY) + 1
    assert trial.status.text().startswith(f"{calls} calls of 4 conversations")
    cells = [[trial.table.item(r, c).text() for c in range(3)] for r in range(4)]  # type: ignore[union-attr]
    assert cells[0] == ["Asked a person", "23", "19"]  # 3 ls, 2 rm no longer; curl now asks
    assert cells[1] == ["Ran without asking", "1", "4"]  # read_file, and ls three times
    assert cells[2] == ["Denied", "4 (1 by a rule)", "2"]  # the two rm
    assert cells[3] == ["Changed by a hook", "1", "—"]
    assert trial.headline.text().startswith("This draft would have removed 5 of 23 prompts")
    groups = [trial.tree.topLevelItem(i).text(0) for i in range(trial.tree.topLevelItemCount())]  # type: ignore[union-attr]
    assert groups[:3] == [
        "Prompts it removes (5)",
        "It would let run: denied or edited back then (1)",
        "It would now deny: they ran back then (1)",
    ]
    assert groups[3].startswith("Proposed rules (")
    proposals = trial.proposal_items()
    texts = [item.text(0) for item in proposals]
    assert "allow run_command: git status" in texts and "allow run_command: git" not in texts
    status = proposals[texts.index("allow run_command: git status")]
    assert status.childCount() >= 3  # the calls it covers are named under it
    assert not trial.adopt_button.isEnabled()  # nothing is adopted without a click
    assert "allow run_command: git status" not in [r.text for r in editor.rule_list()]
    edited = trial.tree.topLevelItem(1)
    assert edited is not None and edited.child(0) is not None
    assert edited.child(0).text(0) == "run_command ls src"  # type: ignore[union-attr]
    assert "a hook changed it" in edited.child(0).text(1)  # type: ignore[union-attr]
    edited.setExpanded(True)
    status.setCheckState(0, Qt.CheckState.Checked)
    status.setExpanded(True)
    assert trial.adopt_button.isEnabled()
    dialog.resize(1000, 760)
    shots = Path(os.environ.get("MELGUI_SHOTS_DIR") or tmp_path)
    dialog.grab().save(str(shots / "rules-on-history.png"))
    qtbot.mouseClick(trial.adopt_button, Qt.MouseButton.LeftButton)
    adopted = [r for r in editor.rule_list() if r.text == "allow run_command: git status"]
    assert [r.scope for r in adopted] == ["everywhere"]
    assert status.text(1).startswith("adopted")
    dialog.reject()
