"""The real window's main conversation in a real `melgui host` process, with the host's own
data folder (its checkpoints and history are not the window's): the call cards say what
the host's checkpoints saw, Undo on a card puts the file back in the host's folder, the
review bar lists the turn's files, and Rewind to a message puts back the files and cuts
the conversation in the host, which a second view sees."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QUrl
from PySide6.QtWidgets import QDialog, QLabel
from pytestqt.qtbot import QtBot

from melgui.host.remote_session import RemoteSession
from melgui.ui.checkpoints.dialogs import RewindDialog
from melgui.ui.window.host_view import attach_host
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.host_process import HostProcess, runtime_dir
from tests.fakes.window import hover_message, relay_settings, type_prompt, wait_until


@pytest.fixture
def host(tmp_path: Path) -> Iterator[HostProcess]:
    with runtime_dir() as runtime:
        process = HostProcess(runtime)
        process.env["MELGUI_DATA_DIR"] = str(tmp_path / "host-data")  # not the window's
        process.start()
        try:
            yield process
        finally:
            process.stop()


def shown(window: Any) -> str:
    return str(window.chat.transcript.toPlainText())


def write(path: str, content: str, call: str) -> Any:
    return tool_calls(tool_call("write_file", {"path": path, "content": content}, id=call))


def test_undo_on_a_card_and_rewind_act_in_the_host(
    host: HostProcess,
    scripted_relay: ScriptedRelay,
    make_window: Any,
    run: Any,
    project: Path,
    qtbot: QtBot,
    tmp_path: Path,
) -> None:
    scripted_relay.script(
        [text("Writing notes."), write("notes.txt", "one\n", "w1")],
        [text("Notes written."), done()],
        [write("README.md", "changed\n", "w2")],
        [text("Readme changed."), done()],
    )
    window = make_window(relay_settings(scripted_relay))
    view = run(attach_host(window, run(host.client("window"))))
    session = window.session
    assert isinstance(session, RemoteSession)
    actions = window.checkpoint_actions
    dialogs: list[QDialog] = []
    actions.dialogOpened.connect(dialogs.append)
    label = window.findChild(QLabel, "hostedLabel")
    assert label is not None and "Rewind" not in label.toolTip()

    async def turn(prompt: str, answer: str) -> None:
        type_prompt(qtbot, window, prompt)
        await wait_until(lambda: window.approvals.first() is not None, timeout=30)
        assert window.approve_key()
        await wait_until(lambda: answer in shown(window) and not session.busy, 30)

    async def scenario() -> None:
        await turn("write notes", "Notes written.")
        assert (project / "notes.txt").read_text() == "one\n"
        # The card says what the host's checkpoint saw; the window's own has none.
        await wait_until(lambda: "changed 1 file (notes.txt)" in shown(window), 30)
        assert actions.checkpoints.for_calls(["w1"]) == []
        assert "Undo this call" in shown(window)
        # The review bar lists the turn's file, as the host counted it.
        await wait_until(lambda: [f.path for f in actions.review.files] == ["notes.txt"], 30)
        assert actions.review.isVisible()
        if "MELGUI_SHOTS_DIR" in os.environ:
            window.grab().save(str(Path(os.environ["MELGUI_SHOTS_DIR"]) / "host-cards.png"))
        window.grab().save(str(tmp_path / "host-cards.png"))
        # Undo this call: the host puts the file back (a new file: gone).
        assert actions.there is not None
        known = actions.there.known["w1"]
        assert known is not None
        record, _ = known
        window.chat.transcript.anchorClicked.emit(QUrl(f"act:undo/{record.id}"))
        await wait_until(lambda: not (project / "notes.txt").exists(), 30)
        await wait_until(lambda: "undone" in shown(window), 30)

        # A second turn changes the readme; Rewind to the first message, continuing from
        # there: both files as they were, the conversation cut in the host.
        await turn("change the readme", "Readme changed.")
        assert (project / "README.md").read_text() == "changed\n"
        bar = hover_message(window.chat.transcript, "write notes")
        assert bar.buttons["rewind"].isVisibleTo(bar)
        qtbot.mouseClick(bar.buttons["rewind"], Qt.MouseButton.LeftButton)
        await wait_until(lambda: any(isinstance(d, RewindDialog) for d in dialogs), 30)
        rewind = dialogs[-1]
        assert isinstance(rewind, RewindDialog)
        qtbot.mouseClick(rewind.continue_button, Qt.MouseButton.LeftButton)
        await wait_until(lambda: (project / "README.md").read_text() == "hello\n", 30)
        await wait_until(lambda: session.conversation.messages == [], 30)
        assert not (project / "notes.txt").exists()
        assert window.chat.input.toPlainText() == "write notes"
        assert "Rewound" in window.status.currentMessage()

    run(scenario())
    # A second view of the host's session sees the rewound conversation.
    other = run(host.client("second view"))
    listed = run(other.call("session/list"))
    (watcher,) = run(RemoteSession.reattach(other, listed))
    assert watcher.conversation.messages == []
    run(other.aclose())
    assert view.client.gaps == []
