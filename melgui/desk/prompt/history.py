"""Prompts a person sent in a project folder, newest last, kept across restarts.

One small JSON file per folder in the data folder (`prompts/<hash>.json`), written
atomically after each prompt; Up and Down in the prompt box walk it (HistoryCursor,
melgui.core.protocol.views.prompt_source).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

from melgui.core.config.digests import sha256_hex
from melgui.core.config.settings import data_dir

MAX_PROMPTS = 500
MAX_PROMPT_CHARS = 20_000  # a pasted log is not worth recalling whole


def history_path(folder: str, base: Path | None = None) -> Path:
    key = sha256_hex(str(Path(folder).resolve()).encode())[:24]
    return (base or data_dir()) / "prompts" / f"{key}.json"


class PromptHistory:
    """The folder's earlier prompts; unreadable files start an empty history."""

    def __init__(self, folder: str, base: Path | None = None) -> None:
        self.path = history_path(folder, base)
        self.prompts: list[str] = self._read()

    def _read(self) -> list[str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        prompts = data.get("prompts") if isinstance(data, dict) else None
        return [p for p in prompts if isinstance(p, str)] if isinstance(prompts, list) else []

    def add(self, prompt: str) -> None:
        """Remember `prompt` (once: an earlier copy moves to the end). OSError is swallowed:
        losing a history line must never stop a message from being sent."""
        if not prompt.strip() or len(prompt) > MAX_PROMPT_CHARS:
            return
        if prompt in self.prompts:
            self.prompts.remove(prompt)
        self.prompts.append(prompt)
        del self.prompts[:-MAX_PROMPTS]
        with contextlib.suppress(OSError):
            self._write()

    def _write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=self.path.parent, prefix=".prompts-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"prompts": self.prompts}, handle, ensure_ascii=False)
            os.replace(temp, self.path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
