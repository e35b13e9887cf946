"""web_search against a SearXNG-shaped server on loopback, and with none configured."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from melgui.core.protocol.tooling import ToolError, ToolOutcome
from melgui.tools.context import ToolContext
from melgui.tools.settings import ToolSettings
from melgui.tools.web_search import NOT_CONFIGURED, WEB_SEARCH_TOOL, SearchProvider, SearxngProvider
from melgui.tools.workspace import Workspace

HERE = Path(__file__).resolve().parent


async def web_search(
    provider: SearchProvider | None, limit: int, arguments: dict[str, object]
) -> ToolOutcome:
    settings = ToolSettings(web_search_max_results=limit)
    return await WEB_SEARCH_TOOL.run(
        ToolContext(Workspace(HERE), settings, search=provider), arguments
    )


class FakeSearxng:
    """Answers /search like SearXNG; `status` and `body` can be changed per test."""

    def __init__(self) -> None:
        self.queries: list[dict[str, list[str]]] = []
        self.status = 200
        self.body: bytes = json.dumps(
            {
                "results": [
                    {
                        "title": "Python",
                        "url": "https://python.org",
                        "content": "The  language\n site",
                    },
                    {"title": "", "url": "https://docs.python.org", "content": ""},
                    {"title": "no url"},
                    {"title": "Third", "url": "https://example.org/3", "content": "three"},
                ]
            }
        ).encode()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                url = urlparse(self.path)
                fake.queries.append({"path": [url.path], **parse_qs(url.query)})
                self.send_response(fake.status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(fake.body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeSearxng:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def searxng() -> Iterator[FakeSearxng]:
    with FakeSearxng() as server:
        yield server


async def test_results_are_listed(searxng: FakeSearxng) -> None:
    outcome = await web_search(SearxngProvider(searxng.url), 2, {"query": " python docs "})
    assert outcome.status == "ok"
    assert outcome.content.splitlines() == [
        "Web results for 'python docs' (SearXNG):",
        "1. Python",
        "   https://python.org",
        "   The language site",
        "2. https://docs.python.org",
        "   https://docs.python.org",
    ]
    assert searxng.queries == [{"path": ["/search"], "q": ["python docs"], "format": ["json"]}]


async def test_not_configured_is_a_clear_result() -> None:
    outcome = await web_search(None, 5, {"query": "anything"})
    assert outcome.status == "error"
    assert outcome.content == NOT_CONFIGURED
    assert "not configured" in outcome.content


async def test_json_disabled(searxng: FakeSearxng) -> None:
    searxng.status = 403
    with pytest.raises(ToolError, match="enable the json format"):
        await web_search(SearxngProvider(searxng.url), 5, {"query": "x"})


async def test_not_json(searxng: FakeSearxng) -> None:
    searxng.body = b"<html>nope</html>"
    with pytest.raises(ToolError, match="did not answer with JSON"):
        await web_search(SearxngProvider(searxng.url), 5, {"query": "x"})


async def test_server_down() -> None:
    with FakeSearxng() as server:
        url = server.url
    with pytest.raises(ToolError, match="cannot reach SearXNG"):
        await web_search(SearxngProvider(url, timeout=5), 5, {"query": "x"})


async def test_no_hits(searxng: FakeSearxng) -> None:
    searxng.body = b'{"results": []}'
    outcome = await web_search(SearxngProvider(searxng.url), 5, {"query": "zzz"})
    assert outcome.content == "No web results for 'zzz' (SearXNG)."


async def test_query_is_required() -> None:
    with pytest.raises(ToolError, match="Missing required argument 'query'"):
        await web_search(None, 5, {})
    with pytest.raises(ToolError, match="empty"):
        await web_search(None, 5, {"query": "  "})
