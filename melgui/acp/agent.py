"""The ACP agent: sessions on folders, prompts as melgui turns, cancel, and errors a
client can show."""

from __future__ import annotations

import logging
import os
import uuid
from typing import Any

from acp import PROTOCOL_VERSION, RequestError
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
)
from acp.schema import Usage as AcpUsage

from melgui import __version__
from melgui.acp.prompt_text import Block, UnsupportedContent, prompt_text
from melgui.acp.session import AcpSession
from melgui.core.config.settings import Settings
from melgui.core.protocol.catalog import Role
from melgui.core.protocol.events import Usage
from melgui.core.store import open_store
from melgui.desk.recording import Recording, UnknownConversationError, start_recording

log = logging.getLogger(__name__)


def _folder(cwd: str) -> str:
    if not os.path.isabs(cwd) or not os.path.isdir(cwd):
        raise RequestError.invalid_params(
            {"message": f"cwd must be an absolute path to a folder, got {cwd!r}"}
        )
    return cwd


def _usage(usage: Usage | None) -> AcpUsage | None:
    """The turn's tokens (an unstable part of ACP; clients may ignore it)."""
    if usage is None:
        return None
    return AcpUsage(
        total_tokens=usage.total_tokens,
        input_tokens=usage.prompt_tokens,
        output_tokens=usage.completion_tokens,
    )


class MelguiAgent:
    """Serves melgui's loop and tools; one AcpSession per `session/new`."""

    def __init__(
        self,
        settings: Settings,
        *,
        api_key: str | None,
        model: str,
        role: Role,
        history: bool = True,
        mcp: bool = True,
    ) -> None:
        """With `history`, sessions are kept in melgui's history (the window lists them)
        under their session id, and `session/load` goes on with one."""
        self.history = history
        self.mcp = mcp
        self.settings = settings
        self.api_key = api_key
        self.model = model
        self.role = role
        self.sessions: dict[str, AcpSession] = {}
        self._client: Client | None = None

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
        **kwargs: Any,
    ) -> InitializeResponse:  # fmt: skip
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=self.history,
                prompt_capabilities=PromptCapabilities(
                    image=False, audio=False, embedded_context=True
                ),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
            ),
            agent_info=Implementation(name="melgui", title="melgui", version=__version__),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        raise RequestError.invalid_params(
            {"message": "melgui acp needs no authentication; its API key comes from "
             "MELIAI_API_KEY / OPENAI_API_KEY or the system keyring"}
        )  # fmt: skip

    async def new_session(
        self, cwd: str, mcp_servers: Any = None, **kwargs: Any
    ) -> NewSessionResponse:
        folder = _folder(cwd)
        recording = self._record(folder, None) if self.history else None
        session_id = (recording.conversation_id if recording else None) or uuid.uuid4().hex
        session = await self._open(session_id, folder, recording, mcp_servers or [])
        # Queued now, sent by the outbox after this response (the SDK queues its reply
        # before the outbox's task next runs).
        session.offer_commands()
        return NewSessionResponse(session_id=session.id)

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: Any = None, **kwargs: Any
    ) -> LoadSessionResponse:
        """Go on with a stored conversation; the client is shown it first."""
        if not self.history:
            raise RequestError.invalid_request(
                {"message": "this melgui acp runs with --no-history; nothing can be loaded"}
            )
        folder = _folder(cwd)
        if session_id in self.sessions:
            raise RequestError.invalid_request({"message": f"session {session_id} is open"})
        recording = self._record(folder, session_id)
        stored_id = recording.conversation_id or session_id  # the whole id of a prefix
        session = await self._open(stored_id, folder, recording, mcp_servers or [])
        await session.replay()
        session.offer_commands()
        return LoadSessionResponse()

    def _record(self, folder: str, resume_id: str | None) -> Recording:
        try:
            return start_recording(
                open_store(),
                folder,
                model=self.model,
                role=self.role,
                resume_id=resume_id,
                on_problem=lambda text: log.warning("%s", text),
            )
        except UnknownConversationError as exc:
            raise RequestError.resource_not_found(str(exc)) from None

    async def _open(
        self, session_id: str, folder: str, recording: Recording | None, mcp_servers: list[Any]
    ) -> AcpSession:
        if self._client is None:
            raise RequestError.internal_error({"message": "no client connected"})
        session = AcpSession(
            session_id,
            self._client,
            folder,
            self.settings,
            api_key=self.api_key,
            model=self.model,
            role=self.role,
            recording=recording,
        )
        if recording is not None:
            for notice in recording.notices:
                log.warning("%s", notice)
        self.sessions[session_id] = session
        if self.mcp or mcp_servers:  # --no-mcp leaves out the configured ones only
            await session.start_mcp(configured=self.mcp, passed=mcp_servers)
        return session

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"message": f"no session {session_id!r}"})
        return session

    async def prompt(self, prompt: list[Block], session_id: str, **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        if session.session.busy:
            raise RequestError.invalid_request(
                {"message": "a prompt is already running in this session"}
            )
        try:
            text = prompt_text(prompt)
        except UnsupportedContent as exc:
            raise RequestError.invalid_params({"message": str(exc)}) from None
        if not text:
            raise RequestError.invalid_params({"message": "the prompt is empty"})
        session.turn_usage = None
        session.session.submit(session.commands.expand(text))
        await session.session.wait_idle()
        await session.outbox.flush()
        result = session.session.last_result
        if result is None or result.outcome == "failed":
            reason = result.message if result else "the turn did not run"
            raise RequestError.internal_error({"message": reason})
        if result.outcome == "cancelled":
            return PromptResponse(stop_reason="cancelled")
        return PromptResponse(stop_reason="end_turn", usage=_usage(session.turn_usage))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.session.stop()

    async def aclose(self) -> None:
        sessions = list(self.sessions.values())
        self.sessions.clear()
        for session in sessions:
            await session.aclose()
