"""An MCP server written with the SDK's MCPServer, for tests: every result content type,
and tools that fail the ways real servers fail.

    python -m tests.fakes.mcp_server                       # stdio
    python -m tests.fakes.mcp_server --http PORT           # streamable HTTP on 127.0.0.1
    python -m tests.fakes.mcp_server --sse PORT            # the legacy HTTP+SSE, at /sse
    python -m tests.fakes.mcp_server --fail-start          # exits before initialize

`--name` sets the server's tool prefix seen by the tests; `MCP_FAKE_MARK` (environment)
is echoed by `whoami` so tests can see the env a server got.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import pwd
import struct
import sys
import zlib
from typing import Any, Literal

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.utilities.types import Audio, Image
from pydantic import BaseModel, Field


class Booking(BaseModel):
    """What `book` asks the person: every kind of field a form can hold."""

    guest: str = Field(description="Who the table is for")
    party: int = Field(default=2, ge=1, le=12, description="How many people")
    budget: float = Field(default=40.5, description="Per person, in euros")
    outside: bool = Field(default=False, title="Sit outside")
    course: Literal["starter", "main", "dessert"] = Field(default="main")


def _png(size: int = 24) -> bytes:
    """A red square with a white diagonal, as a valid PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(
        b"\x00" + b"".join(b"\xff\xff\xff" if x == y else b"\xd0\x20\x20" for x in range(size))
        for y in range(size)
    )
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


PNG = _png()
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt " + b"\x00" * 28


