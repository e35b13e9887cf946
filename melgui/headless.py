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
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO, assert_never

from melgui import exec_on_host
from melgui.core.agent.session import AgentSession
from melgui.core.config import terminal_text
from melgui.core.config.connection_settings import api_key_kind
from melgui.core.config.secrets import get_api_key
from melgui.core.config.settings import Settings, SettingsError, load_settings
from melgui.core.config.trust import FolderTrust, restricted_line
from melgui.core.protocol.catalog import ROLES, CatalogThere, reads
from melgui.core.protocol.tooling import HookRun
from melgui.core.rules.policy import FixedPolicy
from melgui.core.store import open_store
from melgui.core.thread.changes import (
    Change,
    EntriesReplaced,
    EntryAdded,
    EntryChanged,
    StateChanged,
    TextAppended,
)
from melgui.core.thread.entries import (
    AssistantEntry,
    BranchEntry,
    CallEntry,
    CallResult,
    NoteEntry,
    ReasoningEntry,
    ThreadState,
)
from melgui.core.thread.thread import Thread
from melgui.desk.desk import Desk
from melgui.desk.recording import Recording, UnknownConversationError, start_recording
from melgui.remote.target import Target, TargetError, target_for
from melgui.tools.mcp.asks.input_answers import InputPolicy
from melgui.tools.mcp.asks.sampling import SamplingTarget
from melgui.tools.mcp.calls import Flight
from melgui.tools.mcp.config import ServerConfig, project_path
from melgui.tools.mcp.trust import TrustStore
from melgui.tools.panes import NoPanes

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
        help="reads: run read-only tools, deny the rest (the default, but with --host a "
        "question then waits for a person); all: run everything; none: deny everything",
    )
    parser.add_argument(
        "--folder",
        default=".",
        help="project folder (default: .), or ssh://[user@]host[:port]/abs/path: the tools "
        "run there, the loop and the key stay here",
    )
    parser.add_argument(
        "--via",
        metavar="COMMAND",
        help="reach --folder (an absolute path there) through COMMAND instead of ssh, any "
        "command that runs a program on the target with its stdio: 'docker exec -i devbox', "
        "'kubectl exec -i pod --'",
    )
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
        "--mcp-open-urls",
        action="store_true",
        help="open the address a server asks the person to visit (URL-mode elicitation: "
        "its own sign-in, a payment) in the browser; without it such a request is declined",
    )
    mcp.add_argument(
        "--mcp-sampling",
        choices=("refuse", "allow"),
        default="refuse",
        help="what a server's request for a model's answer (sampling) gets: refuse "
        "(default), or allow: one leg on this run's connection and model, without tools",
    )
    mcp.add_argument(
        "--no-mcp",
        action="store_true",
        help="do not start the servers of the user's and the project's MCP files",
    )
    exec_on_host.add_arguments(parser)  # and the prompt, which --host --list goes without
    return parser


