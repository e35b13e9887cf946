"""An ACP agent's plan and terminals as the melgui host tells its views (`AgentRelay`, in
the host); a view's copies of them (`PlanCopy`, `TerminalCopies`, in a window's pane) are
melgui.core.protocol.views.relayed_copies: what a pane whose agent runs here shows from
the agent itself (its plans panel entry, its terminal tabs).

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
from typing import TYPE_CHECKING, Any

from melgui.core.protocol.views.agent_state import AgentState
from melgui.core.protocol.views.relayed_copies import (
    PLAN,
    TERMINAL,
    TERMINAL_EXIT,
    TERMINAL_OUTPUT,
    Entries,
    Record,
    plan_title,
)

if TYPE_CHECKING:  # the ACP SDK loads with the host's first agent, not with this module
    from melgui.desk.hosted_agents.terminals import AgentTerminal

Add = Callable[[Record], None]

FRAME_S = 1 / 60
FRAME_MAX = 8 * 1024  # bytes of one terminal's output sent in one record
TAIL = 64 * 1024  # characters of each terminal's output a snapshot carries
KEPT = 16  # terminals a snapshot carries, the newest


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
