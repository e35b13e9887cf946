"""McpControls: what the window shows of MCP servers. The servers panel (the window docks
it), the form a server's request for input fills and the question for a model's answer
(the window puts them under the "waiting" line), the line in the chat while the project's
servers wait for trust, each prompt and resource offered, each call's progress on its
card, and each MCP tool's server and annotations (`tool_notes`) for the inspector and
a waiting call's card.

    mcp = McpControls(desk, tasks, colors, window)   # window: where worker panes are found
    mcp.follow(session, chat, inspector)      # each main conversation shown
    mcp.start()                               # the servers, on the running loop

The servers are the desk's (`desk.mcp_view`, in this process) until the window becomes
a view of the melgui host (`use_host`): then the host's, which its conversations call,
shown and driven through the host protocol. The window shows them through McpView,
either way.
"""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QWidget

from melgui.core.agent.session import AgentSession
from melgui.core.protocol.tools.mcp.asks import Progress, SamplingTarget
from melgui.core.protocol.tools.mcp.view import McpView
from melgui.desk.desk import Desk
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


def tool_notes(view: McpView, name: str) -> str:
    """ "MCP server files · read-only · closed world" for an MCP tool; "" for others."""
    server = view.server_of(name)
    if server is None:
        return ""
    notes = view.annotations_of(name)
    said = [text for key, value, text in HINTS if notes.get(key) is value]
    return " · ".join([f"MCP server {server}", *said])


def live_progress(view: McpView, record: CallRecord, colors: Colors) -> str:
    """The inspector's line for a call that is running on an MCP server and reporting."""
    progress = view.progress_of(record.source, record.call.id)
    if progress is None or record.status != "running":
        return ""
    return progress_html(progress, colors).removeprefix("<br/>")


class McpControls:
    """`window`: the top-level widget the worker panes live in (a call's progress goes on
    its card there too)."""

    def __init__(self, desk: Desk, tasks: TaskKeeper, colors: Colors, window: QWidget) -> None:
        self.desk = desk
        self.tasks = tasks
        self.colors = colors
        self.window = window
        self.session: AgentSession | None = None
        self.main: MainSession | None = None  # the main conversation shown, wherever it runs
        self.chat: ChatView | None = None
        self.inspector: Inspector | None = None
        self.view: McpView = desk.mcp_view
        self.hosted = False  # the servers run in the melgui host, none in this process
        self._elsewhere_before = False
        self.panel = ServersPanel(self.view, tasks, colors, there=desk.mcp_there)
        desk.mcp_there.subscribe(self._there_changed)  # servers elsewhere, their trust
        self.panel.on_imported = self._restart
        self.form = InputForm(colors)
        self.sampling = SamplingBar(colors)
        self._answer_through(self.view)
        self.view.sampling_target = self._sampling_target
        self.note = TrustNote(self.panel, colors)
        self.offers = McpOffers(self.view, desk.prompt, tasks, send=self._send, say=self._say)
        self.panel.on_attach = self._attach

    def _answer_through(self, view: McpView) -> None:
        view.ask_input = self.form.add
        view.ask_sampling = self.sampling.add
        view.on_progress = self._show_progress

    # -- where the servers run -----------------------------------------------------------

    def wait_for_host(self) -> None:
        """The window will be a view of the melgui host (by default): no server starts
        in this process meanwhile (the host runs them; `no_host` if none can be had)."""
        self.hosted = True

    def use_host(self, view: McpView) -> None:
        """Show and drive the host's servers (`view`) from now on; this process's stop."""
        self.hosted = True
        self._elsewhere_before = self.desk.mcp_elsewhere
        self.desk.mcp_elsewhere = True
        local = self.view
        local.ask_input = local.ask_sampling = local.on_progress = None
        self.view = view
        self._answer_through(view)
        self.panel.set_view(view)
        self.offers.set_view(view)
        self.tasks.spawn(self.desk.start_mcp(), what="stopping this window's MCP servers")
        self.start()

    def no_host(self) -> None:
        """No melgui host after all (or no more): the desk's servers start in this
        process, as without one."""
        self.hosted = False
        local = self.desk.mcp_view
        if self.view is not local:
            self.desk.mcp_elsewhere = self._elsewhere_before
            self.view = local
            self._answer_through(local)
            self.panel.set_view(local)
            self.offers.set_view(local)
        self.start()

    def tool_notes(self, name: str) -> str:
        return tool_notes(self.view, name)

    def follow(self, session: MainSession, chat: ChatView, inspector: Inspector) -> None:
        """The main conversation shown now: its calls' progress, its chat's trust line,
        its inspector's notes; another project's folder starts that project's servers.
        (One in the melgui host calls the host's servers, shown once `use_host`.)"""
        self.session = session if isinstance(session, AgentSession) else None
        self.main = session
        self.chat, self.inspector = chat, inspector
        inspector.detail.tool_notes = self.tool_notes
        chat.cards.tool_notes = self.tool_notes  # on a waiting call's question
        if self.view.folder != self.desk.folder:  # another project: its servers
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
        if self.hosted and self.view is self.desk.mcp_view and not self.desk.mcp_elsewhere:
            return  # the melgui host will run them: none starts here meanwhile
        await self.view.start()
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

    def _show_progress(self, source: str, call_id: str, progress: Progress) -> None:
        """A report goes on its call's card, in the main chat or in the worker pane whose
        conversation made the call, and into any inspector showing that call."""
        if self.main is None or self.chat is None:
            return
        note = progress_html(progress, self.colors)
        details: list[CallDetail] = []
        if source == self.main.source:
            self.chat.set_card_note(call_id, note)
            details = [self.inspector.detail] if self.inspector is not None else []
        else:
            panes = [p for p in self.window.findChildren(AgentPane) if p.session.source == source]
            for pane in panes:
                pane.chat.set_card_note(call_id, note)
            details = [d for pane in panes for d in pane.findChildren(CallDetail)]
        view = self.view
        for detail in details:
            detail.live_html = lambda record, d=detail: live_progress(view, record, d.colors)
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
