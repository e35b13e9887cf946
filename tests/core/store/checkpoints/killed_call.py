"""A process that takes the checkpoint before a call, starts changing files and waits to
be killed with SIGKILL by test_kill.py (the snapshot is in, the result never comes).

    python -m tests.core.store.checkpoints.killed_call FOLDER DATA_FOLDER
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from melgui.core.store.checkpoints.checkpointer import Checkpointer


async def run(folder: str, data: str) -> None:
    checkpoints = Checkpointer(folder, data_folder=Path(data))
    async with checkpoints.guard("k1", "run_command", "long job", source="main"):
        (Path(folder) / "half.txt").write_text("half way\n")
        (Path(folder) / "src" / "app.py").write_text("changed before the kill\n")
        print("ready", flush=True)
        await asyncio.sleep(120)


if __name__ == "__main__":
    asyncio.run(run(sys.argv[1], sys.argv[2]))
