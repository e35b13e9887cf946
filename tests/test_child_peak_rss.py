"""The peak memory a bounded-memory test reads is the child's own, not the test's.

A child's ru_maxrss starts from its parent's high-water mark: exec records the resident
size of the address space it replaces, and a child forked (or vforked) from pytest
replaces pytest's. Late in a long run pytest holds hundreds of MB, so a naive reading
blamed melgui for pytest's memory.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tests.fakes.process_memory import run_measured

HELD = 300 * 1024 * 1024
SMALL_CHILD = 100 * 1024 * 1024


def test_a_small_child_reads_small_while_the_test_holds_a_lot(tmp_path: Path) -> None:
    held = bytearray(HELD)
    for offset in range(0, HELD, 4096):
        held[offset] = 1  # resident, not only reserved
    with (tmp_path / "out").open("wb") as out:
        code, peak = run_measured(
            [sys.executable, "-c", "pass"], dict(os.environ), out, out, bound=60
        )
    del held
    assert code == 0
    assert peak < SMALL_CHILD, f"peak {peak / 2**20:.0f} MB for `python -c pass`"
