"""The panes the orchestration tools drive, as plain data: ids, kinds, titles, states.

Qt-free so `list_panes` and the tests read the same model the window shows.
"""

from __future__ import annotations

import itertools
import signal
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

PaneKind = Literal["terminal", "agent"]
StateName = Literal["running", "waiting", "idle", "exited", "failed"]


@dataclass(frozen=True, slots=True)
class PaneState:
    """running, waiting (for approval), idle, exited (with its code), or failed (why)."""

    name: StateName
    exit_code: int | None = None
    detail: str = ""

    @property
    def label(self) -> str:
        if self.name == "waiting":
            return "waiting for approval"
        if self.name == "exited":
            return exit_label(self.exit_code)
        if self.name == "failed":
            return f"failed: {self.detail}" if self.detail else "failed"
        return self.name

    @property
    def ended(self) -> bool:
        return self.name in ("exited", "failed")


RUNNING = PaneState("running")
WAITING = PaneState("waiting")
IDLE = PaneState("idle")


def exited(code: int | None) -> PaneState:
    return PaneState("exited", code)


def failed(detail: str) -> PaneState:
    return PaneState("failed", detail=detail)


def exit_label(code: int | None) -> str:
    """ "exited 3", or "killed by SIGTERM" for a negative (signal) code."""
    if code is None:
        return "exited"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited {code}"


HERE = "this machine"


@dataclass(frozen=True, slots=True)
class PaneInfo:
    id: int
    kind: PaneKind
    title: str
    state: PaneState
    where: str = HERE  # the machine it runs on: a configured host's name, or this one

    def line(self) -> str:
        """One line of `list_panes`."""
        return f"{self.id}\t{self.kind}\t{self.title}\t{self.state.label}\t{self.where}"


Listener = Callable[[PaneInfo | None, int], None]  # (info or None when removed, pane id)


class PaneRegistry:
    """Every open pane by its stable integer id (ids are never reused in a session)."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._panes: dict[int, PaneInfo] = {}
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _changed(self, info: PaneInfo | None, pane_id: int) -> None:
        for listener in list(self._listeners):
            listener(info, pane_id)

    def add(
        self, kind: PaneKind, title: str, state: PaneState = RUNNING, where: str = HERE
    ) -> PaneInfo:
        info = PaneInfo(next(self._ids), kind, title, state, where)
        self._panes[info.id] = info
        self._changed(info, info.id)
        return info

    def get(self, pane_id: int) -> PaneInfo | None:
        return self._panes.get(pane_id)

    def set_state(self, pane_id: int, state: PaneState) -> None:
        info = self._panes.get(pane_id)
        if info is not None and info.state != state:
            self._panes[pane_id] = replace(info, state=state)
            self._changed(self._panes[pane_id], pane_id)

    def set_title(self, pane_id: int, title: str) -> None:
        info = self._panes.get(pane_id)
        if info is not None and info.title != title:
            self._panes[pane_id] = replace(info, title=title)
            self._changed(self._panes[pane_id], pane_id)

    def remove(self, pane_id: int) -> None:
        if self._panes.pop(pane_id, None) is not None:
            self._changed(None, pane_id)

    def all(self) -> list[PaneInfo]:
        return [self._panes[key] for key in sorted(self._panes)]

    def describe(self) -> str:
        """The `list_panes` result."""
        panes = self.all()
        if not panes:
            return "No panes are open."
        return "id\tkind\ttitle\tstate\twhere\n" + "\n".join(info.line() for info in panes)


def unknown_pane(pane_id: object, registry: PaneRegistry) -> str:
    """The message for a pane id that is not open, naming those that are."""
    open_ids = ", ".join(str(info.id) for info in registry.all()) or "none"
    return f"There is no pane {pane_id!r}. Open panes: {open_ids}. Use list_panes."
