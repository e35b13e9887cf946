"""`melgui exec --host`: see or drive the sessions of the running melgui host.

    melgui exec --host --list                     # its sessions, one line each
    melgui exec --host --session ID "prompt"      # a turn in one, printed as exec prints

The prompt goes to the host's session (queued behind a turn it is running) and exec
prints that session's changes until its queue has run dry. A question the turn asks is
answered by `--approve` when given (reads, all, none: as a headless turn decides);
without it the question is left waiting in the host and exec ends (EXIT_WAITING), saying
how to answer it. Nothing is started: with no host running, exec says so.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO, cast

from melgui.core.config import terminal_text
from melgui.core.protocol.approval import Approve
from melgui.core.protocol.events import ToolCall
from melgui.core.rules.policy import FixedPolicy, HeadlessMode
from melgui.core.thread.codec import snapshot_from_json
from melgui.core.thread.thread import SeqGap
from melgui.host.changes import Record
from melgui.host.client import HostClient, HostGone, VersionRefused
from melgui.host.view_events import ThreadCopy
from melgui.host.wire import RpcError

if TYPE_CHECKING:
    from melgui.headless import Printer

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_WAITING, EXIT_CANCELLED = 0, 1, 2, 3, 130


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """--host, --list, --session, and the prompt (last: it is positional)."""
    host = parser.add_argument_group("the running melgui host")
    host.add_argument(
        "--host",
        action="store_true",
        help="see or drive a session of the running melgui host (`melgui host`, or the one "
        "a window started) instead of running the turn here",
    )
    host.add_argument("--list", action="store_true", help="with --host: list its sessions")
    host.add_argument(
        "--session", metavar="ID", help="with --host: the session the prompt goes to (or its "
        "id's first characters, as --list shows them)"
    )  # fmt: skip
    parser.add_argument("prompt", nargs="?", default="", help="the user message")


def parse_args(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """exec's command line, checked for what argparse cannot say (exits 2 with usage);
    a turn run here approves by "reads" unless told otherwise."""
    options = parser.parse_args(argv)
    problem = usage_problem(options)
    if problem:
        parser.error(problem)
    if not options.host:
        options.approve = options.approve or "reads"
    return options


def usage_problem(options: argparse.Namespace) -> str:
    """What is wrong with the command line ("" when nothing)."""
    if not options.host:
        if options.list or options.session:
            return "--list and --session need --host"
        return "" if options.prompt else "the user message is missing"
    if options.list:
        return "--list takes no prompt" if options.prompt else ""
    if not options.session or not options.prompt:
        return "--host needs --list, or --session ID and a prompt"
    return ""


async def run(options: argparse.Namespace, out: TextIO) -> int:
    from melgui.headless import Printer  # exec's own printing (headless imports this)

    printer = Printer(out, options.json)
    try:
        client = await HostClient.connect(client="melgui exec")
    except OSError:
        print(
            "melgui: no melgui host is running (start one with `melgui host`, or open a "
            "window with `melgui FOLDER`)",
            file=sys.stderr,
        )
        return EXIT_FAILED
    except VersionRefused as exc:
        print(f"melgui: {exc}", file=sys.stderr)
        return EXIT_FAILED
    try:
        listed: list[dict[str, Any]] = await client.call("session/list")
        if options.list:
            list_sessions(listed, out, options.json)
            return EXIT_OK
        found = [s for s in listed if str(s["id"]).startswith(options.session)]
        if len(found) != 1:
            which = "no session" if not found else f"{len(found)} sessions"
            print(
                f"melgui: the host has {which} whose id begins {options.session!r}; "
                "`melgui exec --host --list` lists them",
                file=sys.stderr,
            )
            return EXIT_USAGE
        turn = HostTurn(client, found[0], options.prompt, options.approve, printer)
        return await turn.run()
    except HostGone as exc:
        print(f"melgui: {exc}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        await client.aclose()


def list_sessions(listed: list[dict[str, Any]], out: TextIO, as_json: bool) -> None:
    for session in listed:
        if as_json:
            out.write(terminal_text.json_line(session) + "\n")
            continue
        state = "busy" if session["busy"] else "idle"
        waiting = len(session["approvals"])
        asks = f", {waiting} waiting for approval" if waiting else ""
        model = session["model"] or "default model"
        out.write(f"{session['id']}  {state}{asks}  {session['role']}, {model}  ")
        out.write(terminal_text.plain(session["folder"]) + "\n")
    if not listed and not as_json:
        print("melgui: the host runs no sessions", file=sys.stderr)


class HostTurn:
    """One prompt to a host session, its changes printed until the queue runs dry."""

    def __init__(
        self,
        client: HostClient,
        described: dict[str, Any],
        text: str,
        approve: str | None,
        printer: Printer,
    ) -> None:
        self.client = client
        self.id = str(described["id"])
        self.folder = str(described["folder"])
        self.text = text
        self.policy = FixedPolicy(cast(HeadlessMode, approve)) if approve else None
        self.printer = printer
        self.copy = ThreadCopy()
        self.started = False  # our prompt's record has come
        self.outcome: Record | None = None  # the last turn's end after it
        self.waiting: Record | None = None  # a question left for a person
        self.ended = asyncio.Event()
        self._tasks: set[asyncio.Task[Any]] = set()

    async def run(self) -> int:
        self.client.sessions[self.id] = self.heard
        answer = await self.client.attach({self.id: None})
        snapshot = answer[self.id]["snapshot"]
        self.copy.restart(snapshot_from_json(snapshot["thread"]))
        unwatch: Callable[[], None] = self.printer.watch(self.copy)
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, lambda: self._spawn(self._call("turn/stop")))
        try:
            await self.client.call("turn/prompt", session=self.id, text=self.text)
            for question in snapshot["approvals"]:  # asked before this prompt: answered too
                self._ask(question)
            await self.ended.wait()
        finally:
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(signum)
            unwatch()
            self.client.sessions.pop(self.id, None)
            await self._call("session/detach")
        return self._exit_code()

    def heard(self, records: list[Record]) -> None:
        for record in records:
            kind = record.get("type")
            if kind == "change":
                self._apply(record)
            elif kind == "prompt" and record.get("text") == self.text:
                self.started = True
            elif kind == "approval":
                self._ask(record)
            elif kind == "turn_end" and self.started:
                self.outcome = record
            elif kind == "idle" and self.started:
                self.ended.set()

    def _apply(self, record: Record) -> None:
        try:
            self.copy.take(record)
        except SeqGap as gap:  # the wire lost nothing so far; say so rather than guess
            self.outcome = {"outcome": "failed", "message": f"the host's changes: {gap}"}
            self.ended.set()

    def _ask(self, record: Record) -> None:
        if self.policy is None:  # a person answers it, in a window or with --approve
            self.waiting = record
            self.ended.set()
            return
        call = ToolCall(str(record["id"]), str(record["name"]), str(record.get("arguments", "")))
        decision = self.policy.check(call, {})
        params = {"call": call.id}
        if isinstance(decision, Approve):
            params.update(decision="approve")
        else:
            params.update(decision="deny", reason=decision.reason)
        self._spawn(self._call("approval/answer", **params))

    async def _call(self, method: str, **params: Any) -> None:
        try:
            await self.client.call(method, session=self.id, **params)
        except (HostGone, OSError, RpcError) as exc:
            if not self.ended.is_set():
                self.outcome = {"outcome": "failed", "message": str(exc)}
                self.ended.set()

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _exit_code(self) -> int:
        if self.waiting is not None:
            name = self.waiting.get("name", "a tool")
            print(
                f"melgui: {name} waits for approval in the melgui host (session {self.id[:8]}); "
                f"answer it in a window (melgui {self.folder}) or run exec again "
                "with --approve",
                file=sys.stderr,
            )
            return EXIT_WAITING
        outcome = self.outcome or {"outcome": "failed", "message": "the turn did not run"}
        if outcome.get("outcome") == "done":
            return EXIT_OK
        if outcome.get("outcome") == "cancelled":
            print("melgui: cancelled", file=sys.stderr)
            return EXIT_CANCELLED
        reason = self.printer.error or outcome.get("message") or "the turn failed"
        print(f"melgui: {reason}", file=sys.stderr)
        return EXIT_FAILED
