"""What both HTTP transports share: the server, its key, one client, a leg, the model list."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any, TypedDict

import httpx

from melgui.core.protocol.events import StreamEvent
from melgui.core.protocol.transport import ModelInfo, WireSink
from melgui.core.transports.http.bulk import leg_client
from melgui.core.transports.http.leg import LegParser, LegRun
from melgui.core.transports.http.models import parse_models
from melgui.core.transports.http.replies import WireLog, auth_headers, request_json
from melgui.core.transports.http.sse import DEFAULT_MAX_EVENT_BYTES


class EndpointOptions(TypedDict, total=False):
    """The keyword arguments every HTTP transport passes on to HttpEndpoint."""

    client: httpx.AsyncClient | None
    read_timeout: float
    max_event_bytes: int
    extra_headers: Mapping[str, str] | None


class HttpEndpoint:
    """A server spoken to over HTTP: base URL, API key and an httpx client.

    The client is closed by `aclose` only when the endpoint made it itself (a client
    lent by the caller stays open). The key goes out as a bearer token and never into the
    wire log.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        *,
        client: httpx.AsyncClient | None = None,
        read_timeout: float = 120.0,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
        extra_headers: Mapping[str, str] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.read_timeout = read_timeout
        self.max_event_bytes = max_event_bytes
        self._extra_headers = dict(extra_headers or {})
        self._client = client or leg_client()
        self._owns_client = client is None

    @property
    def client(self) -> httpx.AsyncClient:
        """The client this endpoint sends with (the context window's probes use it too)."""
        return self._client

    def _headers(self, accept: str) -> dict[str, str]:
        return {**self._extra_headers, "Accept": accept, **auth_headers(self.api_key)}

    def _leg(
        self, url: str, body: dict[str, Any], parser: LegParser, wire: WireSink | None
    ) -> AsyncIterator[StreamEvent]:
        """POST `body` to `url` and read the reply as this transport's event stream."""
        run = LegRun(
            self._client,
            url,
            body,
            headers=self._headers("text/event-stream"),
            parser=parser,
            wire=WireLog(wire, self.api_key),
            read_timeout=self.read_timeout,
            max_event_bytes=self.max_event_bytes,
        )
        return run.events()

    async def _models(self, url: str, what: str) -> list[ModelInfo]:
        """GET an OpenAI-shaped model list; a failure is a TransportError saying `what`."""
        payload = await request_json(
            self._client, "GET", url, what=what, headers=self._headers("application/json")
        )
        return parse_models(payload)

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()
