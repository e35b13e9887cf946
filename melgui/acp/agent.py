"""The ACP agent: sessions on folders, prompts as melgui turns, cancel, and errors a
client can show."""

from __future__ import annotations

import os
import uuid
from typing import Any

from acp import PROTOCOL_VERSION, RequestError
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
)

from melgui import __version__
from melgui.acp.prompt_text import Block, UnsupportedContent, prompt_text
from melgui.acp.session import AcpSession
from melgui.core.config.settings import Settings
from melgui.core.protocol.catalog import Role


class MelguiAgent:
    """Serves melgui's loop and tools; one AcpSession per `session/new`."""

    def __init__(self, settings: Settings, *, api_key: str | None, model: str, role: Role):
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
                load_session=False,
                prompt_capabilities=PromptCapabilities(
                    image=False, audio=False, embedded_context=True
                ),
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
        if self._client is None:
            raise RequestError.internal_error({"message": "no client connected"})
        if not os.path.isabs(cwd) or not os.path.isdir(cwd):
            raise RequestError.invalid_params(
                {"message": f"cwd must be an absolute path to a folder, got {cwd!r}"}
            )
        session_id = uuid.uuid4().hex
        self.sessions[session_id] = AcpSession(
            session_id,
            self._client,
            cwd,
            self.settings,
            api_key=self.api_key,
            model=self.model,
            role=self.role,
        )
        return NewSessionResponse(session_id=session_id)

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
        session.session.submit(text)
        await session.session.wait_idle()
        await session.outbox.flush()
        result = session.session.last_result
        if result is None or result.outcome == "failed":
            reason = result.message if result else "the turn did not run"
            raise RequestError.internal_error({"message": reason})
        return PromptResponse(
            stop_reason="cancelled" if result.outcome == "cancelled" else "end_turn"
        )

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.session.stop()

    async def aclose(self) -> None:
        sessions = list(self.sessions.values())
        self.sessions.clear()
        for session in sessions:
            await session.aclose()
