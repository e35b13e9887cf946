"""McpControls: what the window shows of MCP servers. The servers panel (the window docks
it), the form a server's request for input fills and the question for a model's answer
(the window puts them under the "waiting" line), the line in the chat while the project's
servers wait for trust, each prompt and resource offered, each call's progress on its
card, and each MCP tool's server and annotations (`tool_notes`) for the inspector and
a waiting call's card.

    mcp = McpControls(desk, tasks, colors, window)   # window: where worker panes are found
    mcp.follow(session, chat, inspector)      # each main conversation shown
    mcp.start()                               # the servers, on the running loop
"""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QWidget

from melgui.core.agent.session import AgentSession
from melgui.desk.desk import Desk
from melgui.tools.mcp.asks.sampling import SamplingTarget
from melgui.tools.mcp.calls import Flight
from melgui.tools.mcp.manager import McpManager
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.inspector.call_book import CallRecord
from melgui.ui.inspector.call_detail import CallDetail
from melgui.ui.inspector.inspector import Inspector
from melgui.ui.mcp.call_progress import progress_html
from melgui.ui.mcp.input_form import InputForm
from melgui.ui.mcp.offers import McpOffers
from melgui.ui.mcp.sampling_bar import SamplingBar
from melgui.ui.mcp.servers_panel import ServersPanel
from melgui.ui.mcp.trust_note import TrustNote
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.runtime.aio import TaskKeeper
from melgui.ui.runtime.sessions import MainSession
from melgui.ui.runtime.theme import Colors

HINTS = (
    ("readOnlyHint", True, "read-only"),
    ("destructiveHint", True, "destructive"),
    ("idempotentHint", True, "idempotent"),
    ("openWorldHint", True, "open world"),
    ("openWorldHint", False, "closed world"),
)


def tool_notes(manager: McpManager, name: str) -> str:
    """ "MCP server files · read-only · closed world" for an MCP tool; "" for others."""
    server = manager.server_of(name)
    if server is None:
        return ""
    notes = manager.annotations_of(name)
    said = [text for key, value, text in HINTS if notes.get(key) is value]
    return " · ".join([f"MCP server {server}", *said])


def live_progress(manager: McpManager, record: CallRecord, colors: Colors) -> str:
    """The inspector's line for a call that is running on an MCP server and reporting."""
    flight = manager.flight_of(record.source, record.call.id)
    if flight is None or flight.progress is None or record.status != "running":
        return ""
    return progress_html(flight.progress, colors).removeprefix("<br/>")


class McpControls:
    """`window`: the top-level widget the worker panes live in (a call's progress goes on
    its card there too)."""

    def __init__(self, desk: Desk, tasks: TaskKeeper, colors: Colors, window: QWidget) -> None:
        self.desk = desk
        self.tasks = tasks
        self.colors = colors
        self.window = window
        self.session: AgentSession | None = None
        self.chat: ChatView | None = None
        self.inspector: Inspector | None = None
        manager = desk.mcp
        self.panel = ServersPanel(manager, tasks, colors, there=desk.mcp_there)
        desk.mcp_there.subscribe(self._there_changed)  # servers elsewhere, their trust
        self.panel.on_imported = self._restart
        self.form = InputForm(colors)
        self.sampling = SamplingBar(colors)
        manager.ask_input = self.form.add
        manager.ask_sampling = self.sampling.add
        manager.sampling_target = self._sampling_target
        manager.on_progress = self._show_progress
        self.note = TrustNote(self.panel, colors)
        self.offers = McpOffers(manager, desk.prompt, tasks, send=self._send, say=self._say)
        self.panel.on_attach = self._attach

    def tool_notes(self, name: str) -> str:
        return tool_notes(self.desk.mcp, name)

    def follow(self, session: MainSession, chat: ChatView, inspector: Inspector) -> None:
        """The main conversation shown now: its calls' progress, its chat's trust line,
        its inspector's notes; another project's folder starts that project's servers.
        (One in the melgui host calls the host's servers: none of these.)"""
        self.session = session if isinstance(session, AgentSession) else None
        self.chat, self.inspector = chat, inspector
        inspector.detail.tool_notes = self.tool_notes
        chat.cards.tool_notes = self.tool_notes  # on a waiting call's question
        if self.desk.mcp.folder != self.desk.folder:  # another project: its servers
            self.start()
        else:  # a new chat hears it too, after its conversation is drawn
            QTimer.singleShot(0, lambda: self.note.mention(chat))

    def start(self) -> None:
        """(Re)start the desk's MCP servers for its folder, then say what waits for trust."""
        self.tasks.spawn(self._start(), what="starting MCP servers")

    def set_colors(self, colors: Colors) -> None:
        self.colors = colors
        self.note.colors = colors
        self.form.set_colors(colors)
        self.sampling.set_colors(colors)
        self.panel.colors = colors
        self.panel.refresh()

    async def _start(self) -> None:
        await self.desk.start_mcp()
        self.panel.refresh()
        if self.chat is not None:
            self.note.mention(self.chat)

    def _there_changed(self) -> None:
        self.panel.refresh()
        if self.chat is not None:
            self.note.mention(self.chat)

    def _restart(self) -> None:
        self.start()

    def _sampling_target(self) -> SamplingTarget:
        if self.session is None:  # the main conversation runs in the melgui host
            desk = self.desk
            return SamplingTarget(desk.connection.current, desk.settings.model, desk.folder)
        loop = self.session.loop
        return SamplingTarget(loop.transport, loop.model, loop.cwd)

    def _show_progress(self, flight: Flight) -> None:
        """A report goes on its call's card, in the main chat or in the worker pane whose
        conversation made the call, and into any inspector showing that call."""
        progress = flight.progress
        if progress is None or self.session is None or self.chat is None:
            return
        source, call_id = flight.call.source, flight.call.call_id
        note = progress_html(progress, self.colors)
        details: list[CallDetail] = []
        if source == self.session.source:
            self.chat.set_card_note(call_id, note)
            details = [self.inspector.detail] if self.inspector is not None else []
        else:
            panes = [p for p in self.window.findChildren(AgentPane) if p.session.source == source]
            for pane in panes:
                pane.chat.set_card_note(call_id, note)
            details = [d for pane in panes for d in pane.findChildren(CallDetail)]
        manager = self.desk.mcp
        for detail in details:
            detail.live_html = lambda record, d=detail: live_progress(manager, record, d.colors)
            shown = detail.record
            if shown is not None and (shown.source, shown.call.id) == (source, call_id):
                detail.show_record(shown)

    def _attach(self, server: str, uri: str) -> None:
        """The servers panel's Attach: the resource goes on the prompt, as @server:uri."""
        if self.chat is None:
            return
        prompt = self.chat.input
        self.offers.pick(f"{server}:{uri}", prompt.attach, prompt.problem.emit)
        prompt.setFocus()

    def _send(self, text: str) -> None:
        if self.chat is not None:
            self.chat.submit(text)

    def _say(self, text: str) -> None:
        if self.chat is not None:
            self.chat.show_note(text)
