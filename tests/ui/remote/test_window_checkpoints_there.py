"""A remote folder's window (over the real sshd) keeps checkpoints there: the host there
snapshots the folder around the chat's write, "Rewind to here" asks it to put the
file back there and continues the conversation from before the message, and the call's
card says what it changed there, with its diff, "compare with now" and "Undo this call"."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QUrl
from PySide6.QtWidgets import QDialog, QLabel, QPlainTextEdit
from pytestqt.qtbot import QtBot

from melgui.ui.checkpoints.dialogs import ConflictDialog, DiffDialog, RewindDialog
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.window import relay_settings, wait_until
from tests.remote.fixtures import Remote, url


def _writing_window(
    remote: Remote, relay: ScriptedRelay, remote_window: Any, name: str
) -> tuple[Path, Any, list[QDialog]]:
    """A remote folder holding a.txt ("as it was") and its window, whose model will
    overwrite a.txt with "agent" (write_file allowed without asking); and the dialogs its
    checkpoint actions open, as they open."""
    folder = remote.folder(name, {"a.txt": "as it was\n"})
    relay.script(
        [tool_calls(tool_call("write_file", {"path": "a.txt", "content": "agent\n"}, id="w1"))],
        [text("Wrote it."), done()],
    )
    settings = relay_settings(relay, approval_modes={"write_file": "auto"})
    window = remote_window(url(remote, folder), settings)
    dialogs: list[QDialog] = []
    window.checkpoint_actions.dialogOpened.connect(dialogs.append)
    return folder, window, dialogs


def test_a_remote_folders_rewind_puts_the_file_back_there(
    qtbot: QtBot,
    scripted_relay: ScriptedRelay,
    remote: Remote,
    remote_window: Any,
    qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> None:
    folder, window, dialogs = _writing_window(
        remote, scripted_relay, remote_window, "window-rewind"
    )
    said: list[str] = []
    window.status.messageChanged.connect(said.append)

    async def scenario() -> None:
        window.bridge.submit("Write a.")
        await wait_until(lambda: not window.bridge.busy and window.session.loop.legs == 2, 120)
        assert (folder / "a.txt").read_text() == "agent\n"
        window.checkpoint_actions.on_action("rewind", "0")
        await wait_until(lambda: any(isinstance(d, RewindDialog) for d in dialogs), 60)
        dialog = dialogs[-1]
        assert isinstance(dialog, RewindDialog)
        label = dialog.findChild(QLabel)
        assert label is not None and "Put back the 1 file " in label.text()
        assert dialog.grab().save(str(tmp_path / "rewind-there.png"))
        qtbot.mouseClick(dialog.continue_button, Qt.MouseButton.LeftButton)
        await wait_until(lambda: window.checkpoint_actions.last_there is not None, 60)

    qloop.run_until_complete(asyncio.wait_for(scenario(), 180))
    assert window.grab().save(str(tmp_path / "rewound-there.png"))
    assert (folder / "a.txt").read_text() == "as it was\n"
    assert window.checkpoint_actions.last_there["files"] == ["a.txt"]
    assert window.session.conversation.messages == []  # continued from before the message
    assert window.chat.input.toPlainText() == "Write a."
    assert "Rewound: 1 file restored there" in said


def test_a_remote_rewind_asks_about_a_file_changed_there_since_with_its_three_versions(
    qtbot: QtBot,
    scripted_relay: ScriptedRelay,
    remote: Remote,
    remote_window: Any,
    qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> None:
    folder, window, dialogs = _writing_window(
        remote, scripted_relay, remote_window, "window-rewind-conflict"
    )
    said: list[str] = []
    window.status.messageChanged.connect(said.append)
    texts: list[str] = []

    async def scenario() -> None:
        window.bridge.submit("Write a.")
        await wait_until(lambda: not window.bridge.busy and window.session.loop.legs == 2, 120)
        (folder / "a.txt").write_text("the person's\n")  # changed there since the write
        window.checkpoint_actions.on_action("rewind", "0")
        await wait_until(lambda: any(isinstance(d, RewindDialog) for d in dialogs), 60)
        rewind = dialogs[-1]
        assert isinstance(rewind, RewindDialog)
        qtbot.mouseClick(rewind.files_button, Qt.MouseButton.LeftButton)
        await wait_until(lambda: any(isinstance(d, ConflictDialog) for d in dialogs), 60)
        conflict = dialogs[-1]
        assert isinstance(conflict, ConflictDialog)
        assert conflict.tabs.count() == 1
        tab = conflict.tabs.widget(0)
        assert tab is not None
        views = tab.findChildren(QPlainTextEdit)
        texts.extend(v.toPlainText() for v in views)
        assert conflict.grab().save(str(tmp_path / "conflict-there.png"))
        conflict.choose("a.txt", "before")
        qtbot.mouseClick(conflict.restore_button, Qt.MouseButton.LeftButton)
        await wait_until(lambda: window.checkpoint_actions.last_there is not None, 60)

    qloop.run_until_complete(asyncio.wait_for(scenario(), 180))
    assert texts == ["as it was\n", "agent\n", "the person's\n"]  # before, agent, now
    assert (folder / "a.txt").read_text() == "as it was\n"  # the person chose "before"
    assert window.checkpoint_actions.last_there["files"] == ["a.txt"]
    assert "Rewound: 1 file restored there" in said


def test_a_remote_call_card_shows_its_change_there_with_diff_compare_undo_and_redo(
    qtbot: QtBot,
    scripted_relay: ScriptedRelay,
    remote: Remote,
    remote_window: Any,
    qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> None:
    folder, window, dialogs = _writing_window(remote, scripted_relay, remote_window, "window-card")
    actions = window.checkpoint_actions
    said: list[str] = []
    window.status.messageChanged.connect(said.append)
    diffs: list[str] = []

    def click(href: str) -> None:
        window.chat.transcript.anchorClicked.emit(QUrl(href))

    async def a_diff() -> str:
        count = len(dialogs)
        await wait_until(lambda: any(isinstance(d, DiffDialog) for d in dialogs[count:]), 60)
        dialog = dialogs[-1]
        assert isinstance(dialog, DiffDialog)
        assert dialog.grab().save(str(tmp_path / f"diff-there-{count}.png"))
        dialog.reject()
        return dialog.text.toPlainText()

    async def scenario() -> None:
        window.bridge.submit("Write a.")
        await wait_until(lambda: not window.bridge.busy and window.session.loop.legs == 2, 120)
        shown = lambda: window.chat.transcript.toPlainText()  # noqa: E731
        await wait_until(lambda: "changed 1 file (a.txt)" in shown(), 60)
        assert "Undo this call" in shown()
        assert window.grab().save(str(tmp_path / "card-there.png"))
        assert actions.there is not None
        [(record, _)] = [k for k in actions.there.known.values() if k is not None]
        click(f"act:diff/{record.id}")
        diffs.append(await a_diff())
        (folder / "a.txt").write_text("the person's\n")  # changed there since the call
        click(f"act:compare/{record.id}")
        diffs.append(await a_diff())
        (folder / "a.txt").write_text("agent\n")  # as the call left it: no conflict
        click(f"act:undo/{record.id}")
        await wait_until(lambda: actions.last_there is not None, 60)
        await wait_until(lambda: "undone" in shown(), 60)
        assert (folder / "a.txt").read_text() == "as it was\n"
        undo = actions.last_there["restored"]
        assert isinstance(undo, int)
        actions.last_there = None
        click(f"act:undo/{undo}")  # redo
        await wait_until(lambda: actions.last_there is not None, 60)
        await wait_until(lambda: "undone" not in shown(), 60)

    qloop.run_until_complete(asyncio.wait_for(scenario(), 240))
    assert window.grab().save(str(tmp_path / "redone-there.png"))
    assert "-as it was" in diffs[0] and "+agent" in diffs[0]
    assert "-agent" in diffs[1] and "+the person's" in diffs[1]
    assert (folder / "a.txt").read_text() == "agent\n"  # redone
    assert any(line.startswith("Undid checkpoint #") and "restored there" in line for line in said)


def test_a_remote_turns_review_bar_lists_its_files_there_and_undoes_one(
    scripted_relay: ScriptedRelay,
    remote: Remote,
    remote_window: Any,
    qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> None:
    folder, window, dialogs = _writing_window(remote, scripted_relay, remote_window, "window-bar")
    actions = window.checkpoint_actions
    turn: list[str] = []
    listed: list[tuple[str, int, int]] = []

    async def scenario() -> None:
        window.bridge.submit("Write a.")
        await wait_until(lambda: not window.bridge.busy and window.session.loop.legs == 2, 120)
        await wait_until(lambda: bool(actions.review.shown()), 60)
        listed.extend((f.path, f.added, f.removed) for f in actions.review.shown())
        actions.review.toggle.setChecked(True)
        assert window.grab().save(str(tmp_path / "review-bar-there.png"))
        actions.review.reviewRequested.emit()
        await wait_until(lambda: any(isinstance(d, DiffDialog) for d in dialogs), 60)
        dialog = dialogs[-1]
        assert isinstance(dialog, DiffDialog)
        turn.append(dialog.text.toPlainText())
        dialog.reject()
        actions.review.undoRequested.emit("a.txt")
        await wait_until(lambda: actions.last_there is not None, 60)

    qloop.run_until_complete(asyncio.wait_for(scenario(), 240))
    assert listed == [("a.txt", 1, 1)]  # counted there
    assert "+agent" in turn[0] and "-as it was" in turn[0]
    assert (folder / "a.txt").read_text() == "as it was\n"  # undone there
    assert actions.review.shown() == []  # nothing left to review
