"""Desk: one project folder at work, assembled without Qt.

    desk = Desk(folder, settings, api_key=key, plans=sink)
    session = desk.session(conversation, model="m", role="assistant")
    worker = desk.worker_session(model="m", source="pane 2")
    previous = desk.apply_settings(new_settings, key)   # close `previous` when not None

Every session, main and workers, streams through `desk.connection`, so a settings change
reaches all of them. The window adds Qt on top; `melgui exec` uses it as it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import uuid
import weakref
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from melgui.core.agent.session import AgentSession
from melgui.core.config.settings import Settings
from melgui.core.config.trust import FolderTrust
from melgui.core.hooks.call_steps import AfterStep
from melgui.core.hooks.hooks import HookFiles, Hooks
from melgui.core.hooks.there import GivesHooksThere, HooksThere
from melgui.core.lsp.diagnostics import DIAGNOSTICS_TOOL, ProjectDiagnostics
from melgui.core.protocol.approval import ApprovalPolicy
from melgui.core.protocol.calls import summarize
from melgui.core.protocol.catalog import Mode, Role, ToolCatalog
from melgui.core.protocol.context_window import ContextWindow
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.messages import Conversation
from melgui.core.protocol.tooling import RunsThere, ToolOutcome, ToolRegistry, ToolRunner
from melgui.core.protocol.tools.commands import SandboxStatus
from melgui.core.protocol.tools.mcp.view import McpView
from melgui.core.protocol.transport import Answerer, Transport, WireSink
from melgui.core.protocol.views.losses import LossRegistry
from melgui.core.protocol.views.servers_there import ServersThere
from melgui.core.rules.claude_rules import claude_rules
from melgui.core.rules.policy import FixedPolicy, RulePolicy
from melgui.core.rules.rule_scopes import Rule, RuleBook, parse_rules, rule_lines
from melgui.core.runtime.processes import user_shell
from melgui.core.transports.answerer import who_answers
from melgui.core.transports.connection import make_transport, transport_name
from melgui.core.transports.discovery import context_window
from melgui.core.worktrees.model import Worktree
from melgui.core.worktrees.workers import WorkerWorktrees, folder_in
from melgui.desk.connection import DeferredTransport, LiveConnection
from melgui.desk.kit import WorkspaceKit, WorkspaceTools
from melgui.desk.prompt.kit import PromptKit
from melgui.desk.runtime_tools import WithRuntimeTools
from melgui.tools.mcp.manager import McpManager
from melgui.tools.panes import NoPanes, Panes, add_pane_tools
from melgui.tools.pins import PIN_FACT, add_pin_tool

if TYPE_CHECKING:
    from melgui.core.store.checkpoints.checkpointer import Checkpointer
    from melgui.tools.context import PlanSink

CONNECTION_FIELDS = (
    "connection",
    "relay_url",
    "relay_stream_path",
    "openai_base_url",
    "send_reasoning",
    "local_model_path",
)


def _may_change_files(policy: ApprovalPolicy) -> bool:
    """False for `melgui exec --approve reads` (or `none`): no call it allows changes files,
    so a session under it has no checkpoint to prepare."""
    return not isinstance(policy, FixedPolicy) or policy.mode == "all"


def _in_loop() -> bool:
    """Whether an event loop runs: a snapshot can start in the background. (A window
    opens its first conversation before: it makes no checkpointer for it.)"""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _shell_name() -> str:
    """The user's shell's name, for the rules (run_command runs commands in it)."""
    return os.path.basename(user_shell(os.environ))


def connection_changed(old: Settings, new: Settings) -> bool:
    return any(getattr(old, name) != getattr(new, name) for name in CONNECTION_FIELDS)


class Desk:
    """The connection, tools, rules and sessions of one project folder."""

    def __init__(
        self,
        folder: str,
        settings: Settings,
        *,
        api_key: str | None,
        plans: PlanSink,
        transport: Transport | None = None,
        on_progress: Callable[[str], None] | None = None,
        on_rules_saved: Callable[[], None] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.settings = settings
        # Commands' environment on top of this process's (a configured host's `env`, for
        # a loop-there session in the host on that machine); None: this process's own.
        self.env = dict(env) if env else None
        self.api_key = api_key
        self._plans = plans
        self._on_progress = on_progress
        self._on_rules_saved = on_rules_saved
        self.connection = LiveConnection(transport or self._make_transport())
        self.kit = WorkspaceKit(folder, settings, api_key, plans, env=self.env)
        # Tool definitions added at run time (MCP servers, ACP agents) join every session.
        self.catalog = ToolCatalog()
        self.rule_problems: list[str] = []  # saved rule lines that could not be read
        # Told when the modes or the lasting rules changed (settings applied, a rule
        # learned): sessions that run elsewhere are sent them (ui/runtime/host_approvals.py).
        self.rules_changed: list[Callable[[], None]] = []
        self.policy = self._new_policy(RuleBook())
        self._load_rules()
        # The main registry: orchestration tools registered into it survive a change of
        # settings or folder (its workspace tools run in the current kit's context; they
        # join at its first use: a window that is a host's view runs none).
        self.tools: ToolRegistry = WorkspaceTools(lambda: self.kit.context)
        # What runs the pane tools: the window gives its panes; a host without them
        # (exec, ACP) gives NoPanes saying where the call ran, and the model reads that.
        self.panes: Panes = NoPanes()
        add_pane_tools(self.tools, lambda: self.panes)
        self.loss_registry = LossRegistry()
        # Snapshots of the folder around every call that can change files, for undo
        # (made at the first use: a window that is a host's view takes none).
        self._checkpoints: Checkpointer | None = None
        # The prompt box's slash commands, prompt history and `@` file index.
        self.prompt = PromptKit(self.kit.folder)
        # MCP servers: loaded and started by start_mcp(), stopped by aclose().
        self.mcp = McpManager(folder, self.catalog, self.tools)
        # A remote folder's window: its MCP servers run on that machine, none here.
        self.mcp_elsewhere = False
        self.mcp_there = ServersThere()  # the servers on other machines, for the MCP panel
        self._mcp_lock = asyncio.Lock()
        self._windows: dict[tuple[int, str, int | None], ContextWindow] = {}
        # Workers' own git worktrees; the kits of workers working in one (rebuilt with
        # the settings, like the main kit).
        self.worktrees = WorkerWorktrees(self.kit.folder, settings)
        self._worker_kits: weakref.WeakSet[WorkspaceKit] = weakref.WeakSet()
        # Hooks (melgui's own, and the project's while the folder is trusted), read as
        # their files are when each point runs.
        self.hook_files = HookFiles(self.kit.folder)
        # Language servers, per folder (the project's, a worker's worktree), on first use.
        self._diagnostics: dict[str, ProjectDiagnostics] = {}
        self.catalog.add(DIAGNOSTICS_TOOL)
        self.tools.register(DIAGNOSTICS_TOOL.name, self._diagnostics_tool)
        # pin_fact: melgui's own, not a seed tool; the thread takes the pin from its result.
        self.catalog.add(PIN_FACT)
        add_pin_tool(self.tools)

    @property
    def folder(self) -> str:
        return self.kit.folder

    def _make_transport(self) -> Transport:
        settings, api_key = self.settings, self.api_key  # as they are now
        return DeferredTransport(  # built on first use: a host's view never uses it
            transport_name(settings),
            lambda: make_transport(settings, api_key, on_progress=self._on_progress),
        )

    def who_answers(self, model: str = "") -> Answerer:
        """The model that answers on the desk's connection (`model`: the one chosen), and
        where it runs, for the prompt box."""
        return who_answers(self.settings, model)

    def ready_tools(self) -> None:
        """The tools' modules and context loaded now, before the first call needs them:
        the window runs its agents itself (a view of a host never does: it loads none)."""
        if isinstance(self.tools, WorkspaceTools):
            self.tools.fill()
        self.kit.context  # noqa: B018 (made now)

    @property
    def checkpoints(self) -> Checkpointer:
        """The snapshots of the desk's folder, for undo."""
        if self._checkpoints is None:
            self._checkpoints = self._make_checkpointer(self.folder)
        return self._checkpoints

    def _make_checkpointer(self, folder: str) -> Checkpointer:
        from melgui.core.store.checkpoints.checkpointer import Checkpointer

        mb = 1024 * 1024
        return Checkpointer(
            folder,
            max_file_bytes=int(self.settings.checkpoint_file_cap_mb * mb),
            keep_days=self.settings.checkpoint_keep_days,
            max_bytes=int(self.settings.checkpoint_max_mb * mb),
        )

    def checkpoint_guard(self, call: ToolCall, source: str) -> AbstractAsyncContextManager[object]:
        """Around every call that can change files, main and workers alike: a checkpoint
        before it and when its result arrives (serialised per folder)."""
        tool = self.catalog.get(call.name)
        if not self.settings.checkpoints or tool is None or not tool.takes_checkpoint:
            return contextlib.nullcontext()
        summary = summarize(call.name, call.parsed, tool=tool)
        return self.checkpoints.guard(call.id, call.name, summary, source=source)

    def checkpoint_there(
        self, catalog: ToolCatalog | None = None
    ) -> Callable[[str, dict[str, Any]], str | None]:
        """For a session whose tools run on another machine (whose host takes the
        checkpoints there): a call's summary when it takes a checkpoint, else None."""
        lookup = catalog or self.catalog

        def summary(name: str, arguments: dict[str, Any]) -> str | None:
            tool = lookup.get(name)
            if not self.settings.checkpoints or tool is None or not tool.takes_checkpoint:
                return None
            return summarize(name, arguments, tool=tool)

        return summary

    # -- rules ---------------------------------------------------------------------------

    def _new_policy(
        self, book: RuleBook, project: str | None = None, catalog: ToolCatalog | None = None
    ) -> RulePolicy:
        """`catalog`: the session's, when its tools are not only the desk's (a session
        whose tools run on another machine): its tools' origins and defaults."""
        lookup = catalog or self.catalog
        return RulePolicy(
            modes=self.policy.modes if hasattr(self, "policy") else {},
            book=book,
            project=project or self.folder,
            sandbox_answers=self.sandbox_answers,
            sandbox_on=self.sandbox_on,
            on_saved_change=self._rules_saved,
            origin_of=lambda name: self._origin_of(name, lookup),
            runtime_default=lambda name: self._runtime_default(name, lookup),
            shell=_shell_name(),
        )

    def _load_rules(self) -> None:
        """Put the settings' rules into the lists every policy of this desk shares."""
        settings = self.settings
        self.policy.modes.clear()
        self.policy.modes.update(settings.approval_modes)
        book = self.policy.book
        book.everywhere[:], everywhere_problems = parse_rules(settings.rules, "everywhere")
        lines = settings.project_rules.get(self.folder, [])
        book.project[:], project_problems = parse_rules(lines, "project")
        self.rule_problems = everywhere_problems + project_problems
        self.policy.project = self.folder
        for listener in list(self.rules_changed):
            listener()

    def claude_rules_to_import(self) -> list[Rule]:
        """Claude Code permission rules of this project melgui does not have yet."""
        present = set(self.policy.book)
        found = [i.rule for i in claude_rules(self.folder) if i.rule is not None]
        return [rule for rule in dict.fromkeys(found) if rule not in present]

    def _origin_of(self, name: str, catalog: ToolCatalog) -> str:
        tool = catalog.get(name)
        return tool.origin if tool is not None else "melgui"

    def _runtime_default(self, name: str, catalog: ToolCatalog) -> Mode:
        """A tool added at run time: its ToolDef's default (the MCP bridge makes it "auto"
        only for a trusted server's readOnlyHint tool); "ask" when it is unknown."""
        tool = catalog.get(name)
        return tool.approval if tool is not None else "ask"

    def is_read_only(self, name: str) -> bool:
        """The tool changes nothing outside the conversation: a built-in read-only tool, a
        trusted MCP server's readOnlyHint tool (its ToolDef), or pin_fact; what the
        headless "reads" mode runs."""
        tool = self.catalog.get(name)
        return tool is not None and tool.changes_nothing_outside

    def sandbox_status(self) -> SandboxStatus:
        """Whether run_command can be sandboxed where this desk runs it, or why not."""
        from melgui.tools.commands.sandbox import sandbox_status

        return sandbox_status()

    def sandbox_on(self) -> bool:
        """run_command runs in the sandbox (the setting is on and bwrap works here)."""
        return self.settings.sandbox_commands and self.sandbox_status().available

    def sandbox_answers(self) -> bool:
        """Commands the rules do not cover run sandboxed without asking."""
        return self.settings.sandbox_without_asking and self.sandbox_on()

    def _rules_saved(self) -> None:
        book = self.policy.book
        self.settings.approval_modes = dict(self.policy.modes)
        self.settings.rules = rule_lines(book.everywhere)
        if book.project:
            self.settings.project_rules[self.folder] = rule_lines(book.project)
        else:
            self.settings.project_rules.pop(self.folder, None)
        if self._on_rules_saved is not None:
            self._on_rules_saved()
        for listener in list(self.rules_changed):
            listener()

    # -- sessions ------------------------------------------------------------------------

    def session(
        self,
        conversation: Conversation | None = None,
        *,
        model: str,
        role: Role,
        source: str = "main",
        wire: WireSink | None = None,
        policy: ApprovalPolicy | None = None,
        tools: ToolRunner | None = None,
        cwd: str | None = None,
        catalog: ToolCatalog | None = None,
    ) -> AgentSession:
        """A main session: the desk's registry (with orchestration tools) and rules; by
        default a policy of its own (`conversation_policy`), so what the person allows
        "for this conversation" stays in it.

        `tools`, `cwd` and `catalog`: a folder elsewhere (a remote folder's RemoteTools,
        its path there, and a CatalogThere with its MCP servers' tools); its checkpoints
        are taken by the host there, the files are not on this machine."""
        policy = policy or self.conversation_policy(catalog=catalog)
        if tools is not None:
            return self._session(
                tools, policy, conversation, model, role, source, wire, cwd=cwd, guarded=False,
                catalog=catalog,
            )  # fmt: skip
        return self._session(self.tools, policy, conversation, model, role, source, wire)

    def worker_session(
        self,
        *,
        model: str,
        role: Role = "worker",
        source: str = "worker",
        wire: WireSink | None = None,
        worktree: Worktree | None = None,
        conversation: Conversation | None = None,
        tools: ToolRunner | None = None,
        cwd: str | None = None,
        catalog: ToolCatalog | None = None,
    ) -> AgentSession:
        """A worker: workspace tools only, the saved rules shared, its own session rules
        (resuming `conversation` when given: a host reopening a worker).

        `tools`, `cwd` and `catalog`: a worker on another machine (its RemoteTools, its
        folder there and a CatalogThere with that machine's MCP servers' tools); its
        checkpoints are taken by the host there, the files are not on this machine.

        With a `worktree` it works there: its cwd, file tools and (sandboxed) commands are
        confined to the project's place in the worktree, which git versions (no
        checkpoints); remember/recall still use the project's memory.
        """
        if tools is not None:
            policy = self.worker_policy(project=cwd, catalog=catalog)
            return self._session(
                tools, policy, conversation, model, role, source, wire, cwd=cwd, guarded=False,
                catalog=catalog,
            )  # fmt: skip
        if worktree is None:
            tools = WithRuntimeTools(self.kit.registry(), self.tools, self.catalog)
            policy = self.worker_policy()
            return self._session(tools, policy, conversation, model, role, source, wire)
        folder = str(folder_in(worktree, self.folder))
        kit = WorkspaceKit(
            folder, self.settings, self.api_key, self._plans, memory_project=self.folder,
            env=self.env,
        )  # fmt: skip
        self._worker_kits.add(kit)
        tools = WithRuntimeTools(kit.registry(), self.tools, self.catalog)
        policy = self.worker_policy(project=kit.folder)
        return self._session(
            tools, policy, conversation, model, role, source, wire, cwd=kit.folder, guarded=False
        )

    def _session(
        self,
        tools: ToolRunner,
        policy: ApprovalPolicy,
        conversation: Conversation | None,
        model: str,
        role: Role,
        source: str,
        wire: WireSink | None,
        *,
        cwd: str | None = None,
        guarded: bool = True,
        catalog: ToolCatalog | None = None,
    ) -> AgentSession:
        folder = cwd or self.folder
        if guarded and self.settings.checkpoints and _may_change_files(policy) and _in_loop():
            self.checkpoints.warm()  # the folder's snapshot, in the background
        after: AfterStep = self.diagnostics_for(folder)
        there = tools.hooks_there() if isinstance(tools, GivesHooksThere) else None
        if isinstance(tools, RunsThere):
            if tools.checkpoint is None:
                tools.checkpoint = self.checkpoint_there(catalog)  # taken by the host there
            if isinstance(tools, AfterStep):  # the language servers there, by its host
                after = tools
        return AgentSession(
            self.connection,
            tools,
            policy,
            conversation,
            model=model,
            role=role,
            cwd=folder,
            wire=wire,
            source=source,
            catalog=catalog or self.catalog,
            around_call=self.checkpoint_guard if guarded else None,
            window_lookup=self.context_window,
            hooks=self.hooks_for(folder, there),
            after_call=(after,),
        )

    def diagnostics_for(self, folder: str) -> ProjectDiagnostics:
        """The language servers of `folder`, off while it is untrusted."""
        if folder not in self._diagnostics:
            trust = FolderTrust()
            self._diagnostics[folder] = ProjectDiagnostics(
                folder,
                trusted=lambda: trust.is_trusted(folder),
                configured=lambda: self.settings.language_servers,
            )
        return self._diagnostics[folder]

    async def _diagnostics_tool(self, arguments: dict[str, Any]) -> ToolOutcome:
        return await self.diagnostics_for(self.folder).tool(arguments)

    def hooks_for(self, folder: str, there: HooksThere | None = None) -> Hooks:
        """The hooks of one conversation (a session, a hosted agent) working in `folder`;
        `there`: the folder is on another machine (`folder` its path there), whose host
        runs the project's hooks; the person's own run here, in the desk's folder (a
        remote folder's stand-in: docs/host-protocol.md says why)."""
        if there is not None:
            files = HookFiles(self.folder, project_files=False)
            return Hooks(files, cwd=folder, session_id=str(uuid.uuid4()), there=there)
        files = self.hook_files if folder == self.folder else HookFiles(folder)
        return Hooks(files, cwd=folder, session_id=str(uuid.uuid4()))

    def prompt_for(self, folder: str) -> PromptKit:
        """A prompt box of its own over `folder` (an ACP agent pane's: its commands join
        its `/` list, not the window's)."""
        return PromptKit(folder)

    async def context_window(self, model: str) -> ContextWindow:
        """The model's window on the current connection, asked once per connection."""
        setting = self.settings.context_windows.get(model)
        key = (self.connection.generation, model, setting)
        if key not in self._windows:
            self._windows[key] = await context_window(
                self.connection.current, model, setting=setting
            )
        return self._windows[key]

    def conversation_policy(
        self, project: str | None = None, catalog: ToolCatalog | None = None
    ) -> RulePolicy:
        """The policy of one conversation (main or worker): the tool settings, project and
        everywhere rules shared with every policy of this desk; "for this conversation"
        its own. `project`: the folder its commands must stay in (a worker's worktree),
        the desk's folder by default."""
        book = self.policy.book
        return self._new_policy(
            RuleBook(project=book.project, everywhere=book.everywhere), project, catalog
        )

    def worker_policy(
        self, project: str | None = None, catalog: ToolCatalog | None = None
    ) -> RulePolicy:
        return self.conversation_policy(project, catalog)

    # -- changes -------------------------------------------------------------------------

    def apply_settings(self, new: Settings, api_key: str | None) -> Transport | None:
        """Use `new` everywhere; returns the previous transport when the connection changed
        (the caller closes it once nothing streams through it)."""
        old = self.settings
        self.settings = new
        # Workers' policies share these collections: update them in place, here only.
        self._load_rules()
        previous: Transport | None = None
        if connection_changed(old, new) or api_key != self.api_key:
            self.api_key = api_key
            previous = self.connection.swap(self._make_transport())
        self.kit.rebuild(new, self.api_key)
        self.worktrees.settings = new
        for kit in list(self._worker_kits):
            kit.rebuild(new, self.api_key)
        mb = 1024 * 1024
        if self._checkpoints is not None:  # else made with these settings at its first use
            self._checkpoints.snapshots.max_file_bytes = int(new.checkpoint_file_cap_mb * mb)
            self._checkpoints.keep_days = new.checkpoint_keep_days
            self._checkpoints.max_bytes = int(new.checkpoint_max_mb * mb)
        return previous

    def change_folder(self, folder: str) -> None:
        """Work on `folder`; raises ValueError or OSError when it cannot be opened."""
        kit = WorkspaceKit(folder, self.settings, self.api_key, self._plans, env=self.env)
        self.kit = kit
        if self._checkpoints is not None:
            self._checkpoints.close()
        self._checkpoints = None  # the new folder's, at its first use
        self._load_rules()  # this project's rules, in the lists every policy shares
        self.prompt.set_folder(kit.folder)
        self.worktrees = WorkerWorktrees(kit.folder, self.settings)
        self.hook_files = HookFiles(kit.folder)

    # -- MCP servers ---------------------------------------------------------------------

    async def start_mcp(self, *, extra: Path | None = None, configured: bool = True) -> None:
        """Load the MCP configuration and start every enabled, trusted server together.

        `configured=False` skips the user's and the project's files (`--no-mcp`); `extra`
        is a file named by the person (`--mcp-config`), trusted as such. Servers that
        fail say why in their state; this never raises for a server's fault.
        """
        async with self._mcp_lock:  # one (re)start at a time: the window may ask twice
            await self.mcp.aclose()
            self.mcp.folder = self.folder
            here = configured and not self.mcp_elsewhere
            self.mcp.load(extra=None if self.mcp_elsewhere else extra, user=here, project=here)
            await self.mcp.start_all()

    @functools.cached_property
    def mcp_view(self) -> McpView:
        """The servers as a window sees and drives them (core/protocol/tools/mcp/view.py)."""
        from melgui.desk.mcp.local import LocalMcp

        return LocalMcp(self)

    async def aclose(self) -> None:
        for diagnostics in self._diagnostics.values():
            await diagnostics.aclose()
        await self.mcp.aclose()
        await self.connection.aclose()
        if self._checkpoints is not None:
            await self._checkpoints.aclose()
