"""What the agents board shows: one row per agent, and the moments a person may want to
hear about (melgui.desk.board.agents_board follows the sessions and makes them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

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
