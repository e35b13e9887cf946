"""How long the tests' waits on a condition took against their timeouts, when
MELGUI_WAIT_LOG names a file (`python -m tests.ui.under_load` sets it): a wait that takes
most of its timeout under load is the one that fails next.

Each line: share of the timeout used, seconds waited, the timeout, met or not, where the
test waited (file:line), and the test.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import FrameType

_TESTS = Path(__file__).resolve().parents[1]
_HELPERS = {  # where waits are made, not asked for: the caller's line is named instead
    str(Path(__file__).resolve()),
    str(_TESTS / "fakes" / "window.py"),
    str(_TESTS / "ui" / "conftest.py"),
}
NOTED_FROM_S = 0.5  # quicker waits are not written: no wait that short is at risk


def note_wait(elapsed: float, timeout: float, met: bool) -> None:
    path = os.environ.get("MELGUI_WAIT_LOG")
    if not path or (met and elapsed < NOTED_FROM_S):
        return
    where = "?"
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:  # the first line of a test's own file up the stack
        name = frame.f_code.co_filename
        if name.startswith(str(_TESTS)) and (where == "?" or name not in _HELPERS):
            where = f"{os.path.relpath(name, _TESTS.parent)}:{frame.f_lineno}"
            if name not in _HELPERS:
                break
        frame = frame.f_back
    test = os.environ.get("PYTEST_CURRENT_TEST", "?").split(" ")[0]
    share = elapsed / timeout if timeout > 0 else 0.0
    fields = [f"{share:.2f}", f"{elapsed:.2f}", f"{timeout:g}", "met" if met else "TIMED OUT"]
    with open(path, "a", encoding="utf-8") as out:
        out.write("\t".join([*fields, where, test]) + "\n")
