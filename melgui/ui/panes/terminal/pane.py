"""A terminal pane: one program in a pty, its screen, and the view that paints it.

Output is read and interpreted on the pane's reader thread (core.terminal.reader),
which also prepares the runs of the screen at most once a frame; the GUI thread is
told through a queued signal (once until it has looked) and only paints, writes the
answers to terminal queries and shows the program's end. A flood slows the program
(the kernel's pty buffer holds it back), never the window.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from melgui.core.terminal.panes import PaneState, exit_label, exited, failed
from melgui.core.terminal.pty_session import Pty, PtyError, PtySession, command_argv
from melgui.core.terminal.reader import PtyReader
from melgui.core.terminal.screen import TerminalScreen
from melgui.ui.panes.terminal.view import TerminalView

POLL_MS = 200  # how often to look for an exit that left the pty open (a background job)
CLOSE_GRACE_MS = 800
MIN_COLUMNS, MIN_ROWS = 20, 3  # smaller grids keep the terminal's size


class _News(QObject):
    """Carries the reader thread's "something changed" to the GUI thread (queued)."""

    arrived = Signal()


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
        pty: Pty | None = None,
        parent: QWidget | None = None,
    ) -> None:
        """`pty`: a program already running (on a remote host: melgui/remote/remote_pty.py)
        instead of one started here."""
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
        self.pty: Pty | None = pty
        self._reader: PtyReader | None = None
        self._fed_seen = 0
        self._news = _News(self)
        self._news.arrived.connect(self._on_news)
        self._poll = QTimer(self)
        self._poll.setInterval(POLL_MS)
        self._poll.timeout.connect(self.check_exit)
        try:
            if self.pty is None:
                self.pty = PtySession(
                    argv or command_argv(command), cwd=Path(cwd), env=env, columns=columns,
                    rows=rows,
                )  # fmt: skip
        except PtyError as exc:
            self.emulator.feed(f"\x1b[31m{exc}\x1b[0m\r\n".encode())
            self._set_state(failed(str(exc)))
            return
        self._reader = PtyReader(
            self.pty, self.emulator, self._news.arrived.emit, self.view.render_offscreen
        )
        self.view.live = True
        self._reader.start()
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

    def _on_news(self) -> None:
        reader = self._reader
        if reader is None:
            return
        reader.acknowledge()
        pty = self.pty
        if self.emulator.bells != self._bells:
            self._bells = self.emulator.bells
            self.bell.emit()
        if pty is not None and not pty.closed:
            replies = self.emulator.take_replies()
            if replies:
                pty.write(replies)
        if not reader.running:
            self.view.live = False
        self.view.mark_stale()
        if reader.error is not None and not self.state.ended:
            self._set_state(failed(f"reading its output failed: {reader.error}"))
        elif reader.exit_code is not None:
            self._show_exit(reader.exit_code)

    def catch_up(self) -> int:
        """Bytes of output interpreted since the last call (the reader does the work)."""
        fed = self._reader.fed if self._reader is not None else 0
        news, self._fed_seen = fed - self._fed_seen, fed
        return news

    def _stop_reading(self) -> None:
        if self._reader is not None:
            self._reader.stop()
        self.view.live = False

    def check_exit(self) -> None:
        """Send input the pty could not take yet; notice an end the reader missed."""
        pty = self.pty
        if pty is None or self.state.ended:
            return
        if pty.pending_input:
            pty.flush()
        reader = self._reader
        if reader is not None and reader.running:
            return  # the reader reports the end, after the program's last words
        code = pty.poll()
        if code is not None:
            self._show_exit(code)

    def _show_exit(self, code: int) -> None:
        if self.state.ended:
            return
        self._poll.stop()
        self.view.live = False
        self._set_state(exited(code))
        # "killed by SIGHUP", not "killed with code -1": a signal's code is its number negated
        note = f"exited with code {code}" if code >= 0 else exit_label(code)
        self.emulator.feed(f"\r\n\x1b[2m[process {note}]\x1b[0m\r\n".encode())
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
        if columns < MIN_COLUMNS or rows < MIN_ROWS:
            # A pane squeezed while the layout settles: a shell told it is this small
            # redraws its prompt over the rows above it, erasing what they showed.
            return
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