class Printer:
    """Turns a thread's changes into the plain or JSON output of `melgui exec`."""

    def __init__(self, out: TextIO, as_json: bool) -> None:
        self.out = out
        self.as_json = as_json
        self.error: str | None = None
        self._text_open = False
        self._state = ThreadState()
        self._ended: set[str] = set()  # calls whose result is printed
        self._flush_due = False

    def watch(self, thread: Thread) -> Callable[[], None]:
        self._state = thread.state
        return thread.subscribe(self.observe)

    def _call_line(self, entry: CallEntry, **fields: Any) -> None:
        origin = entry.origin  # MCP calls name their server
        self._line(**fields, **({"server": origin.name} if origin.kind == "mcp" else {}))

    def progress(self, flight: Flight, server: str | None) -> None:
        """An MCP call's progress report, as a `progress` event (JSON output only)."""
        if self.as_json and flight.progress is not None:
            report = flight.progress
            self._line(
                kind="progress", id=flight.call.call_id,
                progress=report.progress, total=report.total, message=report.message,
                **({"server": server} if server else {}),
            )  # fmt: skip

    def _line(self, **fields: Any) -> None:
        self.out.write(terminal_text.json_line(fields) + "\n")
        self._flush_soon()

    def _flush_soon(self) -> None:
        """Flush once the loop has handled what arrived together: a flush per streamed
        token was a system call per token."""
        if self._flush_due:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.out.flush()
            return
        self._flush_due = True
        loop.call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_due = False
        self.out.flush()

    def observe(self, change: Change) -> None:
        match change:
            case EntryAdded(entry=AssistantEntry(streaming=True, text=text)):
                self._text(text)
            case EntryAdded(entry=ReasoningEntry(streaming=True, text=text)):
                self._reasoning(text)
            case TextAppended(text=text, reasoning=True):
                self._reasoning(text)
            case TextAppended(text=text):
                self._text(text)
            case EntryAdded(entry=CallEntry() as entry):
                if self.as_json:
                    call = entry.call
                    self._call_line(
                        entry,
                        kind="tool_call",
                        id=call.id,
                        name=call.name,
                        arguments=call.arguments,
                    )
            case EntryChanged(entry=CallEntry(result=CallResult() as result) as entry):
                if entry.call_id not in self._ended:
                    self._ended.add(entry.call_id)
                    if self.as_json:
                        shown = "cancelled" if result.status == "interrupted" else result.status
                        ran = {"hooks": [_hook_json(r) for r in entry.hooks]} if entry.hooks else {}
                        self._call_line(
                            entry,
                            kind="tool_result",
                            id=entry.call_id,
                            status=shown,
                            content=result.content,
                            **ran,
                        )
                    else:
                        for run in entry.hooks:
                            if run.failed or run.effect:
                                print(f"melgui: {run.headline()}", file=sys.stderr)
            case EntryAdded(entry=NoteEntry() as note):
                self._note(note)
            case EntriesReplaced(reason="compaction", entries=entries):
                marker = entries[-1] if entries else None
                if isinstance(marker, BranchEntry):
                    if self.as_json:
                        self._line(kind="compacted", messages=marker.messages, note=marker.note)
                    else:
                        print(f"melgui: {marker.note}", file=sys.stderr)
            case StateChanged(state=state):
                self._state_changed(self._state, state)
                self._state = state
            case EntryAdded() | EntryChanged() | EntriesReplaced():
                pass
            case _:
                assert_never(change)

    def _text(self, text: str) -> None:
        if self.as_json:
            self._line(kind="text", text=text)
        else:
            self.out.write(terminal_text.plain(text))
            self._flush_soon()
            self._text_open = not text.endswith("\n")

    def _reasoning(self, text: str) -> None:
        if self.as_json:
            self._line(kind="reasoning", text=text)

    def _note(self, note: NoteEntry) -> None:
        match note.note:
            case "error":
                self.error = note.text
                if self.as_json:
                    self._line(kind="error", message=note.text)
            case "stopped":
                self.error = "cancelled"
                if self.as_json:
                    self._line(kind="error", message="cancelled")
            case "retry":
                wait, why = f"{note.delay:.0f}s", note.text
                print(
                    f"melgui: retrying in {wait} after: {why} (try {note.attempt})", file=sys.stderr
                )
            case "context":
                if self.as_json:
                    self._line(kind="context", level=note.level, message=note.text)
                elif note.level == "warning":
                    print(f"melgui: {note.text}", file=sys.stderr)
            case "repair":
                pass
            case _:
                assert_never(note.note)

    def _state_changed(self, before: ThreadState, state: ThreadState) -> None:
        if state.legs != before.legs and self.as_json:  # usage per leg
            usage = state.last_usage
            self._line(kind="usage", leg=state.legs, usage=usage.to_json() if usage else None)
        if state.turns != before.turns and state.outcome == "done":
            if self.as_json:
                self._line(kind="done", legs=state.legs, usage=state.usage.to_json())
            elif self._text_open:
                self.out.write("\n")


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
    """The desk of a headless run: the pane tools explain that they need the window."""
    desk = Desk(folder, settings, api_key=api_key, plans=_print_plan)
    desk.panes = NoPanes("this is a headless run (melgui exec)")
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
    extra = _mcp_file(options)
    if options.mcp_url:
        desk.mcp.added = [_url_server(options.mcp_url)]
    desk.mcp.sign_in_allowed = not options.no_sign_in
    desk.mcp.input_policy = InputPolicy(options.mcp_input, options.mcp_open_urls)
    desk.mcp.say = _say
    desk.mcp.sampling = options.mcp_sampling
    await desk.start_mcp(extra=extra, configured=not options.no_mcp)
    for problem in desk.mcp.problems:
        print(f"melgui: MCP: {problem}", file=sys.stderr)
    if desk.mcp.untrusted is not None:
        _say(
            f"MCP: {desk.mcp.untrusted} is not trusted yet, so its servers did not start; "
            "trust it in the window (MCP servers panel), pass --trust if the folder is "
            "restricted, or pass the file with --mcp-config"
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
    try:
        target = target_for(options.folder, options.via)
    except TargetError as exc:
        raise UsageError(f"--folder: {exc}") from None
    if target is not None:
        return await _run_remote(options, out, target)
    folder = os.path.realpath(options.folder)
    if not os.path.isdir(folder):
        raise UsageError(f"--folder {options.folder!r} is not a folder")
    _decide_trust(folder, options)
    settings = settings_for(options)
    local = settings.connection == "local"
    api_key = None if local else get_api_key(api_key_kind(settings))  # keyring: 60 ms
    model = settings.model or ("local" if local else "")
    recording = None if options.no_history else _start_recording(options, folder, model)
    desk = headless_desk(folder, settings, api_key)
    try:
        await _start_mcp(desk, options)
    except SignInNeeded as exc:
        await desk.aclose()
        if recording is not None:
            recording.close()
            recording.store.close()
        print(f"melgui: {exc}", file=sys.stderr)
        return EXIT_FAILED
    session = desk.session(
        recording.conversation if recording else None,
        model=model,
        role=options.role,
        wire=recording.record_wire if recording else None,
        policy=FixedPolicy(options.approve, read_only=desk.is_read_only),
    )
    return await _run_turn(options, out, desk, session, recording)


async def _run_remote(options: argparse.Namespace, out: TextIO, target: Target) -> int:
    """A folder on another machine: the loop and the key stay here, each tool call runs
    in melgui's host there (melgui/remote), and so do the configured MCP servers."""
    from melgui.remote.askpass import ssh_asks
    from melgui.remote.connect import folder_key, mcp_there, open_link
    from melgui.remote.link import LinkError
    from melgui.remote.remote_mcp import configured_entries
    from melgui.remote.remote_tools import RemoteTools

    settings = settings_for(options)
    local = settings.connection == "local"
    api_key = None if local else get_api_key(api_key_kind(settings))  # keyring: 60 ms
    model = settings.model or ("local" if local else "")
    try:
        link = await open_link(target, say=_say, ask=ssh_asks())
    except LinkError as exc:
        print(f"melgui: {exc}", file=sys.stderr)
        return EXIT_FAILED
    key = folder_key(target)
    with tempfile.TemporaryDirectory(prefix="melgui-remote-") as stand_in:
        try:
            # The user's file (unless --no-mcp), --mcp-config's and --mcp-url's start there.
            extra, user = _mcp_file(options), not options.no_mcp
            entries = configured_entries(None, extra=extra, user=user, say=_say)
            if options.mcp_url:
                url = _url_server(options.mcp_url)
                entries[url.name] = {"url": url.url}
            there, calls = await mcp_there(link, target.path, entries, say=_say, project=key)
            recording = None if options.no_history else _start_recording(options, key, model)
            desk = headless_desk(stand_in, settings, api_key)
            catalog = CatalogThere(there, desk.catalog)
            session = desk.session(
                recording.conversation if recording else None,
                model=model,
                role=options.role,
                wire=recording.record_wire if recording else None,
                policy=FixedPolicy(options.approve, read_only=lambda name: reads(catalog, name)),
                tools=RemoteTools(link, target.path, local=desk.tools, options=calls, mcp=there),
                cwd=target.path,
                catalog=catalog,
            )
            return await _run_turn(options, out, desk, session, recording)
        finally:
            await link.aclose()


def _mcp_file(options: argparse.Namespace) -> Path | None:
    extra = Path(options.mcp_config) if options.mcp_config else None
    if extra is not None and not extra.is_file():
        raise UsageError(f"--mcp-config {options.mcp_config!r} is not a file")
    return extra


def _say(text: str) -> None:
    print(f"melgui: {text}", file=sys.stderr)


async def _run_turn(
    options: argparse.Namespace,
    out: TextIO,
    desk: Desk,
    session: AgentSession,
    recording: Recording | None,
) -> int:
    desk.mcp.sampling_target = lambda: SamplingTarget(
        session.loop.transport, session.loop.model, session.loop.cwd
    )
    printer = Printer(out, options.json)
    desk.mcp.on_progress = lambda flight: printer.progress(
        flight, desk.mcp.server_of(flight.call.tool)
    )
    if recording is not None:
        recording.attach(session)
        for notice in recording.notices:
            print(f"melgui: {notice}", file=sys.stderr)
    printer.watch(session.thread)
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
            recording.store.close()
    result = session.last_result
    if result is not None and result.outcome == "done":
        return EXIT_OK
    reason = printer.error or (result.message if result else "the turn did not run")
    print(f"melgui: {reason}", file=sys.stderr)
    return EXIT_CANCELLED if result is not None and result.outcome == "cancelled" else EXIT_FAILED


def main(argv: list[str]) -> int:
    options = exec_on_host.parse_args(build_parser(), argv)
    # What goes to stderr follows the answer printed before it, flushed or not.
    stderr, sys.stderr = sys.stderr, terminal_text.PlainWriter(sys.stderr, after=sys.stdout)
    try:
        return asyncio.run((exec_on_host.run if options.host else run)(options, sys.stdout))
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
