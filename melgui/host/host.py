"""Host: every desk and session of one user, Qt-free; what `melgui host` serves and what
a process can embed as it is.

    host = Host.open()                       # the journal and history of the data folder
    await host.reopen()                      # the sessions open when a host last ran
    session = await host.open_session("/p", model="m")
    session.prompt("hi"); batches = host.frame()   # [(session id, numbered records)]
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast, get_args

from melgui.core.config.connection_settings import api_key_kind
from melgui.core.config.redaction import MIN_SECRET, remember_secret
from melgui.core.config.secrets import get_api_key
from melgui.core.config.settings import Settings, SettingsError, load_settings
from melgui.core.protocol.catalog import ORCHESTRATION_TOOLS, Role
from melgui.core.protocol.tooling import ToolOutcome
from melgui.core.protocol.tools.mcp.asks import SamplingTarget
from melgui.core.protocol.views.agent_commands import AgentCommand
from melgui.core.store import Store, open_store
from melgui.core.worktrees.model import Worktree
from melgui.desk.desk import Desk
from melgui.desk.recording import start_recording
from melgui.host.change_journal import ChangeJournal, SessionRow, journal_path
from melgui.host.changes import ChangeLog, Record
from melgui.host.records import merge_records, worktree_from_json, worktree_to_json
from melgui.host.session import AGENT, APPROVAL, HostedAgent, HostedSession

log = logging.getLogger(__name__)

# What a view may set on a desk it opens a session on (the window sends its own).
# `sandbox_commands`: a loop-there session's commands in the sandbox the person set for
# that machine (its configured host's `sandbox`), not that machine's own setting.
SETTABLE = (
    "connection", "relay_url", "relay_stream_path", "openai_base_url", "model",
    "sandbox_commands",
)  # fmt: skip
WORKTREE = "worktree"  # a session row's setting: the worker's own git worktree
# A session row's setting: its model key came from the view (`session/open`'s `api_key`)
# and is held only in this process's memory. The journal keeps this flag, never the key.
KEY_SENT = "key_sent"
# A session row's setting: who the session is for a view ("main": a window's main
# conversation, reattached as such; "worker", "pane 2", …).
SOURCE = "source"
# A session row's setting: its commands' environment on top of the host's (a configured
# host's `env`, sent with `session/open`'s settings).
ENV = "env"
NOT_SETTINGS = (WORKTREE, KEY_SENT, SOURCE, APPROVAL, AGENT, ENV)
KEY_HELD = (
    "This conversation's loop runs on {machine}, with the model key your melgui sent: "
    "it is kept in the memory of melgui's host there only, never on its disk, and goes "
    "when that host ends."
)
NO_SANDBOX = (
    "Commands were to run in the sandbox on {machine}, but it cannot be used there: {why}. "
    "Each command is refused, not run unsandboxed, until the sandbox works there or you "
    "turn it off for that host."
)
KEY_LOST = (
    "This conversation's model key was held only in the memory of the melgui host that "
    "stopped, and is on no disk here: the loop cannot reach the model until a view sends "
    "the key again."
)


class UnknownSession(KeyError):
    pass


class KeyRefused(ValueError):
    """A key sent for a session that does not take one."""


class Host:
    def __init__(self, journal: ChangeJournal, store: Store | None) -> None:
        self.journal = journal
        self.store = store
        self.desks: dict[str, Desk] = {}
        self._keyed: dict[str, Desk] = {}  # a session's own desk, with the key it was sent
        self._closing: set[asyncio.Task[None]] = set()  # transports a new key replaced
        self.sessions: dict[str, HostedSession] = {}
        self.notices: list[str] = []
        # Keys views sent with `session/open`, in memory only: hidden from what the host
        # journals and sends (server.py), and from the history (`remember_secret`).
        self.sent_keys: tuple[str, ...] = ()
        # Told of each desk made for sessions on this machine's folders (HostMcp starts
        # the folder's MCP servers on the first one).
        self.on_desk: Callable[[Desk], None] | None = None

    @classmethod
    def open(cls, journal: Path | None = None) -> Host:
        """A host on the data folder's history and the user's journal (`journal`: one of
        its own instead, a window's private host's: ui/window/host_view/private_host.py)."""
        return cls(ChangeJournal(journal or journal_path()), open_store())

    # -- sessions ------------------------------------------------------------------------

    async def reopen(self) -> None:
        """Open again the sessions that were open when the last host ended; one that was
        mid-turn says the turn was cut."""
        for row in self.journal.open_sessions():
            if row.settings.get(AGENT):  # its agent was the host before's child: it ended
                self.journal.closed(row.id)
                continue
            try:
                session = self._start(row)
            except Exception as exc:  # a conversation that cannot be read stays closed
                log.exception("cannot reopen session %s", row.id)
                self.notices.append(f"session {row.id} could not reopen: {exc}")
                self.journal.closed(row.id)
                continue
            session.reopened()
            if row.settings.get(KEY_SENT):
                session.note(KEY_LOST)  # said in the chat; the record asks its view
                session.log.add({"type": "key_needed"})
            last = self.journal.last_of_type(row.id, ("prompt", "turn_end", "interrupted"))
            if last is not None and last["type"] == "prompt":
                session.mark_interrupted()

    async def open_session(
        self,
        folder: str,
        *,
        conversation: str | None = None,
        model: str = "",
        role: str = "assistant",
        settings: dict[str, Any] | None = None,
        worktree: Worktree | None = None,
        api_key: str | None = None,
        source: str = "",
    ) -> HostedSession:
        """A session on `folder`'s desk; a worker with `worktree` works in its own git
        worktree (kept with the session's settings, so a new host reopens it there).
        With `api_key`, the loop reaches the model with that key (a view's, sent once;
        "": the view has none), kept in this process's memory only, never with this
        machine's own key."""
        wanted = {k: v for k, v in (settings or {}).items() if k in SETTABLE}
        env = (settings or {}).get(ENV)
        if isinstance(env, dict) and env:
            wanted[ENV] = {str(k): str(v) for k, v in env.items()}
        if worktree is not None:
            wanted[WORKTREE] = worktree_to_json(worktree)
        if api_key is not None:
            self.hide(api_key)
            wanted[KEY_SENT] = True
        if source:
            wanted[SOURCE] = source
        row = SessionRow(uuid.uuid4().hex[:12], folder, conversation, model, role, wanted)
        session = self._start(row, api_key)
        self.journal.opened(session.row)
        machine = socket.gethostname() or "the remote machine"
        notes = [KEY_HELD.format(machine=machine)] if api_key is not None else []
        desk = session.desk
        if desk is not None and desk.settings.sandbox_commands:
            sandbox = desk.sandbox_status()
            if not sandbox.available:  # run_command refuses each command, as here
                notes.append(NO_SANDBOX.format(machine=machine, why=sandbox.message))
        session.first_note = "\n\n".join(notes)
        return session

    async def open_agent(
        self, folder: str, command: AgentCommand, *, source: str, resume: str | None = None
    ) -> HostedAgent:
        """An ACP agent's session on `folder`'s desk (its rules, MCP servers, hooks and
        checkpoints), its program started here at once (`resume`: the agent's id of an
        earlier session to reopen). The journal keeps its name and command, never its
        environment; a new host closes it instead of reopening it."""
        said = {"name": command.name, "command": command.text()}
        row = SessionRow(uuid.uuid4().hex[:12], folder, None, command.name, "worker",
                         {AGENT: said, SOURCE: source})  # fmt: skip
        desk = self._desk(folder, {})
        from melgui.desk.hosted_agents.factory import acp_session  # the ACP SDK: on first use

        acp = acp_session(desk, command, source or command.name, resume=resume)
        session = HostedAgent(row, acp, ChangeLog(row.id, self.journal, merge=merge_records), desk)
        self.sessions[row.id] = session
        self.journal.opened(row)
        return session

    def hide(self, key: str) -> None:
        """A key a view sent: hidden from everything this host writes or sends."""
        if len(key) >= MIN_SECRET and key not in self.sent_keys:
            self.sent_keys = (*self.sent_keys, key)
            self.journal.secrets = self.sent_keys
            remember_secret(key)

    def _start(self, row: SessionRow, api_key: str | None = None) -> HostedSession:
        wanted = {k: v for k, v in row.settings.items() if k not in NOT_SETTINGS}
        env = row.settings.get(ENV) or None
        if row.settings.get(KEY_SENT):
            desk = self._keyed[row.id] = self._desk_with(row.folder, wanted, api_key or None, env)
        else:
            desk = self._desk(row.folder, wanted, env)
        model = row.model or desk.settings.model
        worktree = row.settings.get(WORKTREE)
        source = str(row.settings.get(SOURCE) or "")
        recording = None
        if self.store is not None:
            recording = start_recording(
                self.store, desk.folder, model=model, role=row.role, resume_id=row.conversation
            )
            row = SessionRow(
                row.id, row.folder, recording.conversation_id, model, row.role, row.settings
            )
        wire = recording.record_wire if recording else None
        if worktree is not None:
            agent = desk.worker_session(
                model=model,
                role=_role(row.role),
                wire=wire,
                worktree=worktree_from_json(worktree),
                conversation=recording.conversation if recording else None,
                source=source or "worker",
            )
        else:
            agent = desk.session(
                recording.conversation if recording else None,
                model=model,
                role=_role(row.role),
                wire=wire,
                source=source or "main",
            )
        session = HostedSession(
            row, agent, recording, ChangeLog(row.id, self.journal, merge=merge_records), desk
        )
        if worktree is not None:  # its files are read here, for the views' boards
            session.read_worktree(worktree_from_json(worktree))
        if source == "main":  # a window's main conversation: its preview, as in a window
            session.preview_compactions(desk.settings.compaction_preview)
        approval = row.settings.get(APPROVAL)
        if isinstance(approval, dict):  # its view's, sent before this host (re)opened it
            try:
                session.set_approval(approval)
            except ValueError as exc:
                log.warning("session %s: its approval settings: %s", row.id, exc)
        if recording is not None and recording.resumed is not None and recording.resumed.repaired:
            session.log.add({"type": "notice", "level": "info",
                             "text": recording.resumed.describe() or ""})  # fmt: skip
        self.sessions[row.id] = session
        return session

    def _desk_with(
        self,
        folder: str,
        wanted: dict[str, Any],
        api_key: str | None,
        env: dict[str, str] | None = None,
    ) -> Desk:
        """A desk of one session's own, with the key its view sent (None: a host that
        reopened it has none yet), never this machine's own."""
        desk = Desk(folder, _settings(wanted), api_key=api_key, plans=_no_plan, env=env)
        for tool in ORCHESTRATION_TOOLS:
            desk.tools.register(tool.name, _needs_panes(tool.name))
        return desk

    def give_key(self, session_id: str, api_key: str) -> None:
        """The key a view sends again, for a session whose key this host never had (it
        reopened the session after a restart)."""
        session = self.session(session_id)
        desk = self._keyed.get(session_id)
        if desk is None:
            raise KeyRefused("this session reaches the model with this machine's own key")
        self.hide(api_key)
        previous = desk.apply_settings(desk.settings, api_key)
        if previous is not None:  # once the turn that may stream through it has ended
            closing = asyncio.get_running_loop().create_task(
                _close_after(session.agent.wait_idle(), previous.aclose())
            )
            self._closing.add(closing)
            closing.add_done_callback(self._closing.discard)

    def _desk(self, folder: str, wanted: dict[str, Any], env: dict[str, str] | None = None) -> Desk:
        key = json.dumps([folder, wanted, env or {}], sort_keys=True)
        desk = self.desks.get(key)
        if desk is None:
            settings = _settings(wanted)
            desk = Desk(
                folder, settings, api_key=get_api_key(api_key_kind(settings)), plans=_no_plan,
                env=env,
            )  # fmt: skip
            for tool in ORCHESTRATION_TOOLS:
                desk.tools.register(tool.name, _needs_panes(tool.name))
            self.desks[key] = desk
            if self.on_desk is not None:
                self.on_desk(desk)
        return desk

    def set_approval(self, session_id: str, approval: dict[str, Any]) -> list[str]:
        """A view's approval settings for one session (HostedSession.set_approval), kept
        in the journal with the session."""
        session = self.session(session_id)
        problems = session.set_approval(approval)
        self.journal.opened(session.row)
        return problems

    def desk_for(self, folder: str, settings: dict[str, Any]) -> Desk:
        """The desk sessions opened on `folder` with `settings` (a view's) work on."""
        return self._desk(folder, {k: v for k, v in settings.items() if k in SETTABLE})

    def loops_on(self, folder: str) -> list[SamplingTarget]:
        """Where the conversations on `folder` reach their model, the main one first (a
        folder's MCP server asks a model's answer through it)."""
        sessions = [s for s in self.sessions.values() if s.row.folder == folder]
        sessions.sort(key=lambda s: s.row.settings.get(SOURCE) != "main")
        return [
            SamplingTarget(s.agent.loop.transport, s.agent.loop.model, s.agent.loop.cwd)
            for s in sessions
        ]

    def session(self, session_id: str) -> HostedSession:
        try:
            return self.sessions[session_id]
        except KeyError:
            raise UnknownSession(session_id) from None

    async def close_session(self, session_id: str) -> None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            await session.aclose()
            self.journal.closed(session_id)
            if self.store is not None and session.row.conversation:
                # A window opened and closed, or New conversation with nothing said: no
                # empty entry is left in the history (the window's own records lazily).
                self.store.forget_if_empty(session.row.conversation)
        desk = self._keyed.pop(session_id, None)
        if desk is not None:
            await desk.aclose()

    # -- what runs -----------------------------------------------------------------------

    def running(self) -> list[HostedSession]:
        """Sessions mid-turn or with an approval waiting."""
        return [s for s in self.sessions.values() if s.busy or s.approvals]

    def agents_alive(self) -> bool:
        """An ACP agent runs (kept running with no view): it ends with the host, and no
        new host reopens it, so the host does not end by idleness while one runs."""
        sessions = self.sessions.values()
        return any(isinstance(s, HostedAgent) and s.phase != "failed" for s in sessions)

    def history(self, folder: str, query: str = "") -> list[dict[str, Any]]:
        """The conversations of `folder` in this host's history (its store, on its
        machine), newest first, as a window's sidebar lists its own (`query`: its search;
        not the empty ones, such as the main conversation a window has just opened)."""
        store = self.store
        folder = os.path.realpath(folder)
        rows = store.conversations(folder, query=query, empty=False) if store else []
        return [
            {"id": r.id, "title": r.title, "created_at": r.created_at, "updated_at": r.updated_at}
            for r in rows
        ]

    def frame(self) -> list[tuple[str, list[Record]]]:
        """Each session's changes of this frame, numbered (one batch per session)."""
        batches = []
        for session in self.sessions.values():
            if session.log.has_pending:
                batches.append((session.id, session.flush()))
        return batches

    async def aclose(self) -> None:
        """End every session (they stay open in the journal, for the next host)."""
        for session in list(self.sessions.values()):
            await session.aclose()
        self.frame()
        for desk in [*self.desks.values(), *self._keyed.values()]:
            await desk.aclose()
        if self.store is not None:
            self.store.close()
        self.journal.close()


def _role(text: str) -> Role:
    return cast(Role, text) if text in get_args(Role) else "assistant"


def _settings(wanted: dict[str, Any]) -> Settings:
    try:
        settings = load_settings()
    except SettingsError as exc:
        log.warning("settings: %s; using defaults", exc)
        settings = Settings()
    return settings.model_copy(update=wanted)


async def _close_after(turn: Awaitable[None], close: Awaitable[None]) -> None:
    await turn
    await close


def _no_plan(title: str, markdown: str) -> None:
    return None


def _needs_panes(name: str) -> Any:
    async def handler(arguments: dict[str, Any]) -> ToolOutcome:
        return ToolOutcome.error(
            f"{name} needs panes, which this melgui host does not run yet. Do the work "
            "with the other tools."
        )

    return handler
