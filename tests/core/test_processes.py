"""How melgui starts a child in its own process group: one helper for commands and engines."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from melgui.core.runtime.processes import start_group

# Python ignores SIGINT for good when it starts with SIGINT ignored, else installs its own.
CHILD = (
    "import os, signal, sys\n"
    "from melgui.core.runtime.processes import signal_state\n"
    "print(os.getpid() == os.getsid(0) == os.getpgid(0), signal_state()['SigBlk'],\n"
    "      signal.getsignal(signal.SIGINT) is signal.SIG_IGN)\n"
    "print(repr(sys.stdin.read()), file=sys.stderr)\n"
)


async def test_child_leads_its_own_group_with_default_signals_and_no_stdin(
    tmp_path: Path,
) -> None:
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # inherited unless reset
    try:
        with open(tmp_path / "out.log", "wb") as out:
            proc = await start_group(
                [sys.executable, "-c", CHILD],
                cwd=tmp_path,
                env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
                output=out,
            )
            assert await proc.wait() == 0
    finally:
        signal.signal(signal.SIGINT, previous)
    assert (tmp_path / "out.log").read_text().splitlines() == ["True 0 False", "''"]


async def test_a_missing_program_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        await start_group([str(tmp_path / "nope")], cwd=tmp_path, env={}, output=-3)
