"""The main window: chat on the left, room for panes on the right, inspector and plans docked.

Seams for the other parts of the app (stable; each part names the ones it uses in a
Protocol this window meets: PaneHost, HistoryHost, CommandHost, AgentPaneHost,
WorkerHost, SettingsHost, McpHost, SignalWindow, checkpoints' Host):

- `window.pane_host: QSplitter` — the central splitter: the chat column (0), the PaneArea.
- `window.tools: ToolRegistry` — the desk's main registry; its pane tools run on the
  window's panes (`window.desk.panes`, given by install_panes).
- `window.session` / `window.bridge` — the main conversation; `sessionChanged(session)`
  when it is replaced (new or reopened conversation, another folder).
- `window.session_factory(role, model=None, source="worker")` — a session on the same
  connection, folder, rules and workspace tools; `window.bridge_for(session)` gives it a
  SessionBridge whose approvals also go to `window.approvals` (an ApprovalQueue shown in
  the approval bar; `approvalSourceRequested(source, call_id)` asks that pane to show it).
- `window.plans_panel` (each bridge's plans), `window.tasks.spawn(coro, what=...)`,
  `window.colors` and `themeChanged(Colors)`; `window.new_conversation()`,
  `open_conversation(resumed)`, `project_folder()` for the history sidebar;
  `window.actions_by_name` (menus, palette), `window.desk.loss_registry` (what closing
  would lose), `window.layout_keeper`.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QDockWidget,
    QMainWindow,
    QVBoxLayout,
    QWidget,
)

from melgui.core.agent.policy import RulePolicy
from melgui.core.agent.session import AgentSession, ChatSession
from melgui.core.config.secrets import get_api_key
from melgui.core.config.settings import Settings, config_dir
from melgui.core.config.trust import FolderTrust
from melgui.core.protocol.catalog import ROLES, Role
from melgui.core.protocol.loop_events import ApprovalNeeded, LoopEvent
from melgui.core.protocol.messages import Conversation
from melgui.core.protocol.tooling import ToolRegistry, ToolRunner
from melgui.core.protocol.transport import Transport
from melgui.core.store.records import NoteRecord, RecordedCall
from melgui.core.transports.answerer import who_answers
from melgui.core.transports.connection import api_key_kind, connection_label
from melgui.core.worktrees.model import Worktree
from melgui.desk.desk import Desk
from melgui.desk.kit import WorkspaceKit
from melgui.desk.losses import session_losses
from melgui.ui.approvals.approval_bar import ApprovalBar
from melgui.ui.approvals.approval_queue import ApprovalQueue
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.chat.model_line import BETTER_MODELS
from melgui.ui.inspector.inspector import Inspector
from melgui.ui.notifications.install import install_signals
from melgui.ui.panes.splitter import Splitter
from melgui.ui.runtime.aio import TaskKeeper
from melgui.ui.runtime.bridge import SessionBridge
from melgui.ui.runtime.look.tokens import SPACE_XS, WINDOW_DEFAULT
from melgui.ui.runtime.quit_guard import QuitGuard
from melgui.ui.runtime.theme import colors_for, follow_system_scheme, theme_the_app
from melgui.ui.runtime.wire_recorder import WireRecorder
from melgui.ui.settings.flow import (
    allowed_log,
    claude_rules_offer,
    open_settings_dialog,
    past_commands,
    save_or_report,
)
from melgui.ui.window.commands import install_commands, set_focus_chat_keys
from melgui.ui.window.host_view import HostView
from melgui.ui.window.layout_state import LayoutKeeper, add_side_docks, one_side_panel
from melgui.ui.window.model_choice import ModelChoice
from melgui.ui.window.plans_panel import PlansPanel
from melgui.ui.window.status_line import StatusLine
from melgui.ui.window.toolbar import ProjectToolbar, join_composer
from melgui.ui.window.trust_bar import TrustBar

if TYPE_CHECKING:
    from melgui.core.store import Store
    from melgui.core.store.resume import Resumed
    from melgui.ui.window.palette import CommandPalette

Failures = Sequence[tuple[int, NoteRecord]]  # where a reopened conversation went wrong


class MainWindow(QMainWindow):
    sessionChanged = Signal(object)  # the new main AgentSession
    themeChanged = Signal(object)  # Colors
    approvalSourceRequested = Signal(str, str)  # (source, call id) of a pane's approval
    _progress = Signal(str)
    models: ModelChoice  # the model picker's logic, made with the toolbar
    status: StatusLine  # the status bar, with the context meter
    # A remote folder's: the chat's workspace tools and its folder there (melgui/ui/panes/remote).
    elsewhere: Callable[[], tuple[ToolRunner, str]] | None = None
    palette_dialog: CommandPalette | None = None  # the command palette, while it is open

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
        self._recorders: weakref.WeakKeyDictionary[ChatSession, WireRecorder] = (
            weakref.WeakKeyDictionary()
        )
        self._policies: weakref.WeakKeyDictionary[AgentSession, RulePolicy] = (
            weakref.WeakKeyDictionary()
        )
        self.plans_panel = PlansPanel(self.colors)
        self.desk = Desk(
            folder,
            settings,
            api_key=api_key if api_key is not None else get_api_key(api_key_kind(settings)),
            plans=_shown_from_threads,
            transport=transport,
            on_progress=self._progress.emit,
            on_rules_saved=self._save_settings,
        )
        self._build_chrome()
        self._install(self._new_session(Conversation()))
        from melgui.ui.panes.install import install_panes  # panes

        self.pane_manager = install_panes(self, self)
        from melgui.ui.panes.acp_install import install_acp  # ACP agent panes

        install_acp(self.desk, self.plans_panel.sink, self.pane_manager)
        from melgui.core.store import open_store  # history
        from melgui.ui.history import install_history

        self.history = install_history(self, self, open_store())
        from melgui.ui.checkpoints.actions import install_checkpoints

        self.checkpoint_actions = install_checkpoints(
            self, self, self.sessionChanged, self.pane_manager.panesChanged
        )
        from melgui.ui.chat.composer.builtin_commands import install_builtin_commands

        install_builtin_commands(self, self.desk.prompt.commands)
        from melgui.ui.window.plan_mode import install_plan_mode  # /plan, Approve and start

        self.plan_mode = install_plan_mode(self)
        from melgui.ui.window.review_command import install_review  # /review

        install_review(self)
        from melgui.ui.context.install import Meter, install_context  # breakdown, pins

        meter = self.status.context_meter
        clicked = Meter(meter, meter.detailsRequested, meter.edit_summary)
        self.context = install_context(self, self.sessionChanged, clicked)
        from melgui.ui.mcp.install import install_mcp  # MCP servers

        self.mcp_panel = install_mcp(self)
        self.signals = install_signals(self, self)  # agents board and signals
        from melgui.ui.board.parallel_install import install_parallel_work  # overlaps, queue

        self.parallel = install_parallel_work(self)
        one_side_panel(self)
        history_dock = self.history.parentWidget()
        assert isinstance(history_dock, QDockWidget)
        self.history_dock = history_dock
        self.actions_by_name = install_commands(self)
        self.setWindowTitle(f"melgui — {self.kit.folder}")
        self.layout_keeper = self._keep_layout(config_dir() if persist_settings else None)
        self.guard = QuitGuard(self, self.desk.loss_registry)
        self.host_view: HostView | None = None  # worker panes run in the melgui host
        from melgui.ui.panes.remote.install import install_remote  # remote folders and hosts

        self.remote = install_remote(self)
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
        return self._policies.get(self.session, self.desk.policy)

    @property
    def kit(self) -> WorkspaceKit:
        return self.desk.kit

    @property
    def tools(self) -> ToolRegistry:
        return self.desk.tools

    # --- construction ------------------------------------------------------------------

    def _build_chrome(self) -> None:
        self.toolbar = ProjectToolbar(self.colors, self)
        self.addToolBar(self.toolbar)
        self.themeChanged.connect(self.toolbar.set_colors)
        self.themeChanged.connect(self.plans_panel.set_colors)
        self.toolbar.set_folder(self.kit.folder)
        self.toolbar.set_role(self.settings.role)
        self.toolbar.set_model(self.settings.model)
        self.toolbar.set_connection(connection_label(self.settings), "unknown")
        self.toolbar.folderRequested.connect(lambda: self.actions_by_name["open_folder"].trigger())
        self.toolbar.roleChanged.connect(self.set_role)
        self.toolbar.modelChanged.connect(self.set_model)
        self.toolbar.refreshModels.connect(
            lambda: self.tasks.spawn(self.models.refresh(), what="listing models")
        )
        self.toolbar.settingsRequested.connect(self.open_settings)
        self.pane_host = Splitter(Qt.Orientation.Horizontal, self)  # wide handles
        self.pane_host.setChildrenCollapsible(False)
        self.approval_bar = ApprovalBar(self.approvals, self.colors, self)
        self.themeChanged.connect(self.approval_bar.set_colors)
        self.approval_bar.showRequested.connect(self._show_approval)
        central = QWidget(self)
        layout = QVBoxLayout(central)
        layout.setContentsMargins(SPACE_XS, SPACE_XS, SPACE_XS, 0)
        self.trust_bar = TrustBar(FolderTrust(), self.kit.folder, central)
        self.trust_bar.changed.connect(self._trust_changed)
        layout.addWidget(self.trust_bar)
        layout.addWidget(self.pane_host, 1)
        layout.addWidget(self.approval_bar)
        self.setCentralWidget(central)
        self.inspector_dock, self.plans_dock = add_side_docks(self, self.plans_panel)
        self.status = StatusLine(self)
        self.setStatusBar(self.status)
        self.themeChanged.connect(self.status.context_meter.set_colors)
        self.status.context_meter.set_colors(self.colors)
        self._progress.connect(self.status.set_progress)
        self.models = ModelChoice(
            self.desk, self.toolbar, self.status, self._give_model, self._save_settings
        )
        self._offer_claude_rules()

    def _keep_layout(self, config: Path | None) -> LayoutKeeper:
        """Folds the empty inspector and plans for panes, restores (or sizes) the window,
        and remembers it in `config`/window.ini (None: nowhere)."""
        keeper = LayoutKeeper(
            self,
            self.pane_host,
            folds=[
                (self.inspector_dock, lambda: not self.inspector.book.records),
                (self.plans_dock, lambda: not self.plans_panel.plans),
            ],
            side_docks=[self.history_dock, self.inspector_dock, self.plans_dock],
            path=config / "window.ini" if config is not None else None,
        )
        manager = self.pane_manager
        manager.panesChanged.connect(lambda: keeper.panes_changed(bool(manager.registry.all())))
        self.sessionChanged.connect(lambda _session: keeper.fit())  # a new chat, kept wide
        if not keeper.restore():
            self.resize(*WINDOW_DEFAULT)
            keeper.first_sizes()
        return keeper

    def _give_model(self, model: str) -> None:
        """Every open session (main and workers) uses `model` from its next leg."""
        self.session.loop.model = model
        for _info, pane in self.pane_manager.panes():
            worker = getattr(pane, "session", None)  # an ACP agent pane's is not ours
            if isinstance(worker, AgentSession):
                worker.loop.model = model
        self.chat.show_model(who_answers(self.settings, model))

    def _offer_claude_rules(self) -> None:
        self._report_error(claude_rules_offer(len(self.desk.claude_rules_to_import())))

    def _new_session(self, conversation: Conversation, source: str = "main") -> AgentSession:
        recorder = WireRecorder(secrets=(self.api_key,) if self.api_key else ())
        policy = self.desk.conversation_policy()  # its own "for this conversation" rules
        tools, cwd = self.elsewhere() if self.elsewhere is not None else (None, None)
        session = self.desk.session(
            conversation,
            model=self.toolbar.current_model() or self.settings.model,
            role=self.settings.role,
            wire=recorder,
            source=source,
            policy=policy,
            tools=tools,
            cwd=cwd,
        )
        self._recorders[session] = recorder
        self._policies[session] = policy
        return session

    def _install(
        self,
        session: AgentSession,
        failures: Failures = (),
        replacing: tuple[ChatView, Inspector] | None = None,
    ) -> None:
        """Make `session` the main conversation: new bridge, chat view and inspector
        (`replacing` the ones shown until now)."""
        old_chat, old_inspector = replacing or (None, None)
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
        self.chat.show_model(who_answers(self.settings, self.toolbar.current_model()))
        self.inspector = Inspector(
            self.bridge,
            self.colors,
            cwd=self.kit.folder,
            diff_provider=self.kit.diff,
            tasks=self.tasks,
            parent=self.inspector_dock,  # made in place: a widget moved is restyled whole
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
        self.inspector_dock.setWidget(self.inspector)
        if old_inspector is not None:
            old_inspector.deleteLater()
        self.status.follow(self.bridge)
        join_composer(self, self.status.context_meter)
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
        elif verb == "retry":  # the Retry link of a failed turn's notice
            from melgui.ui.window.conversation_actions import retry_last

            self.status.showMessage(retry_last(self.session, self.chat), 10000)

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
        if self.host_view is not None:
            model = model or self.session.loop.model
            remote: Any = self.host_view.worker(role, model, source, worktree)
            return remote
        recorder = WireRecorder(secrets=(self.api_key,) if self.api_key else ())
        session = self.desk.worker_session(
            model=model or self.session.loop.model,
            role=role,
            wire=recorder,
            source=source,
            worktree=worktree,
        )
        self._recorders[session] = recorder
        return session

    def bridge_for(self, session: ChatSession) -> SessionBridge:
        """A bridge for `session`; its approvals also go to the window's queue, its plans
        to the Plans panel."""
        bridge = SessionBridge(session, self._recorders.get(session), self.tasks, self)

        def to_queue(event: LoopEvent) -> None:
            if isinstance(event, ApprovalNeeded):
                self.approvals.add(event.request)

        bridge.loopEvent.connect(to_queue)
        source = session.source
        bridge.threadChange.connect(lambda change: self.plans_panel.take(source, change))
        return bridge

    def new_conversation(self) -> None:
        self._replace_session(Conversation())

    def open_conversation(self, resumed: Resumed) -> None:
        """Continue a stored conversation: its messages, calls, plans and repair note."""
        self._replace_session(resumed.conversation, resumed.failures)
        self.inspector.load_stored(resumed.tool_calls)
        for plan in resumed.plans:
            self.plans_panel.add_plan(plan.title, plan.markdown)
        from melgui.ui.window.conversation_actions import show_compacted

        conversation = self.session.conversation
        problem = show_compacted(self.chat, self._store(), resumed.conversation_id, conversation)
        if problem:
            self.status.showMessage(problem, 10000)
        note = resumed.describe()
        if note:
            self.chat.transcript.add_notice(note, self.colors.muted)

    def _replace_session(self, conversation: Conversation, failures: Failures = ()) -> None:
        old = self.session
        old_bridge = self.bridge
        self._install(self._new_session(conversation), failures, (self.chat, self.inspector))
        self.plans_panel.clear()  # plans are kept with their conversation
        old_bridge.detach()
        old_bridge.deleteLater()
        self.tasks.spawn(old.aclose(), what="closing the previous conversation")

    # --- toolbar actions ----------------------------------------------------------------

    def set_role(self, role: str) -> None:
        if role in ROLES:
            self.session.loop.role = role
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

    def approve_key(self) -> None:
        if not self.inspector.approve_current():
            self.approval_bar.controls.approve("once")

    def deny_key(self) -> None:
        if not self.inspector.deny_current():
            self.approval_bar.controls.deny()

    def show_call(self, call_id: str) -> None:
        self.inspector_dock.show()
        self.inspector_dock.raise_()
        self.inspector.show_call(call_id)

    def _show_approval(self, source: str, call_id: str) -> None:
        if source == self.session.source:
            self.show_call(call_id)
        else:
            self.approvalSourceRequested.emit(source, call_id)

    def _on_main_event(self, event: LoopEvent) -> None:
        if isinstance(event, ApprovalNeeded):
            self.inspector_dock.raise_()
        self.models.on_event(event)

    # --- settings ------------------------------------------------------------------------

    def toggle_trust(self) -> None:
        """Trust the folder, or take its trust back: one click either way."""
        self.trust_bar.decide(not self.trust_bar.trusted)

    def _trust_changed(self, trusted: bool) -> None:
        word = "trusted" if trusted else "restricted"
        self.status.showMessage(f"{self.kit.folder} is {word} now.", 10000)
        self.tasks.spawn(self.desk.start_mcp(), what="starting MCP servers")

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
        return self._store().recorded_calls(conversations)

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
        await self.desk.aclose()
        await self.tasks.aclose()

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
    return MainWindow(
        os.path.abspath(folder),
        settings,
        api_key=api_key,
        transport=transport,
        persist_settings=persist_settings,
    )


def _shown_from_threads(title: str, markdown: str) -> None:
    """write_plan's sink: the Plans panel takes each plan from its conversation's thread,
    where it knows whose it is (the main conversation's, a worker's)."""
