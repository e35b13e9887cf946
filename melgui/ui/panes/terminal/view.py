"""Paints a TerminalScreen with QPainter and turns keys, wheel and mouse into input.

Repaints are coalesced: new output only marks the view stale, and the paint comes at
once when the last one is a frame (`FRAME_MS`) old, else when it will be; a program
flooding output costs at most one paint per frame. While the pane's reader thread
runs, it renders each frame it prepares into an image (`render_offscreen`, with its
own RowPainter), and a paint of the live screen draws that image and puts the cursor
and the selection over it: the GUI thread neither builds runs nor draws text.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QEvent, QPoint, QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QGuiApplication,
    QImage,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QResizeEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import QMenu, QSizePolicy, QWidget

from melgui.core.terminal.runs import Frame
from melgui.core.terminal.screen import TerminalScreen
from melgui.ui.panes.terminal.keys import RESERVED_KEYS, key_bytes, paste_bytes
from melgui.ui.panes.terminal.paint import DEFAULT_BG, DEFAULT_FG, SELECTION_BG, RowPainter, is_wide
from melgui.ui.runtime.look.tokens import (
    SPACE_2XS,
    SPACE_S,
    TERMINAL_CURSOR,
    TERMINAL_MIN_PT,
    TERMINAL_SEARCH_HIT,
    TERMINAL_ZOOM_MIN_PT,
)

FRAME_MS = 16  # ~60 frames a second at most

Writer = Callable[[bytes], None]
Cell = tuple[int, int]  # (row, column) in view coordinates


class TerminalView(QWidget):
    """The cells of one terminal. Emits `gridResized(columns, rows)` when its size changes."""

    gridResized = Signal(int, int)

    def __init__(
        self, emulator: TerminalScreen, write: Writer, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.emulator = emulator
        self._write = write
        self._scrolled = 0  # lines back into the scrollback; 0 = following output
        self._stale = True
        self.live = False  # a reader thread feeds the screen and prepares its frames
        self._last_paint = 0.0
        # The live screen as the reader thread rendered it: (frame, image, size, ratio).
        self._offscreen: tuple[Frame, QImage, QSize, float] | None = None
        self._geometry = (QSize(0, 0), 1.0)  # size and pixel ratio, for the reader thread
        self._selection: tuple[Cell, Cell] | None = None
        self._selecting = False
        self.paints = 0
        self.painted: Frame | None = None  # what the last paint showed
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setStyleHint(QFont.StyleHint.Monospace)
        font.setPointSize(max(TERMINAL_MIN_PT, font.pointSize()))
        self._base_points = font.pointSize()
        self._set_font(font)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAccessibleName("Terminal")
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self.setAttribute(Qt.WidgetAttribute.WA_InputMethodEnabled)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setCursor(Qt.CursorShape.IBeamCursor)
        self._frame = QTimer(self)
        self._frame.setSingleShot(True)
        self._frame.timeout.connect(self._on_frame)

    def _set_font(self, font: QFont) -> None:
        self.setFont(font)
        self._painter = RowPainter(font)
        self._thread_painter = self._painter.copy()  # the reader thread's own
        self._offscreen = None

    @property
    def _cell_w(self) -> int:
        return self._painter.cell_w

    @property
    def _cell_h(self) -> int:
        return self._painter.cell_h

    def zoom_to(self, steps: int) -> None:
        """Text `steps` points above (or below) the default size; the grid follows."""
        font = QFont(self.font())
        font.setPointSize(max(TERMINAL_ZOOM_MIN_PT, self._base_points + steps))
        self._set_font(font)
        columns, rows = self.grid_for(self.size())
        if (columns, rows) != (self.emulator.columns, self.emulator.rows):
            self.gridResized.emit(columns, rows)
        self.mark_stale()
        self.updateGeometry()

    # -- output side ---------------------------------------------------------------------

    def mark_stale(self) -> None:
        """New output arrived; it is painted now, or on the next frame."""
        self._stale = True
        if not self._frame.isActive():
            since = (time.monotonic() - self._last_paint) * 1000
            self._frame.start(max(0, round(FRAME_MS - since)))

    def _on_frame(self) -> None:
        if self._stale and self.isVisible():
            self._stale = False
            self.update()

    def grid_for(self, size: QSize) -> tuple[int, int]:
        return max(2, size.width() // self._cell_w), max(1, size.height() // self._cell_h)

    def sizeHint(self) -> QSize:
        return QSize(self._cell_w * 80, self._cell_h * 24)

    def minimumSizeHint(self) -> QSize:
        return QSize(self._cell_w * 10, self._cell_h * 3)

    def resizeEvent(self, event: QResizeEvent) -> None:
        self._geometry = (QSize(event.size()), self.devicePixelRatioF())
        columns, rows = self.grid_for(event.size())
        if (columns, rows) != (self.emulator.columns, self.emulator.rows):
            self.gridResized.emit(columns, rows)
        self.mark_stale()
        super().resizeEvent(event)

    # -- painting ------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        self.paints += 1
        self._last_paint = time.monotonic()
        self._stale = False
        started = time.perf_counter()
        with self.emulator.priority():  # the reader waits: this paint has the GIL
            self._paint(event)
        self.emulator.paint_cost = time.perf_counter() - started

    def _paint(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        if self.live and self._offscreen is None and not self._scrolled:
            # Nothing rendered yet: the reader renders the first output within a frame.
            painter.fillRect(self.rect(), DEFAULT_BG)
            painter.end()
            return
        frame = self._offscreen_frame(painter)
        if frame is None:
            painter.fillRect(self.rect(), DEFAULT_BG)
            frame = self._current_frame()
            first = max(0, event.rect().top() // self._cell_h)
            last = min(len(frame.lines) - 1, event.rect().bottom() // self._cell_h)
            self._painter.paint(painter, frame.lines, range(first, last + 1), self._selected_span)
        self.painted = frame
        cursor = frame.cursor
        if cursor.visible and not self._scrolled:
            rect = QRect(
                cursor.column * self._cell_w, cursor.row * self._cell_h, self._cell_w, self._cell_h
            )
            if self.hasFocus():
                painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Difference)
                painter.fillRect(rect, QColor(TERMINAL_CURSOR))
                painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceOver)
            else:
                painter.setPen(DEFAULT_FG)
                painter.drawRect(rect.adjusted(0, 0, -1, -1))
        if self._scrolled:
            painter.setPen(QColor(TERMINAL_SEARCH_HIT))
            painter.drawText(
                self.rect().adjusted(0, SPACE_2XS, -SPACE_S, 0),
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop,
                f"↑ {self._scrolled} lines back",
            )
        painter.end()

    def _offscreen_frame(self, painter: QPainter) -> Frame | None:
        """Draw the reader's image of the live screen, with the selection over it; None
        when there is none to draw (scrolled back, resized, no reader)."""
        rendered = self._offscreen
        if rendered is None or self._scrolled or not self.live:
            return None
        frame, image, size, ratio = rendered
        if size != self.size() or ratio != self.devicePixelRatioF():
            return None
        painter.drawImage(0, 0, image)
        ordered = self._ordered_selection()
        if ordered is not None:
            shade = QColor(SELECTION_BG)
            shade.setAlpha(150)
            for row in range(ordered[0][0], ordered[1][0] + 1):
                span = self._selected_span(row)
                if span is not None and span[1] > span[0]:
                    painter.fillRect(
                        span[0] * self._cell_w,
                        row * self._cell_h,
                        (span[1] - span[0]) * self._cell_w,
                        self._cell_h,
                        shade,
                    )
        return frame

    def render_offscreen(self, frame: Frame) -> None:
        """On the reader thread: render a freshly prepared live frame for the next paint."""
        size, ratio = self._geometry
        if size.isEmpty() or frame.scrolled:
            return
        image = self._thread_painter.render(frame, size.width(), size.height(), ratio)
        self._offscreen = (frame, image, size, ratio)

    def _current_frame(self) -> Frame:
        screen = self.emulator
        if self._scrolled:
            self._scrolled = min(self._scrolled, screen.history_size())
        if not self._scrolled:
            latest = screen.latest_frame()
            # While the reader runs it prepares the next frame after its next batch.
            if latest is not None and (self.live or latest.generation == screen.generation):
                return latest
        return screen.frame(self._scrolled)

    # -- keyboard ------------------------------------------------------------------------

    def event(self, event: QEvent) -> bool:
        # Keys belong to the program, not to the window's shortcuts, except the reserved
        # few (back to the chat, next pane, …) that make a way out of the terminal.
        if isinstance(event, QKeyEvent) and event.type() == QEvent.Type.ShortcutOverride:
            if not RESERVED_KEYS.matches(event):
                event.accept()
                return True
            return super().event(event)
        # Tab and Backtab belong to the program, not to focus navigation.
        if (
            isinstance(event, QKeyEvent)
            and event.type() == QEvent.Type.KeyPress
            and event.key() in (Qt.Key.Key_Tab, Qt.Key.Key_Backtab)
        ):
            self.keyPressEvent(event)
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        # Ctrl+C belongs to the program (SIGINT): copy and paste are Ctrl+Shift+C / V,
        # as in other terminals, and Shift+Insert pastes.
        mods = event.modifiers()
        shift_ctrl = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
        if mods & shift_ctrl == shift_ctrl and event.key() == Qt.Key.Key_C:
            self.copy_selection()
            return
        if (mods & shift_ctrl == shift_ctrl and event.key() == Qt.Key.Key_V) or (
            mods & Qt.KeyboardModifier.ShiftModifier and event.key() == Qt.Key.Key_Insert
        ):
            self.paste()
            return
        if mods & Qt.KeyboardModifier.ShiftModifier and event.key() in (
            Qt.Key.Key_PageUp,
            Qt.Key.Key_PageDown,
        ):
            step = self.emulator.rows - 1
            self.scroll_back(step if event.key() == Qt.Key.Key_PageUp else -step)
            return
        data = key_bytes(event.key(), mods, event.text(), self.emulator.app_cursor_keys)
        if data:
            self.send(data)
        else:
            super().keyPressEvent(event)

    def send(self, data: bytes) -> None:
        """Input typed by the person: jump back to the live screen and send it."""
        if self._scrolled:
            self._scrolled = 0
            self.mark_stale()
        self._selection = None
        self._write(data)

    def paste(self) -> None:
        text = QGuiApplication.clipboard().text()
        if text:
            self.send(paste_bytes(text, self.emulator.bracketed_paste))

    # -- scrollback ----------------------------------------------------------------------

    @property
    def scrolled(self) -> int:
        return self._scrolled

    def scroll_back(self, lines: int) -> None:
        """Positive: further into the scrollback; negative: towards the live screen."""
        target = max(0, min(self.emulator.history_size(), self._scrolled + lines))
        if target != self._scrolled:
            self._scrolled = target
            self.update()

    def wheelEvent(self, event: QWheelEvent) -> None:
        if self.emulator.alt_screen:
            # Full-screen programs scroll themselves: send arrows, as xterm does.
            arrow = b"\x1bOA" if self.emulator.app_cursor_keys else b"\x1b[A"
            down = b"\x1bOB" if self.emulator.app_cursor_keys else b"\x1b[B"
            steps = event.angleDelta().y() // 40
            self._write((arrow if steps > 0 else down) * min(10, abs(steps)))
            return
        self.scroll_back(event.angleDelta().y() // 40)

    # -- selection and copy -------------------------------------------------------------

    def _cell_at(self, point: QPoint) -> Cell:
        row = max(0, min(self.emulator.rows - 1, point.y() // self._cell_h))
        column = max(0, min(self.emulator.columns, round(point.x() / self._cell_w)))
        return row, column

    def mousePressEvent(self, event: QMouseEvent) -> None:
        self.setFocus()
        if event.button() == Qt.MouseButton.LeftButton:
            cell = self._cell_at(event.position().toPoint())
            self._selection = (cell, cell)
            self._selecting = True
            self.update()
        elif event.button() == Qt.MouseButton.MiddleButton:
            self.paste()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._selecting and self._selection is not None:
            self._selection = (self._selection[0], self._cell_at(event.position().toPoint()))
            self.update()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        self._selecting = False
        if self._selection is not None and self._selection[0] == self._selection[1]:
            self._selection = None
            self.update()

    def _ordered_selection(self) -> tuple[Cell, Cell] | None:
        if self._selection is None:
            return None
        start, end = sorted(self._selection)
        return start, end

    def _selected_span(self, row: int) -> tuple[int, int] | None:
        ordered = self._ordered_selection()
        if ordered is None:
            return None
        (top, left), (bottom, right) = ordered
        if not top <= row <= bottom:
            return None
        return (left if row == top else 0, right if row == bottom else self.emulator.columns)

    def selected_text(self) -> str:
        ordered = self._ordered_selection()
        if ordered is None:
            return ""
        (top, _), (bottom, _) = ordered
        lines: list[str] = []
        for row in range(top, bottom + 1):
            span = self._selected_span(row)
            assert span is not None
            text = self.emulator.line_text(row, self._scrolled)
            lines.append(_slice_cells(text, span[0], span[1]).rstrip())
        return "\n".join(lines)

    def select_all_visible(self) -> None:
        self._selection = ((0, 0), (self.emulator.rows - 1, self.emulator.columns))
        self.update()

    def copy_selection(self) -> None:
        text = self.selected_text()
        if text:
            QGuiApplication.clipboard().setText(text)

    def contextMenuEvent(self, event: object) -> None:
        menu = QMenu(self)
        copy = menu.addAction("Copy", self.copy_selection)
        copy.setEnabled(bool(self._selection))
        menu.addAction("Paste", self.paste)
        menu.addAction("Select screen", self.select_all_visible)
        pos = getattr(event, "globalPos", None)
        menu.exec(pos() if callable(pos) else self.mapToGlobal(QPoint(0, 0)))


def _slice_cells(text: str, start: int, end: int) -> str:
    """Characters of `text` covering cells [start, end), counting wide characters as two."""
    out: list[str] = []
    column = 0
    for char in text:
        width = 2 if is_wide(char) else 1
        if column >= end:
            break
        if column >= start:
            out.append(char)
        column += width
    return "".join(out)
