"""The contract between the agent loop and whatever executes tools (a call's outcome, with
the rich parts a person sees besides its text), and the steps around a call: hooks
(commands the person or a trusted project configured, in Claude Code's settings format,
`core/hooks`), whose every run is kept as a `HookRun` and travels with the call's events
(`ToolCallFinished.hooks`), so the call's card and the inspector show which hook ran, for
how long, what it printed, whether it failed or timed out.

`CallHooks` is what the loop needs: before a call (which may allow, deny, ask or rewrite
the arguments), when it would ask the person (which may answer for them), and after it
(which may add text to the result). `core/hooks` implements
it; the loop imports only this protocol."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.judgement import Verdict

# Rich pieces of a tool result, for people: what the inspector shows besides the text.
#
# The model gets a ToolOutcome's `content` (text); tools whose results carry more (an MCP
# server's images, resource links, embedded resources, structured content) add parts so
# the inspector can render them. Parts are never sent to the model and never stored.
PartKind = Literal["text", "image", "audio", "resource_link", "resource", "structured"]


@dataclass(frozen=True, slots=True)
class ResultPart:
    """One piece of a result.

    - text: `text`.
    - image / audio: `data` (base64) and `mime_type`.
    - resource_link: `uri`, `text` (its name and description), `mime_type`.
    - resource: an embedded resource: `uri`, `mime_type`, and `text` or `data` (base64).
    - structured: `text` is the JSON of the structured content.
    """

    kind: PartKind
    text: str = ""
    data: str = ""
    mime_type: str = ""
    uri: str = ""


OutcomeStatus = Literal["ok", "error"]


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """A finished call: the text the model gets back, and whether it succeeded.

    `parts` are what a person sees besides the text (images, resources; see ResultPart).
    """

    content: str
    status: OutcomeStatus = "ok"
    parts: tuple[ResultPart, ...] = ()

    @classmethod
    def error(cls, message: str) -> ToolOutcome:
        return cls(message, "error")


class ToolError(Exception):
    """Raised by a tool handler for an expected failure; the message goes to the model."""


ToolHandler = Callable[[dict[str, Any]], Awaitable[ToolOutcome]]


class ToolRunner(Protocol):
    """Runs one call whose JSON arguments already parsed to an object."""

    def knows(self, name: str) -> bool: ...

    async def run(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        """Run the tool. Cancellation (asyncio.CancelledError) must stop it promptly."""
        ...


# A call's summary when its folder is to be checkpointed around it, else None.
CheckpointThere = Callable[[str, dict[str, Any]], str | None]


@runtime_checkable
class RunsThere(Protocol):
    """A ToolRunner whose calls run on another machine, whose host checkpoints the folder
    there around each call `checkpoint` gives a summary for (the desk sets it)."""

    checkpoint: CheckpointThere | None


@runtime_checkable
class RestoresThere(Protocol):
    """A ToolRunner whose host puts back, from its checkpoints there, what calls (the
    model's ids) changed in its folder: a remote folder's rewind (docs/host-protocol.md)."""

    async def restore_checkpoints(
        self, calls: list[str], plan_only: bool, choices: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """`{restored, files, conflicts, skipped}`; with `plan_only`, touch nothing (and
        `versions`: each conflict's three versions as text); `choices`: per conflicting
        path, "before", "agent" or "now" (the default)."""
        ...

    async def ask_there(self, method: str, **params: Any) -> dict[str, Any]:
        """A method of the host there about its folder (`checkpoint/calls`,
        `checkpoint/diff`, `checkpoint/restore` with `records`, `changes/uncommitted`):
        a remote folder's call cards and Changes view. Raises
        melgui.remote.link.LinkError when the host cannot be asked."""
        ...


class ToolInContext(Protocol):
    """A tool that runs in a context (melgui.core.protocol.tools.definition.Tool is one)."""

    @property
    def name(self) -> str: ...

    async def run(self, context: Any, arguments: dict[str, Any]) -> ToolOutcome: ...


class ToolRegistry:
    """A ToolRunner: built-in tools, each with where it finds its context, and plain
    handlers by name (an MCP server's tools)."""

    def __init__(self, handlers: dict[str, ToolHandler] | None = None) -> None:
        self._handlers: dict[str, ToolHandler] = dict(handlers or {})
        self._tools: dict[str, tuple[ToolInContext, Callable[[], Any]]] = {}

    def register(self, name: str, handler: ToolHandler) -> None:
        self._tools.pop(name, None)
        self._handlers[name] = handler

    def add(self, tool: ToolInContext, context: Callable[[], Any]) -> None:
        """`tool` runs in whatever `context()` gives at the time of each call (a desk's
        current workspace and settings)."""
        self._handlers.pop(tool.name, None)
        self._tools[tool.name] = (tool, context)

    def knows(self, name: str) -> bool:
        return name in self._handlers or name in self._tools

    def names(self) -> list[str]:
        return sorted([*self._handlers, *self._tools])

    async def run(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        try:
            if name in self._tools:
                tool, context = self._tools[name]
                return await tool.run(context(), arguments)
            handler = self._handlers.get(name)
            if handler is None:
                return ToolOutcome.error(f"Unknown tool {name!r}.")
            return await handler(arguments)
        except ToolError as exc:
            return ToolOutcome.error(str(exc))


# The call a handler runs for, as (source, call id, tool name); the loop sets it around a
# tool's run, so a tool that hears back later (an MCP server asking for input, reporting
# progress) can say which call it is about.
RUNNING_CALL: ContextVar[tuple[str, str, str] | None] = ContextVar("running_call", default=None)


HookEvent = Literal[
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "Notification",
]
HEADLINE_COMMAND = 48  # characters of a hook's command in its one-line headline


@dataclass(frozen=True, slots=True)
class HookRun:
    """One hook command run once."""

    event: HookEvent
    command: str
    origin: str  # the file it came from, as the person knows it ("~/.claude/settings.json")
    matcher: str = ""
    duration: float = 0.0  # seconds
    exit_code: int | None = None  # None: it did not start, or it was killed at the timeout
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    problem: str = ""  # why it failed, in words ("" when it ran and answered)
    effect: str = ""  # what it did to the call, in words ("denied: …", "rewrote the input")

    @property
    def failed(self) -> bool:
        return bool(self.problem)

    def headline(self) -> str:
        """One line for a card: the event, the command, its time and its effect."""
        what = self.problem or self.effect or "ran"
        command = " ".join(self.command.split())
        if len(command) > HEADLINE_COMMAND:
            command = command[: HEADLINE_COMMAND - 1] + "…"
        return f"{self.event} hook `{command}` · {self.duration * 1000:.0f} ms · {what}"


@dataclass(frozen=True, slots=True)
class BeforeCall:
    """What the hooks before a call decided: a verdict (None: they left it to the rules),
    its reason, the arguments to run with, and the runs."""

    verdict: Verdict | None = None
    reason: str = ""
    arguments: Mapping[str, Any] | None = None  # rewritten arguments; None: unchanged
    runs: tuple[HookRun, ...] = ()


@dataclass(frozen=True, slots=True)
class AfterCall:
    """Text the steps after a call add to its result (each labelled by its step: a
    PostToolUse hook, the language server's diagnostics), the hook runs, and lines for
    the call's card."""

    context: str = ""
    runs: tuple[HookRun, ...] = field(default_factory=tuple)
    notes: tuple[str, ...] = ()


class CallHooks(Protocol):
    async def before_call(self, call: ToolCall, arguments: dict[str, Any]) -> BeforeCall: ...

    async def permission_request(self, call: ToolCall, arguments: dict[str, Any]) -> BeforeCall:
        """The call would ask the person: allow or deny on their behalf (None: ask)."""
        ...

    async def after_call(
        self, call: ToolCall, arguments: dict[str, Any], status: str, content: str
    ) -> AfterCall: ...
