"""What signals and the agents board cost.

- The terminal bell: the same coloured output (bells on some lines, a window title set
  every fourth screenful, as a shell prompt does) fed to two screens, one counting bells
  and one not, alternating, in the same run. Target: at most 5% slower.
- The agents board: redrawing it with 8 agents whose rows all changed, painted, as a
  stall in frames (the board redraws once per burst of events).

    python bench/bench_signals.py
"""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import budget  # noqa: E402  (bench/budget.py: the frame-budget table)
from PySide6.QtWidgets import QApplication  # noqa: E402

from melgui.core.terminal.screen import TerminalScreen  # noqa: E402
from melgui.desk.board.agents_board import AgentsBoard  # noqa: E402
from melgui.ui.board.board_view import BoardView  # noqa: E402
from tests.fakes.sessions import offline_session  # noqa: E402

ROUNDS = 15
MEGABYTES = 2
AGENTS = 8


class _NoBells:
    """The screen without bell counting: the reference."""

    def count(self, text: str) -> int:
        return 0


def _output(megabytes: int) -> list[bytes]:
    rng = random.Random(21)
    words = ["build", "test", "ok", "warning", "error", "src/app.py", "passed", "line"]
    chunks, size = [], 0
    while size < megabytes * 1_000_000:
        line = " ".join(rng.choice(words) for _ in range(12))
        colour = rng.choice(["\x1b[32m", "\x1b[33m", "\x1b[1;31m", ""])
        bell = rng.choice(["", "", "", "\x07"])
        title = rng.choice(["", "", "", "\x1b]0;make: step\x07"])  # as a prompt sets it
        chunk = (title + f"{colour}{line}\x1b[0m{bell}\r\n" * 40).encode()
        chunks.append(chunk)
        size += len(chunk)
    return chunks


def _feed(screen: TerminalScreen, chunks: list[bytes]) -> float:
    start = time.perf_counter()
    for chunk in chunks:
        screen.feed(chunk)
    return time.perf_counter() - start


def bench_bell() -> None:
    chunks = _output(MEGABYTES)
    with_bells, without = [], []
    for _ in range(ROUNDS):
        counting = TerminalScreen(120, 40)
        plain = TerminalScreen(120, 40)
        plain._bell = _NoBells()  # type: ignore[assignment]
        with_bells.append(_feed(counting, chunks))
        without.append(_feed(plain, chunks))
        assert counting.bells > 0 and plain.bells == 0
    ratio = min(with_bells) / min(without)
    print(
        f"terminal feed, {MEGABYTES} MB: {min(with_bells) * 1000:.0f} ms counting bells, "
        f"{min(without) * 1000:.0f} ms without: ratio {ratio:.3f}"
    )
    budget.report("terminal: feed with bell counting vs without", ratio, target=1.05)


def bench_board() -> None:
    app = QApplication.instance() or QApplication(sys.argv)
    board = AgentsBoard()
    sessions = [offline_session(source=f"worker {i}") for i in range(AGENTS)]
    for number, session in enumerate(sessions, 1):
        board.add(f"pane-{number}", f"Pane {number} · worker {number}: a task", session)
    view = BoardView(board)
    view.resize(900, 260)
    view.show()
    app.processEvents()
    stalls = []
    for turn in range(50):
        for number in range(1, AGENTS + 1):  # every row changes, as in a busy minute
            board.rename(f"pane-{number}", f"Pane {number} · worker {number}: step {turn}")
        start = time.perf_counter()
        view.refresh()
        app.processEvents()
        stalls.append(time.perf_counter() - start)
    worst = max(stalls) * 1000
    print(
        f"board redraw with {AGENTS} agents: median {sorted(stalls)[25] * 1000:.2f} ms, "
        f"worst {worst:.2f} ms"
    )
    budget.stall_row(f"board: redraw with {AGENTS} agents", worst)
    view.close()
    board.close()


if __name__ == "__main__":
    bench_bell()
    bench_board()
