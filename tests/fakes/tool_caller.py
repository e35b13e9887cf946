"""A model that calls every MCP tool it is offered, once, then stops: the stand-in for a
real model when the conformance suite drives `melgui exec` as its client.

    python -m tests.fakes.tool_caller PORTFILE

serves the OpenAI-compatible API on a free loopback port, writes its base URL to
PORTFILE, and runs until killed. The first leg of a turn calls each `mcp__…` tool with
arguments that satisfy its schema's required fields; a leg after tool results answers
with text.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

from tests.fakes.scenario import Step, done, text, tool_call, tool_calls
from tests.fakes.scripted_server import RecordedRequest, ScriptedOpenAI

_STUB: dict[str, Any] = {
    "string": "x", "integer": 1, "number": 1, "boolean": False, "object": {}, "array": [],
}  # fmt: skip


def stub_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties") or {}
    return {
        name: _STUB.get((properties.get(name) or {}).get("type"), "x")
        for name in schema.get("required") or []
    }


def mcp_tools(request: RecordedRequest) -> list[dict[str, Any]]:
    tools = request.json.get("tools", []) if isinstance(request.json, dict) else []
    found = [tool.get("function", tool) for tool in tools]
    return [tool for tool in found if str(tool.get("name", "")).startswith("mcp__")]


def answer(request: RecordedRequest) -> list[Step]:
    last = request.last_message or {}
    tools = mcp_tools(request)
    if last.get("role") == "tool" or not tools:
        return [text("Done."), done()]
    calls = [
        tool_call(tool["name"], stub_arguments(tool.get("parameters") or {}), id=f"call{n}")
        for n, tool in enumerate(tools)
    ]
    return [tool_calls(*calls)]


def serve(port_file: Path) -> ScriptedOpenAI:
    model = ScriptedOpenAI()
    model.strict = False
    model.on(lambda request: True, answer)
    model.start()
    port_file.write_text(model.base_url, encoding="utf-8")
    return model


def main() -> None:
    serve(Path(sys.argv[1]))
    threading.Event().wait()


if __name__ == "__main__":
    main()
