"""`melgui exec`: one turn to the end without a window, on the app's loop and executors.

Plain output is the assistant's text; `--json` prints one JSON object per line per event.
Exit code 0 on a finished turn; otherwise non-zero with a one-line reason on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO, assert_never

from melgui.core.agent.policy import FixedPolicy
from melgui.core.config import terminal_text
from melgui.core.config.secrets import get_api_key
from melgui.core.config.settings import Settings, SettingsError, load_settings
from melgui.core.config.trust import FolderTrust, restricted_line
from melgui.core.protocol.catalog import ORCHESTRATION_TOOLS, ROLES
from melgui.core.protocol.loop_events import (
    ApprovalNeeded,
    AssistantReasoning,
    AssistantText,
    ContextNotice,
    HistoryBranched,
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
from melgui.core.protocol.tooling import HookRun, ToolOutcome
from melgui.core.store import open_store
from melgui.core.store.recording import Recording, UnknownConversationError, start_recording
from melgui.core.transports.connection import api_key_kind
from melgui.desk.desk import Desk
from melgui.tools.mcp.config import ServerConfig, project_path
from melgui.tools.mcp.trust import TrustStore

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
    trust = parser.add_mutually_exclusive_group()
    trust.add_argument(
        "--trust",
        action="store_true",
        help="trust the folder (kept in melgui's config, as the window's Trust does): its "
        "MCP servers, git hooks and filters and worktree setup command may run",
    )
    trust.add_argument(
        "--restrict", action="store_true", help="take the folder's trust back (restricted)"
    )
    history = parser.add_mutually_exclusive_group()
    history.add_argument(
        "--continue",
        dest="continue_latest",
        action="store_true",
        help="go on with the folder's latest conversation (as the window's history shows it)",
    )
    history.add_argument("--resume", metavar="ID", help="go on with a stored conversation")
    parser.add_argument(
        "--no-history", action="store_true", help="do not keep this turn in the history"
    )
    mcp = parser.add_argument_group("MCP servers")
    mcp.add_argument(
        "--mcp-config",
        metavar="FILE",
        help="also start the servers of this mcpServers JSON file (trusted as given)",
    )
    mcp.add_argument(
        "--mcp-url",
        metavar="[NAME=]URL",
        help="also connect to this streamable HTTP server (named NAME, default remote)",
    )
    mcp.add_argument(
        "--no-sign-in",
        action="store_true",
        help="never open a browser for a server's OAuth sign-in: a server that asks for "
        "one ends the run with a one-line reason (sign in first with `melgui mcp login`)",
    )
    mcp.add_argument(
        "--mcp-input",
        choices=("decline", "defaults"),
        default="decline",
        help="what a server's request for input (elicitation) gets: decline (default), "
        "or defaults: accept with the defaults its form gives",
    )
    mcp.add_argument(
        "--no-mcp",
        action="store_true",
        help="do not start the servers of the user's and the project's MCP files",
    )
    parser.add_argument("prompt", help="the user message")
    return parser


class Printer:
    """Turns loop events into the plain or JSON output of `melgui exec`."""

    def __init__(
        self, out: TextIO, as_json: bool, server_of: Callable[[str], str | None] | None = None
    ) -> None:
        self.out = out
        self.as_json = as_json
        self._server_of = server_of or (lambda name: None)
        self.error: str | None = None
        self._text_open = False

    def _call_line(self, tool: str, **fields: Any) -> None:
        server = self._server_of(tool)  # MCP calls name their server
        self._line(**fields, **({"server": server} if server else {}))

    def _line(self, **fields: Any) -> None:
        self.out.write(terminal_text.json_line(fields) + "\n")
        self.out.flush()

    def observe(self, event: LoopEvent) -> None:
        match event:
            case AssistantText(text=text):
                if self.as_json:
                    self._line(kind="text", text=text)
                else:
                    self.out.write(terminal_text.plain(text))
                    self.out.flush()
                    self._text_open = not text.endswith("\n")
            case AssistantReasoning(text=text):
                if self.as_json:
                    self._line(kind="reasoning", text=text)
            case ToolCallRequested(call=call):
                if self.as_json:
                    self._call_line(
                        call.name,
                        kind="tool_call",
                        id=call.id,
                        name=call.name,
                        arguments=call.arguments,
                    )
            case ToolCallFinished(call=call, status=status, content=content):
                if self.as_json:
                    shown = "cancelled" if status == "interrupted" else status
                    ran = {"hooks": [_hook_json(r) for r in event.hooks]} if event.hooks else {}
                    self._call_line(
                        call.name,
                        kind="tool_result",
                        id=call.id,
                        status=shown,
                        content=content,
                        **ran,
                    )
                elif event.hooks:
                    for run in event.hooks:
                        if run.failed or run.effect:
                            print(f"melgui: {run.headline()}", file=sys.stderr)
            case TurnFinished(legs=legs, usage=usage):
                if self.as_json:
                    self._line(kind="done", legs=legs, usage=usage.to_json())
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
            # -- context window: usage per leg, compaction, warnings --
            case LegFinished(leg=leg, usage=usage):
                if self.as_json:
                    self._line(kind="usage", leg=leg, usage=usage.to_json() if usage else None)
            case HistoryBranched(reason="compaction", messages=messages, note=note):
                if self.as_json:
                    self._line(kind="compacted", messages=len(messages), note=note)
                else:
                    print(f"melgui: {note}", file=sys.stderr)
            case ContextNotice(text=text, level=level):
                if self.as_json:
                    self._line(kind="context", level=level, message=text)
                elif level == "warning":
                    print(f"melgui: {text}", file=sys.stderr)
            case (
                LegStarted() | MessageAdded() | ToolCallStarted()
                | ApprovalNeeded() | HistoryRepaired() | HistoryBranched()
            ):  # fmt: skip
                pass
            case _:
                assert_never(event)


class UsageError(Exception):
    pass


class SignInNeeded(Exception):
    """A server asks for a sign-in the run may not do (--no-sign-in)."""


def settings_for(options: argparse.Namespace) -> Settings:
    """Saved settings and the environment, overridden by the command line."""
    notices: list[str] = []
    try:
        settings = load_settings(notices=notices)
    except SettingsError as exc:
        print(f"melgui: {exc}; using defaults", file=sys.stderr)
        settings = Settings()
    for notice in notices:
        print(f"melgui: {notice}", file=sys.stderr)
    kind = options.transport or ("relay" if options.url else settings.connection)
    update: dict[str, Any] = {"connection": kind}
    if options.url:
        update["relay_url" if kind == "relay" else "openai_base_url"] = options.url
        if kind == "local":
            update["local_model_path"] = options.url
    if options.model:
        update["model"] = options.model
    updated = settings.model_copy(update=update)
    if kind == "relay" and not updated.relay_url.strip():
        raise UsageError("--transport relay needs --url (the relay's base URL)")
    return updated


def headless_desk(folder: str, settings: Settings, api_key: str | None) -> Desk:
    """The desk of a headless run: orchestration tools explain that they need the window."""
    desk = Desk(folder, settings, api_key=api_key, plans=_print_plan)
    for tool in ORCHESTRATION_TOOLS:
        desk.tools.register(tool.name, _needs_window(tool.name))
    return desk


def _start_recording(options: argparse.Namespace, folder: str, model: str) -> Recording:
    try:
        return start_recording(
            open_store(),
            folder,
            model=model,
            role=options.role,
            resume_id=options.resume,
            continue_latest=options.continue_latest,
            on_problem=lambda text: print(f"melgui: {text}", file=sys.stderr),
        )
    except UnknownConversationError as exc:
        raise UsageError(f"--resume: {exc}") from None


async def _start_mcp(desk: Desk, options: argparse.Namespace) -> None:
    """Start the MCP servers; each one that cannot start is said in one line on stderr."""
    extra = Path(options.mcp_config) if options.mcp_config else None
    if extra is not None and not extra.is_file():
        raise UsageError(f"--mcp-config {options.mcp_config!r} is not a file")
    if options.mcp_url:
        desk.mcp.added = [_url_server(options.mcp_url)]
    desk.mcp.sign_in_allowed = not options.no_sign_in
    desk.mcp.elicitation = options.mcp_input
    await desk.start_mcp(extra=extra, configured=not options.no_mcp)
    for problem in desk.mcp.problems:
        print(f"melgui: MCP: {problem}", file=sys.stderr)
    if desk.mcp.untrusted is not None:
        print(
            f"melgui: MCP: {desk.mcp.untrusted} is not trusted yet, so its servers did not "
            "start; trust it in the window (MCP servers panel), pass --trust if the folder "
            "is restricted, or pass the file with --mcp-config",
            file=sys.stderr,
        )
    for server in desk.mcp.servers.values():
        if server.state.status == "failed":
            print(f"melgui: MCP server {server.name}: {server.state.line()}", file=sys.stderr)
        if server.state.status == "sign-in":
            raise SignInNeeded(
                f"MCP server {server.name} asks for a sign-in and --no-sign-in forbids one; "
                f"sign in first with `melgui mcp login {server.name}`"
            )


def _url_server(text: str) -> ServerConfig:
    """`--mcp-url [NAME=]URL` as a server (a `=` before the scheme names it)."""
    head, equals, rest = text.partition("=")
    named = bool(equals) and "://" not in head
    name, url = (head, rest) if named else ("remote", text)
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"--mcp-url {text!r} is not an http(s) URL")
    return ServerConfig(name, "http", url=url, scope="file")


def _print_plan(title: str, markdown: str) -> None:
    print(f"\n# Plan: {title}\n{markdown}\n", file=sys.stderr)


def _needs_window(name: str) -> Any:
    async def handler(arguments: dict[str, Any]) -> ToolOutcome:
        return ToolOutcome.error(
            f"{name} needs panes, which only the melgui window has; this is a headless "
            "run (melgui exec). Do the work with the other tools."
        )

    return handler


def _decide_trust(folder: str, options: argparse.Namespace) -> None:
    """Record --trust / --restrict; an untrusted folder says in one line what is off.
    --trust also trusts the project's MCP file as it is now, as the window's one click
    does; a later change to it asks again."""
    trust = FolderTrust()
    if options.trust:
        trust.trust(folder)
        if project_path(folder).is_file():
            TrustStore().trust(project_path(folder))
    elif options.restrict:
        trust.restrict(folder)
    if not trust.is_trusted(folder) and _supplies_anything(Path(folder)):
        print(f"melgui: {restricted_line()} Pass --trust to trust {folder}.", file=sys.stderr)


def _supplies_anything(folder: Path) -> bool:
    """Whether the folder holds something trust would let run: a git repository (its
    hooks, filters, fsmonitor) or a project MCP file. A plain folder is said nothing of."""
    real = folder.resolve()
    in_git = any((place / ".git").exists() for place in (real, *real.parents))
    return in_git or project_path(str(folder)).is_file()


async def run(options: argparse.Namespace, out: TextIO) -> int:
    folder = os.path.realpath(options.folder)
    if not os.path.isdir(folder):
        raise UsageError(f"--folder {options.folder!r} is not a folder")
    _decide_trust(folder, options)
    settings = settings_for(options)
    api_key = get_api_key(api_key_kind(settings))
    model = settings.model or ("local" if settings.connection == "local" else "")
    recording = None if options.no_history else _start_recording(options, folder, model)
    desk = headless_desk(folder, settings, api_key)
    try:
        await _start_mcp(desk, options)
    except SignInNeeded as exc:
        await desk.aclose()
        if recording is not None:
            recording.close()
            recording.journal.store.close()
        print(f"melgui: {exc}", file=sys.stderr)
        return EXIT_FAILED
    session = desk.session(
        recording.conversation if recording else None,
        model=model,
        role=options.role,
        wire=recording.journal.record_wire if recording else None,
        policy=FixedPolicy(options.approve, read_only=desk.is_read_only),
    )
    printer = Printer(out, options.json, desk.mcp.server_of)
    if recording is not None:
        session.subscribe(recording.journal.observe)
        for notice in recording.notices:
            print(f"melgui: {notice}", file=sys.stderr)
    session.subscribe(printer.observe)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, session.stop)
    try:
        session.submit(options.prompt)
        await session.wait_idle()
    finally:
        await session.aclose()
        await desk.aclose()
        if recording is not None:
            recording.close()
            recording.journal.store.close()
    result = session.last_result
    if result is not None and result.outcome == "done":
        return EXIT_OK
    reason = printer.error or (result.message if result else "the turn did not run")
    print(f"melgui: {reason}", file=sys.stderr)
    return EXIT_CANCELLED if result is not None and result.outcome == "cancelled" else EXIT_FAILED


def main(argv: list[str]) -> int:
    options = build_parser().parse_args(argv)
    stderr, sys.stderr = sys.stderr, terminal_text.PlainWriter(sys.stderr)
    try:
        return asyncio.run(run(options, sys.stdout))
    except UsageError as exc:
        print(f"melgui exec: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("melgui: cancelled", file=sys.stderr)
        return EXIT_CANCELLED
    finally:
        sys.stderr = stderr


def _hook_json(run: HookRun) -> dict[str, Any]:
    """A hook's run in `--json` output: which hook, its time, its exit and output."""
    return {
        "event": run.event,
        "command": run.command,
        "origin": run.origin,
        "matcher": run.matcher,
        "ms": round(run.duration * 1000),
        "exit_code": run.exit_code,
        "timed_out": run.timed_out,
        "stdout": run.stdout,
        "stderr": run.stderr,
        "problem": run.problem,
        "effect": run.effect,
    }
