"""A terminal pane: one program in a pty, its screen, and the view that paints it.

Output is read when the pty is readable, at most `READ_BUDGET_S` of work per wake-up:
the notifier is level-triggered, so what is left is read on the next turn of the event
loop, after paints and timers had their turn. The kernel's pty buffer then holds the
program back, so a flood slows the program, not the window.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from PySide6.QtCore import QSocketNotifier, QTimer, Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from melgui.core.terminal.panes import PaneState, exited, failed
from melgui.core.terminal.pty_session import PtyError, PtySession, command_argv
from melgui.core.terminal.screen import TerminalScreen
from melgui.ui.panes.terminal_view import TerminalView

READ_BUDGET_S = 0.012
FEED_BATCH = 64 * 1024
POLL_MS = 200  # how often to look for an exit that left the pty open (a background job)
CLOSE_GRACE_MS = 800


class TerminalPane(QWidget):
    """Runs `command` (the login shell when None) in `cwd`. Emits `stateChanged(PaneState)`.

    A program that cannot start gives a pane in state failed, with the reason on its
    screen; it never raises.
    """

    stateChanged = Signal(object)
    bell = Signal()  # the program rang the terminal's bell (BEL)

    def __init__(
        self,
        command: str | None,
        cwd: str | os.PathLike[str],
        *,
        columns: int = 80,
        rows: int = 24,
        argv: list[str] | None = None,
        env: dict[str, str] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.command = command
        self.emulator = TerminalScreen(columns, rows)
        self.view = TerminalView(self.emulator, self.write, self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view)
        self.setFocusProxy(self.view)
        self.state: PaneState = PaneState("running")
        self.exit_reported = False  # read_pane told the model about the exit
        self._exiting = False
        self._bells = 0  # the emulator's bell count last reported
        self.pty: PtySession | None = None
        self._notifier: QSocketNotifier | None = None
        self._poll = QTimer(self)
        self._poll.setInterval(POLL_MS)
        self._poll.timeout.connect(self.check_exit)
        try:
            self.pty = PtySession(
                argv or command_argv(command), cwd=Path(cwd), env=env, columns=columns, rows=rows
            )
        except PtyError as exc:
            self.emulator.feed(f"\x1b[31m{exc}\x1b[0m\r\n".encode())
            self._set_state(failed(str(exc)))
            return
        fd = self.pty.fd
        assert fd is not None
        self._notifier = QSocketNotifier(fd, QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._on_readable)
        self._poll.start()
        self.view.gridResized.connect(self._on_grid_resized)

    @property
    def pid(self) -> int | None:
        return self.pty.pid if self.pty is not None else None

    def _set_state(self, state: PaneState) -> None:
        if state != self.state:
            self.state = state
            self.stateChanged.emit(state)

    # -- output ------------------------------------------------------------------------

    def _on_readable(self) -> None:
        self.pump(READ_BUDGET_S)

    def pump(self, budget: float) -> int:
        """Read and interpret output for up to `budget` seconds; returns bytes read."""
        pty = self.pty
        if pty is None or pty.closed:
            return 0
        total = 0
        deadline = time.perf_counter() + budget
        while True:
            # A pty hands out a few KB per read: gather a batch, then interpret it at once.
            batch: list[bytes] = []
            size = 0
            while size < FEED_BATCH and (chunk := pty.read()):
                batch.append(chunk)
                size += len(chunk)
            if not batch:
                break
            total += size
            self.emulator.feed(b"".join(batch))
            if time.perf_counter() >= deadline:
                break
        if total:
            if self.emulator.bells != self._bells:
                self._bells = self.emulator.bells
                self.bell.emit()
            replies = self.emulator.take_replies()
            if replies:
                pty.write(replies)
            self.view.mark_stale()
        if pty.eof:
            self._stop_reading()
            if not self._exiting:
                self.check_exit()
        return total

    def _stop_reading(self) -> None:
        if self._notifier is not None:
            self._notifier.setEnabled(False)
            self._notifier.deleteLater()
            self._notifier = None

    def check_exit(self) -> None:
        pty = self.pty
        if pty is None or self.state.ended:
            return
        if pty.pending_input:
            pty.flush()
        code = pty.poll()
        if code is None:
            return
        self._exiting = True
        self.pump(0.05)  # the program's last words
        self._poll.stop()
        self._set_state(exited(code))
        note = "exited" if code >= 0 else "was killed"
        self.emulator.feed(f"\r\n\x1b[2m[process {note} with code {code}]\x1b[0m\r\n".encode())
        self.view.mark_stale()

    # -- input -------------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        """Typed or sent input; ignored once the program has ended."""
        if self.pty is not None and not self.pty.closed and not self.state.ended:
            self.pty.write(data)

    @property
    def alive(self) -> bool:
        return self.pty is not None and not self.state.ended

    def _on_grid_resized(self, columns: int, rows: int) -> None:
        self.emulator.resize(columns, rows)
        if self.pty is not None and not self.pty.closed:
            self.pty.resize(columns, rows)
        self.view.mark_stale()

    # -- end ---------------------------------------------------------------------------

    def begin_close(self) -> None:
        """Hang up the terminal; finish_close() (from a timer, or at once) ends the rest."""
        self._stop_reading()
        self._poll.stop()
        if self.pty is not None and not self.pty.closed:
            self.pty.terminate()

    def finish_close(self) -> None:
        if self.pty is not None:
            self.pty.finish()

    def close_now(self, grace: float = 0.5) -> None:
        """End the program and everything it started, blocking at most ~grace seconds."""
        self._stop_reading()
        self._poll.stop()
        if self.pty is not None and not self.pty.closed:
            self.pty.close(grace)
