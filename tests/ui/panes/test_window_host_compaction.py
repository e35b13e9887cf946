"""The preview before a compaction of the real window's main conversation in a real
`melgui host` (`melgui --with-host`): the same dialog as a window-run conversation's,
its question waiting in the host. Answered in the window (an item kept word for word),
it closes when another view answers first, and after a kill -9 of the window that showed
it, the next window shows it again and answers it there."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel
from shiboken6 import isValid

from melgui.core.protocol.views.compacted import KEPT_HEAD
from melgui.host.client import HostClient
from melgui.host.remote_session import RemoteSession
from melgui.ui.context.preview_dialog import CompactionPreview
from melgui.ui.window.host_view.view import attach_host
from tests.fakes import ScriptedRelay, done, text
from tests.fakes.host_process import HostProcess, window_process
from tests.fakes.host_windows import HostWindows
from tests.fakes.window import relay_settings, wait_until

LONG = "word " * 400


def script(relay: ScriptedRelay, turns: int) -> None:
    relay.script(
        *[[text(f"Answer {n}. {LONG}"), done()] for n in range(1, turns + 1)],
        [text("Summary: the questions were answered."), done()],
    )


def shots(name: str, dialog: CompactionPreview) -> None:
    if "MELGUI_SHOTS_DIR" in os.environ:
        dialog.grab().save(str(Path(os.environ["MELGUI_SHOTS_DIR"]) / name))


def tick(dialog: CompactionPreview, row: int) -> None:
    item = dialog.tree.topLevelItem(row)
    assert item is not None
    item.setCheckState(0, Qt.CheckState.Checked)


def test_the_preview_is_asked_in_the_window_and_closes_when_another_view_answers(
    host: HostProcess, host_windows: HostWindows, scripted_relay: ScriptedRelay, run: Any
) -> None:
    script(scripted_relay, 4)
    window, view = host_windows.open()
    session = window.session
    assert isinstance(session, RemoteSession)
    opened: list[CompactionPreview] = []
    window.context.previewOpened.connect(opened.append)

    async def four_turns() -> None:
        for n in range(1, 5):
            window.bridge.submit(f"question {n}")
            await wait_until(lambda: not window.bridge.busy, timeout=30)

    run(four_turns())
    # Another view of the host: a second window, or `melgui exec --host`.
    other = run(host.client("other view"))
    listed = run(other.call("session/list"))
    (watcher,) = run(RemoteSession.reattach(other, listed))

    # First compaction: the other view answers "don't", the window's dialog goes.
    window.bridge.compact()
    run(wait_until(lambda: bool(opened) and watcher.compaction.question is not None, timeout=30))
    first = opened[0]
    assert first.isVisible() and first.question is session.compaction.question
    intro = [label.text() for label in first.findChildren(QLabel)]
    assert any(t.startswith("You asked to compact. Now about") for t in intro), intro
    assert first.tree.topLevelItemCount() == 4  # the older two turns; the last two stay
    assert watcher.compaction.question is not None
    watcher.compaction.question.cancel()
    run(wait_until(lambda: window.context.preview is None and not window.bridge.busy, timeout=30))
    assert not isValid(first) or not first.isVisible()  # closed, then deleted
    assert len(scripted_relay.legs_received) == 4  # nothing was summarised
    assert not any(KEPT_HEAD in m.content for m in session.conversation.messages)

    # Second: answered in the window, keeping the first answer word for word.
    window.bridge.compact()
    run(wait_until(lambda: len(opened) == 2, timeout=30))
    dialog = opened[1]
    tick(dialog, 1)  # "Model: Answer 1. word word …"
    shots("compaction-preview-in-host.png", dialog)
    dialog.compact_button.click()
    run(wait_until(lambda: not window.bridge.busy, timeout=30))
    assert watcher.compaction.question is None
    summary = next(m.content for m in session.conversation.messages if KEPT_HEAD in m.content)
    assert "the questions were answered" in summary and "Answer 1." in summary
    assert len(scripted_relay.legs_received) == 5
    mine = [m.to_json() for m in session.conversation.messages]
    run(wait_until(lambda: [m.to_json() for m in watcher.conversation.messages] == mine, 30))

    # The preview turned off in the window: its next compaction there asks nobody.
    scripted_relay.script([text("Summary: again."), done()])
    window.settings.compaction_preview = False
    window.bridge.compact()
    run(wait_until(lambda: len(scripted_relay.legs_received) == 6, timeout=30))
    run(wait_until(lambda: not window.bridge.busy, timeout=30))
    assert len(opened) == 2 and watcher.compaction.question is None
    assert any("Summary: again." in m.content for m in session.conversation.messages)
    assert view.client.gaps == [] and other.gaps == []
    run(watcher.aclose())
    run(other.aclose())


def test_a_window_killed_while_the_preview_waits_leaves_it_to_the_next_window(
    scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    script(scripted_relay, 4)
    compacting = "tests.fakes.host_window_compacting"
    with window_process(scripted_relay, compacting, str(project), "4") as (first, place):
        clients: list[HostClient] = []
        try:
            assert first.stdout is not None
            said: dict[str, Any] = {}
            while "preview" not in said:
                line = first.stdout.readline()
                assert line, "the window ended before it showed the preview"
                said.update(json.loads(line))
            assert len(said["preview"]) == 4 and said["preview"][0].startswith("You: question 1")
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=30)
            first.stdout.close()

            # The host still waits; the next window on the folder takes the conversation
            # back and shows the same question.
            window = make_window(relay_settings(scripted_relay))
            opened: list[CompactionPreview] = []
            window.context.previewOpened.connect(opened.append)
            clients.append(run(HostClient.connect(place, client="next window")))
            view = run(attach_host(window, clients[0]))
            session = window.session
            assert isinstance(session, RemoteSession) and session.session_id == said["session"]
            run(wait_until(lambda: bool(opened), timeout=30))
            dialog = opened[0]
            assert [dialog.tree.topLevelItem(i).text(0) for i in range(4)] == said["preview"]  # type: ignore[union-attr]
            assert session.busy  # the compaction's turn waits on it, in the host
            tick(dialog, 3)  # "Model: Answer 2. …"
            shots("compaction-preview-next-window.png", dialog)
            dialog.compact_button.click()
            run(wait_until(lambda: not session.busy, timeout=30))
            summary = next(
                m.content for m in session.conversation.messages if KEPT_HEAD in m.content
            )
            assert "Answer 2." in summary and "Answer 1." not in summary
            assert len(scripted_relay.legs_received) == 5
            assert view.client.gaps == []
        finally:
            if clients:  # the view goes first: not a host's end, so no new host starts
                run(clients[0].aclose())
