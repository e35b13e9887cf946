"""From settings to a Transport: the Mel relay, an OpenAI-compatible server, or the local model.

Nothing configured means `local`. A setting that cannot work (no relay URL, a URL that
is not http(s)) gives a transport whose every leg fails with a message saying what to
fix, so the window shows it in the chat instead of failing to open.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from urllib.parse import urlsplit

from melgui.core.config.connection_settings import api_key_kind
from melgui.core.config.settings import Settings
from melgui.core.protocol.events import StreamError, StreamEvent
from melgui.core.protocol.transport import (
    LegRequest,
    ModelInfo,
    Transport,
    TransportError,
    WireSink,
)

ProgressSink = Callable[[str], None]


def url_problem(url: str, what: str) -> str | None:
    """A sentence saying why `url` cannot be used, or None when it looks usable."""
    if not url.strip():
        return f"No {what} is set: open Settings → Connection."
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return (
            f"The {what} {url!r} is not an http:// or https:// URL: "
            "fix it in Settings → Connection."
        )
    return None


def sends_reasoning(settings: Settings) -> bool:
    """Whether this connection sends earlier reasoning back (Settings.send_reasoning)."""
    return api_key_kind(settings) in settings.send_reasoning


class UnconfiguredTransport:
    """Stands in for a connection that cannot work; every use says what to fix."""

    name = "unconfigured"

    def __init__(self, message: str) -> None:
        self.message = message

    async def stream(
        self, request: LegRequest, wire: WireSink | None = None
    ) -> AsyncIterator[StreamEvent]:
        yield StreamError(self.message)

    async def list_models(self) -> list[ModelInfo]:
        raise TransportError(self.message)

    async def aclose(self) -> None:
        return None


def transport_name(settings: Settings) -> str:
    """The `name` of the transport make_transport gives for `settings`, without it."""
    if settings.connection == "relay" and url_problem(settings.relay_url, "") is None:
        return "relay"
    if settings.connection == "openai" and url_problem(settings.openai_base_url, "") is None:
        return "openai"
    return "local" if settings.connection not in ("relay", "openai") else "unconfigured"


def make_transport(
    settings: Settings, api_key: str | None, *, on_progress: ProgressSink | None = None
) -> Transport:
    """The transport for the configured connection; never raises for bad settings."""
    if settings.connection == "relay":
        problem = url_problem(settings.relay_url, "relay URL")
        if problem is not None:
            return UnconfiguredTransport(problem)
        from melgui.core.transports.relay import RelayTransport

        return RelayTransport(
            settings.relay_url.strip(),
            api_key,
            stream_path=settings.relay_stream_path,
            send_reasoning=sends_reasoning(settings),
        )
    if settings.connection == "openai":
        problem = url_problem(settings.openai_base_url, "server base URL")
        if problem is not None:
            return UnconfiguredTransport(problem)
        from melgui.core.transports.openai_compat import OpenAITransport

        return OpenAITransport(
            settings.openai_base_url.strip(), api_key, send_reasoning=sends_reasoning(settings)
        )
    from melgui.core.transports.local.llama import LocalTransport

    return LocalTransport(settings.local_model_path or None, on_progress=on_progress)


__all__ = [
    "UnconfiguredTransport",
    "make_transport",
    "sends_reasoning",
    "transport_name",
    "url_problem",
]
