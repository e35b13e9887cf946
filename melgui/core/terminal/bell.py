"""A terminal's bell: BEL (0x07) in a program's output, except where BEL ends an OSC
sequence (`ESC ] 0 ; title BEL` sets the window title and rings nothing).

Chunking does not matter: an OSC sequence or its ESC split across two reads is still
recognised. Output without OSC sequences costs one C-speed scan and count.
"""

from __future__ import annotations

import re

BEL = "\x07"
_OSC = "\x1b]"
# Where an OSC sequence ends: BEL or ST (ESC \); any other ESC aborts it (not consumed).
_OSC_END = re.compile(r"[^\x07\x1b]*(?:\x07|\x1b\\|(?=\x1b.))", re.DOTALL)


class BellCounter:
    """Counts the bells in text fed to it piece by piece."""

    def __init__(self) -> None:
        self._in_osc = False
        self._esc_pending = False  # the last piece ended in ESC

    def count(self, text: str) -> int:
        if self._esc_pending:
            text = "\x1b" + text
            self._esc_pending = False
        bells = 0
        at = 0
        if self._in_osc:
            at = self._after_osc(text, 0)
            if at < 0:
                return 0
        if BEL not in text:
            # No bell, no OSC ended by one. Only the last ESC can open an OSC that goes on
            # (any earlier one was ended or cut short by a later ESC).
            last = text.rfind("\x1b", at)
            if last >= 0 and text.startswith(_OSC, last):
                self._after_osc(text, last + len(_OSC))
            else:
                self._esc_pending = last >= 0 and last == len(text) - 1
            return 0
        while True:  # one turn per OSC sequence: usually none, and one C-speed count
            osc = text.find(_OSC, at)
            if osc < 0:
                self._esc_pending = text.endswith("\x1b")
                return bells + text.count(BEL, at)
            bells += text.count(BEL, at, osc)
            at = self._after_osc(text, osc + len(_OSC))
            if at < 0:
                return bells

    def _after_osc(self, text: str, start: int) -> int:
        """Where the OSC sequence open at `start` ends, or -1 when it goes on."""
        end = _OSC_END.match(text, start)
        if end is None:
            self._in_osc = True
            self._esc_pending = text.endswith("\x1b")  # maybe the first half of ST
            return -1
        self._in_osc = False
        return end.end()
