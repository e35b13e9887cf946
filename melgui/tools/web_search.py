"""web_search through a configured provider; SearXNG's JSON API is the first one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from melgui.core.protocol import bounded_json
from melgui.core.protocol.tooling import ToolError, ToolOutcome
from melgui.tools.arguments import require_str

NOT_CONFIGURED = (
    "web_search is not configured: no search provider is set. The person can add a "
    "SearXNG URL in Settings → Web search. Continue without web results."
)


@dataclass(frozen=True, slots=True)
class SearchHit:
    title: str
    url: str
    snippet: str


class SearchProvider(Protocol):
    """Something that answers a query with hits; failures raise ToolError."""

    name: str

    async def search(self, query: str, limit: int) -> list[SearchHit]: ...


class SearxngProvider:
    """A SearXNG instance's `/search?format=json` (JSON must be enabled in its settings)."""

    name = "SearXNG"

    def __init__(
        self, base_url: str, *, timeout: float = 20.0, client: httpx.AsyncClient | None = None
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self._client = client

    async def search(self, query: str, limit: int) -> list[SearchHit]:
        params = {"q": query, "format": "json"}
        try:
            if self._client is not None:
                response = await self._client.get(
                    f"{self.base_url}/search", params=params, timeout=self.timeout
                )
            else:
                async with httpx.AsyncClient(timeout=self.timeout) as client:
                    response = await client.get(f"{self.base_url}/search", params=params)
        except httpx.HTTPError as exc:
            raise ToolError(
                f"web_search failed: cannot reach SearXNG at {self.base_url} ({exc})."
            ) from None
        if response.status_code == 403:
            raise ToolError(
                "web_search failed: SearXNG refused the JSON API (HTTP 403); enable the "
                "json format in its settings.yml."
            )
        if response.status_code != 200:
            raise ToolError(f"web_search failed: SearXNG answered HTTP {response.status_code}.")
        try:
            payload: Any = bounded_json.loads(response.content)
        except ValueError:
            raise ToolError("web_search failed: SearXNG did not answer with JSON.") from None
        results = payload.get("results") if isinstance(payload, dict) else None
        if not isinstance(results, list):
            raise ToolError("web_search failed: SearXNG's answer has no results list.")
        hits: list[SearchHit] = []
        for item in results:
            if not isinstance(item, dict) or not isinstance(item.get("url"), str):
                continue
            hits.append(
                SearchHit(
                    title=str(item.get("title") or item["url"]).strip(),
                    url=item["url"],
                    snippet=" ".join(str(item.get("content") or "").split()),
                )
            )
            if len(hits) == limit:
                break
        return hits


def format_hits(query: str, provider: str, hits: list[SearchHit]) -> str:
    if not hits:
        return f"No web results for {query!r} ({provider})."
    lines = [f"Web results for {query!r} ({provider}):"]
    for number, hit in enumerate(hits, start=1):
        lines.append(f"{number}. {hit.title}\n   {hit.url}")
        if hit.snippet:
            lines.append(f"   {hit.snippet[:500]}")
    return "\n".join(lines)


async def web_search(
    provider: SearchProvider | None, limit: int, arguments: dict[str, Any]
) -> ToolOutcome:
    query = require_str(arguments, "query").strip()
    if not query:
        raise ToolError("Argument 'query' is empty.")
    if provider is None:
        return ToolOutcome.error(NOT_CONFIGURED)
    hits = await provider.search(query, limit)
    return ToolOutcome(format_hits(query, provider.name, hits))
