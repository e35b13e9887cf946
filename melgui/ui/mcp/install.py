"""Puts MCP servers into the main window: a dock with the servers panel, the servers
started with the window (and again for another folder), and each MCP tool's server and
annotations in the inspector's title. One call: `install_mcp(window)`."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import Qt, QTimer, SignalInstance
from PySide6.QtWidgets import QBoxLayout, QDockWidget, QMainWindow

from melgui.core.agent.session import AgentSession
from melgui.desk.desk import Desk
from melgui.tools.mcp.asks.sampling import SamplingTarget
from melgui.tools.mcp.calls import Flight
from melgui.tools.mcp.manager import McpManager
from melgui.ui.approvals.approval_bar import ApprovalBar
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
from melgui.ui.runtime.theme import Colors

HINTS = (
    ("readOnlyHint", True, "read-only"),
    ("destructiveHint", True, "destructive"),
    ("idempotentHint", True, "idempotent"),
    ("openWorldHint", True, "open world"),
    ("openWorldHint", False, "closed world"),
)


class McpHost(Protocol):
    desk: Desk
    tasks: TaskKeeper
    colors: Colors
    inspector: Inspector
    inspector_dock: QDockWidget
    approval_bar: ApprovalBar
    chat: ChatView
    session: AgentSession
    sessionChanged: SignalInstance
    themeChanged: SignalInstance


def tool_notes(manager: McpManager, name: str) -> str:
    """ "MCP server files · read-only · closed world" for an MCP tool; "" for others."""
    server = manager.server_of(name)
    if server is None:
        return ""
    notes = manager.annotations_of(name)
    said = [text for key, value, text in HINTS if notes.get(key) is value]
    return " · ".join([f"MCP server {server}", *said])


def show_progress(window: McpHost, flight: Flight) -> None:
    """A report goes on its call's card, in the main chat or in the worker pane whose
    conversation made the call, and into any inspector showing that call."""
    progress = flight.progress
    if progress is None:
        return
    source, call_id = flight.call.source, flight.call.call_id
    note = progress_html(progress, window.colors)
    assert isinstance(window, QMainWindow)
    if source == window.session.source:
        window.chat.set_card_note(call_id, note)
        details = [window.inspector.detail]
    else:
        panes = [p for p in window.findChildren(AgentPane) if p.session.source == source]
        for pane in panes:
            pane.chat.set_card_note(call_id, note)
        details = [d for pane in panes for d in pane.findChildren(CallDetail)]
    manager = window.desk.mcp
    for detail in details:
        detail.live_html = lambda record, d=detail: live_progress(manager, record, d.colors)
        shown = detail.record
        if shown is not None and (shown.source, shown.call.id) == (source, call_id):
            detail.show_record(shown)


def live_progress(manager: McpManager, record: CallRecord, colors: Colors) -> str:
    """The inspector's line for a call that is running on an MCP server and reporting."""
    flight = manager.flight_of(record.source, record.call.id)
    if flight is None or flight.progress is None or record.status != "running":
        return ""
    return progress_html(flight.progress, colors).removeprefix("<br/>")


def install_asks(window: McpHost) -> InputForm:
    """A server's request for input becomes a form right under the approval bar, and one
    for a model's answer (sampling) a question under that."""
    central = window.approval_bar.parentWidget()
    layout = central.layout() if central is not None else None
    assert isinstance(layout, QBoxLayout)
    form = InputForm(window.colors, central)
    layout.insertWidget(layout.indexOf(window.approval_bar) + 1, form)
    form.showRequested.connect(window.approval_bar.showRequested)
    window.themeChanged.connect(form.set_colors)
    window.desk.mcp.ask_input = form.add
    sampling = SamplingBar(window.colors, central)
    layout.insertWidget(layout.indexOf(form) + 1, sampling)
    sampling.showRequested.connect(window.approval_bar.showRequested)
    window.themeChanged.connect(sampling.set_colors)
    window.desk.mcp.ask_sampling = sampling.add
    window.desk.mcp.sampling_target = lambda: SamplingTarget(
        window.session.loop.transport, window.session.loop.model, window.session.loop.cwd
    )
    form.sampling_bar = sampling  # type: ignore[attr-defined]
    return form


def install_mcp(window: McpHost) -> ServersPanel:
    assert isinstance(window, QMainWindow)
    desk = window.desk
    panel = ServersPanel(desk.mcp, window.tasks, window.colors)
    dock = QDockWidget("MCP servers", window)
    dock.setObjectName("mcpDock")
    dock.setWidget(panel)
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
    window.tabifyDockWidget(window.inspector_dock, dock)
    window.inspector_dock.raise_()
    panel.dock = dock

    note = TrustNote(window, panel)

    def notes(name: str) -> str:
        return tool_notes(desk.mcp, name)

    def follow(_session: object = None) -> None:
        window.inspector.detail.tool_notes = notes
        if desk.mcp.folder != desk.folder:  # another project: its servers, not these
            window.tasks.spawn(start(), what="starting MCP servers")
        else:  # a new chat hears it too, after its conversation is drawn
            QTimer.singleShot(0, note.mention)

    async def start() -> None:
        await desk.start_mcp()
        panel.refresh()
        note.mention()

    def recolor(colors: Colors) -> None:
        panel.colors = colors
        panel.refresh()

    def restart_all() -> None:
        window.tasks.spawn(start(), what="starting MCP servers")

    panel.on_imported = restart_all
    window.sessionChanged.connect(follow)
    window.themeChanged.connect(recolor)
    window.inspector.detail.tool_notes = notes
    window.approval_bar.tool_notes = notes
    panel.input_form = install_asks(window)  # type: ignore[attr-defined]
    desk.mcp.on_progress = lambda flight: show_progress(window, flight)
    offers = McpOffers(
        desk.mcp,
        desk.prompt,
        window.tasks,
        send=lambda text: window.chat.submit(text),
        say=lambda text: window.chat.show_note(text),
    )
    panel.offers = offers  # type: ignore[attr-defined]

    def attach(server: str, uri: str) -> None:
        prompt = window.chat.input
        offers.pick(f"{server}:{uri}", prompt.attach, prompt.problem.emit)
        prompt.setFocus()

    panel.on_attach = attach
    window.tasks.spawn(start(), what="starting MCP servers")
    return panel
