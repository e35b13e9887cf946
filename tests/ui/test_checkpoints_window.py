"""Checkpoints in the real window against the scripted relay: a call card shows the files
its call changed; "Undo this call", "redo", a conflict chooser and "Rewind to here"
restore them. Screenshots: docs/checkpoints.png and docs/checkpoints-conflict.png
(written there with MELGUI_WRITE_DOCS=1)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QUrl
from PySide6.QtWidgets import QDialog
from pytestqt.qtbot import QtBot

from melgui.core.config.settings import DEFAULT_MODES
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.checkpoints.dialogs import ConflictDialog, DiffDialog, RewindDialog
from melgui.ui.panes.agent_pane import AgentPane
from tests.fakes import RecordedRequest, ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.window import hover_message, idle, relay_settings, type_prompt, wait_until

DOCS = Path(__file__).resolve().parents[2] / "docs"


def shots_folder(tmp_path: Path) -> Path:
    """docs/ when MELGUI_WRITE_DOCS=1 (to refresh the README's pictures), else tmp."""
    return DOCS if os.environ.get("MELGUI_WRITE_DOCS") == "1" else tmp_path


AUTO = {**DEFAULT_MODES, "write_file": "auto", "edit_file": "auto", "run_command": "auto"}


def click_link(window: Any, href: str) -> None:
    window.chat.transcript.anchorClicked.emit(QUrl(href))


def test_cards_show_changes_and_undo_redo_and_rewind_restore_them(
    qtbot: QtBot,
    scripted_relay: ScriptedRelay,
    make_window: Any,
    run: Any,
    project: Path,
    tmp_path: Path,
) -> None:
    shots = shots_folder(tmp_path)
    scripted_relay.script(
        [
            text("Adding a module and updating the readme."),
            tool_calls(
                tool_call(
                    "write_file",
                    {"path": "src/greet.py", "content": "def greet():\n    return 'hi'\n"},
                    id="c1",
                ),
                tool_call(
                    "run_command",
                    {
                        "command": "printf 'hello, world\\n' > README.md"
                        " && mkdir -p docs && printf x > docs/x.md"
                    },
                    id="c2",
                ),
            ),
        ],
        [text("Done: `src/greet.py` added, README updated."), done()],
        [
            tool_calls(
                tool_call(
                    "edit_file",
                    {"path": "src/greet.py", "old_string": "hi", "new_string": "hey"},
                    id="c3",
                )
            )
        ],
        [text("Changed the greeting."), done()],
    )
    window = make_window(relay_settings(scripted_relay, approval_modes=AUTO))
    dialogs: list[QDialog] = []
    window.checkpoint_actions.dialogOpened.connect(dialogs.append)

    async def scenario() -> None:
        type_prompt(qtbot, window, "Add a greet module and update the readme")
        await wait_until(lambda: idle(window, 2))
        shown = window.chat.transcript.toPlainText()
        assert "changed 1 file (src/greet.py)" in shown
        assert "changed 2 files (README.md, docs/x.md)" in shown
        assert "Undo this call" in shown
        # Rewind is an icon among the message's actions, shown while pointed at.
        bar = hover_message(window.chat.transcript, "Add a greet module")
        assert bar.buttons["rewind"].isVisibleTo(bar)
        assert bar.buttons["rewind"].toolTip() == "Rewind to here"
        [c2] = window.checkpoint_actions.checkpoints.for_calls(["c2"])
        window.show_call("c2")
        assert "changed 2 files" in window.inspector.detail.extra.text()
        assert window.grab().save(str(shots / "checkpoints.png"))

        # diff of the call
        click_link(window, f"act:diff/{c2.id}")
        await wait_until(lambda: any(isinstance(d, DiffDialog) for d in dialogs))
        diff = dialogs[-1]
        assert isinstance(diff, DiffDialog) and "+hello, world" in diff.text.toPlainText()
        diff.reject()

        # Undo this call (the run_command): README back, docs/ gone; the card says undone.
        click_link(window, f"act:undo/{c2.id}")
        await wait_until(lambda: window.checkpoint_actions.last_restore is not None)
        assert (project / "README.md").read_text() == "hello\n"
        assert not (project / "docs").exists()
        assert (project / "src" / "greet.py").exists()  # the other call's file stays
        await wait_until(lambda: "undone" in window.chat.transcript.toPlainText())
        undo = window.checkpoint_actions.last_restore
        assert undo is not None and undo.restores == (c2.id,)

        # redo: the undo undone
        restores = len(window.checkpoint_actions.checkpoints.records())
        click_link(window, f"act:undo/{undo.id}")
        await wait_until(lambda: len(window.checkpoint_actions.checkpoints.records()) > restores)
        await wait_until(lambda: window.checkpoint_actions.last_restore is not undo)
        assert (project / "README.md").read_text() == "hello, world\n"
        assert (project / "docs" / "x.md").read_text() == "x"

        # A second turn, then the person edits that file: undo meets a conflict.
        type_prompt(qtbot, window, "Say hey instead")
        await wait_until(lambda: idle(window, 4))
        (project / "src" / "greet.py").write_text("def greet():\n    return 'mine'\n")
        [c3] = window.checkpoint_actions.checkpoints.for_calls(["c3"])
        click_link(window, f"act:undo/{c3.id}")
        await wait_until(lambda: any(isinstance(d, ConflictDialog) for d in dialogs))
        conflict = dialogs[-1]
        assert isinstance(conflict, ConflictDialog)
        assert conflict.tabs.count() == 1
        views = conflict.tabs.widget(0).findChildren(type(diff.text))
        texts = [v.toPlainText() for v in views]
        assert any("'hi'" in t for t in texts) and any("'hey'" in t for t in texts)
        assert any("'mine'" in t for t in texts)
        assert conflict.grab().save(str(shots / "checkpoints-conflict.png"))
        conflict.choose("src/greet.py", "before")
        before = window.checkpoint_actions.last_restore
        qtbot.mouseClick(conflict.restore_button, Qt.MouseButton.LeftButton)
        await wait_until(lambda: window.checkpoint_actions.last_restore is not before)
        assert "'hi'" in (project / "src" / "greet.py").read_text()

        # Rewind to the first message, continuing from there.
        messages = window.session.conversation.messages
        assert messages[0].role == "user"
        bar = hover_message(window.chat.transcript, "Add a greet module")
        qtbot.mouseClick(bar.buttons["rewind"], Qt.MouseButton.LeftButton)
        await wait_until(lambda: any(isinstance(d, RewindDialog) for d in dialogs))
        rewind = dialogs[-1]
        assert isinstance(rewind, RewindDialog)
        before = window.checkpoint_actions.last_restore
        qtbot.mouseClick(rewind.continue_button, Qt.MouseButton.LeftButton)
        await wait_until(lambda: window.checkpoint_actions.last_restore is not before)
        assert not (project / "src" / "greet.py").exists()
        assert (project / "README.md").read_text() == "hello\n"
        assert not (project / "docs").exists()
        await wait_until(lambda: window.session.conversation.messages == [])
        assert window.chat.input.toPlainText() == "Add a greet module and update the readme"

    run(scenario())


def _worker(request: RecordedRequest) -> list[Any]:
    if (request.last_message or {}).get("role") == "tool":
        return [text("Notes written."), done()]
    return [tool_calls(tool_call("write_file", {"path": "notes.txt", "content": "ok"}, id="w1"))]


def test_a_worker_panes_call_is_attributed_and_undone_from_its_card(
    scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    scripted_relay.on(lambda r: r.tool_role == "worker", _worker)
    scripted_relay.script(
        [tool_calls(tool_call("spawn_agent", {"layout": "down", "task": "write notes"}, id="o1"))],
        [text("Started."), done()],
    )
    window = make_window(
        relay_settings(
            scripted_relay, role="orchestrator", approval_modes={**AUTO, "spawn_agent": "auto"}
        )
    )

    async def scenario() -> None:
        window.bridge.submit("Start a worker.")
        await wait_until(lambda: (project / "notes.txt").exists())
        pane = window.pane_manager.pane(1)
        assert isinstance(pane, AgentPane)
        await wait_until(lambda: "changed 1 file (notes.txt)" in pane.chat.transcript.toPlainText())
        [record] = window.checkpoint_actions.checkpoints.for_calls(["w1"])
        assert record.source.startswith("worker 1")
        pane.chat.transcript.anchorClicked.emit(QUrl(f"act:undo/{record.id}"))
        await wait_until(lambda: not (project / "notes.txt").exists())
        await wait_until(lambda: "undone" in pane.chat.transcript.toPlainText())

    run(scenario())


def test_the_checkpoints_hook_the_panes_chats_not_every_chat_view_in_the_window(
    scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    """The pane manager says which panes there are when they change: each worker pane's
    chat is hooked from those (the whole window is not searched at each change, and a
    chat view that is no pane's is not the checkpoints' to hook)."""
    scripted_relay.script([text("Done."), done()])
    window = make_window(relay_settings(scripted_relay))
    stray = ChatView(window.bridge, window.colors, window.side_panel, draw=False)

    async def scenario() -> AgentPane:
        info = window.pane_manager.spawn_agent("say done", None, "right")
        pane = window.pane_manager.pane(info.id)
        assert isinstance(pane, AgentPane)
        await wait_until(lambda: "Done." in pane.chat.transcript.toPlainText())
        return pane

    pane = run(scenario())
    assert pane.chat.card_extra == window.checkpoint_actions.card_extra
    assert stray.card_extra is None
