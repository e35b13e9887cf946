"""What the prompt box asks of a project folder: its slash commands, its earlier prompts,
its files under `@` (and what else `@` offers), and a file's text to attach.

The desk's PromptKit (melgui.desk.prompt.kit) answers for a folder on this machine, for
the stand-in folder of a remote one and for an ACP agent's folder; an MCP server's
resources join `@` as Mentions. The window's widgets type against these and never build
one. HistoryCursor is the box's walk through the earlier prompts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from melgui.core.protocol.content import FilePart
from melgui.core.protocol.views.slash_commands import SlashCommands


class Mentions(Protocol):
    """More things `@` offers beside the project's files (an MCP server's resources)."""

    def search(self, query: str, limit: int) -> list[str]: ...

    def owns(self, value: str) -> bool: ...

    def pick(
        self, value: str, attach: Callable[[FilePart], None], fail: Callable[[str], None]
    ) -> None:
        """Attach `value` now or when it has been read; `fail` says why it cannot be."""


class FileSearch(Protocol):
    """The folder's files and folders (`dir/`) that match what follows `@`, best first."""

    def search(self, query: str, limit: int = 50) -> list[str]: ...


class PromptLog(Protocol):
    """The prompts a person sent in the folder, newest last."""

    @property
    def prompts(self) -> Sequence[str]: ...

    def add(self, prompt: str) -> None:
        """Remember `prompt`; never raises (a lost line must not stop a message)."""


class PromptSource(Protocol):
    """One prompt box's folder: what `/`, `@`, Up and Down and a chosen file offer."""

    @property
    def folder(self) -> str: ...

    @property
    def commands(self) -> SlashCommands: ...

    @property
    def history(self) -> PromptLog: ...

    @property
    def files(self) -> FileSearch: ...

    @property
    def mentions(self) -> list[Mentions]:
        """Others' `@` offers; one joins by appending itself."""

    def reload_commands(self) -> int:
        """Read the custom commands again; returns how many there are."""

    def refuses_images(self, model: str) -> bool:
        """True when the server's model list says `model` reads no images."""

    def attach(self, path: str) -> FilePart:
        """The part `@path` sends (relative to the folder, or absolute inside it); raises
        ValueError with a sentence when it cannot be read."""


PromptFor = Callable[[str], PromptSource]  # a folder's own source (an ACP agent pane's)


class HistoryCursor:
    """Walks a PromptLog from the newest prompt back; keeps the draft it left."""

    def __init__(self, history: PromptLog) -> None:
        self.history = history
        self.index: int | None = None  # position in history.prompts, None = the draft
        self.draft = ""

    def older(self, current: str) -> str | None:
        prompts = self.history.prompts
        if not prompts:
            return None
        if self.index is None:
            self.draft = current
            self.index = len(prompts)
        if self.index == 0:
            return None
        self.index -= 1
        return prompts[self.index]

    def newer(self) -> str | None:
        if self.index is None:
            return None
        self.index += 1
        if self.index >= len(self.history.prompts):
            self.index = None
            return self.draft
        return self.history.prompts[self.index]

    def reset(self) -> None:
        self.index = None
        self.draft = ""
