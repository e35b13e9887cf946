"""The reader thread: real programs in real ptys, interpreted off the caller's thread."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from pathlib import Path

from melgui.core.terminal.pty_session import PtySession
from melgui.core.terminal.reader import PtyReader
from melgui.core.terminal.screen import TerminalScreen


class Watch:
    """Counts the reader's news and lets a test wait for a condition on them."""

    def __init__(self) -> None:
        self.news = 0
        self._changed = threading.Condition()

    def notify(self) -> None:
        with self._changed:
            self.news += 1
            self._changed.notify_all()

    def until(self, reader: PtyReader, check: Callable[[], bool], timeout: float = 20.0) -> None:
        with self._changed:
            while not check():
                reader.acknowledge()
                assert self._changed.wait(timeout), "the reader went quiet"
        reader.acknowledge()


def run(
    argv: list[str], tmp_path: Path, columns: int = 80, rows: int = 24
) -> tuple[PtySession, TerminalScreen, Watch, PtyReader]:
    pty = PtySession(argv, cwd=tmp_path, columns=columns, rows=rows)
    screen = TerminalScreen(columns, rows)
    watch = Watch()
    reader = PtyReader(pty, screen, watch.notify)
    reader.start()
    return pty, screen, watch, reader


def test_a_flood_is_read_whole_and_the_exit_comes_after_the_last_line(tmp_path: Path) -> None:
    lines = 60_000
    pty, screen, watch, reader = run(["seq", "1", str(lines)], tmp_path)
    try:
        watch.until(reader, lambda: reader.exit_code is not None)
        size = sum(len(f"{n}\r\n") for n in range(1, lines + 1))
        assert reader.fed == screen.bytes_fed == size
        assert reader.exit_code == 0
        assert screen.screen_text().endswith(str(lines))
        frame = screen.latest_frame()  # prepared by the reader, with the last line in it
        assert frame is not None and frame.generation == screen.generation
        assert any(run.text.startswith(str(lines)) for row in frame.lines for run in row)
        assert watch.news < lines  # news are coalesced, not one per read
    finally:
        reader.stop()
        pty.close(0.2)
    assert not reader.running


def test_an_exit_is_seen_while_a_background_job_keeps_the_terminal(tmp_path: Path) -> None:
    pty, screen, watch, reader = run(
        ["sh", "-c", "trap '' HUP; sleep 30 & echo before; exit 3"], tmp_path
    )
    try:
        watch.until(reader, lambda: reader.exit_code is not None)
        assert reader.exit_code == 3 and not reader.eof
        assert "before" in screen.text()
    finally:
        reader.stop()
        pty.close(0.2)
    assert not reader.running


def test_queries_are_told_at_once_so_the_answer_can_be_written(tmp_path: Path) -> None:
    script = "printf '\\033[6n'; read -r answer; echo got-${#answer}"
    pty, screen, watch, reader = run(["bash", "--norc", "-c", script], tmp_path)
    try:
        watch.until(reader, lambda: screen.replies_owed)
        pty.write(screen.take_replies() + b"\r")
        watch.until(reader, lambda: "got-" in screen.text())
    finally:
        reader.stop()
        pty.close(0.2)


def test_stop_ends_the_thread_of_a_program_still_running(tmp_path: Path) -> None:
    pty, _screen, _watch, reader = run(["sleep", "30"], tmp_path)
    reader.stop()
    assert not reader.running
    reader.stop()  # again: harmless
    pty.close(0.2)


def test_feeding_waits_while_someone_has_priority() -> None:
    screen = TerminalScreen(20, 4)
    with screen.priority():
        feeder = threading.Thread(target=screen.feed_slices, args=(b"x" * 100, 10))
        feeder.start()
        feeder.join(0.2)
        assert feeder.is_alive() and screen.bytes_fed == 0
    feeder.join(10)
    assert not feeder.is_alive() and screen.bytes_fed == 100


def test_frames_reuse_unchanged_rows_and_always_match_the_screen() -> None:
    rng = random.Random(3)
    screen = TerminalScreen(30, 8)
    pieces = [
        b"plain words ",
        b"\x1b[31mred\x1b[0m ",
        b"\x1b[1;38;5;200mbold\x1b[0m",
        b"\x1b[4;38;2;1;2;3mrgb\x1b[0m",
        "日本".encode(),
        b"\r\n",
        b"\x1b[H",
        b"\x1b[3;5H",
        b"\x1b[2K",
        b"\x1b[?1049h",
        b"\x1b[?1049l",
        b"\x1b[7minverse\x1b[27m",
        b"\x1b[44m  \x1b[0m",
    ]
    for step in range(400):
        screen.feed(b"".join(rng.choice(pieces) for _ in range(rng.randint(1, 6))))
        if step % 97 == 0:
            screen.resize(rng.randint(10, 40), rng.randint(3, 10))
        if step % 3 == 0:
            prepared = screen.prepare_frame()
            assert prepared.lines == screen.visible_lines()
            assert prepared.cursor == screen.cursor
        assert screen.frame().lines == screen.visible_lines()
