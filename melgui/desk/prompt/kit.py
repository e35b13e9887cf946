"""What the prompt box of a project folder uses: commands, prompt history, the file index."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from melgui.core.protocol.content import FilePart
from melgui.core.protocol.transport import ModelInfo
from melgui.core.protocol.views.slash_commands import SlashCommands
from melgui.desk.prompt.attachments import FileIndex
from melgui.desk.prompt.custom_commands import load_custom_commands
from melgui.desk.prompt.history import PromptHistory


class Mentions(Protocol):
    """More things `@` offers beside the project's files (an MCP server's resources)."""

    def search(self, query: str, limit: int) -> list[str]: ...

    def owns(self, value: str) -> bool: ...

    def pick(
        self, value: str, attach: Callable[[FilePart], None], fail: Callable[[str], None]
    ) -> None:
        """Attach `value` now or when it has been read; `fail` says why it cannot be."""


class PromptKit:
    """One per Desk; `set_folder` follows a change of project folder."""

    def __init__(self, folder: str, history_base: Path | None = None) -> None:
        self.commands = SlashCommands()
        self.models: dict[str, ModelInfo] = {}  # the server's list, when it was read
        self.mentions: list[Mentions] = []
        self._history_base = history_base
        self.set_folder(folder)

    def set_folder(self, folder: str) -> None:
        self.folder = folder
        self.history = PromptHistory(folder, self._history_base)
        self.files = FileIndex(folder)
        self.reload_commands()

    def refuses_images(self, model: str) -> bool:
        """True when the server's model list says `model` reads no images."""
        info = self.models.get(model)
        return info is not None and info.takes_images() is False

    def reload_commands(self) -> int:
        """Read the custom commands again (the list is opened: files may have changed)."""
        return load_custom_commands(self.commands, self.folder)
