"""Project memory over the relay: `POST/GET {relay}/v1/memory` (docs/wire-protocol.md §2).

A relay without the endpoint (404, 405, 501) raises MemoryUnavailable, so the caller
falls back to the embedded store; any other failure is a TransportError.
"""

from __future__ import annotations

import httpx

from melgui.core.protocol.tools.memory import MemoryNote, MemoryUnavailable
from melgui.core.protocol.transport import TransportError
from melgui.core.transports.http.endpoint import HttpEndpoint
from melgui.core.transports.http.replies import request_json

_NO_ENDPOINT = (404, 405, 501)


class RelayMemory(HttpEndpoint):
    """A ProjectMemory backed by the relay; the relay derives the project from `cwd`."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        client: httpx.AsyncClient | None = None,
        *,
        timeout: float = 30.0,
    ) -> None:
        super().__init__(base_url, api_key, client=client)
        self.url = self.base_url + "/v1/memory"
        self._timeout = timeout

    async def remember(self, cwd: str, note: str) -> None:
        await self._call(
            "POST",
            "saving a note to the relay's project memory",
            json={
                "cwd": cwd,
                "note": note,
            },
        )

    async def recall(self, cwd: str) -> list[MemoryNote]:
        payload = await self._call("GET", "reading the relay's project memory", params={"cwd": cwd})
        notes = payload.get("notes") if isinstance(payload, dict) else None
        if not isinstance(notes, list):
            raise TransportError(
                "reading the relay's project memory: the answer holds no list of notes"
            )
        result = []
        for item in notes:
            if isinstance(item, str):
                result.append(MemoryNote(item, ""))
            elif isinstance(item, dict) and isinstance(item.get("note"), str):
                created = item.get("created_at")
                result.append(MemoryNote(item["note"], str(created) if created is not None else ""))
        return result

    async def _call(self, method: str, what: str, **kwargs: object) -> object:
        try:
            return await request_json(
                self._client,
                method,
                self.url,
                what=what,
                headers=self._headers("application/json"),
                timeout=self._timeout,
                **kwargs,
            )
        except TransportError as exc:
            if exc.status in _NO_ENDPOINT:
                raise MemoryUnavailable(f"the relay has no project memory ({exc})") from exc
            raise
