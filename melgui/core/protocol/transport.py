"""What every transport offers the agent loop: one leg in, a stream of events out; and
what the window is told of models: who answers, the servers and model files found on
this computer, and a model download's progress."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from melgui.core.protocol.catalog import Role, ToolDef
from melgui.core.protocol.events import StreamEvent, WireEntry

ToolChoice = Literal["auto", "none", "required"] | dict[str, Any]
WireSink = Callable[[WireEntry], None]
# Listens to a session's wire log as it is written: takes a sink, returns its unsubscribe.
WireListen = Callable[[WireSink], Callable[[], None]]


@dataclass(frozen=True, slots=True)
class LegRequest:
    """Everything one leg sends (docs/wire-protocol.md §2, §3)."""

    model: str
    messages: list[dict[str, Any]]
    tools: tuple[ToolDef, ...]
    tool_role: Role
    cwd: str
    tool_choice: ToolChoice = "auto"


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """A model a server offers. `supports_tools` is None when the server does not say."""

    id: str
    supports_tools: bool | None = None
    name: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def takes_images(self) -> bool | None:
        """Whether the server's model list says the model reads images; None when silent.

        OpenRouter: `architecture.input_modalities`; others: `input_modalities`,
        `modalities`, `capabilities` (["vision", …]) or LM Studio's `type` "vlm"."""
        extra = self.extra
        architecture = extra.get("architecture")
        for value in (
            architecture.get("input_modalities") if isinstance(architecture, dict) else None,
            extra.get("input_modalities"),
            extra.get("modalities"),
        ):
            if isinstance(value, dict):
                value = value.get("input")
            if isinstance(value, list):
                return "image" in value
        capabilities = extra.get("capabilities")
        if isinstance(capabilities, list) and capabilities:
            return "vision" in capabilities or "image" in capabilities
        if extra.get("type") in ("vlm", "llm"):
            return extra["type"] == "vlm"
        return None


class Transport(Protocol):
    """One leg = one POST = one quota unit (docs/tools.md)."""

    @property
    def name(self) -> str:
        """Which kind of server: "relay", "openai", "local", …"""
        ...

    def stream(
        self, request: LegRequest, wire: WireSink | None = None
    ) -> AsyncIterator[StreamEvent]:
        """Send the leg and yield its events; ends after ToolCalls, Done or StreamError.

        Never raises for network or server trouble: that is a StreamError event.
        """
        ...

    async def list_models(self) -> list[ModelInfo]:
        """The server's models, tool-capable ones first. Raises TransportError."""
        ...

    async def aclose(self) -> None: ...


class TransportError(Exception):
    """A non-streaming call (list models, memory) failed; the message is for people."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def sort_models(models: list[ModelInfo]) -> list[ModelInfo]:
    """Tool-capable first, then unknown, then those that cannot take tools (docs/tools.md)."""
    rank = {True: 0, None: 1, False: 2}
    return sorted(models, key=lambda m: (rank[m.supports_tools], m.id))


# --- what the window is told of models ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class Answerer:
    """`name` (the model), `where` ("on this computer", "at api.openai.com"), and
    whether it is a small local model, which answers only simple questions."""

    name: str
    where: str
    small: bool = False


@dataclass(frozen=True, slots=True)
class FoundServer:
    """A server that answered; `base_url` is what the OpenAI-compatible connection takes."""

    name: str
    base_url: str
    models: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FoundModelFile:
    """A GGUF file the embedded engine can load; `name` is what its owner calls it."""

    source: str
    name: str
    path: str
    size: int


@dataclass(frozen=True, slots=True)
class DownloadProgress:
    """How far a model download is: its bytes `done` of `total`, then the SHA-256 check."""

    stage: Literal["downloading", "checking"]
    done: int
    total: int
