"""Tab among the prompt box, Send and Stop, and no further.

Left to Qt, Tab from Send went on into the inspector (its call list, which could select a
call and redraw the panes beside the chat). The composer's controls take turns instead;
Ctrl+Tab and the View menu move between the chat and the rest of the window.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import QApplication, QWidget


def tab_within(controls: Sequence[QWidget], forward: bool) -> bool:
    """Move the focus to the next (or previous) enabled control after the focused one;
    False when the focus is in none of them (Qt's own order applies then)."""
    focused = QApplication.focusWidget()
    if focused is None or focused not in controls:
        return False
    usable = [c for c in controls if (c.isEnabled() and c.isVisible()) or c is focused]
    step = 1 if forward else -1
    usable[(usable.index(focused) + step) % len(usable)].setFocus()
    return True
