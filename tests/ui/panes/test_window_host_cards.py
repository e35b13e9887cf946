"""The real window's main conversation in a real `melgui host` process, with the host's own
data folder (its checkpoints and history are not the window's): the call cards say what
the host's checkpoints saw, Undo on a card puts the file back in the host's folder, the
review bar lists the turn's files, a file's Accept takes it off the bar and its Reject
puts it back (the host's model told), and Rewind to a message puts back the files and cuts
the conversation in the host, which a second view sees. The context meter and its popup
show the host's measure, /pin pins there, and /review's read-only turn runs there."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QUrl
from PySide6.QtWidgets import QDialog, QLabel
from pytestqt.qtbot import QtBot

from melgui.core.config.trust import FolderTrust
from melgui.host.remote_session import RemoteSession
from melgui.ui.checkpoints.dialogs import RewindDialog
from melgui.ui.window.context_meter import short
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.host_process import HostProcess
from tests.fakes.host_windows import HostWindows
from tests.fakes.window import hover_message, type_prompt, wait_until


@pytest.fixture
def host_environ(tmp_path: Path) -> dict[str, str]:
    return {"MELGUI_DATA_DIR": str(tmp_path / "host-data")}  # not the window's


def shown(window: Any) -> str:
    return str(window.chat.transcript.toPlainText())


def write(path: str, content: str, call: str) -> Any:
    return tool_calls(tool_call("write_file", {"path": path, "content": content}, id=call))


def test_undo_on_a_card_and_rewind_act_in_the_host(
    host: HostProcess,
    host_windows: HostWindows,
    scripted_relay: ScriptedRelay,
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
        [text("Going on."), done()],
    )
    window, view = host_windows.open()
    session = window.session
    assert isinstance(session, RemoteSession)
    actions = window.checkpoint_actions
    dialogs: list[QDialog] = []
    actions.dialogOpened.connect(dialogs.append)
    label = window.findChild(QLabel, "hostedLabel")
    assert label is not None and "Rewind" not in label.toolTip()

    async def turn(prompt: str, answer: str, asks: bool = True) -> None:
        type_prompt(qtbot, window, prompt)
        if asks:
            await wait_until(lambda: window.approvals.first() is not None, timeout=30)
            assert window.approve_key()
        await wait_until(lambda: answer in shown(window) and not session.busy, 30)

    def click(href: str) -> None:
        window.chat.transcript.anchorClicked.emit(QUrl(href))

    def record_of(call: str) -> int:
        assert actions.there is not None
        known = actions.there.known[call]
        assert known is not None
        return known[0].id

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
        # Accept on the card: reviewed, off the review bar (nothing asked of the host).
        click(f"act:accept/{record_of('w1')}/notes.txt")
        await wait_until(lambda: "accepted" in shown(window), 30)
        assert actions.review.shown() == []
        # Undo this call: the host puts the file back (a new file: gone).
        click(f"act:undo/{record_of('w1')}")
        await wait_until(lambda: not (project / "notes.txt").exists(), 30)
        await wait_until(lambda: "undone" in shown(window), 30)
        await wait_until(lambda: actions.review.files == [], 30)  # nothing left to review

        # A second turn changes the readme; Rewind to the first message, continuing from
        # there: both files as they were, the conversation cut in the host.
        await turn("change the readme", "Readme changed.")
        assert (project / "README.md").read_text() == "changed\n"
        # Reject the file on its card: back as it was, and the host's model is told.
        await wait_until(lambda: "Reject" in shown(window), 30)
        click(f"act:reject/{record_of('w2')}/README.md")
        await wait_until(lambda: "Rejected the change" in window.status.currentMessage(), 30)
        assert (project / "README.md").read_text() == "hello\n"
        await turn("go on", "Going on.", asks=False)
        told = scripted_relay.legs_received[-1].last_user_text
        assert "rejected your change to README.md" in told
        bar = hover_message(window.chat.transcript, "write notes")
        assert bar.buttons["rewind"].isVisibleTo(bar)
        qtbot.mouseClick(bar.buttons["rewind"], Qt.MouseButton.LeftButton)
        await wait_until(lambda: any(isinstance(d, RewindDialog) for d in dialogs), 30)
        rewind = dialogs[-1]
        assert isinstance(rewind, RewindDialog)
        rewind.grab().save(str(tmp_path / "host-rewind-dialog.png"))
        qtbot.mouseClick(rewind.continue_button, Qt.MouseButton.LeftButton)
        await wait_until(lambda: session.conversation.messages == [], 30)
        assert (project / "README.md").read_text() == "hello\n"
        assert not (project / "notes.txt").exists()
        assert window.chat.input.toPlainText() == "write notes"
        assert "Rewound" in window.status.currentMessage()
        await wait_until(lambda: actions.review.files == [], 30)
        window.grab().save(str(tmp_path / "host-rewound.png"))

    run(scenario())
    # A second view of the host's session sees the rewound conversation.
    other = run(host.client("second view"))
    listed = run(other.call("session/list"))
    (watcher,) = run(RemoteSession.reattach(other, listed))
    assert watcher.conversation.messages == []
    run(other.aclose())
    assert view.client.gaps == []


REVIEWED = "README.md:1: warning: say whom the greeting is for\nThe rest reads well."


def test_the_context_meter_pins_and_review_are_the_hosts(
    host_windows: HostWindows,
    scripted_relay: ScriptedRelay,
    run: Any,
    project: Path,
    qtbot: QtBot,
    tmp_path: Path,
) -> None:
    committed(project)
    (project / "README.md").write_text("hello, you\n")  # an uncommitted change to review
    scripted_relay.script(
        [text("Hello."), done(usage={"prompt_tokens": 1234, "completion_tokens": 56})],
        [text("Noted."), done()],
        [text(REVIEWED), done()],
    )
    window, _ = host_windows.open()
    session = window.session
    assert isinstance(session, RemoteSession)
    meter = window.status.context_meter
    popups: list[Any] = []
    window.context.popupOpened.connect(popups.append)

    async def scenario() -> None:
        type_prompt(qtbot, window, "hello")
        await wait_until(lambda: "Hello." in shown(window) and not session.busy, 30)
        # The host's numbers: the turn's tokens as the server reported them there.
        await wait_until(lambda: "In all 1.3k" in meter.tokens.text(), 30)
        measured = await session.ask("context/measure")
        assert f"~{short(measured['used'])} " in meter.bar.format()
        assert "Not available" not in meter.bar.toolTip()
        assert "1,234 in / 56 out" in meter.bar.toolTip()

        # /pin pins in the host: its thread shows it, the model reads it next.
        type_prompt(qtbot, window, "/pin the API is v2")
        await wait_until(lambda: [p.text for p in session.pins] == ["the API is v2"], 30)
        assert "Pinned, kept word for word" in shown(window)
        type_prompt(qtbot, window, "go on")
        await wait_until(lambda: "Noted." in shown(window) and not session.busy, 30)
        assert "the API is v2" in scripted_relay.legs_received[-1].last_user_text

        # The meter's click: the breakdown the host measured, and the pins.
        meter.detailsRequested.emit()
        await wait_until(lambda: bool(popups), 30)
        popup = popups[-1]
        there = await session.ask("context/measure", breakdown=True)
        assert popup.view.breakdown.total == there["breakdown"]["total"] > 0
        assert len(popup.view.breakdown.slices) == len(there["breakdown"]["slices"])
        assert "the API is v2" in popup.pins.list.item(0).text()
        popup.grab().save(str(tmp_path / "host-context.png"))
        popup.hide()

        # /review: its read-only turn runs in the host; the findings land on the hunk.
        type_prompt(qtbot, window, "/review")
        await wait_until(lambda: "Review: 1 findings" in shown(window), 60)
        leg = scripted_relay.legs_received[-1]
        assert "+hello, you" in leg.last_user_text and "write_file" not in leg.tool_names
        assert not session.loop.plan.on

        async def planning_there() -> bool:
            return bool((await session.client.call("session/list"))[0]["plan"])

        async with asyncio.timeout(30):  # back to what it was, there too
            while await planning_there():
                await asyncio.sleep(0.05)

    run(scenario())
    window.grab().save(str(tmp_path / "host-review.png"))


def committed(project: Path) -> None:
    who = ["-c", "user.email=t@e", "-c", "user.name=T"]
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "start"]):
        subprocess.run(["git", *who, *args], cwd=project, check=True, capture_output=True)
    FolderTrust().trust(project)
