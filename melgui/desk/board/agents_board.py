"""The agents board's model: every agent of a window and what it is doing. Qt-free.

An agent is a session shown somewhere (the main conversation's or a worker pane's
AgentSession, an ACP agent pane's HostedAgentSession, a worker pane's session that runs in
the melgui host, seen through its copy of the host's thread: each has a thread model), added
under a key: `board.add("pane-3", "worker 3: …", session)`.
The board follows the session's thread and keeps, per agent, its state (running,
waiting for approval since when, idle, finished, failed), its branch (from its
worktree, when it has one), the files it changed (git against the worktree's base when
it has one, counted in a thread: `file_count`; else the paths its file-changing tool
calls wrote) and its tokens. With an `OverlapWatch`, the files its worktree changed are
read after each of its tool calls and turns (one read serves the count too), and a row
says where the agent's changes meet another's: shared files, conflicts to be. A session
the melgui host runs is read there (`WorktreeReading`) and its readings come with its
records (`loop.worktree_files`): the board counts and compares from them and runs no git
for it.

Listeners hear `changed()` after any change, and `Moment`s: an agent started waiting
for an approval, finished a turn or failed one. The window turns moments into signals
(melgui.ui.notifications) and rows into the board (melgui.ui.board).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Protocol

from melgui.core.agent.session import AgentSession
from melgui.core.protocol.approval import ApprovalRequest
from melgui.core.protocol.events import Usage
from melgui.core.protocol.views.board_rows import AgentRow, AgentState, Moment, MomentKind
from melgui.core.thread.changes import Change, EntryAdded, EntryChanged, StateChanged
from melgui.core.thread.entries import AssistantEntry, CallEntry, NoteEntry, UserEntry
from melgui.core.thread.thread import Thread
from melgui.core.worktrees.model import Worktree
from melgui.core.worktrees.overlap.overlaps import (
    describe,
    overlaps_of,
    summary,
    unlisted_note,
)
from melgui.core.worktrees.overlap.touched import Touched
from melgui.desk.board.branch_files import changed_files
from melgui.desk.board.file_count import FileCount, FileCounter
from melgui.desk.board.overlap_watch import OverlapWatch
from melgui.desk.hosted_agents.session import HostedAgentSession

WorktreeOf = Callable[[], Worktree | None]


class _Counted(Protocol):
    @property
    def usage(self) -> Usage: ...

    @property
    def worktree_files(self) -> Touched | None: ...

    def on_worktree_files(self, listener: Callable[[], None]) -> Callable[[], None]: ...


class Viewed(Protocol):
    """A session another process runs, seen here (melgui.host's RemoteSession): its copy
    of that thread (holding the questions asked here), whether it runs, its source, the
    tokens it used so far (`loop.usage`) and its worktree as read there
    (`loop.worktree_files`, None until read; `loop.on_worktree_files` hears a new one)."""

    @property
    def thread(self) -> Thread: ...

    @property
    def busy(self) -> bool: ...

    @property
    def source(self) -> str: ...

    @property
    def loop(self) -> _Counted: ...


Followed = AgentSession | HostedAgentSession | Viewed  # each keeps a thread model


class _Agent:
    """Follows one session's thread; tells the board what changed."""

    def __init__(
        self,
        board: AgentsBoard,
        key: str,
        name: str,
        session: Followed,
        worktree: WorktreeOf,
    ) -> None:
        self.board = board
        self.key = key
        self.name = name
        self.session = session
        self.worktree = worktree
        self.state: AgentState = "running" if session.busy else "idle"
        self.since = board.clock()
        self.detail = ""
        self.asked: dict[str, ApprovalRequest] = {}  # by call id, oldest first
        self.written: set[str] = set()  # paths its own tool calls changed
        self._ended: set[str] = set()  # calls whose result was seen
        self._git_files: FileCount[list[str]] = FileCount(
            board.count_files, lambda: board.changed(self, None)
        )
        self._turns = session.thread.state.turns
        self._unsubscribe = session.thread.subscribe(self._on_change, text=False)
        # A session another process runs: its worktree is read there, never here.
        self.there = not isinstance(session, AgentSession | HostedAgentSession)
        self._unlisten: Callable[[], None] = lambda: None
        if not isinstance(session, AgentSession | HostedAgentSession):
            self._unlisten = session.loop.on_worktree_files(self._read_there)

    def edited(self) -> None:
        """The worktree may have changed: the overlap watch reads it again (or takes the
        reading of the process the session runs in, as it is)."""
        watch = self.board.overlaps
        if watch is None:
            return
        if self.there:
            watch.reported(self.key, self._there())
        else:
            watch.edited(self.key, self.worktree())

    def _there(self) -> Touched | None:
        session = self.session
        if isinstance(session, AgentSession | HostedAgentSession):
            return None
        return session.loop.worktree_files

    def _read_there(self) -> None:
        """A new reading of the worktree, from the process the session runs in."""
        if self.board.overlaps is not None:
            self.edited()  # the watch tells the board
        else:
            self.board.changed(self, None)

    @property
    def pending(self) -> list[ApprovalRequest]:
        return list(self.asked.values())

    def close(self) -> None:
        self._unsubscribe()
        self._unlisten()
        self._git_files.close()
        if self.board.overlaps is not None:
            self.board.overlaps.forget(self.key)

    def _set(self, state: AgentState, detail: str = "") -> None:
        if state != self.state:
            self.state = state
            self.since = self.board.clock()
        self.detail = detail

    def _on_change(self, change: Change) -> None:
        moment: Moment | None = None
        match change:
            case EntryChanged(entry=CallEntry() as entry):
                told, moment = self._call_changed(entry)
                if not told:
                    return
            case EntryAdded(entry=UserEntry()):
                if not self.asked:
                    self._set("running")
            case EntryAdded(entry=NoteEntry(note="error", text=text)):
                self._set("failed", text)
                moment = self._moment("failed", text)
            case StateChanged(state=state):
                ended, self._turns = state.turns != self._turns, state.turns
                if ended and not self.there:
                    self.edited()
                if ended and state.outcome == "done":
                    self._set("finished")
                    moment = self._moment("finished", self._last_reply())
                elif ended and state.outcome == "cancelled":
                    self._set("idle")
                elif state.status == "running" and not ended and not self.asked:
                    self._set("running")
                elif not ended:
                    return
            case _:
                return
        self.board.changed(self, moment)

    def _call_changed(self, entry: CallEntry) -> tuple[bool, Moment | None]:
        """A call asked (the approval moment), answered or ended: whether the board
        changed, and the moment."""
        call_id = entry.call_id
        request = self.session.thread.request(call_id)
        if entry.question is not None and call_id not in self.asked and request is not None:
            self.asked[call_id] = request
            self._set("waiting")
            return True, self._moment("approval", entry.name, call_id)
        told = False
        if entry.question is None and call_id in self.asked:
            del self.asked[call_id]
            if not self.asked and self.state == "waiting":
                self._set("running" if self.session.busy else "idle")
            told = True
        if entry.result is not None and call_id not in self._ended:
            self._ended.add(call_id)
            self._note_written(entry)
            told = True
        return told, None

    def _moment(self, kind: MomentKind, detail: str, call_id: str = "") -> Moment:
        return Moment(self.key, self.name, kind, detail, self.session.source, call_id)

    def _last_reply(self) -> str:
        for entry in reversed(self.session.thread.entries):
            if isinstance(entry, AssistantEntry) and entry.text.strip():
                return entry.text.strip()
        return ""

    def _note_written(self, entry: CallEntry) -> None:
        session, tool = self.session, None
        if isinstance(session, AgentSession) and entry.origin.kind != "acp":
            tool = session.loop.catalog.get(entry.name)  # an ACP agent's tools are its own
        if (tool is not None and tool.read_only) or self.there:
            return  # it changed nothing, or its worktree is read where it runs
        self._git_files.mark_stale()  # anything else may have changed the worktree
        self.edited()
        result, arguments = entry.result, entry.arguments
        if tool is None or result is None or result.status != "ok" or not arguments:
            return
        path = arguments.get(tool.path_argument) if tool.path_argument else None
        if isinstance(path, str) and path.strip() and isinstance(session, AgentSession):
            full = os.path.normpath(os.path.join(session.loop.cwd, path))
            self.written.add(os.path.relpath(full, session.loop.cwd))

    def files_changed(self) -> int:
        """git's count when it has one (asking for a new one when the worktree may have
        changed: it arrives as a change of the board), else the files its tools wrote.
        A session another process runs: that process's count, as it last read it."""
        if self.there:
            there = self._there()
            return there.count if there is not None else len(self.written)
        worktree = self.worktree()
        if worktree is None:
            return len(self.written)
        watched = self.board.overlaps.touched(self.key) if self.board.overlaps else None
        if watched is not None:
            return watched.count
        self._git_files.request(worktree)
        files = self._git_files.files
        return len(files) if files is not None else len(self.written)

    def tokens(self) -> int:
        if isinstance(self.session, HostedAgentSession):
            return self.session.host.usage.total_tokens
        return self.session.loop.usage.total_tokens  # an AgentSession's, or a Viewed one's

    def row(self) -> AgentRow:
        worktree = self.worktree()
        watch = self.board.overlaps
        shared = overlaps_of(watch.overlaps, self.key) if watch is not None else []
        name_of = self.board.name_of
        lines = [describe(overlap, self.key, name_of) for overlap in shared]
        unlisted = watch.unlisted() if watch is not None and shared else {}
        lines += filter(None, [unlisted_note(unlisted, name_of)])  # shared there: not known
        there = self._there() if self.there else None
        return AgentRow(
            key=self.key,
            name=self.name,
            state=self.state,
            since=self.since,
            waiting=len(self.pending),
            branch=worktree.branch if worktree is not None else "",
            files_changed=self.files_changed(),
            files_unlisted=there.more if there is not None else 0,
            tokens=self.tokens(),
            detail=self.detail,
            overlap=summary(shared, self.key, name_of),
            overlaps=tuple(lines),
            conflicts=sum(overlap.conflict for overlap in shared),
        )


class AgentsBoard:
    """Every agent of one window, in the order they were added."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.time,
        count_files: FileCounter = changed_files,
        overlaps: OverlapWatch | None = None,
    ) -> None:
        self.clock = clock
        self.count_files = count_files
        self.overlaps = overlaps
        if overlaps is not None:
            overlaps.subscribe(self._notify_change)
        self._agents: dict[str, _Agent] = {}
        self._on_change: list[Callable[[], None]] = []
        self._on_moment: list[Callable[[Moment], None]] = []

    def add(
        self,
        key: str,
        name: str,
        session: Followed,
        *,
        worktree: WorktreeOf = lambda: None,
    ) -> None:
        """Follow `session` as agent `key` (an agent already under `key` is replaced)."""
        old = self._agents.pop(key, None)
        if old is not None:
            old.close()
        self._agents[key] = _Agent(self, key, name, session, worktree)
        self._agents[key].edited()
        self._notify_change()

    def remove(self, key: str) -> None:
        agent = self._agents.pop(key, None)
        if agent is not None:
            agent.close()
            self._notify_change()

    def rename(self, key: str, name: str) -> None:
        agent = self._agents.get(key)
        if agent is not None and agent.name != name:
            agent.name = name
            self._notify_change()

    def name_of(self, key: str) -> str:
        agent = self._agents.get(key)
        return agent.name if agent is not None else key

    def agent_keys(self) -> list[str]:
        return list(self._agents)

    def session(self, key: str) -> Followed | None:
        agent = self._agents.get(key)
        return agent.session if agent is not None else None

    def rows(self) -> list[AgentRow]:
        return [agent.row() for agent in self._agents.values()]

    def row(self, key: str) -> AgentRow | None:
        agent = self._agents.get(key)
        return agent.row() if agent is not None else None

    def pending(self, key: str) -> list[ApprovalRequest]:
        """The approvals agent `key` waits for, oldest first."""
        agent = self._agents.get(key)
        return [r for r in agent.pending if r.pending] if agent is not None else []

    def on_change(self, listener: Callable[[], None]) -> Callable[[], None]:
        self._on_change.append(listener)
        return lambda: self._on_change.remove(listener) if listener in self._on_change else None

    def on_moment(self, listener: Callable[[Moment], None]) -> Callable[[], None]:
        self._on_moment.append(listener)
        return lambda: self._on_moment.remove(listener) if listener in self._on_moment else None

    def close(self) -> None:
        for agent in self._agents.values():
            agent.close()
        self._agents.clear()
        if self.overlaps is not None:
            self.overlaps.close()

    def changed(self, agent: _Agent, moment: Moment | None) -> None:
        if self._agents.get(agent.key) is not agent:
            return  # replaced or removed meanwhile
        if moment is not None:
            for listener in list(self._on_moment):
                listener(moment)
        self._notify_change()

    def _notify_change(self) -> None:
        for listener in list(self._on_change):
            listener()
