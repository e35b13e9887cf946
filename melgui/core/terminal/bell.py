"""A terminal's bell: BEL (0x07) in a program's output, except where BEL ends an OSC
sequence (`ESC ] 0 ; title BEL` sets the window title and rings nothing).

Chunking does not matter: an OSC sequence or its ESC split across two reads is still
recognised.
"""

from __future__ import annotations

BEL = "\x07"
_OSC = "\x1b]"
_ST = "\x1b\\"


class BellCounter:
    """Counts the bells in text fed to it piece by piece."""

    def __init__(self) -> None:
        self._in_osc = False
        self._esc_pending = False  # the last piece ended in ESC

    def count(self, text: str) -> int:
        if self._esc_pending:
            text = "\x1b" + text
            self._esc_pending = False
        if not self._in_osc and BEL not in text and "\x1b" not in text:
            return 0  # the common case, at the speed of one scan
        bells = 0
        at = 0
        while at < len(text):
            if self._in_osc:
                at = self._end_of_osc(text, at)
                continue
            bel = text.find(BEL, at)
            osc = text.find(_OSC, at)
            if osc >= 0 and (bel < 0 or osc < bel):
                self._in_osc = True
                at = osc + len(_OSC)
            elif bel >= 0:
                bells += 1
                at = bel + 1
            else:
                break
        if not self._in_osc and text.endswith("\x1b"):
            self._esc_pending = True
        return bells

    def _end_of_osc(self, text: str, at: int) -> int:
        ends = [(i, n) for i, n in ((text.find(BEL, at), 1), (text.find(_ST, at), 2)) if i >= 0]
        if not ends:
            self._esc_pending = text.endswith("\x1b")  # maybe the start of ST
            return len(text)
        index, size = min(ends)
        self._in_osc = False
        return index + size
