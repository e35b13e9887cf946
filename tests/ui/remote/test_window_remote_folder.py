"""A remote folder in the real window, over the real sshd (a second local user): the chat's
tools run there, a terminal pane runs there and keeps running across a killed ssh client
(its screen shows what it wrote meanwhile), the status bar says the link's state, an
unknown host key is asked about in a dialog, and File → Open remote folder… checks the URL
and keeps recent folders."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QApplication, QDialogButtonBox, QMessageBox

from melgui.ui.panes.remote.folder_dialog import RemoteFolderDialog, recent_folders, remember_folder
from melgui.ui.panes.terminal.pane import TerminalPane
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.window import relay_settings, wait_until
from tests.remote.fixtures import Remote

AUTO = {"read_file": "auto", "open_pane": "auto", "send_keys": "auto", "read_pane": "auto"}


def run(qloop: asyncio.AbstractEventLoop, work: Any, timeout: float = 180) -> Any:
    return qloop.run_until_complete(asyncio.wait_for(work, timeout))


def test_a_remote_folder_s_chat_and_terminal_run_there_and_survive_a_killed_link(
    scripted_relay: ScriptedRelay,
    remote: Remote,
    remote_window: Any,
    qloop: asyncio.AbstractEventLoop,
) -> None:
    folder = remote.folder("window-folder", {"a.txt": "read over ssh\n"})
    script = (
        "echo at-$(pwd)-as-$(id -un); while [ ! -e go ]; do sleep 0.05; done; "
        "echo after-$(cat go); exec sleep 300"
    )
    scripted_relay.script(
        [tool_calls(tool_call("read_file", {"path": "a.txt"}, id="r1"),
                    tool_call("open_pane", {"layout": "right", "command": script}, id="o1"))],
        [text("Read it and opened a terminal."), done()],
    )  # fmt: skip
    url = f"ssh://{remote.server.alias}{folder}"
    settings = relay_settings(scripted_relay, role="orchestrator", approval_modes=AUTO)
    window = remote_window(url, settings)
    host = remote.server.alias
    indicator = window.remote.indicator
    states: list[str] = []

    def heard(name: str, state: str) -> None:
        states.append(state)
        indicator.show_state(name, state)

    window.remote.hosts.on_state = heard

    def terminal() -> TerminalPane | None:
        pane = window.pane_manager.pane(1)
        return pane if isinstance(pane, TerminalPane) else None

    def screen() -> str:
        pane = terminal()
        return pane.emulator.text(200) if pane is not None else ""

    async def scenario() -> None:
        window.bridge.submit("Read a and open a terminal.")
        await wait_until(lambda: not window.bridge.busy and window.session.loop.legs == 2, 120)
        await wait_until(lambda: f"at-{folder}-as-{remote.server.user.pw_name}" in screen(), 60)
        assert "connected" in indicator.text()
        place = await window.remote.place(host)
        pid = place.link.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)  # the ssh client dies; the program goes on there
        (folder / "go").write_text("while-away\n")
        await wait_until(lambda: "after-while-away" in screen(), 90)
        # Reconnected (a loaded machine may take two), connected again: what it is about
        # is below, the program ran on there and nothing was shown twice.
        await wait_until(lambda: place.link.reconnects >= 1 and "connected" in indicator.text())

    run(qloop, scenario())
    last = scripted_relay.legs_received[-1]
    read = next(m for m in last.messages if m.get("tool_call_id") == "r1")
    assert "read over ssh" in read["content"]
    assert any(state.startswith("reconnecting") for state in states)
    assert window.windowTitle() == f"melgui — {url}"
    assert window.pane_manager.registry.all()[0].where == host
    assert recent_folders()[0] == url
    pane = terminal()
    assert pane is not None and pane.state.name == "running"  # it ran on across the drop
    assert screen().count("at-") == 1  # nothing shown twice


def test_an_unknown_host_key_is_asked_in_a_dialog(
    scripted_relay: ScriptedRelay,
    remote: Remote,
    remote_window: Any,
    qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> None:
    known = tmp_path / "known_hosts"
    known.write_text("")
    alias = remote.server.alias_with("window-unknown", known_hosts=known, strict="ask")
    folder = remote.folder("window-keys", {"a.txt": "behind a new key\n"})
    scripted_relay.script(
        [tool_calls(tool_call("read_file", {"path": "a.txt"}, id="r1"))],
        [text("Read."), done()],
    )
    window = remote_window(
        f"ssh://{alias}{folder}", relay_settings(scripted_relay, approval_modes=AUTO)
    )

    def asking() -> QMessageBox | None:
        for widget in QApplication.topLevelWidgets():
            if isinstance(widget, QMessageBox) and widget.objectName() == "sshHostKey":
                return widget if widget.isVisible() else None
        return None

    async def scenario() -> None:
        window.bridge.submit("Read a.")  # waits for the link, which waits for the person
        await wait_until(lambda: asking() is not None, 90)
        box = asking()
        assert box is not None
        assert box.informativeText().split("\n")[-1].startswith("SHA256:")
        accept = box.property("accept")
        accept.click()
        await wait_until(lambda: not window.bridge.busy and window.session.loop.legs == 2, 120)

    run(qloop, scenario())
    read = next(
        m for m in scripted_relay.legs_received[-1].messages if m.get("tool_call_id") == "r1"
    )
    assert "behind a new key" in read["content"]
    assert remote.server.host_public_key.split()[1] in known.read_text()


def test_open_remote_folder_checks_the_url_and_offers_recent_ones(qtbot: Any) -> None:
    remember_folder("ssh://old/srv/a")
    remember_folder("ssh://me@build:2222/srv/b")
    opened: list[str] = []
    dialog = RemoteFolderDialog(recent_folders(), opened.append)
    qtbot.addWidget(dialog)
    dialog.show()
    open_button = dialog.buttons.button(QDialogButtonBox.StandardButton.Open)
    assert [dialog.recent.item(i).text() for i in range(dialog.recent.count())] == [
        "ssh://me@build:2222/srv/b",
        "ssh://old/srv/a",
    ]
    dialog.url.setText("ssh://build")  # no folder
    assert not open_button.isEnabled()
    assert "absolute path" in dialog.problem.text()
    dialog.recent.setCurrentRow(1)
    assert dialog.url.text() == "ssh://old/srv/a" and open_button.isEnabled()
    open_button.click()
    assert opened == ["ssh://old/srv/a"]