def build(name: str) -> MCPServer:
    server = MCPServer(name)

    @server.tool(annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False))
    def echo(text: str) -> str:
        """Echo the text back."""
        return text

    @server.tool()
    def whoami() -> str:
        """The environment mark and working folder the server got."""
        return f"mark={os.environ.get('MCP_FAKE_MARK', '')} cwd={os.getcwd()}"

    @server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
    def whereami() -> str:
        """Where this process runs: its parent, user, folder and environment mark."""
        user = pwd.getpwuid(os.getuid()).pw_name
        mark = os.environ.get("MCP_FAKE_MARK", "")
        return f"ppid={os.getppid()} user={user} cwd={os.getcwd()} mark={mark}"

    @server.tool()
    async def tally(seconds: float = 1.5) -> str:
        """Marks that it started, waits, then counts one run, in files of its folder."""
        with open("started", "a") as started:
            started.write("s\n")
        await asyncio.sleep(seconds)
        with open("counter", "a") as counter:
            counter.write("x\n")
        return "counted"

    @server.tool()
    def picture() -> Image:
        """A small PNG."""
        return Image(data=PNG, format="png")

    @server.tool()
    def sound() -> Audio:
        """A tiny WAV."""
        return Audio(data=WAV, format="wav")

    @server.tool()
    def link() -> list[Any]:
        """A link to a resource."""
        return [
            types.ResourceLink(
                name="notes", uri="file:///tmp/notes.md", description="Project notes",
                mime_type="text/markdown", type="resource_link",
            )
        ]  # fmt: skip

    @server.tool()
    def embedded() -> list[Any]:
        """An embedded text resource and an embedded blob."""
        return [
            types.EmbeddedResource(
                type="resource",
                resource=types.TextResourceContents(
                    uri="memo://one", mime_type="text/plain", text="embedded words"
                ),
            ),
            types.EmbeddedResource(
                type="resource",
                resource=types.BlobResourceContents(
                    uri="memo://two", mime_type="image/png", blob=base64.b64encode(PNG).decode()
                ),
            ),
        ]

    @server.tool(structured_output=True)
    def weather(city: str) -> dict[str, Any]:
        """Structured content."""
        return {"city": city, "celsius": 21}

    @server.tool(annotations=types.ToolAnnotations(destructive_hint=True))
    def fail() -> str:
        """Always fails."""
        raise ValueError("the tool broke on purpose")

    @server.tool()
    def crash() -> str:
        """The process dies mid-call."""
        print("about to crash: goodbye", file=sys.stderr, flush=True)
        os._exit(3)

    @server.tool()
    async def book(ctx: Context, place: str = "Chez Nous") -> str:
        """Asks the person for the booking's details (elicitation), then says what came."""
        result = await ctx.elicit(f"Book a table at {place}: who, how many, where?", Booking)
        if result.action == "accept":
            return f"accepted {result.data.model_dump_json()}"
        return result.action

    @server.tool()
    async def pay(ctx: Context, url: str = "https://pay.example/checkout?table=7") -> str:
        """Sends the person to a page of its own (URL-mode elicitation), then says so."""
        result = await ctx.elicit_url("Pay the deposit for table 7.", url, "pay-7")
        if result.action == "accept":
            await ctx.request_context.session.send_elicit_complete("pay-7")
        return result.action

    @server.tool()
    async def steps(ctx: Context, count: int = 5, pause: float = 0.4) -> str:
        """Reports progress `count` times, `pause` seconds apart, then answers."""
        for step in range(1, count + 1):
            await asyncio.sleep(pause)
            await ctx.report_progress(step, count, f"step {step} of {count}")
        return f"{count} steps done"

    @server.tool()
    async def ask_model(ctx: Context, question: str = "What is six times seven?") -> str:
        """Asks the client's model (sampling) and says what came back."""
        try:
            result = await ctx.request_context.session.create_message(
                [
                    types.SamplingMessage(
                        role="user", content=types.TextContent(type="text", text=question)
                    )
                ],
                max_tokens=64,
                system_prompt="Answer in one word.",
            )
        except Exception as exc:  # the client's refusal, as the tool's answer
            return f"refused: {getattr(exc, 'message', exc)}"
        content = result.content
        said = content.text if isinstance(content, types.TextContent) else str(content)
        return f"the model ({result.model}) said: {said}"

    @server.tool()
    async def vanish(ctx: Context) -> str:
        """Logs a line to the client, then the process dies mid-call."""
        await ctx.info("about to vanish: goodbye")
        await asyncio.sleep(0.2)
        os._exit(3)

    @server.tool()
    async def hang(seconds: float = 3600) -> str:
        """Sleeps (a hung call)."""
        print("hanging now", file=sys.stderr, flush=True)
        await asyncio.sleep(seconds)
        return "woke"

    @server.tool()
    def flood(lines: int = 20000) -> str:
        """Writes many lines to stderr, then answers."""
        for n in range(lines):
            sys.stderr.write(f"noise line {n} " + "x" * 100 + "\n")
        sys.stderr.flush()
        return "flooded"

    @server.tool()
    def garble() -> str:
        """Writes a line that is not JSON-RPC to stdout, then answers."""
        # The SDK diverts fd 1 to stderr and keeps the wire on a private duplicate.
        from mcp.server import stdio as wire

        claim = wire._claims.get(1)
        fd = claim.private_fd if claim is not None and claim.private_fd is not None else 1
        os.write(fd, b"this is not json\n")
        return "after garbage"

    @server.tool()
    def deep(ctx: Context, levels: int = 100_000) -> str:
        """Answers its own request first with a reply nested `levels` deep, then normally."""
        from mcp.server import stdio as wire

        claim = wire._claims.get(1)
        fd = claim.private_fd if claim is not None and claim.private_fd is not None else 1
        nested = "[" * levels + "]" * levels
        reply = f'{{"jsonrpc": "2.0", "id": {json.dumps(ctx.request_id)}, "result": {nested}}}'
        os.write(fd, reply.encode() + b"\n")
        return "too late"

    @server.tool()
    def big(chars: int = 200_000) -> str:
        """A long text result."""
        return "a" * chars

    @server.tool()
    async def grow(ctx: Context) -> str:
        """Adds a tool named `extra` and says the list changed."""

        def extra() -> str:
            return "extra tool"

        server.add_tool(extra, name="extra", description="Added at run time.")
        await ctx.request_context.session.send_tool_list_changed()
        return "grown"

    @server.resource("memo://notes", name="notes", description="Project notes",
                     mime_type="text/markdown")  # fmt: skip
    def notes() -> str:
        return "# Notes\nThe launch is on Friday."

    @server.resource("memo://plan", name="plan", title="Release plan",
                     description="What ships when", mime_type="text/plain")  # fmt: skip
    def plan() -> str:
        return "1.0 ships on Friday; 1.1 a month later."

    @server.prompt(name="review", description="Review a file for one kind of problem")
    def review(path: str, focus: str = "bugs") -> str:
        return f"Review {path} for {focus}. Be brief."

    @server.tool()
    async def teach(ctx: Context) -> str:
        """Adds a prompt named `explain` and says the prompt list changed."""

        def explain(topic: str) -> str:
            return f"Explain {topic} simply."

        server.prompt(name="explain", description="Explain a topic")(explain)
        await ctx.request_context.session.send_prompt_list_changed()
        return "taught"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=0)
    parser.add_argument("--sse", type=int, default=0, help="the legacy HTTP+SSE transport")
    parser.add_argument("--name", default="fake")
    parser.add_argument("--fail-start", action="store_true")
    options = parser.parse_args()
    if options.fail_start:
        print("fatal: cannot open the database /nonexistent.db", file=sys.stderr, flush=True)
        sys.exit(2)
    server = build(options.name)
    if options.http:
        server.run("streamable-http", host="127.0.0.1", port=options.http)
    elif options.sse:
        server.run("sse", host="127.0.0.1", port=options.sse)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
