"""What an ACP agent offers besides the chat: modes, models, commands, usage, auth methods.

The pane's pickers and `/` menu read it; `listen` tells them when it changed. `to_json`
and `take_json` carry it from the melgui host that runs the agent to a view's pane.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Choice:
    id: str
    name: str
    description: str = ""


@dataclass
class AgentState:
    name: str
    title: str = ""
    agent_info: str = ""  # "opencode 0.9.1"
    session_id: str = ""
    can_load: bool = False  # session/load: reopened with its history replayed
    can_resume: bool = False  # session/resume: reopened without it
    modes: list[Choice] = field(default_factory=list)
    mode: str = ""
    model_option: str = ""  # the config option id that picks the model ("" when none)
    models: list[Choice] = field(default_factory=list)
    model: str = ""
    commands: list[Choice] = field(default_factory=list)
    plan: list[tuple[str, str]] = field(default_factory=list)
    used: int | None = None  # context tokens in use, and the window, when reported
    size: int | None = None
    auth_methods: list[Choice] = field(default_factory=list)
    _listeners: list[Callable[[], None]] = field(default_factory=list, repr=False)

    def listen(self, listener: Callable[[], None]) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def changed(self) -> None:
        for listener in list(self._listeners):
            try:
                listener()
            except Exception:
                log.exception("agent state listener failed")

    def set_modes(self, state: Any) -> None:
        if state is None:
            return
        self.modes = [
            Choice(m.id, m.name, m.description or "") for m in state.available_modes
        ]  # fmt: skip
        self.mode = state.current_mode_id
        self.changed()

    def set_mode(self, mode_id: str) -> None:
        self.mode = mode_id
        self.changed()

    def set_config(self, options: list[Any] | None) -> None:
        """Config options: the one of category "model" (or id "model") is the model picker."""
        for option in options or []:
            root = getattr(option, "root", option)
            if getattr(root, "type", "") != "select":
                continue
            if getattr(root, "category", None) != "model" and root.id != "model":
                continue
            self.model_option = root.id
            self.model = str(root.current_value)
            self.models = [
                Choice(str(o.value), o.name, o.description or "") for o in _flat(root.options)
            ]
        self.changed()

    def set_model(self, value: str) -> None:
        self.model = value
        self.changed()

    def set_commands(self, commands: list[tuple[str, str]]) -> None:
        self.commands = [Choice(name, name, description) for name, description in commands]
        self.changed()

    def set_plan(self, entries: list[tuple[str, str]]) -> None:
        self.plan = entries
        self.changed()

    def set_usage(self, used: int, size: int) -> None:
        self.used, self.size = used, size
        self.changed()

    def set_title(self, title: str) -> None:
        self.title = title
        self.changed()

    def to_json(self) -> dict[str, Any]:
        """What a view's copy takes (`take_json`); each choice as [id, name, description]."""
        said: dict[str, Any] = {name: getattr(self, name) for name in _PLAIN}
        for name in _CHOICES:
            said[name] = [[c.id, c.name, c.description] for c in getattr(self, name)]
        said["plan"] = [list(entry) for entry in self.plan]
        return said

    def take_json(self, said: dict[str, Any]) -> None:
        """A copy takes the state `to_json` gave; its listeners are told once."""
        for name in _PLAIN:
            value = said.get(name)
            if name in ("used", "size"):
                setattr(self, name, value if isinstance(value, int) else None)
            elif name in ("can_load", "can_resume"):
                setattr(self, name, bool(value))
            else:
                setattr(self, name, str(value or ""))
        for name in _CHOICES:
            given = said.get(name) or []
            setattr(self, name, [Choice(str(c[0]), str(c[1]), str(c[2])) for c in given])
        if "plan" in said:  # the host's `agent` record leaves it out: a `plan` record says it
            self.plan = [(str(e[0]), str(e[1])) for e in said["plan"] or []]
        self.changed()


_PLAIN = ("name", "title", "agent_info", "session_id", "can_load", "can_resume", "mode",
          "model", "model_option", "used", "size")  # fmt: skip
_CHOICES = ("modes", "models", "commands", "auth_methods")


def _flat(options: Any) -> list[Any]:
    """Select options, whether flat or in groups."""
    found: list[Any] = []
    for item in getattr(options, "root", options) or []:
        inner = getattr(item, "root", item)
        if hasattr(inner, "options"):
            found.extend(getattr(o, "root", o) for o in inner.options)
        else:
            found.append(inner)
    return found


class AgentFailed(Exception):
    """The agent died, hung, or answered with something unusable; the text says what."""


class AuthRequired(Exception):
    """The agent wants `authenticate` first; `methods` are what it offers."""

    def __init__(self, methods: list[Choice]) -> None:
        names = ", ".join(m.name for m in methods) or "none offered"
        super().__init__(f"the agent asks to sign in first (methods: {names})")
        self.methods = methods
