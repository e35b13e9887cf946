"""What the prompt box of a project folder uses: commands, prompt history, the file index."""

from __future__ import annotations

from pathlib import Path

from melgui.core.protocol.content import FilePart
from melgui.core.protocol.transport import ModelInfo
from melgui.core.protocol.views.prompt_source import Mentions
from melgui.core.protocol.views.slash_commands import SlashCommands
from melgui.desk.prompt.attachments import FileIndex, attach
from melgui.desk.prompt.custom_commands import load_custom_commands
from melgui.desk.prompt.history import PromptHistory


class PromptKit:
    """One per Desk (and one per ACP agent pane); `set_folder` follows a change of project
    folder. The prompt box reads it as a PromptSource (melgui.core.protocol.views)."""

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

    def attach(self, path: str) -> FilePart:
        """The part `@path` sends; raises ValueError with a sentence when it cannot be read."""
        return attach(self.folder, path)
