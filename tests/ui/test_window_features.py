"""Model picker, "always allow", plans, the wire log, other sessions' approvals, settings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from melgui.core.config.settings import Settings, settings_path
from melgui.core.rules.policy import RulePolicy
from melgui.core.rules.rule_scopes import Rule, RuleBook
from melgui.core.transports.openai_compat import OpenAITransport
from melgui.ui.approvals.rules_editor import PolicyEditor
from melgui.ui.settings.dialog import SettingsDialog
from melgui.ui.window.main_window import MainWindow
from tests.fakes import (
    ScriptedOpenAI,
    ScriptedRelay,
    done,
    http_error,
    text,
    tool_call,
    tool_calls,
)
from tests.fakes.window import (
    click_card,
    idle,
    open_chip,
    relay_settings,
    type_prompt,
    wait_until,
)


def test_the_model_picker_lists_tool_capable_models_first(
    scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    window: MainWindow = make_window(relay_settings(scripted_relay, model=""))
    run(wait_until(lambda: len(window.choices.models) == 2))
    menu = open_chip(window.chat.composer.model_chip)
    listed = [a for a in menu.actions() if a.data()]
    assert [a.text() for a in listed] == ["mel-default", "mel-chat  (no tools)"]
    assert listed[0].isChecked() and "cannot take tools" in listed[1].toolTip()
    menu.close()
    assert window.session.loop.model == "mel-default"  # nothing chosen: the first one
    assert (
        "●" in window.toolbar.connection.text()
        and "2 models" in window.toolbar.connection.toolTip()
    )


def test_always_allow_for_this_conversation_skips_the_next_question(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    first = tool_call("run_command", {"command": "git status"}, id="g1")
    second = tool_call("run_command", {"command": "git status --short"}, id="g2")
    compound = tool_call("run_command", {"command": "git status && rm -rf x"}, id="g3")
    scripted_relay.script(
        [tool_calls(first)], [tool_calls(second)], [tool_calls(compound)], [text("ok"), done()]
    )
    window: MainWindow = make_window(relay_settings(scripted_relay))

    async def scenario() -> None:
        type_prompt(qtbot, window, "status?")
        await wait_until(lambda: window.inspector.book.pending())
        click_card(window.chat.transcript, "g1", "always")  # its card's Always allow ▾
        menu = window.chat.answers.menu
        assert menu is not None
        [session] = [a for a in menu.actions() if a.data() == "session"]
        assert "“git status”" in session.text() and "for this conversation" in session.text()
        session.trigger()
        # g2 matches the rule; the compound g3 is asked again.
        await wait_until(lambda: [r.call.id for r in window.inspector.book.pending()] == ["g3"])
        window.deny_key()
        await wait_until(lambda: idle(window, 4))

    run(scenario())
    assert [r.text for r in window.policy.book.conversation] == ["allow run_command: git status"]
    records = window.inspector.book.records
    # g2 ran without asking; the command ran (git status outside a repository exits 128).
    assert (records["g2"].status, records["g2"].decision) == (
        "ok",
        "auto:allow run_command: git status (this conversation)",
    )
    assert records["g2"].result.startswith("exit_code=128\n")
    assert (records["g3"].status, records["g3"].decision) == ("denied", "denied")


def test_saved_rules_are_written_to_the_settings_file(
    qtbot: QtBot,
    scripted_relay: ScriptedRelay,
    run: Any,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    from melgui.ui.window.main_window import build_main_window

    monkeypatch.setenv("MELGUI_CONFIG_DIR", str(tmp_path / "config"))
    scripted_relay.script(
        [tool_calls(tool_call("write_file", {"path": "a.txt", "content": "x"}))],
        [text("ok"), done()],
    )
    window = build_main_window(str(project), relay_settings(scripted_relay), api_key="k")
    window.show()

    async def scenario() -> None:
        type_prompt(qtbot, window, "write")
        await wait_until(lambda: window.inspector.book.pending())
        call_id = window.chat.answers.waiting_ids()[0]
        click_card(window.chat.transcript, call_id, "always")
        menu = window.chat.answers.menu
        assert menu is not None
        [saved] = [a for a in menu.actions() if a.data() == "saved"]
        saved.trigger()
        await wait_until(lambda: idle(window, 2))
        await window.aclose()

    run(scenario())
    window.close()
    saved = json.loads(settings_path().read_text())
    assert saved["rules"] == ["allow write_file"]
    assert (project / "a.txt").read_text() == "x"


def test_write_plan_shows_the_plan_rendered(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    plan = tool_call("write_plan", {"title": "Steps", "markdown": "1. **read**\n2. edit\n"})
    scripted_relay.script([tool_calls(plan)], [text("planned"), done()])
    window: MainWindow = make_window(relay_settings(scripted_relay))

    async def scenario() -> None:
        type_prompt(qtbot, window, "plan it")
        await wait_until(lambda: idle(window, 2))

    run(scenario())
    shown = window.plans_panel.view.toPlainText()
    assert "Steps" in shown and "read" in shown and "**" not in shown


def test_the_wire_log_shows_each_leg_without_the_key(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    scripted_relay.script([text("hi"), done()])
    window: MainWindow = make_window(relay_settings(scripted_relay), api_key="sk-very-secret-1")

    async def scenario() -> None:
        type_prompt(qtbot, window, "hello")
        await wait_until(lambda: idle(window, 1))

    run(scenario())
    wire = window.inspector.wire_view
    assert wire.legs.count() == 1
    shown = wire.view.toPlainText()
    assert "request" in shown and "hello" in shown
    assert "sk-very-secret-1" not in shown


def test_another_sessions_approval_waits_in_the_window_queue(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    call = tool_call("write_file", {"path": "w.txt", "content": "from worker"}, id="wk1")
    scripted_relay.on(lambda r: r.tool_role == "worker", [tool_calls(call)], times=1)
    scripted_relay.on(lambda r: r.tool_role == "worker", [text("done"), done()], times=1)
    window: MainWindow = make_window(relay_settings(scripted_relay))
    worker = window.session_factory("worker", source="pane 2: worker")
    bridge = window.bridge_for(worker)

    async def scenario() -> None:
        bridge.submit("write w.txt")
        await wait_until(lambda: len(window.approvals) == 1)
        assert window.waiting_bar.isVisible()
        assert "pane 2: worker" in window.waiting_bar.label.text()
        assert window.approve_key()  # the window-wide key, the worker's card not focused
        await wait_until(lambda: not bridge.busy)
        await worker.aclose()

    run(scenario())
    assert (project / "w.txt").read_text() == "from worker"
    assert not window.waiting_bar.isVisible()
    assert worker.loop.role == "worker" and worker.loop.cwd == window.project_folder()


def test_settings_dialog_tests_the_connection_and_switches_to_it(
    qtbot: QtBot,
    scripted_relay: ScriptedRelay,
    scripted_openai: ScriptedOpenAI,
    make_window: Any,
    run: Any,
) -> None:
    scripted_openai.script([text("from openai"), done()])
    window: MainWindow = make_window(relay_settings(scripted_relay))
    dialog = SettingsDialog(window.settings, window.policy, [], window.tasks, window)
    qtbot.addWidget(dialog)
    dialog._kind_buttons["openai"].setChecked(True)
    dialog.base_url.setText(scripted_openai.base_url)
    dialog.api_key.setText("typed-key")
    dialog.persist.setCurrentIndex(dialog.persist.findData("session"))

    async def scenario() -> None:
        dialog.test_connection()
        await wait_until(lambda: "✓" in dialog.test_result.toPlainText())
        assert "gpt-test" in dialog.test_result.toPlainText()
        dialog.applied.connect(window.apply_settings)
        dialog.accept()
        assert isinstance(window.transport, OpenAITransport)
        window.set_model("gpt-test")
        type_prompt(qtbot, window, "hi there")
        await wait_until(lambda: "from openai" in window.chat.transcript.toPlainText())
        await wait_until(lambda: not window.bridge.busy)

    run(scenario())
    leg = scripted_openai.legs_received[0]
    assert leg.authorization == "Bearer typed-key"
    assert leg.json["model"] == "gpt-test"


def test_test_connection_shows_the_servers_error(
    qtbot: QtBot, scripted_openai: ScriptedOpenAI, make_window: Any, run: Any
) -> None:
    scripted_openai.models_error = http_error(401, {"error": {"message": "bad key"}})
    window: MainWindow = make_window(Settings())
    dialog = SettingsDialog(window.settings, window.policy, [], window.tasks, window)
    qtbot.addWidget(dialog)
    dialog._kind_buttons["openai"].setChecked(True)
    dialog.base_url.setText(scripted_openai.base_url)
    dialog.test_connection()
    run(wait_until(lambda: "✗" in dialog.test_result.toPlainText()))
    assert (
        "401" in dialog.test_result.toPlainText() and "bad key" in dialog.test_result.toPlainText()
    )
    assert "No system keyring" in dialog.keyring_note.text()


def test_the_rule_editor_lists_edits_and_removes_rules_of_every_scope(qtbot: QtBot) -> None:
    history = ["git status", "git status --short", "git status && rm -rf /", "ls"]
    book = RuleBook(
        conversation=[Rule.parse("allow write_file", "conversation")],
        project=[Rule.parse("allow run_command: git status", "project")],
        everywhere=[Rule.parse("deny run_command: rm")],
    )
    editor = PolicyEditor(RulePolicy(book=book, project="/p"), history)
    qtbot.addWidget(editor)
    editor.rules.selectRow(1)
    assert editor.matches.toPlainText().splitlines() == [
        "✓ git status",
        "✓ git status --short",
        "◆ git status && rm -rf /",
        "    asked: rm -rf /: no rule covers it",
    ]
    assert "2 of 4" in editor.message.text() and "still be asked" in editor.message.text()
    editor.rule_input.setText("make | tee")
    editor._add_rule()
    assert "no shell syntax" in editor.message.text() and editor.rules.rowCount() == 3
    editor.scope.setCurrentIndex(editor.scope.findData("everywhere"))
    editor.rule_input.setText("pytest")
    editor._add_rule()
    assert editor.rule_lines("everywhere") == ["deny run_command: rm", "allow run_command: pytest"]
    editor.rules.item(1, 1).setText("allow run_command:   git   log")  # edited in place
    assert editor.rule_lines("project") == ["allow run_command: git log"]
    editor.rules.item(1, 1).setText("allow run_command: git log | sh")
    assert editor.rule_lines("project") == ["allow run_command: git log"]
    assert "Not changed" in editor.message.text()
    editor.rules.selectRow(0)
    editor._remove_rule()
    assert editor.rule_lines("conversation") == []
    modes = editor.modes()
    assert (modes["read_file"], modes["run_command"], modes["write_file"]) == ("auto", "ask", "ask")


def test_another_folder_starts_a_new_conversation_there(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    scripted_relay.script(
        [tool_calls(tool_call("write_file", {"path": "made.txt", "content": "here"}))],
        [text("ok"), done()],
    )
    window: MainWindow = make_window(relay_settings(scripted_relay))
    first_session = window.session
    sessions: list[object] = []
    window.sessionChanged.connect(sessions.append)
    window.change_folder(str(other))
    assert window.session is not first_session and sessions == [window.session]
    assert window.project_folder() == str(other.resolve())
    assert window.toolbar.folder_button.text() == "other ▾"

    async def scenario() -> None:
        type_prompt(qtbot, window, "make it")
        await wait_until(lambda: window.inspector.book.pending())
        window.approve_key()
        await wait_until(lambda: idle(window, 2))

    run(scenario())
    assert (other / "made.txt").read_text() == "here"
    assert scripted_relay.legs_received[0].json["cwd"] == str(other.resolve())


def test_a_reopened_conversation_is_shown_and_continued(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    from melgui.core.protocol.messages import Conversation, Message
    from melgui.core.store.records import ConversationSummary, PlanRecord
    from melgui.core.store.resume import CUT_TEXT_NOTE, Resumed

    scripted_relay.script([text("continuing"), done()])
    window: MainWindow = make_window(relay_settings(scripted_relay))
    old = Conversation([Message.user("earlier question"), Message.assistant("earlier answer")])
    summary = ConversationSummary("c1", str(window.kit.folder), "earlier", 0.0, 0.0)
    plans = [PlanRecord("Old plan", "- step", 0.0)]
    window.open_conversation(Resumed(summary, old, cut_text=True, plans=plans))
    shown = window.chat.transcript.toPlainText()
    assert "earlier answer" in shown and CUT_TEXT_NOTE in shown
    assert "Old plan" in window.plans_panel.view.toPlainText()

    async def scenario() -> None:
        type_prompt(qtbot, window, "go on")
        await wait_until(lambda: idle(window, 1))

    run(scenario())
    sent = scripted_relay.legs_received[0].messages
    assert [m["content"] for m in sent] == ["earlier question", "earlier answer", "go on"]
    window.new_conversation()
    assert window.session.conversation.messages == []
    assert window.plans_panel.plans == [] and not window.plans_panel.view.toPlainText()
    assert "earlier" not in window.chat.transcript.toPlainText()


def test_the_theme_changes_without_losing_the_conversation(
    scripted_relay: ScriptedRelay, make_window: Any
) -> None:
    from melgui.core.protocol.messages import Message

    window: MainWindow = make_window(relay_settings(scripted_relay))
    window.session.conversation.append(Message.user("keep me"))
    dark = window.settings.model_copy(update={"theme": "dark"})
    window.apply_settings(dark, window.api_key)
    assert window.colors.name == "dark"
    assert "keep me" in window.chat.transcript.toPlainText()


def test_the_rule_editor_says_which_saved_rules_it_cannot_read(qtbot: QtBot) -> None:
    problem = "'permit ls': a rule starts with 'allow' or 'deny'"
    editor = PolicyEditor(RulePolicy(), [], problems=[problem])
    qtbot.addWidget(editor)
    assert "cannot read" in editor.message.text() and problem in editor.message.text()
