"""What MCP servers offer the person beside tools: each prompt as a slash command
(`/mcp__server__prompt ARGS`, its arguments by position or `name=value`), each resource
under `@` as `server:uri` (read when picked, its text attached like a file). Both lists
follow the servers: a start, a stop, a list-changed notification.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable

from melgui.core.protocol.content import FilePart
from melgui.core.protocol.tools.mcp.naming import tool_name
from melgui.core.protocol.tools.mcp.view import McpProblem, McpView, PromptRow, ServerRow
from melgui.core.protocol.views.fuzzy_match import fuzzy_rank
from melgui.core.protocol.views.prompt_source import PromptSource
from melgui.core.protocol.views.slash_commands import SlashCommand
from melgui.ui.runtime.aio import TaskKeeper

ORIGIN = "mcp"


def usage(prompt: PromptRow) -> str:
    """ "<path> [focus]": required arguments in angle brackets, optional in square."""
    return " ".join(f"<{a.name}>" if a.required else f"[{a.name}]" for a in prompt.arguments)


def prompt_arguments(prompt: PromptRow, text: str) -> tuple[dict[str, str], str]:
    """What was typed after the command as the prompt's arguments, or a one-line problem.
    `name=value` names one; other words fill the arguments in order, the last taking
    the rest of the line."""
    declared = [a.name for a in prompt.arguments]
    try:
        words = shlex.split(text)
    except ValueError as exc:
        return {}, f"cannot read the arguments: {exc}"
    named: dict[str, str] = {}
    loose: list[str] = []
    for word in words:
        key, equals, value = word.partition("=")
        if equals and key in declared:
            named[key] = value
        else:
            loose.append(word)
    free = [name for name in declared if name not in named]
    if len(loose) > len(free) and free:
        loose = [*loose[: len(free) - 1], " ".join(loose[len(free) - 1 :])]
    elif loose and not free:
        return {}, f"/{prompt.name} takes no more arguments: {' '.join(loose)}"
    named.update(zip(free, loose, strict=False))
    missing = [a.name for a in prompt.arguments if a.required and a.name not in named]
    if missing:
        return {}, f"missing {', '.join(missing)}: {usage(prompt)}"
    return named, ""


class McpOffers:
    """Keeps the kit's `/mcp__…` commands and `@server:uri` list in step with the servers."""

    def __init__(
        self,
        view: McpView,
        kit: PromptSource,
        tasks: TaskKeeper,
        send: Callable[[str], None],
        say: Callable[[str], None],
    ) -> None:
        self.view = view
        self.kit = kit
        self.tasks = tasks
        self.send = send  # a prompt's text, as the person's next message
        self.say = say  # a note under the prompt box
        kit.mentions.append(self)
        self._unsubscribe = view.subscribe(self.refresh)
        self.refresh()

    def set_view(self, view: McpView) -> None:
        """Offer `view`'s prompts and resources from now on (the melgui host's)."""
        self._unsubscribe()
        self.view = view
        self._unsubscribe = view.subscribe(self.refresh)
        self.refresh()

    def _ready(self) -> list[ServerRow]:
        return [s for s in self.view.servers() if s.status == "ready"]

    # -- prompts as commands -------------------------------------------------------------

    def refresh(self) -> None:
        self.kit.commands.remove_origin(ORIGIN)
        taken: set[str] = set()
        for server in self._ready():
            for prompt in server.prompts:
                name = tool_name(server.name, prompt.name, taken)
                taken.add(name)
                summary = prompt.description or prompt.title or f"a prompt of {server.name}"
                self.kit.commands.add(
                    SlashCommand(
                        name,
                        f"{summary} (MCP server {server.name})",
                        self._runner(server.name, prompt),
                        ORIGIN,
                        usage(prompt),
                    )
                )

    def _runner(self, server: str, prompt: PromptRow) -> Callable[[str], str | None]:
        def run(text: str) -> None:
            arguments, problem = prompt_arguments(prompt, text)
            if problem:
                self.say(problem)
                return
            self.tasks.spawn(self._fetch(server, prompt.name, arguments), what="getting a prompt")

        return run

    async def _fetch(self, server: str, name: str, arguments: dict[str, str]) -> None:
        try:
            text = await self.view.get_prompt(server, name, arguments)
        except McpProblem as exc:
            self.say(f"The prompt could not be had: {exc}.")
            return
        self.send(text)

    # -- resources under @ ---------------------------------------------------------------

    def _values(self) -> list[str]:
        return [f"{s.name}:{r.uri}" for s in self._ready() for r in s.resources]

    def search(self, query: str, limit: int) -> list[str]:
        return fuzzy_rank(query, self._values(), limit)

    def owns(self, value: str) -> bool:
        return value in self._values()

    def pick(
        self, value: str, attach: Callable[[FilePart], None], fail: Callable[[str], None]
    ) -> None:
        server, _, uri = value.partition(":")

        async def read() -> None:
            try:
                part = await self.view.read_resource(server, uri)
            except McpProblem as exc:
                fail(f"{value} could not be read: {exc}")
                return
            attach(part)

        self.tasks.spawn(read(), what="reading an MCP resource")
