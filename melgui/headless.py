"""`melgui exec`: one turn to the end without a window, on the app's loop and executors.

Plain output is the assistant's text; `--json` prints one JSON object per line per event.
Exit code 0 on a finished turn; otherwise non-zero with a one-line reason on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
from typing import Any, TextIO, assert_never

from melgui.core.catalog import ORCHESTRATION_TOOLS, ROLES, Role
from melgui.core.loop_events import (
    ApprovalNeeded,
    AssistantText,
    HistoryRepaired,
    LegFinished,
    LegStarted,
    LoopEvent,
    MessageAdded,
    Retrying,
    ToolCallFinished,
    ToolCallRequested,
    ToolCallStarted,
    TurnCancelled,
    TurnFailed,
    TurnFinished,
)
from melgui.core.policy import FixedPolicy
from melgui.core.session import AgentSession
from melgui.core.tooling import ToolOutcome, ToolRegistry
from melgui.core.transport import Transport

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_CANCELLED = 0, 1, 2, 130

TRANSPORTS = ("relay", "openai", "local")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="melgui exec",
        description="Run one agent turn to the end without a window.",
        epilog="The API key comes from MELIAI_API_KEY / OPENAI_API_KEY or the system "
        "keyring, never from the command line.",
    )
    parser.add_argument("--transport", choices=TRANSPORTS, help="default: from settings")
    parser.add_argument(
        "--url",
        help="relay base URL, or for openai the base URL before /chat/completions "
        "(e.g. http://127.0.0.1:11434/v1)",
    )
    parser.add_argument("--model", help="model id (default: from settings)")
    parser.add_argument("--role", choices=ROLES, default="assistant")
    parser.add_argument(
        "--approve",
        choices=("reads", "all", "none"),
        default="reads",
        help="reads: run read-only tools, deny the rest (default); all: run everything; "
        "none: deny everything",
    )
    parser.add_argument("--folder", default=".", help="project folder (default: .)")
    parser.add_argument("--json", action="store_true", help="one JSON object per event")
    parser.add_argument("prompt", help="the user message")
    return parser


class Printer:
    """Turns loop events into the plain or JSON output of `melgui exec`."""

    def __init__(self, out: TextIO, as_json: bool) -> None:
        self.out = out
        self.as_json = as_json
        self.error: str | None = None
        self._text_open = False

    def _line(self, **fields: Any) -> None:
        self.out.write(json.dumps(fields, ensure_ascii=False) + "\n")
        self.out.flush()

    def observe(self, event: LoopEvent) -> None:
        match event:
            case AssistantText(text=text):
                if self.as_json:
                    self._line(kind="text", text=text)
                else:
                    self.out.write(text)
                    self.out.flush()
                    self._text_open = not text.endswith("\n")
            case ToolCallRequested(call=call):
                if self.as_json:
                    self._line(
                        kind="tool_call", id=call.id, name=call.name, arguments=call.arguments
                    )
            case ToolCallFinished(call=call, status=status, content=content):
                if self.as_json:
                    shown = "cancelled" if status == "interrupted" else status
                    self._line(kind="tool_result", id=call.id, status=shown, content=content)
            case TurnFinished(legs=legs, usage=usage):
                if self.as_json:
                    self._line(kind="done", legs=legs, usage=usage.model_dump())
                elif self._text_open:
                    self.out.write("\n")
            case TurnFailed(message=message):
                self.error = message
                if self.as_json:
                    self._line(kind="error", message=message)
            case TurnCancelled():
                self.error = "cancelled"
                if self.as_json:
                    self._line(kind="error", message="cancelled")
            case Retrying(attempt=attempt, delay=delay, reason=reason):
                print(
                    f"melgui: retrying in {delay:.0f}s after: {reason} (try {attempt})",
                    file=sys.stderr,
                )
            case (
                LegStarted() | LegFinished() | MessageAdded() | ToolCallStarted()
                | ApprovalNeeded() | HistoryRepaired()
            ):  # fmt: skip
                pass
            case _:
                assert_never(event)


def api_key_for(transport: str) -> str | None:
    """The key from the environment, else the system keyring (settings' secret store)."""
    names = ("MELIAI_API_KEY",) if transport == "relay" else ("OPENAI_API_KEY", "MELIAI_API_KEY")
    for name in names:
        value = os.environ.get(name)
        if value:
            return value
    try:
        from melgui.core.secrets import get_api_key
    except ImportError:
        return None
    try:
        return get_api_key(transport)
    except Exception:  # no keyring backend: run without a key
        return None


def make_transport(kind: str, url: str | None, key: str | None) -> Transport:
    if kind == "relay":
        from melgui.core.relay import RelayTransport

        if not url:
            raise UsageError("--transport relay needs --url (the relay's base URL)")
        return RelayTransport(url, key)
    if kind == "openai":
        from melgui.core.openai_compat import OpenAITransport

        base = url or os.environ.get("OPENAI_BASE_URL")
        if not base:
            raise UsageError("--transport openai needs --url or OPENAI_BASE_URL")
        return OpenAITransport(base, key)
    from melgui.core.local_llama import LocalTransport

    return LocalTransport(url)


class UsageError(Exception):
    pass


def headless_tools(folder: str, role: Role) -> ToolRegistry:
    """The workspace tools, plus orchestration tools that explain they need the window."""
    from melgui.core.settings import load_settings
    from melgui.tools import build_workspace_tools
    from melgui.tools.memory import LocalMemory, memory_db_path
    from melgui.tools.settings import ToolSettings
    from melgui.tools.workspace import Workspace

    settings = load_settings()
    workspace = Workspace(folder, config_dir=settings.config_dir)
    registry = build_workspace_tools(
        workspace,
        settings=ToolSettings(
            command_timeout=settings.command_timeout, searxng_url=settings.searxng_url
        ),
        memory=LocalMemory(memory_db_path()),
        plans=_print_plan,
    )
    for tool in ORCHESTRATION_TOOLS:
        registry.register(tool.name, _needs_window(tool.name))
    return registry


def _print_plan(title: str, markdown: str) -> None:
    print(f"\n# Plan: {title}\n{markdown}\n", file=sys.stderr)


def _needs_window(name: str) -> Any:
    async def handler(arguments: dict[str, Any]) -> ToolOutcome:
        return ToolOutcome.error(
            f"{name} needs panes, which only the melgui window has; this is a headless "
            "run (melgui exec). Do the work with the other tools."
        )

    return handler


async def run(options: argparse.Namespace, out: TextIO) -> int:
    folder = os.path.realpath(options.folder)
    if not os.path.isdir(folder):
        raise UsageError(f"--folder {options.folder!r} is not a folder")
    kind = options.transport or _default_transport(options.url)
    transport = make_transport(kind, options.url, api_key_for(kind))
    model = options.model or _default_model(kind)
    session = AgentSession(
        transport,
        headless_tools(folder, options.role),
        FixedPolicy(options.approve),
        model=model,
        role=options.role,
        cwd=folder,
    )
    printer = Printer(out, options.json)
    session.subscribe(printer.observe)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, session.stop)
    try:
        session.submit(options.prompt)
        await session.wait_idle()
    finally:
        await session.aclose()
        await transport.aclose()
    result = session.last_result
    if result is not None and result.outcome == "done":
        return EXIT_OK
    reason = printer.error or (result.message if result else "the turn did not run")
    print(f"melgui: {reason}", file=sys.stderr)
    return EXIT_CANCELLED if result is not None and result.outcome == "cancelled" else EXIT_FAILED


def _default_transport(url: str | None) -> str:
    if url:
        return "relay"
    if os.environ.get("OPENAI_BASE_URL"):
        return "openai"
    try:
        from melgui.core.settings import load_settings

        return str(load_settings().connection)
    except Exception:
        return "local"


def _default_model(kind: str) -> str:
    try:
        from melgui.core.settings import load_settings

        model = load_settings().model
        if model:
            return str(model)
    except Exception:
        pass
    return "local" if kind == "local" else "default"


def main(argv: list[str]) -> int:
    options = build_parser().parse_args(argv)
    try:
        return asyncio.run(run(options, sys.stdout))
    except UsageError as exc:
        print(f"melgui exec: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("melgui: cancelled", file=sys.stderr)
        return EXIT_CANCELLED
