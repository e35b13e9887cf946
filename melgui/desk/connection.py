"""The live connection: one Transport object that every session of a desk holds.

A settings change swaps the transport behind it, so the main session and every worker
use the new server from their next leg on; nobody keeps a closed client.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from melgui.core.protocol.events import StreamEvent
from melgui.core.protocol.transport import LegRequest, ModelInfo, Transport, WireSink


class DeferredTransport:
    """A transport built on its first use: a window that is a host's view never uses its
    own (the host streams and lists the models), so it loads no HTTP client for it."""

    def __init__(self, name: str, build: Callable[[], Transport]) -> None:
        self.name = name
        self._build = build
        self._built: Transport | None = None

    @property
    def built(self) -> Transport:
        if self._built is None:
            self._built = self._build()
        return self._built

    def stream(
        self, request: LegRequest, wire: WireSink | None = None
    ) -> AsyncIterator[StreamEvent]:
        return self.built.stream(request, wire)

    async def list_models(self) -> list[ModelInfo]:
        return await self.built.list_models()

    async def aclose(self) -> None:
        if self._built is not None:
            await self._built.aclose()


class LiveConnection:
    """A Transport that forwards to the current one; `swap` replaces it."""

    def __init__(self, transport: Transport) -> None:
        self._current = transport
        self.generation = 0  # counts swaps, so a late answer can tell it is stale

    @property
    def current(self) -> Transport:
        """The transport itself (one deferred is built now)."""
        current = self._current
        return current.built if isinstance(current, DeferredTransport) else current

    @property
    def name(self) -> str:
        return self._current.name  # a deferred one's name needs no transport

    def stream(
        self, request: LegRequest, wire: WireSink | None = None
    ) -> AsyncIterator[StreamEvent]:
        return self._current.stream(request, wire)

    async def list_models(self) -> list[ModelInfo]:
        return await self._current.list_models()

    def swap(self, transport: Transport) -> Transport:
        """Use `transport` from now on; returns the previous one for the caller to close."""
        previous, self._current = self._current, transport
        self.generation += 1
        return previous

    async def aclose(self) -> None:
        await self._current.aclose()
