"""An ACP agent's plan and terminals as the melgui host tells its views (`AgentRelay`, in
the host), and a view's copies of them (`PlanCopy`, `TerminalCopies`, in a window's pane):
what a pane whose agent runs here shows from the agent itself (its plans panel entry,
its terminal tabs).

Records (docs/host-protocol.md, "The window's ACP agent panes"):

    {"type": "plan", "title": "scripted: plan", "entries": [["clean build", "in_progress"]]}
    {"type": "terminal", "id": "term-1", "title": "make test", "columns": 120, "rows": 30}
    {"type": "terminal_output", "id": "term-1", "text": "3 passed\\r\\n", "skipped": 0}
    {"type": "terminal_exit", "id": "term-1", "code": 0, "signal": null}

A terminal's output is sent at most once a frame and at most FRAME_MAX bytes of it (its
last ones: `skipped` says how many went unsent), so a flood costs the journal and the
views a bounded amount; a snapshot carries the last TAIL characters of each of the
newest KEPT terminals, and how each ended.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from melgui.core.protocol.views.agent_state import AgentState
from melgui.core.terminal.panes import ending_words

if TYPE_CHECKING:  # the ACP SDK loads with the host's first agent, not with this module
    from melgui.desk.hosted_agents.terminals import AgentTerminal

Record = dict[str, Any]
Add = Callable[[Record], None]
PlanSink = Callable[[str, str], None]  # (title, markdown): the window's plans panel
Entries = list[tuple[str, str]]  # (content, status)

PLAN = "plan"
TERMINAL = "terminal"
TERMINAL_OUTPUT = "terminal_output"
TERMINAL_EXIT = "terminal_exit"
RECORDS = (PLAN, TERMINAL, TERMINAL_OUTPUT, TERMINAL_EXIT)  # all of them in a snapshot
FRAME_S = 1 / 60
FRAME_MAX = 8 * 1024  # bytes of one terminal's output sent in one record
TAIL = 64 * 1024  # characters of each terminal's output a snapshot carries
KEPT = 16  # terminals a snapshot carries, the newest


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


# -- the host ----------------------------------------------------------------------------


class AgentRelay:
    """Follows one agent's plan and terminals in the host, as records through `add` (the
    session's change log) and as a snapshot's part (`to_json`)."""

    def __init__(self, state: AgentState, add: Add) -> None:
        self._state = state
        self._add = add
        self._plan: Entries = list(state.plan)
        self.terminals: dict[str, RelayedTerminal] = {}
        state.listen(self._state_changed)

    def _state_changed(self) -> None:
        if self._state.plan != self._plan:
            self._plan = list(self._state.plan)
            entries = [list(entry) for entry in self._plan]
            self._add({"type": PLAN, "title": plan_title(self._state), "entries": entries})

    def opened(self, terminal: AgentTerminal) -> None:
        """A terminal the agent created (AgentTerminals.on_open): told, then followed."""
        relayed = RelayedTerminal(terminal, self._add)
        self.terminals[terminal.id] = relayed
        while len(self.terminals) > KEPT:
            oldest = next(iter(self.terminals))
            self.terminals.pop(oldest).forget()

    def to_json(self) -> dict[str, Any]:
        """{plan, terminals}: the plan now (null before the first) and each terminal's tail."""
        plan = {"title": plan_title(self._state), "entries": [list(e) for e in self._plan]}
        return {
            PLAN: plan if self._plan else None,
            "terminals": [t.to_json() for t in self.terminals.values()],
        }

    def close(self) -> None:
        for relayed in self.terminals.values():
            relayed.forget()


class RelayedTerminal:
    """One terminal's output in records: gathered for a frame, then sent as text (its
    last FRAME_MAX bytes when more came); its tail kept for a snapshot."""

    def __init__(self, terminal: AgentTerminal, add: Add) -> None:
        self._terminal = terminal
        self._add = add
        self.id = terminal.id
        self.tail = ""  # what the records said, its last TAIL characters
        self.cut = False  # the tail does not start at the terminal's start
        self.exit: dict[str, Any] | None = None
        self._pending = bytearray()
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._timer: asyncio.TimerHandle | None = None
        loop = asyncio.get_running_loop()
        self._loop = loop
        columns, rows = terminal.columns, terminal.rows
        add({"type": TERMINAL, "id": terminal.id, "title": terminal.title,
             "columns": columns, "rows": rows})  # fmt: skip
        self._output(bytes(terminal.output))  # what it wrote before it was told
        terminal.listeners.append(self._output)
        self._watch = loop.create_task(self._ended())

    def _output(self, data: bytes) -> None:
        if not data:
            return
        self._pending += data
        if self._timer is None:
            self._timer = self._loop.call_later(FRAME_S, self._flush)

    def _flush(self) -> None:
        self._timer = None
        data = bytes(self._pending)
        self._pending.clear()
        skipped = 0
        if len(data) > FRAME_MAX:
            skipped = len(data) - FRAME_MAX
            while skipped < len(data) and (data[skipped] & 0xC0) == 0x80:
                skipped += 1  # never a UTF-8 character cut in half
            data = data[skipped:]
            self._decoder.reset()
        text = self._decoder.decode(data)
        if not (text or skipped):
            return
        record: Record = {"type": TERMINAL_OUTPUT, "id": self.id, "text": text}
        if skipped:
            record["skipped"] = skipped
            self.cut = True
        self._add(record)
        self.tail += text
        if len(self.tail) > TAIL:
            self.tail, self.cut = self.tail[-TAIL:], True

    async def _ended(self) -> None:
        await self._terminal.exited.wait()
        if self._timer is not None:  # what it wrote last goes before its end
            self._timer.cancel()
            self._flush()
        status = self._terminal.exit_status()
        code = status.exit_code if status is not None else None
        signal = status.signal if status is not None else None
        self.exit = {"code": code, "signal": signal}
        self._add({"type": TERMINAL_EXIT, "id": self.id, **self.exit})

    def to_json(self) -> dict[str, Any]:
        terminal = self._terminal
        return {"id": self.id, "title": terminal.title, "columns": terminal.columns,
                "rows": terminal.rows, "tail": self.tail, "cut": self.cut,
                "exit": self.exit}  # fmt: skip

    def write(self, data: bytes) -> bool:
        """Keys a view typed in its tab, to the program; False once it ended."""
        if self.exit is not None:
            return False
        try:
            self._terminal.write(data)
        except OSError:  # released meanwhile: its pty is closed
            return False
        return True

    def forget(self) -> None:
        """No longer followed (a newer terminal took its place, the agent ended)."""
        with contextlib.suppress(ValueError):
            self._terminal.listeners.remove(self._output)
        if self._timer is not None:
            self._timer.cancel()
        self._watch.cancel()


# -- a view ------------------------------------------------------------------------------


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
