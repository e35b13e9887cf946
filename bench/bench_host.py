"""The window as a view of `melgui host`: the same eight worker panes as bench_panes.py,
their sessions running in a real host process (its own interpreter, its own GIL) and the
window drawing only what the host sends, one batch per session per frame.

Rows "panes via host: ..." stand beside bench_panes.py's "panes: ..." (the same panes,
the sessions in the window's process), with the same targets.

    python bench/bench_host.py [--workers 8] [--deltas 500] [--rate 50]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import budget  # noqa: E402
from bench_panes import bench_workers  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from tests.fakes.host_process import HostProcess, runtime_dir  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--deltas", type=int, default=500)
    parser.add_argument("--rate", type=float, default=50.0, help="deltas per second per worker")
    args = parser.parse_args()
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    with tempfile.TemporaryDirectory() as data, runtime_dir() as runtime:
        os.environ["MELGUI_DATA_DIR"] = data  # the host's journal and history: thrown away
        os.environ["MELGUI_CONFIG_DIR"] = os.path.join(data, "config")
        host = HostProcess(runtime).start()
        try:
            bench_workers(app, args.workers, args.deltas, 1 / args.rate, host=host)
            bench_workers(app, args.workers, args.deltas, 0.0, host=host)
        finally:
            host.stop()
    return budget.verdict()


if __name__ == "__main__":
    raise SystemExit(main())
