"""The emulator wrapper: styles, modes, scrollback and the text the model reads."""

from __future__ import annotations

from melgui.core.terminal.runs import RGB_FLAG
from melgui.core.terminal.screen import TerminalScreen


def test_styles_become_runs() -> None:
    screen = TerminalScreen(40, 5)
    screen.feed(b"a\x1b[1;31mB\x1b[0m\x1b[4;38;5;208mU\x1b[0m\x1b[38;2;1;2;3;48;5;4mR\x1b[7mI")
    runs = screen.visible_lines()[0]
    assert [run.text for run in runs[:5]] == ["a", "B", "U", "R", "I"]
    assert runs[1].style.bold and runs[1].style.fg == 1
    assert runs[2].style.underline and runs[2].style.fg == 208
    assert runs[3].style.fg == RGB_FLAG | 0x010203 and runs[3].style.bg == 4
    assert runs[4].style.inverse
    assert [run.column for run in runs[:5]] == [0, 1, 2, 3, 4]


def test_wide_characters_take_two_columns() -> None:
    screen = TerminalScreen(10, 2)
    screen.feed("日本x".encode())
    (run,) = screen.visible_lines()[0]
    assert run.text.startswith("日本x") and run.width == 10
    assert screen.cursor.column == 5


def test_utf8_split_across_reads() -> None:
    screen = TerminalScreen(10, 2)
    data = "héllo".encode()
    screen.feed(data[:2])
    screen.feed(data[2:])
    assert screen.screen_text() == "héllo"


def test_line_wrapping() -> None:
    screen = TerminalScreen(5, 3)
    screen.feed(b"abcdefgh")
    assert screen.screen_text() == "abcde\nfgh"


def test_alternate_screen_even_when_split_across_reads() -> None:
    screen = TerminalScreen(20, 4)
    screen.feed(b"main text\r\n")
    screen.feed(b"\x1b[?10")
    screen.feed(b"49h")
    assert screen.alt_screen
    screen.feed(b"\x1b[Hfull screen")
    assert screen.screen_text() == "full screen"
    screen.feed(b"\x1b[?1049l")
    assert not screen.alt_screen
    assert screen.screen_text() == "main text"


def test_modes_the_keyboard_needs() -> None:
    screen = TerminalScreen(20, 4)
    assert not screen.app_cursor_keys and not screen.bracketed_paste
    screen.feed(b"\x1b[?1h\x1b[?2004h")
    assert screen.app_cursor_keys and screen.bracketed_paste
    screen.feed(b"\x1b[?1l\x1b[?2004l")
    assert not screen.app_cursor_keys and not screen.bracketed_paste


def test_queries_are_answered() -> None:
    screen = TerminalScreen(20, 4)
    screen.feed(b"ab\r\ncd\x1b[6n")
    assert screen.take_replies() == b"\x1b[2;3R"
    screen.feed(b"\x1b[c")
    assert screen.take_replies().startswith(b"\x1b[?")
    assert screen.take_replies() == b""


def test_dirty_rows() -> None:
    screen = TerminalScreen(20, 4)
    assert screen.take_dirty() == {0, 1, 2, 3}  # a new screen is painted whole
    screen.feed(b"x")
    screen.take_dirty()
    screen.feed(b"\x1b[3;1Hx")
    assert screen.take_dirty() == {2}
    assert screen.take_dirty() == set()


def test_scrollback_and_text_dump() -> None:
    screen = TerminalScreen(20, 3, scrollback=100)
    screen.feed(b"".join(f"line {n}\r\n".encode() for n in range(10)))
    assert screen.history_size() == 8
    assert screen.screen_text() == "line 8\nline 9"
    assert screen.text(scrollback_lines=2) == "line 6\nline 7\nline 8\nline 9"
    assert screen.text().startswith("line 0\n")
    # Scrolled back two lines, the top row is two lines older.
    assert screen.line_text(0, scrolled=2).rstrip() == "line 6"
    assert [r[0].text.rstrip() for r in screen.visible_lines(scrolled=2)] == [
        "line 6",
        "line 7",
        "line 8",
    ]


def test_scrollback_is_capped() -> None:
    screen = TerminalScreen(20, 3, scrollback=50)
    screen.feed(b"".join(f"{n}\r\n".encode() for n in range(500)))
    assert screen.history_size() <= 50


def test_resize_keeps_text() -> None:
    screen = TerminalScreen(20, 4)
    screen.feed(b"hello")
    screen.resize(30, 6)
    assert (screen.columns, screen.rows) == (30, 6)
    assert screen.screen_text() == "hello"
    assert screen.take_dirty() == set(range(6))


def test_garbage_never_raises() -> None:
    screen = TerminalScreen(20, 4)
    screen.feed(bytes(range(256)) * 4)
    screen.feed(b"\x1b[999;999;999m\x1b[?99999h\x1b]0;title\x07\xff\xfe")
    assert isinstance(screen.text(), str)
