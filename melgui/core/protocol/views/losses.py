"""What quitting or closing would lose, asked of everything that holds live work.

Sources register with the loss_registry (the main session, each pane, each worker, an MCP
server with a call in flight, …); the window's close and quit paths ask
`loss_registry.losses()` and show them in one dialog before anything ends.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

LossKind = Literal["approval", "process", "turn", "changes"]


@dataclass(frozen=True, slots=True)
class Loss:
    """One thing that ending now would lose, in words a person can act on."""

    kind: LossKind
    where: str  # "main conversation", "pane 2 (bash)", "worker 3"
    what: str  # "run_command: pytest -q waits for approval"

    def describe(self) -> str:
        return f"{self.where}: {self.what}"


LossSource = Callable[[], list[Loss]]


class LossRegistry:
    """The one place that knows what is live; sources come and go at run time."""

    def __init__(self) -> None:
        self._sources: dict[int, LossSource] = {}
        self._next = 0

    def register(self, source: LossSource) -> Callable[[], None]:
        """Ask `source` at every check; returns a function that unregisters it."""
        key = self._next
        self._next += 1
        self._sources[key] = source

        def unregister() -> None:
            self._sources.pop(key, None)

        return unregister

    def losses(self) -> list[Loss]:
        """Everything that would be lost now, in registration order."""
        found: list[Loss] = []
        for source in list(self._sources.values()):
            found.extend(source())
        return found


@runtime_checkable
class _Pending(Protocol):
    def pending_approvals(self) -> list[Any]: ...


@runtime_checkable
class _Losing(Protocol):
    @property
    def busy(self) -> bool: ...

    @property
    def loop(self) -> _Pending: ...


def session_losses(session: object, where: str) -> LossSource:
    """A session's losses: approvals it waits for, and a turn in flight."""

    def losses() -> list[Loss]:
        # An AgentSession, or a view's RemoteSession of a session in the melgui host.
        assert isinstance(session, _Losing)
        found = [
            Loss("approval", where, f"{request.call.name} waits for your approval")
            for request in session.loop.pending_approvals()
        ]
        if session.busy and not found:
            found.append(Loss("turn", where, "the agent is in the middle of a turn"))
        return found

    return losses
