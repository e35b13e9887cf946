"""The window's own slash commands: /clear, /compact, /model, /role, /export, /help.

Registered into the desk's SlashCommands, beside the custom ones; other parts of the
app (compaction, MCP prompts, ACP agents) add theirs the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Protocol

from PySide6.QtWidgets import QComboBox, QFileDialog

from melgui.core.protocol.catalog import ROLES, Role
from melgui.desk.prompt.slash_commands import SlashCommand, SlashCommands
from melgui.ui.history.sidebar import HistorySidebar

if TYPE_CHECKING:
    from melgui.ui.runtime.theme import Colors


class ModelToolbar(Protocol):
    """What the commands use of the window's toolbar (ProjectToolbar is one)."""

    model_box: QComboBox

    def set_model(self, model: str) -> None: ...

    def set_role(self, role: Role) -> None: ...


class CommandHost(Protocol):
    """What the commands use of the main window."""

    chat: Any  # the window's ChatView (it holds this package: no import back)
    colors: Colors
    history: HistorySidebar

    @property
    def toolbar(self) -> ModelToolbar: ...

    def new_conversation(self) -> None: ...

    def set_model(self, model: str) -> None: ...

    def set_role(self, role: str) -> None: ...


def install_builtin_commands(window: CommandHost, commands: SlashCommands) -> None:
    def clear(_arguments: str) -> None:
        window.new_conversation()

    def model(arguments: str) -> None:
        if not arguments:
            window.toolbar.model_box.showPopup()
            return
        window.toolbar.set_model(arguments)
        window.set_model(arguments)
        window.chat.transcript.add_notice(f"Model: {arguments}", window.colors.muted)

    def role(arguments: str) -> None:
        chosen = next((name for name in ROLES if name == arguments), None)
        if chosen is None:
            window.chat.show_note(f"/role takes one of: {', '.join(ROLES)}.")
            return
        window.toolbar.set_role(chosen)
        window.set_role(arguments)
        window.chat.transcript.add_notice(f"Role: {arguments}", window.colors.muted)

    def export(arguments: str) -> None:
        fmt: Literal["markdown", "json"] = (
            "json" if arguments.strip().lower() in ("json", ".json") else "markdown"
        )
        history = window.history
        cid = history.current_id
        if cid is None:
            window.chat.show_note("Nothing to export yet: the conversation has no messages.")
            return
        suffix, kind = (".json", "JSON (*.json)") if fmt == "json" else (".md", "Markdown (*.md)")
        path, _ = QFileDialog.getSaveFileName(
            window.chat, "Export conversation", "conversation" + suffix, kind
        )
        if path and history.export_to(cid, path, fmt):
            window.chat.transcript.add_notice(f"Exported to {path}", window.colors.muted)

    def show_help(_arguments: str) -> None:
        for line in commands.help_text().splitlines():
            window.chat.transcript.add_notice(line, window.colors.muted)

    def compact(_arguments: str) -> None:  # the same as the status bar's Compact
        window.chat.bridge.compact()

    for command in (
        SlashCommand("clear", "Start a new conversation", clear),
        SlashCommand("compact", "Summarise the older conversation now (originals kept)", compact),
        SlashCommand("model", "Use another model (no id: open the list)", model, usage="[id]"),
        SlashCommand("role", f"Change the tool set: {', '.join(ROLES)}", role, usage="<role>"),
        SlashCommand("export", "Export this conversation", export, usage="[markdown|json]"),
        SlashCommand("help", "List the commands", show_help),
    ):
        commands.add(command)
