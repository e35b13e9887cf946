"""A terminal pane in a real window: a real pty, painted and typed into."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from melgui.core.terminal.pty_session import process_alive
from melgui.ui.panes.terminal.pane import TerminalPane

BASH = ["bash", "--norc", "--noprofile", "-i"]


@pytest.fixture
def make_pane(qtbot: QtBot, tmp_path: Path) -> Iterator[Callable[..., TerminalPane]]:
    panes: list[TerminalPane] = []

    def make(command: str | None = None, argv: list[str] | None = None) -> TerminalPane:
        env = {"PATH": "/usr/bin:/bin", "PS1": "$ ", "HOME": str(tmp_path)}
        pane = TerminalPane(command, tmp_path, argv=argv, env=env)
        qtbot.addWidget(pane)
        pane.resize(640, 400)
        pane.show()
        panes.append(pane)
        return pane

    yield make
    for pane in panes:
        pane.close_now(0.3)


def test_typed_keys_reach_bash_and_output_is_painted(
    qtbot: QtBot, make_pane: Callable[..., TerminalPane]
) -> None:
    pane = make_pane(argv=BASH)
    qtbot.waitUntil(lambda: "$" in pane.emulator.text(), timeout=10000)
    qtbot.waitUntil(lambda: pane.view.paints > 0, timeout=5000)
    painted = pane.view.paints
    pane.view.setFocus()
    qtbot.keyClicks(pane.view, "echo typed-$((2+3))")
    qtbot.keyClick(pane.view, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "typed-5" in pane.emulator.text(), timeout=10000)
    qtbot.waitUntil(lambda: pane.view.paints > painted, timeout=5000)


def test_resize_of_the_view_reaches_the_program(
    qtbot: QtBot, make_pane: Callable[..., TerminalPane]
) -> None:
    pane = make_pane(argv=BASH)
    qtbot.waitUntil(lambda: "$" in pane.emulator.text(), timeout=10000)
    columns = pane.emulator.columns
    pane.resize(pane.width() + 20 * pane.view._cell_w, pane.height())
    qtbot.waitUntil(lambda: pane.emulator.columns == columns + 20, timeout=5000)
    pane.write(b"tput cols\r")
    qtbot.waitUntil(lambda: f"\n{columns + 20}" in pane.emulator.text(), timeout=10000)


def test_a_pane_squeezed_to_nothing_keeps_its_terminal_s_size_and_screen(
    qtbot: QtBot, make_pane: Callable[..., TerminalPane]
) -> None:
    """A shell told it is a column wide redraws its prompt over the rows above, erasing
    them: a pane squeezed while a layout settles keeps the size it had."""
    pane = make_pane(argv=BASH)
    pane.write(b"echo kept-$((40+2))\r")
    qtbot.waitUntil(lambda: "\nkept-42" in pane.emulator.text(), timeout=10000)
    size = (pane.emulator.columns, pane.emulator.rows)
    pane.resize(8, 8)
    pane.view.gridResized.emit(1, 1)  # what the squeezed view says, whenever it says it
    assert (pane.emulator.columns, pane.emulator.rows) == size
    assert pane.pty is not None and (pane.pty.columns, pane.pty.rows) == size
    pane.resize(640, 400)
    pane.write(b"tput cols\r")
    qtbot.waitUntil(lambda: f"\n{size[0]}" in pane.emulator.text(), timeout=10000)
    assert "\nkept-42" in pane.emulator.text()


def test_exit_code_becomes_the_state(qtbot: QtBot, make_pane: Callable[..., TerminalPane]) -> None:
    pane = make_pane(argv=BASH)
    qtbot.waitUntil(lambda: "$" in pane.emulator.text(), timeout=10000)
    with qtbot.waitSignal(pane.stateChanged, timeout=10000):
        pane.write(b"exit 3\r")
    assert pane.state.label == "exited 3"
    assert not pane.alive


def test_close_leaves_no_process(qtbot: QtBot, make_pane: Callable[..., TerminalPane]) -> None:
    pane = make_pane(argv=BASH)
    qtbot.waitUntil(lambda: "$" in pane.emulator.text(), timeout=10000)
    pane.write(b"sleep 100 & sleep 100\r")
    assert pane.pty is not None
    qtbot.waitUntil(lambda: len(pane.pty.session_pids()) >= 3, timeout=10000)  # type: ignore[union-attr]
    pids = pane.pty.session_pids()
    pane.close_now(0.3)
    assert not [pid for pid in pids if process_alive(pid)]


def test_missing_program_is_a_failed_pane(make_pane: Callable[..., TerminalPane]) -> None:
    pane = make_pane(argv=["/no/such/program"])
    assert pane.state.name == "failed"
    assert "/no/such/program" in pane.emulator.text()


def test_ctrl_c_typed_in_the_view_interrupts_sleep(
    qtbot: QtBot, make_pane: Callable[..., TerminalPane]
) -> None:
    pane = make_pane(argv=BASH)
    qtbot.waitUntil(lambda: "$" in pane.emulator.text(), timeout=10000)
    pane.write(b"sleep 30\r")
    assert pane.pty is not None
    pty = pane.pty

    def sleep_in_foreground() -> bool:
        # bash forks, then hands the terminal to the child, then execs sleep: a Ctrl-C
        # before the hand-over would reach bash, which ignores it.
        fd = pty.fd
        if fd is None:
            return False
        foreground = os.tcgetpgrp(fd)
        for pid in pty.session_pids():
            with contextlib.suppress(OSError):
                comm = Path(f"/proc/{pid}/comm").read_text().strip()
                if comm == "sleep" and os.getpgid(pid) == foreground:
                    return True
        return False

    qtbot.waitUntil(sleep_in_foreground, timeout=10000)
    pane.view.setFocus()
    qtbot.keyClick(pane.view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: len(pane.pty.session_pids()) == 1, timeout=10000)  # type: ignore[union-attr]
    pane.write(b"echo status-$?\r")
    qtbot.waitUntil(lambda: "status-130" in pane.emulator.text(), timeout=10000)


def test_copy_and_paste(qtbot: QtBot, make_pane: Callable[..., TerminalPane]) -> None:
    from PySide6.QtGui import QGuiApplication

    pane = make_pane(argv=BASH)
    qtbot.waitUntil(lambda: "$" in pane.emulator.text(), timeout=10000)
    pane.write(b"echo copy-me\r")
    qtbot.waitUntil(lambda: "\ncopy-me" in pane.emulator.text(), timeout=10000)
    pane.view.select_all_visible()
    pane.view.setFocus()
    qtbot.keyClick(pane.view, Qt.Key.Key_C, shift_ctrl())
    assert "copy-me" in QGuiApplication.clipboard().text()
    QGuiApplication.clipboard().setText("echo pasted-$((1+1))")
    qtbot.keyClick(pane.view, Qt.Key.Key_V, shift_ctrl())
    qtbot.keyClick(pane.view, Qt.Key.Key_Return)  # a paste never runs by itself
    qtbot.waitUntil(lambda: "pasted-2" in pane.emulator.text(), timeout=10000)


def shift_ctrl() -> Qt.KeyboardModifier:
    return Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier


def test_scrollback_by_keys(qtbot: QtBot, make_pane: Callable[..., TerminalPane]) -> None:
    pane = make_pane(argv=BASH)
    qtbot.waitUntil(lambda: "$" in pane.emulator.text(), timeout=10000)
    pane.write(b"seq 1 300\r")
    qtbot.waitUntil(lambda: "\n300" in pane.emulator.text(), timeout=10000)
    pane.view.setFocus()
    qtbot.keyClick(pane.view, Qt.Key.Key_PageUp, Qt.KeyboardModifier.ShiftModifier)
    assert pane.view.scrolled > 0
    qtbot.keyClick(pane.view, Qt.Key.Key_A)  # typing returns to the live screen
    assert pane.view.scrolled == 0


def test_a_flood_is_painted_to_its_last_line_then_the_exit(
    qtbot: QtBot, make_pane: Callable[..., TerminalPane]
) -> None:
    pane = make_pane(argv=["seq", "1", "100000"])
    qtbot.waitUntil(lambda: pane.state.name == "exited", timeout=60000)
    assert pane.state.exit_code == 0
    text = pane.emulator.text()
    assert "\n100000\n" in text and text.endswith("[process exited with code 0]")

    def painted_last() -> bool:
        frame = pane.view.painted
        return frame is not None and frame.generation == pane.emulator.generation

    qtbot.waitUntil(painted_last, timeout=5000)
    shown = "".join(run.text for row in pane.view.painted.lines for run in row)  # type: ignore[union-attr]
    assert "100000" in shown and "[process exited with code 0]" in shown
    assert pane.view.paints < 100000 // pane.emulator.rows  # coalesced, not per read


def test_a_program_killed_by_a_signal_says_which(
    qtbot: QtBot, make_pane: Callable[..., TerminalPane]
) -> None:
    pane = make_pane(argv=["sh", "-c", "echo going; kill -TERM $$"])
    qtbot.waitUntil(lambda: pane.state.name == "exited", timeout=30000)
    assert pane.state.exit_code == -15
    assert pane.emulator.text().endswith("[process killed by SIGTERM]")  # not "code -15"
