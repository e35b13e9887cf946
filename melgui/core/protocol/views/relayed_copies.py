"""A view's copies of an ACP agent's plan and terminals that the melgui host runs, from
its records (docs/host-protocol.md, "The window's ACP agent panes"; the host's side is
melgui.desk.hosted_agents.relayed): what the pane shows of the agent itself, its plans
panel entry and its terminal tabs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from melgui.core.protocol.views.agent_state import AgentState

Record = dict[str, Any]
PlanSink = Callable[[str, str], None]  # (title, markdown): the window's plans panel
Entries = list[tuple[str, str]]  # (content, status)

PLAN = "plan"
TERMINAL = "terminal"
TERMINAL_OUTPUT = "terminal_output"
TERMINAL_EXIT = "terminal_exit"
RECORDS = (PLAN, TERMINAL, TERMINAL_OUTPUT, TERMINAL_EXIT)  # all of them in a snapshot
COPY_MAX = 1024 * 1024  # bytes a view's copy keeps for a tab drawn later
_PLAN_MARK = {"completed": "x", "in_progress": "~", "pending": " "}


def plan_title(state: AgentState) -> str:
    return f"{state.name}: plan"


def plan_markdown(entries: Entries) -> str:
    """A plan as the plans panel shows it: a checklist (`~` for the step in progress)."""
    lines = (f"- [{_PLAN_MARK.get(status, ' ')}] {content}" for content, status in entries)
    return "\n".join(lines) + "\n"


def _entries(given: Any) -> Entries:
    return [(str(e[0]), str(e[1])) for e in given or []]


def ending_words(code: int | None, signal: str | None) -> str:
    """How an agent's terminal ended, as its tab says it: "exit 3", "killed by SIGTERM"."""
    return f"killed by {signal}" if signal else f"exit {code}"


class ShownTerminal(Protocol):
    """What an agent pane's terminal tab reads: an AgentTerminal of the window's own
    agent, or a TerminalCopy of one the melgui host runs."""

    id: str
    title: str
    output: bytearray
    listeners: list[Callable[[bytes], None]]

    @property
    def columns(self) -> int: ...

    @property
    def rows(self) -> int: ...

    def write(self, data: bytes) -> None: ...

    def ending(self) -> str: ...  # how it ended ("exit 3"), "" while it runs

    @property
    def on_exit(self) -> list[Callable[[], None]]: ...  # told once it has ended


class PlanCopy:
    """A view's copy of the agent's plan; each new plan goes to `sink` once (the window's
    plans panel), as an agent of the window's own sends it."""

    def __init__(self, state: AgentState) -> None:
        self._state = state
        self.sink: PlanSink | None = None
        self.entries: Entries = []
        self._shown: Entries = []

    def take(self, said: dict[str, Any] | None) -> None:
        """A `plan` record, or a snapshot's `plan` (null: none yet)."""
        if said is None:
            return
        self.entries = _entries(said.get("entries"))
        self._state.set_plan(self.entries)
        self.show()

    def show(self) -> None:
        """To the sink, when it has not shown this plan yet."""
        if self.sink is not None and self.entries and self.entries != self._shown:
            self._shown = list(self.entries)
            self.sink(plan_title(self._state), plan_markdown(self.entries))


Send = Callable[[str, bytes], None]  # (terminal id, keys): to the host


class TerminalCopy:
    """A view's copy of one of the agent's terminals in the host: what its tab shows;
    keys typed in the tab go to the program there (`send`)."""

    def __init__(
        self, terminal_id: str, title: str, columns: int, rows: int, send: Send | None = None
    ) -> None:
        self.id = terminal_id
        self._send = send
        self.title = title
        self.columns, self.rows = columns, rows
        self.output = bytearray()
        self.listeners: list[Callable[[bytes], None]] = []
        self.exit: dict[str, Any] | None = None
        self.on_exit: list[Callable[[], None]] = []

    def write(self, data: bytes) -> None:
        if self._send is not None and self.exit is None:
            self._send(self.id, data)

    def feed(self, data: bytes) -> None:
        self.output += data
        if len(self.output) > COPY_MAX:
            del self.output[: len(self.output) - COPY_MAX]
        for listener in list(self.listeners):
            listener(data)

    def ended(self, said: dict[str, Any]) -> None:
        self.exit = {"code": said.get("code"), "signal": said.get("signal")}
        for listener in list(self.on_exit):
            listener()

    def ending(self) -> str:
        """How it ended, for its tab ("" while it runs)."""
        if self.exit is None:
            return ""
        return ending_words(self.exit.get("code"), self.exit.get("signal"))


class TerminalCopies:
    """A view's copies of the agent's terminals, from the host's records and snapshots;
    `on_open` hears each new one (the pane's tabs)."""

    def __init__(self) -> None:
        self.copies: dict[str, TerminalCopy] = {}
        self.on_open: Callable[[TerminalCopy], None] | None = None
        self.send: Send | None = None  # keys typed in a tab, to the host

    def heard(self, record: Record) -> None:
        kind = record.get("type")
        terminal_id = str(record.get("id"))
        if kind == TERMINAL:
            self._open(terminal_id, record)
            return
        copy = self.copies.get(terminal_id)
        if copy is None:
            return
        if kind == TERMINAL_OUTPUT:
            skipped = int(record.get("skipped") or 0)
            if skipped:
                copy.feed(f"\r\n[{skipped:,} bytes of output not shown]\r\n".encode())
            copy.feed(str(record.get("text", "")).encode())
        elif kind == TERMINAL_EXIT:
            copy.ended(record)

    def took(self, terminals: list[dict[str, Any]]) -> None:
        """A snapshot's terminals: new ones opened with their tail, known ones drawn
        again from it (a reset first)."""
        for said in terminals:
            terminal_id = str(said["id"])
            copy = self.copies.get(terminal_id)
            tail = str(said.get("tail", "")).encode()
            if copy is None:
                copy = self._open(terminal_id, said, tail)
            else:
                copy.output.clear()
                copy.feed(b"\x1bc" + tail)
            if said.get("exit") is not None and copy.exit is None:
                copy.ended(said["exit"])

    def _open(self, terminal_id: str, said: Record, output: bytes = b"") -> TerminalCopy:
        title = str(said.get("title") or terminal_id)
        columns, rows = int(said.get("columns") or 120), int(said.get("rows") or 30)
        copy = TerminalCopy(terminal_id, title, columns, rows, self.send)
        copy.output += output
        self.copies[terminal_id] = copy
        if self.on_open is not None:
            self.on_open(copy)
        return copy
