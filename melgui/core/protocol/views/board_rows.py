"""What the agents board shows: one row per agent, and the moments a person may want to
hear about (melgui.desk.board.agents_board follows the sessions and makes them)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

from melgui.core.protocol.approval import ApprovalRequest

AgentState = Literal["running", "waiting", "idle", "finished", "failed"]
MomentKind = Literal["approval", "finished", "failed"]


@dataclass(frozen=True, slots=True)
class AgentRow:
    """One line of the board. `since` is when the agent entered `state` (time.time())."""

    key: str
    name: str
    state: AgentState
    since: float
    waiting: int  # approvals it waits for
    branch: str  # "" when it works in the shared folder
    files_changed: int
    tokens: int
    detail: str  # the failure, when failed
    overlap: str = ""  # "2 files shared with Pane 3 (1 conflict to be)"; "" when none
    files_unlisted: int = 0  # of files_changed, those the host's reading did not list
    overlaps: tuple[str, ...] = ()  # one line per shared file, in plain words
    conflicts: int = 0  # shared files likely to conflict


@dataclass(frozen=True, slots=True)
class Moment:
    """Something a person may want to hear about. `call_id` names the approval asked."""

    key: str
    name: str
    kind: MomentKind
    detail: str
    source: str  # the session's source (approvals are shown by source and call id)
    call_id: str = ""


class BoardFeed(Protocol):
    """What the window reads of the agents board: its rows, the approvals an agent waits
    for, and word when either changes or a moment comes (AgentsBoard is one)."""

    def rows(self) -> list[AgentRow]: ...

    def row(self, key: str) -> AgentRow | None: ...

    def pending(self, key: str) -> list[ApprovalRequest]:
        """The approvals agent `key` waits for, oldest first."""
        ...

    def on_change(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Calls `listener` after each change of the rows; returns its unsubscribe."""
        ...

    def on_moment(self, listener: Callable[[Moment], None]) -> Callable[[], None]: ...
