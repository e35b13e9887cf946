"""`melgui exec` as a real process, for tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def melgui_exec(
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 180,
    merged: bool = False,
    start_new_session: bool = False,
) -> subprocess.CompletedProcess[str]:
    """`merged`: stderr goes into the same pipe as stdout, in the order written.
    `start_new_session`: with no controlling terminal, as from a service or CI."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "melgui", "exec", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merged else subprocess.PIPE,
        text=True,
        timeout=timeout,
        env=environment,
        stdin=subprocess.DEVNULL,
        start_new_session=start_new_session,
    )


def json_lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]
