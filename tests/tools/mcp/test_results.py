"""Every kind of MCP result content, from a real MCPServer over stdio and streamable HTTP."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from melgui.tools.mcp.config import ServerConfig
from melgui.tools.mcp.manager import McpManager
from tests.fakes.mcp import PNG_B64, fake_stdio, http_server, running

# One server per transport for the whole module (starting one takes a second or two).
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(params=["stdio", "http"], scope="module", loop_scope="module")
async def manager(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[McpManager]:
    tmp_path = tmp_path_factory.mktemp("mcp")
    if request.param == "stdio":
        async with running(str(tmp_path), fake_stdio()) as started:
            yield started
        return
    with http_server() as url:
        async with running(str(tmp_path), ServerConfig("fake", "http", url=url)) as started:
            yield started


async def call(manager: McpManager, tool: str, **arguments: object) -> tuple[str, str, list]:
    outcome = await manager.bridge.registry.run(f"mcp__fake__{tool}", dict(arguments))
    return outcome.status, outcome.content, list(outcome.parts)


async def test_server_is_ready_with_its_tools(manager: McpManager) -> None:
    server = manager.servers["fake"]
    assert server.state.status == "ready" and server.state.tools == len(server.tools) >= 10
    echo = manager.bridge.catalog.get("mcp__fake__echo")
    assert echo is not None and echo.origin == "mcp:fake"
    assert echo.parameters["required"] == ["text"] and echo.description == "Echo the text back."
    assert echo.approval == "ask"  # annotations say read-only, but the server is not trusted
    assert manager.annotations_of("mcp__fake__echo") == {
        "readOnlyHint": True,
        "openWorldHint": False,
    }


async def test_text(manager: McpManager) -> None:
    status, content, parts = await call(manager, "echo", text="héllo")
    assert (status, content) == ("ok", "héllo")
    assert parts[0].kind == "text" and parts[0].text == "héllo"


async def test_image_is_described_for_the_model_and_kept_for_people(manager: McpManager) -> None:
    status, content, parts = await call(manager, "picture")
    assert status == "ok" and content.startswith("[image image/png,")
    assert parts[0].kind == "image" and parts[0].mime_type == "image/png"
    assert parts[0].data == PNG_B64


async def test_audio(manager: McpManager) -> None:
    status, content, parts = await call(manager, "sound")
    assert status == "ok" and "audio audio/wav" in content
    assert parts[0].kind == "audio" and base64.b64decode(parts[0].data).startswith(b"RIFF")


async def test_resource_link(manager: McpManager) -> None:
    status, content, parts = await call(manager, "link")
    assert status == "ok" and "<file:///tmp/notes.md>" in content and "Project notes" in content
    assert parts[0].kind == "resource_link" and parts[0].uri == "file:///tmp/notes.md"


async def test_embedded_resources_text_and_blob(manager: McpManager) -> None:
    status, content, parts = await call(manager, "embedded")
    assert status == "ok" and "embedded words" in content and "<memo://two> image/png" in content
    assert [p.kind for p in parts[:2]] == ["resource", "resource"]
    assert parts[0].text == "embedded words" and parts[1].data == PNG_B64


async def test_structured_content(manager: McpManager) -> None:
    status, content, parts = await call(manager, "weather", city="Oslo")
    assert status == "ok" and json.loads(content) == {"city": "Oslo", "celsius": 21}
    structured = [p for p in parts if p.kind == "structured"]
    assert json.loads(structured[0].text) == {"city": "Oslo", "celsius": 21}


async def test_is_error_result_is_an_error(manager: McpManager) -> None:
    status, content, _ = await call(manager, "fail")
    assert status == "error" and "fail" in content


async def test_long_results_are_capped(manager: McpManager) -> None:
    status, content, _ = await call(manager, "big", chars=200_000)
    assert status == "ok" and len(content) < 61_000 and "characters cut" in content
