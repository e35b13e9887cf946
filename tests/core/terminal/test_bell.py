"""The bell: BEL rings, BEL ending an OSC title does not, however the output is split."""

from __future__ import annotations

import pytest

from melgui.core.terminal.bell import BellCounter
from melgui.core.terminal.screen import TerminalScreen

OUTPUT = "a\x07b\x1b]0;title\x07c\x1b]2;other\x1b\\d\x07\x07e\x1b[1mf"


def test_bells_and_titles() -> None:
    counter = BellCounter()
    assert counter.count(OUTPUT) == 3
    assert counter.count("no bell here") == 0


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7])
def test_any_split_counts_the_same(size: int) -> None:
    counter = BellCounter()
    pieces = [OUTPUT[i : i + size] for i in range(0, len(OUTPUT), size)]
    assert sum(counter.count(piece) for piece in pieces) == 3


def test_the_screen_counts_bells_from_bytes() -> None:
    screen = TerminalScreen(20, 4)
    for byte in OUTPUT.encode():
        screen.feed(bytes([byte]))
    assert screen.bells == 3
    assert "d" in screen.screen_text() and "title" not in screen.screen_text()


def test_an_osc_cut_short_by_another_sequence_still_lets_bells_ring() -> None:
    counter = BellCounter()
    assert counter.count("\x1b]0;half a title\x1b[31mred\x07") == 1
    assert counter.count("\x1b]0;one\x1b]0;two\x07\x07") == 1
