"""web_search through a configured provider; SearXNG's JSON API is the first one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from melgui.core.protocol import bounded_json
from melgui.core.protocol.tooling import ToolError, ToolOutcome
from melgui.core.protocol.tools.definition import Tool
from melgui.core.protocol.tools.web import WEB_SEARCH
from melgui.tools.context import ToolContext
from melgui.tools.settings import ToolSettings

if TYPE_CHECKING:
    import httpx

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
        import httpx  # with the first search, as the client it makes (http/tls.py)

        from melgui.core.transports.http.tls import async_client  # and ssl with it

        params = {"q": query, "format": "json"}
        try:
            if self._client is not None:
                response = await self._client.get(
                    f"{self.base_url}/search", params=params, timeout=self.timeout
                )
            else:
                async with async_client(timeout=self.timeout) as client:
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


@dataclass(frozen=True, slots=True)
class WebSearchInput:
    query: str

    def __post_init__(self) -> None:
        if not self.query.strip():
            raise ToolError("Argument 'query' is empty.")


async def web_search(context: ToolContext, given: WebSearchInput) -> ToolOutcome:
    provider, query = context.search, given.query.strip()
    if provider is None:
        return ToolOutcome.error(NOT_CONFIGURED)
    hits = await provider.search(query, context.settings.web_search_max_results)
    return ToolOutcome(format_hits(query, provider.name, hits))


WEB_SEARCH_TOOL = Tool(WEB_SEARCH, WebSearchInput, web_search)


def search_provider_from(settings: ToolSettings) -> SearchProvider | None:
    """The provider the settings describe; None when web search is off."""
    if settings.searxng_url:
        return SearxngProvider(settings.searxng_url, timeout=settings.web_search_timeout)
    return None
