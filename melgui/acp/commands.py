"""The project's and the user's custom slash commands, offered to the ACP client.

The window's built-in commands (/clear, /model, …) act on the window and are not
offered; custom commands expand to a prompt, which works the same under a client.
"""

from __future__ import annotations

from acp.helpers import update_available_commands
from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    UnstructuredCommandInput,
)

from melgui.core.protocol.views.slash_commands import SlashCommands
from melgui.desk.prompt.custom_commands import load_custom_commands


class CustomCommands:
    def __init__(self, folder: str) -> None:
        self.registry = SlashCommands()
        load_custom_commands(self.registry, folder)

    def update(self) -> AvailableCommandsUpdate | None:
        """The commands as `available_commands_update`; None when there are none."""
        commands = [
            AvailableCommand(
                name=command.name,
                description=command.summary,
                input=AvailableCommandInput(
                    root=UnstructuredCommandInput(hint=command.usage or "arguments")
                ),
            )
            for command in self.registry.all()
        ]
        return update_available_commands(commands) if commands else None

    def expand(self, text: str) -> str:
        """`/name arguments` as the command's prompt; any other text as it is."""
        parsed = self.registry.parse(text)
        if parsed is None:
            return text
        command, arguments = parsed
        return command.run(arguments) or text
