"""The ACP sessions melgui opened, per project folder, so a pane can reopen one later.

An agent keeps its own history; melgui keeps only where to find it: the agent's name and
command, the folder, its session id, a title (the agent's, else the first prompt) and
when it was last used. Only sessions of agents that can load or resume them are kept.
The file is JSON in melgui's data folder, written atomically; a broken file reads empty.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from melgui.core.config.settings import data_dir

BOOK_FILE = "acp-sessions.json"
KEEP = 200  # sessions kept in all, the oldest forgotten first
_RECORDING = threading.Lock()  # every book of this process, one record at a time


@dataclass(frozen=True, slots=True)
class SessionEntry:
    agent: str  # the agent's name (acp:<agent>)
    command: str  # how it was started (shell words)
    folder: str
    session_id: str
    title: str = ""
    used: float = 0.0  # seconds since the epoch

    def label(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.used))
        return f"{self.agent} · {self.title or self.session_id} · {when}"


class SessionBook:
    """Earlier ACP sessions. Blocking file work: call it through asyncio.to_thread."""

    def __init__(self, path: Path | None = None, clock: Callable[[], float] = time.time) -> None:
        self.path = path or data_dir() / BOOK_FILE
        self.clock = clock

    def entries(self) -> list[SessionEntry]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            return [SessionEntry(**item) for item in raw]
        except (OSError, ValueError, TypeError):
            return []

    def for_folder(self, folder: str) -> list[SessionEntry]:
        """This folder's sessions, the latest used first."""
        found = [e for e in self.entries() if e.folder == folder]
        return sorted(found, key=lambda e: e.used, reverse=True)

    def record(self, entry: SessionEntry) -> None:
        """Add or refresh `entry` (by agent and session id), used now; a title once
        given is kept when a later record has none. Records are made in threads (off
        the event loop): one at a time, or two would read the same file and the later
        write would drop what the other added."""
        with _RECORDING:
            self._record(entry)

    def _record(self, entry: SessionEntry) -> None:
        kept = self.entries()
        old = next(
            (e for e in kept if (e.agent, e.session_id) == (entry.agent, entry.session_id)), None
        )
        title = entry.title or (old.title if old else "")
        kept = [e for e in kept if e is not old]
        kept.append(replace(entry, title=title, used=self.clock()))
        self._write(kept[-KEEP:])

    def _write(self, entries: list[SessionEntry]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(prefix=".acp-sessions-", dir=self.path.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump([asdict(e) for e in entries], out, indent=1)
            os.replace(temp, self.path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
