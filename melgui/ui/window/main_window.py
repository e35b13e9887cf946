"""The main window: the chat, room for panes, and the side panel (inspector, plans, MCP).

The window composes its parts (`_add_parts`): it makes each with what it needs, places
and connects it, and hands each main conversation to those that show it; no part knows
the window. Code that reads the window names what it reads in a Protocol of its own.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QDockWidget, QMainWindow, QVBoxLayout, QWidget

from melgui.core.agent.session import AgentSession
from melgui.core.config.connection_settings import api_key_kind, connection_label
from melgui.core.config.secrets import get_api_key
from melgui.core.config.settings import Settings, config_dir
from melgui.core.config.trust import FolderTrust
from melgui.core.protocol.catalog import ROLES, Role
from melgui.core.protocol.loop_events import ApprovalNeeded, LoopEvent
from melgui.core.protocol.messages import Conversation
from melgui.core.protocol.transport import Transport
from melgui.core.protocol.views.losses import session_losses
from melgui.core.rules.policy import RulePolicy
from melgui.core.store import open_store
from melgui.core.store.records import NoteRecord, RecordedCall
from melgui.core.thread.chat_session import ChatSession
from melgui.core.worktrees.model import Worktree
from melgui.desk.desk import Desk
from melgui.desk.kit import WorkspaceKit
from melgui.host.remote_session import RemoteSession
from melgui.ui.approvals.approval_queue import ApprovalQueue
from melgui.ui.approvals.waiting_bar import WaitingBar
from melgui.ui.chat.card_answers import answer_waiting
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.chat.composer.choices import ModelAndRole, join_chips
from melgui.ui.chat.model_line import BETTER_MODELS
from melgui.ui.checkpoints.actions import CheckpointActions
from melgui.ui.context.wiring import ContextWiring, Meter
from melgui.ui.history import ConversationHistory
from melgui.ui.inspector.inspector import Inspector
from melgui.ui.mcp.controls import McpControls
from melgui.ui.notifications.agents_watch import watch_agents
from melgui.ui.panes.acp_dialogs import host_acp_agents
from melgui.ui.panes.lifetime import follow_folder, keep_panes
from melgui.ui.panes.manager import PaneManager
from melgui.ui.panes.orchestration import Orchestration
from melgui.ui.panes.pane_area import PaneArea
from melgui.ui.panes.remote.remote_side import RemoteSide
from melgui.ui.panes.splitter import Splitter
from melgui.ui.runtime.aio import TaskKeeper
from melgui.ui.runtime.bridge import SessionBridge
from melgui.ui.runtime.look.tokens import SPACE_XS
from melgui.ui.runtime.quit_guard import QuitGuard
from melgui.ui.runtime.sessions import Elsewhere, MainSession, WindowSessions
from melgui.ui.runtime.theme import colors_for, follow_system_scheme, theme_the_app
from melgui.ui.settings.flow import (
    allowed_log,
    claude_rules_offer,
    open_settings_dialog,
    past_commands,
    save_or_report,
)
from melgui.ui.window.commands import menu_actions, set_focus_chat_keys, slash_commands
from melgui.ui.window.conversation_actions import retry_last, show_compacted
from melgui.ui.window.host_view.view import HostView, attach_there, follow_history_and_checkpoints
from melgui.ui.window.layout_state import HISTORY_WIDTH, LayoutKeeper, add_dock, insert_below
from melgui.ui.window.model_choice import ModelChoice
from melgui.ui.window.plan_mode import PlanModeControl
from melgui.ui.window.review_command import REVIEWER, Reviews
from melgui.ui.window.side.fold import fold_dock, waiting_dot
from melgui.ui.window.side.plans_panel import PlansPanel
from melgui.ui.window.side.side_panel import SidePanel
from melgui.ui.window.status_line import StatusLine
from melgui.ui.window.toolbar import ProjectToolbar
from melgui.ui.window.trust_bar import TrustBar

if TYPE_CHECKING:
    from melgui.core.store import Store
    from melgui.core.store.resume import Resumed
    from melgui.ui.window.palette import CommandPalette

Failures = Sequence[tuple[int, NoteRecord]]  # where a reopened conversation went wrong


class MainWindow(QMainWindow):
    sessionChanged = Signal(object)  # the new main session (AgentSession or RemoteSession)
    themeChanged = Signal(object)  # Colors
    approvalSourceRequested = Signal(str, str)  # (source, call id) of a pane's approval
    _progress = Signal(str)
    models: ModelChoice  # the model chip's logic
    pane_manager: PaneManager
    inspector: Inspector  # the main conversation's, on the side panel's first tab
    history_dock: QDockWidget  # folds to its icon at the window's left edge
    status: StatusLine  # the status bar, with the context meter
    palette_dialog: CommandPalette | None = None  # the command palette, while it is open
    host_view: HostView | None = None  # the main one and workers run in the melgui host
    remote: RemoteSide  # other machines: its hosts, its remote folder (`_add_parts`)

    def __init__(
        self,
        folder: str,
        settings: Settings,
        *,
        api_key: str | None = None,
        transport: Transport | None = None,
        persist_settings: bool = True,
    ) -> None:
        super().__init__()
        self.persist_settings = persist_settings
        self.colors = colors_for(settings.theme)
        self.tasks = TaskKeeper(on_error=self._report_error)
        self.approvals = ApprovalQueue(self)
        self.plans_panel = PlansPanel(self.colors)
        self.desk = Desk(
            folder,
            settings,
            api_key=api_key if api_key is not None else get_api_key(api_key_kind(settings)),
            plans=lambda _title, _markdown: None,  # the Plans panel reads plans off the threads
            transport=transport,
            on_progress=self._progress.emit,
            on_rules_saved=self._save_settings,
        )
        self.sessions = WindowSessions(self.desk, host=lambda: self.host_view)
        self._build_chrome()
        self._install(self._new_session(Conversation()))
        self._add_parts()
        self.actions_by_name = menu_actions(self)
        self.setWindowTitle(f"melgui — {self.kit.folder}")
        self.layout_keeper = self._keep_layout(config_dir() if persist_settings else None)
        self.guard = QuitGuard(self, self.desk.loss_registry)
        self.guard.elsewhere = self.remote  # loop-there workers: kept there on Keep running
        losses = self.desk.loss_registry
        losses.register(lambda: session_losses(self.session, "main conversation")())
        losses.register(self.pane_manager.losses)
        self.zoom_steps = 0  # View → Zoom, for the chat and the terminals
        follow_system_scheme(lambda: self.settings.theme, lambda: self.set_theme(self.settings))
        self.tasks.spawn(self.models.refresh(), what="listing models")

    # --- the desk's parts, as the window's seams ------------------------------------------

    @property
    def main_window(self) -> QMainWindow:
        return self

    @property
    def settings(self) -> Settings:
        return self.desk.settings

    @property
    def api_key(self) -> str | None:
        return self.desk.api_key

    @property
    def transport(self) -> Transport:
        """The transport in use now (every session streams through desk.connection)."""
        return self.desk.connection.current

    @property
    def policy(self) -> RulePolicy:
        """The rules of the conversation shown: its own "for this conversation" ones, and
        the project's and everywhere's, which every conversation shares."""
        return self.sessions.policy(self.session)

    @property
    def kit(self) -> WorkspaceKit:
        return self.desk.kit

    # --- construction ------------------------------------------------------------------

    def _build_chrome(self) -> None:
        self.toolbar = ProjectToolbar(self.colors, self)
        self.addToolBar(self.toolbar)
        self.themeChanged.connect(self.toolbar.set_colors)
        self.themeChanged.connect(self.plans_panel.set_colors)
        self.toolbar.set_folder(self.kit.folder)
        self.toolbar.set_connection(connection_label(self.settings), "unknown")
        self.toolbar.folderRequested.connect(lambda: self.actions_by_name["open_folder"].trigger())
        self.choices = ModelAndRole(self.settings.model, self.settings.role, self)  # the chips'
        self.choices.rolePicked.connect(self.set_role)
        self.choices.refreshRequested.connect(
            lambda: self.tasks.spawn(self.models.refresh(), what="listing models")
        )
        self.toolbar.settingsRequested.connect(self.open_settings)
        self.pane_host = Splitter(Qt.Orientation.Horizontal, self)  # wide handles
        self.pane_host.setChildrenCollapsible(False)
        self.waiting_bar = WaitingBar(self.approvals, self.colors, self)  # answered on cards
        self.themeChanged.connect(self.waiting_bar.set_colors)
        self.waiting_bar.showRequested.connect(self._show_approval)
        central = QWidget(self)
        layout = QVBoxLayout(central)
        layout.setContentsMargins(SPACE_XS, SPACE_XS, SPACE_XS, 0)
        self.trust_bar = TrustBar(FolderTrust(), self.kit.folder, central)
        self.trust_bar.changed.connect(self._trust_changed)
        layout.addWidget(self.trust_bar)
        layout.addWidget(self.pane_host, 1)
        layout.addWidget(self.waiting_bar)
        self.setCentralWidget(central)
        self.side_panel = panel = SidePanel(self, self.colors)  # its pages come with the parts
        self.themeChanged.connect(panel.set_colors)
        panel.add(
            "inspector", "Inspector", "search", QWidget(), lambda: not self.inspector.book.records
        )
        panel.add(
            "plans", "Plans", "list-checks", self.plans_panel, lambda: not self.plans_panel.plans
        )
        self.toolbar.addAction(panel.toggle_action)  # at its right end, after Settings
        waiting_dot(panel.fold.strip, self.approvals.changed, lambda: any(
            r.source == self.session.source for r in self.approvals.pending()))  # fmt: skip
        self.status = StatusLine(self)
        self.setStatusBar(self.status)
        self.themeChanged.connect(self.status.context_meter.set_colors)
        self.status.context_meter.set_colors(self.colors)
        self._progress.connect(self.status.set_progress)
        self.models = ModelChoice(self.desk, self.choices, self.toolbar, self.status,
                                  self._give_model, self._save_settings)  # fmt: skip
        self._offer_claude_rules()

    def _keep_layout(self, config: Path | None) -> LayoutKeeper:
        """Folds the empty inspector and plans for panes, restores (or sizes) the window,
        and remembers it in `config`/window.ini (None: nowhere)."""
        folds = [(self.side_panel.dock, self.side_panel.is_empty)]
        docks = [self.history_dock, self.side_panel.dock]
        path = config / "window.ini" if config is not None else None
        keeper = LayoutKeeper(self, self.pane_host, folds=folds, side_docks=docks, path=path)
        keeper.follow(self.pane_manager, self.sessionChanged)
        history, colors = self.history_dock, self.colors
        self.history_fold = fold_dock(self, history, colors, self.themeChanged, HISTORY_WIDTH)
        for fold in (self.side_panel.fold, self.history_fold):  # else over the content
            fold.fits, fold.panes_host = keeper.fits_beside, self.pane_host
        return keeper

    def _give_model(self, model: str) -> None:
        """Every open session (main and workers) uses `model` from its next leg."""
        self.session.loop.model = model  # in the melgui host too, when it runs there
        for _info, pane in self.pane_manager.panes():
            worker = getattr(pane, "session", None)  # an ACP agent pane's is not ours
            if isinstance(worker, AgentSession):
                worker.loop.model = model
        self.chat.show_model(self.desk.who_answers(model))

    def _offer_claude_rules(self) -> None:
        self._report_error(claude_rules_offer(len(self.desk.claude_rules_to_import())))

    def _new_session(self, conversation: Conversation, cid: str | None = None) -> MainSession:
        model, role = self.choices.model or self.settings.model, self.settings.role
        return self.sessions.main_or_hosted(conversation, cid, model=model, role=role)

    def _install(
        self,
        session: MainSession,
        failures: Failures = (),
        replacing: tuple[ChatView, Inspector] | None = None,
    ) -> None:
        """Make `session` the main one: new bridge, chat and inspector (`replacing` the old)."""
        old_chat = replacing[0] if replacing else None
        self.session = session
        self.bridge = self.bridge_for(session)
        self.bridge.loopEvent.connect(self._on_main_event)
        self.chat = ChatView(
            self.bridge, self.colors, self.pane_host, prompt=self.desk.prompt, draw=False
        )
        self.chat.failures = [(at, note.kind, note.text) for at, note in failures]
        self.chat.callActivated.connect(self.show_call)
        self.chat.actionRequested.connect(self._on_chat_action)
        self.chat.transcript.hover.retry = lambda: not self.session.busy  # the last answer
        self.chat.empty_note.set_local(self.settings.connection == "local")
        self._progress.connect(self.chat.thinking.set_stage)
        self.chat.show_model(self.desk.who_answers(self.choices.model))
        self.inspector = Inspector(
            self.bridge,
            self.colors,
            cwd=self.kit.folder,
            diff_provider=self.kit.diff,
            tasks=self.tasks,
            parent=self.side_panel.stack,  # made in place: a widget moved is restyled whole
        )
        # Connected to the widgets' own slots, so Qt drops them when the widgets go.
        self.themeChanged.connect(self.chat.set_colors)
        self.themeChanged.connect(self.inspector.set_colors)
        # insertWidget, not replaceWidget: PySide6 leaves a replacing widget owned by
        # Python, which then deletes it a second time after the window did.
        sizes = self.pane_host.sizes()
        if old_chat is not None:  # hidden first: the splitter never lays its page out again
            old_chat.hide()
        self.pane_host.insertWidget(0, self.chat)
        if old_chat is not None:
            old_chat.deleteLater()
            self.pane_host.setSizes([*sizes[:1], 0, *sizes[1:]])  # the old one: 0
        self.side_panel.set_page("inspector", self.inspector)  # the old one goes
        self.inspector.detail.cardRequested.connect(self.chat.answers.reveal)
        self.status.follow(self.bridge)
        join_chips(self.chat.composer, self.choices)
        self.status.context_meter.show_on(self.chat.composer.ring)
        self.chat.input.setFocus()
        self.sessionChanged.emit(session)  # hooks (checkpoints' card extras) go on first
        self.chat.load_conversation(session.conversation)  # drawn once

    def _on_chat_action(self, verb: str, _argument: str) -> None:
        if verb == "summary":  # the "Compacted here" divider's link
            self.status.context_meter.edit_summary()
        elif verb == BETTER_MODELS:  # the prompt box's "Get a better model…"
            open_settings_dialog(self, allowed_log(self._store(), self._report_error), verb)
        elif verb == "settings":  # the welcome screen's "Change it in Settings"
            self.open_settings()
        elif verb == "retry":  # a failed turn's Retry link, the last answer's ask-again
            self.status.showMessage(retry_last(self.session, self.chat), 10000)

    # --- the parts, composed ------------------------------------------------------------

    def _add_parts(self) -> None:
        """Make the panes, history, checkpoints, slash commands, plan mode, reviews, the
        context popup, MCP, the agents board, parallel work and remote folders, place them
        and connect them; then hand them the conversation."""
        desk, tasks, say = self.desk, self.tasks, lambda text: self.status.showMessage(text, 15000)
        panes = PaneManager(
            PaneArea(), self.kit.folder, colors=self.colors, worktrees=lambda: desk.worktrees,
            worker_factory=lambda s: self.session_factory("worker", s.model, s.source, s.worktree),
            bridge_factory=self.bridge_for, parent=self,  # its approvals reach self.approvals too
        )  # fmt: skip
        self.pane_manager = panes
        self.pane_host.addWidget(panes.area)
        keep_panes(panes, self)
        desk.panes = Orchestration(panes)  # the desk's seven pane tools run on them
        host_acp_agents(panes, desk, self.plans_panel.sink)
        self.approvalSourceRequested.connect(panes.show_call)
        self.remote = RemoteSide(
            panes, desk, self.settings.hosts, model=lambda: self.session.loop.model,
            status=self.status, colors=self.colors, opened=self._opened_remote, parent=self,
            say=lambda text: self.chat.show_note(text), trust=self.trust_bar,
        )  # fmt: skip
        panes.remote = self.remote  # workers and terminals on other machines
        self.history_keeper = ConversationHistory(
            open_store(), self.project_folder, self.open_conversation, self.new_conversation, self,
            load_calls=lambda records: self.inspector.load_stored(records),  # read after
        )  # fmt: skip
        self.history = self.history_keeper.sidebar
        self.history_dock = add_dock(self, "History", "historyDock", self.history, "left")
        self.history.problem.connect(say)
        self._report_error(self.history.store.notice or "")
        checkpoints = lambda: desk.checkpoints  # noqa: E731
        self.checkpoint_actions = CheckpointActions(checkpoints, tasks, self.colors, say, self)
        panes.panesChanged.connect(lambda: self.checkpoint_actions.attach_workers(panes))
        plans, show_plans = self.plans_panel, lambda: self.side_panel.reveal("plans")
        self.plan_mode = PlanModeControl(self.toolbar, plans, panes, self.colors, show_plans)
        self.reviews = Reviews(
            tasks, self.colors, folder=lambda: desk.folder, parent=self,
            reviewer=lambda: self.session_factory("worker", source=REVIEWER),
            to_new_worker=lambda task: panes.spawn_agent(task, None, "tab"),
        )  # fmt: skip
        meter = self.status.context_meter
        clicked = Meter(meter, meter.detailsRequested, meter.edit_summary)
        settings = lambda: self.settings  # noqa: E731
        self.context = ContextWiring(clicked, self.colors, settings=settings, say=say, parent=self)
        commands = desk.prompt.commands
        for command in (
            *slash_commands(self, commands), self.plan_mode.command(), *self.reviews.commands(),
            self.context.command(),
        ):  # fmt: skip
            commands.add(command)
        mcp = self.mcp = McpControls(desk, tasks, self.colors, self)
        self.mcp_panel = mcp.panel
        self.side_panel.add("mcp", "MCP", "plug", mcp.panel, tip="MCP servers")
        insert_below(self.waiting_bar, mcp.form, mcp.sampling)
        self.signals = watch_agents(  # the forms and sampling requests signal, are counted
            self, tasks, panes=panes, approvals=self.approvals, waiting_bar=self.waiting_bar,
            asks=(mcp.form, mcp.sampling), settings=settings,
            show_call=lambda c: self._show_approval(self.session.source, c),
            focus_chat=lambda: self.chat.input.setFocus(), desk=desk, colors=self.colors,
        )  # fmt: skip
        self.parallel = self.signals.parallel
        for dock in (self.signals.dock, self.parallel.dock):  # View → Agents board, Merge queue
            self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
            dock.hide()
        self.tabifyDockWidget(self.signals.dock, self.parallel.dock)
        for part in (
            panes, self.checkpoint_actions, self.plan_mode, self.reviews, self.context, self.mcp,
            self.signals, self.remote,
        ):  # fmt: skip
            self.themeChanged.connect(part.set_colors)
        self._show_parts(self.session)
        self.sessionChanged.connect(self._show_parts)
        self.chat.load_conversation(self.session.conversation)  # again, with their extras
        self.mcp.start()

    def _show_parts(self, session: MainSession) -> None:
        """The parts follow the main conversation, before its chat is drawn."""
        follow_folder(self.pane_manager, self.kit.folder, self)
        follow_history_and_checkpoints(self, session)  # the host's, when it runs there
        self.plan_mode.follow(session, self.chat)
        self.reviews.follow(session, self.chat)
        self.context.follow(session, self.chat)
        self.mcp.follow(session, self.chat, self.inspector)
        self.signals.follow_main(session)

    def _opened_remote(self, url: str, elsewhere: Elsewhere) -> None:
        """This window is remote folder `url`'s: a conversation on its tools, there."""
        self.sessions.elsewhere = elsewhere
        self.new_conversation()
        self.remote.take_main(lambda at: attach_there(self, at, self.desk.api_key), self.tasks)
        self.setWindowTitle(f"melgui — {url}")
        self.toolbar.set_folder(url)

    # --- seams for panes and history --------------------------------------------------

    def project_folder(self) -> str:
        return self.kit.folder

    def session_factory(
        self,
        role: Role,
        model: str | None = None,
        source: str = "worker",
        worktree: Worktree | None = None,
    ) -> AgentSession:
        """A new session on this window's connection, folder, rules and workspace tools
        (in `worktree`, a worker's own git worktree, when given); in the melgui host when
        the window is its view."""
        model = model or self.session.loop.model
        return self.sessions.worker_or_hosted(model, role, source, worktree)

    def bridge_for(self, session: ChatSession) -> SessionBridge:
        """A bridge for `session`; its approvals also go to the window's queue, its plans
        to the Plans panel."""
        bridge = SessionBridge(session, self.sessions.recorder(session), self.tasks, self)
        bridge.loopEvent.connect(self.approvals.take)
        source = session.source
        bridge.threadChange.connect(lambda change: self.plans_panel.take(source, change))
        return bridge

    def new_conversation(self) -> None:
        self.replace_session(Conversation())

    def open_conversation(self, resumed: Resumed) -> None:
        """Continue a stored conversation: its messages, calls, plans and repair note."""
        self.replace_session(resumed.conversation, resumed.failures, resumed.conversation_id)
        self.inspector.load_stored(resumed.tool_calls)
        for plan in resumed.plans:
            self.plans_panel.add_plan(plan.title, plan.markdown)
        conversation = self.session.conversation
        problem = show_compacted(self.chat, self._store(), resumed.conversation_id, conversation)
        if problem:
            self.status.showMessage(problem, 10000)
        note = resumed.describe()
        if note:
            self.chat.transcript.add_notice(note, self.colors.muted)

    def replace_session(  # `hosted`: the host's; `cid`: the history's, continued there
        self, conversation: Conversation, failures: Failures = (), cid: str | None = None,
        hosted: RemoteSession | None = None,
    ) -> None:  # fmt: skip
        old, old_bridge = self.session, self.bridge
        new = hosted or self._new_session(conversation, cid)
        self._install(new, failures, (self.chat, self.inspector))
        self.plans_panel.clear()  # plans are kept with their conversation
        old_bridge.detach()
        old_bridge.deleteLater()
        self.tasks.spawn(old.aclose(), what="closing the previous conversation")

    # --- the chips' and the toolbar's actions ---------------------------------------------

    def set_role(self, role: str) -> None:
        if role in ROLES:
            self.session.loop.role = role  # in the melgui host too, when it runs there
            self.settings.role = role
            self._save_settings()

    def set_model(self, model: str) -> None:
        self.models.choose(model)

    def change_folder(self, folder: str) -> None:
        """Work on another project folder: a new conversation there."""
        try:
            self.desk.change_folder(folder)
        except (ValueError, OSError) as exc:
            self._report_error(f"Cannot open {folder}: {exc}")
            return
        kit = self.desk.kit
        self.toolbar.set_folder(kit.folder)
        self.trust_bar.set_folder(kit.folder)
        self.setWindowTitle(f"melgui — {kit.folder}")
        self.new_conversation()
        self._offer_claude_rules()

    # --- approvals ------------------------------------------------------------------------

    def approve_key(self) -> bool:
        return answer_waiting(self, self.approvals, allow=True)

    def deny_key(self) -> bool:
        return answer_waiting(self, self.approvals, allow=False)

    def show_call(self, call_id: str) -> None:
        self.side_panel.reveal("inspector")  # slid in if it was folded away
        self.inspector.show_call(call_id)

    def _show_approval(self, source: str, call_id: str) -> None:
        if source == self.session.source:
            self.chat.answers.reveal(call_id)  # its card, where it is answered
        else:
            self.approvalSourceRequested.emit(source, call_id)

    def _on_main_event(self, event: LoopEvent) -> None:
        if isinstance(event, ApprovalNeeded):
            self.side_panel.bring("inspector")
        self.models.on_event(event)

    # --- settings ------------------------------------------------------------------------

    def toggle_trust(self) -> None:
        """Trust the folder, or take its trust back: one click either way."""
        self.trust_bar.decide(not self.trust_bar.trusted)

    def _trust_changed(self, trusted: bool) -> None:
        word = "trusted" if trusted else "restricted"
        self.status.showMessage(f"{self.trust_bar.folder} is {word} now.", 10000)
        self.mcp.start()  # in the melgui host, when the window is a view of it

    def open_settings(self) -> None:
        open_settings_dialog(self, allowed_log(self._store(), self._report_error))

    def _store(self) -> Store:
        return self.history.store

    def command_history(self) -> list[str]:
        """Past run_command commands for the rule editor, newest first, once each: this
        conversation's, then the stored ones of every kept conversation."""
        records = self.inspector.book.records.values()
        return past_commands(records, self._store(), self._report_error)

    def recorded_calls(self, conversations: int | None) -> Sequence[RecordedCall]:
        """The decided calls of the last `conversations` (None: all), for trying rules."""
        return self._store().calls.recorded(conversations)

    def apply_settings(self, new: Settings, api_key: str | None) -> None:
        old = self.settings
        previous = self.desk.apply_settings(new, api_key)
        if previous is not None:
            self.chat.empty_note.set_local(new.connection == "local")
            self.toolbar.set_connection(connection_label(new), "unknown")
            self.models.switched(old)
            self.tasks.spawn(previous.aclose(), what="closing the previous connection")
            self.tasks.spawn(self.models.refresh(), what="listing models")
        if old.focus_chat_keys != new.focus_chat_keys:
            set_focus_chat_keys(self.actions_by_name, new.focus_chat_keys)
        if old.theme != new.theme:
            self.set_theme(new)
        self._save_settings()

    def set_theme(self, settings: Settings) -> None:
        self.colors = theme_the_app(settings.theme)
        self.themeChanged.emit(self.colors)  # every themed widget listens

    def _save_settings(self) -> None:
        save_or_report(self.settings, self.persist_settings, self._report_error)

    # --- feedback and shutdown -------------------------------------------------------------

    def _report_error(self, text: str) -> None:
        if text:
            self.status.showMessage(text, 20000)

    async def aclose(self) -> None:
        """Stop every turn and tool, close the connection; the conversation stays valid."""
        self.bridge.detach()
        await self.pane_manager.aclose()
        await self.remote.aclose()
        await self.session.aclose()
        if self.host_view is not None:  # a host of the window's own ends with it
            await self.host_view.aclose()
        await self.desk.aclose()
        await self.tasks.aclose()
        self.history_keeper.close()  # last: a turn cut short above has recorded its end

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.guard.allow_close():
            event.ignore()  # the guard asks, and closes the window itself if told to
            return
        self.layout_keeper.save()
        self.pane_manager.close_soon()  # every pane's program and worker ends with the window
        self.session.stop()
        super().closeEvent(event)


def build_main_window(
    folder: str,
    settings: Settings,
    *,
    api_key: str | None = None,
    transport: Transport | None = None,
    persist_settings: bool = True,
) -> MainWindow:
    """The window on `folder` (tests pass settings pointing at a scripted server)."""
    return MainWindow(os.path.abspath(folder), settings, api_key=api_key, transport=transport,
                      persist_settings=persist_settings)  # fmt: skip
